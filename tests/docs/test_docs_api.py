"""The API reference builds from the docstrings without a warning, and shows real signatures."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[2] / "docs" / "api"


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The API reference, built once for the tests below."""
    pytest.importorskip("sphinx")
    out = tmp_path_factory.mktemp("api") / "html"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",  # warnings, broken cross references (nitpicky) included, fail the build
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(DOCS),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-5000:]
    assert run.stderr.strip() == "", run.stderr[-5000:]  # -q: only warnings and errors print
    return out


def test_api_reference_builds_without_warnings(built: Path) -> None:
    out = built
    builtins = _text(out / "builtins.html")
    assert "neighbor_sum(field: Field, /, axis: Dimension)" in builtins
    assert (
        "where(mask: Field[..., bool], true_field: Field | scalar, false_field: Field | scalar, /)"
        in builtins
    )
    assert "concat_where(domain_condition" in builtins and "*args" not in builtins
    fields = _text(out / "fields.html")
    for name in ("as_field(", "to_xarray(", "from_xarray(", "sum("):
        assert name in fields, name
    for page in ("meshes.html", "io.html", "programs.html", "errors.html"):
        assert (out / page).stat().st_size > 2000
    assert "read_icon_grid(" in _text(out / "io.html")
    assert "plot_cell_field(" in _text(out / "meshes.html")


def test_every_public_name_and_method_is_documented(built: Path) -> None:
    sys.path.insert(0, str(DOCS))
    try:
        import public_names  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DOCS))
    names = list(public_names.public_names())
    assert len(names) > 150, len(names)  # the surfaces are read, not an empty list
    assert public_names.undocumented(built) == []


def test_the_checker_notices_an_undocumented_name(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sys.path.insert(0, str(DOCS))
    try:
        import public_names  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DOCS))
    import stencilkit

    def undocumented_helper() -> None:
        pass

    undocumented_helper.__module__ = "stencilkit"
    monkeypatch.setattr(stencilkit, "undocumented_helper", undocumented_helper, raising=False)
    monkeypatch.setattr(stencilkit, "__all__", [*stencilkit.__all__, "undocumented_helper"])
    assert "stencilkit.undocumented_helper" in public_names.undocumented(built)


def test_rendered_types_have_no_tildes_and_key_names_are_there(built: Path) -> None:
    for page in built.glob("*.html"):
        text = _text(page)
        assert "~" not in text, (page.name, [line for line in text.splitlines() if "~" in line][:3])
    programs = _text(built / "programs.html")
    assert "with_backend(" in programs  # was hidden: no docstring
    assert "definition: Callable[[...], Any] | None = None" in programs
    backends = _text(built / "backends.html")
    for name in (
        "capture_cuda_graph(",
        "set_num_threads(",
        "get_num_threads(",
        "compile_programs(",
    ):
        assert name in backends, name
    assert "set_log_level(" in _text(built / "configuration.html")
    assert "FieldOffset" in _text(built / "fields.html") and "Dims" in _text(built / "fields.html")
    assert "ConfigurationError" in _text(built / "errors.html")
    assert "distribute(" in _text(built / "distributed.html")
