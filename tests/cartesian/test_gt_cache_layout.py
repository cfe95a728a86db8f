"""gt4py's on-disk cache layout while the gt4py alias serves: each ``gtscript.stencil`` makes
``<root_path>/<dir_name>/py<M><m>_<api>/<backend slug>/<qualified name>/`` with an index file
(NDSL's run mode and its cache tests read it); used directly, nothing is written there."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from stencilkit.cartesian import gt_cache
from stencilkit.cartesian.config import cache_settings
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, interval, stencil
from stencilkit.compat import install_gt4py_alias, uninstall_gt4py_alias

F64 = Field[np.float64]
PY = f"py{sys.version_info.major}{sys.version_info.minor}_{sys.api_version}"


def copy_scaled(inp: F64, out: F64):  # type: ignore[no-untyped-def]
    with computation(PARALLEL), interval(...):
        out = 2.0 * inp  # noqa: F841 (a GTScript output)


@pytest.fixture
def gt_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setitem(cache_settings, "root_path", str(tmp_path))
    monkeypatch.setitem(cache_settings, "dir_name", ".gt_cache_000003")
    return tmp_path


@pytest.fixture
def alias() -> Iterator[None]:
    install_gt4py_alias()
    yield
    uninstall_gt4py_alias()


def _run(obj) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(11)
    inp, out = rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 3, 2))
    obj(inp, out)
    np.testing.assert_array_equal(out, 2.0 * inp)


@pytest.mark.parametrize("backend", ["numpy", "gt:cpu_ifirst"])
def test_alias_makes_gt4pys_package_folder(gt_root: Path, alias: None, backend: str) -> None:
    obj = stencil(backend=backend, definition=copy_scaled, name="pkg.sub.copy_scaled")
    _run(obj)
    slug = backend.replace(":", "")
    folder = gt_root / ".gt_cache_000003" / PY / slug / "pkg" / "sub" / "copy_scaled"
    files = list(folder.iterdir())
    assert [f.name for f in files] == [f"m_{type(obj).__name__}.stencilkit.txt"]
    assert "pkg.sub.copy_scaled" in files[0].read_text()


def test_a_new_root_gets_its_folder_on_the_next_stencil_call(
    gt_root: Path, alias: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As gt4py, each ``stencil`` call looks under the current ``cache_settings`` (NDSL moves
    ``root_path`` and expects the folder there), the in-process cache hit included."""
    stencil(backend="numpy", definition=copy_scaled)
    moved = gt_root / "relocated"
    monkeypatch.setitem(cache_settings, "root_path", str(moved))
    _run(stencil(backend="numpy", definition=copy_scaled))
    qualified = f"{__name__}.copy_scaled".split(".")
    for root in (gt_root, moved):
        assert (root / ".gt_cache_000003" / PY / "numpy").joinpath(*qualified).is_dir()


def test_nothing_is_written_without_the_alias(gt_root: Path) -> None:
    assert not gt_cache.alias_active()
    _run(stencil(backend="numpy", definition=copy_scaled, name="pkg.copy_scaled"))
    assert list(gt_root.iterdir()) == []


def test_qualified_names_as_gt4py_makes_them() -> None:
    assert gt_cache.qualified_name("a.b.f", copy_scaled) == "a.b.f"
    assert gt_cache.qualified_name("g", copy_scaled) == f"{__name__}.g"
    assert gt_cache.qualified_name(None, copy_scaled) == f"{__name__}.copy_scaled"
