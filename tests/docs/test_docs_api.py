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


def test_api_reference_builds_without_warnings(tmp_path: Path) -> None:
    pytest.importorskip("sphinx")
    out = tmp_path / "html"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
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
