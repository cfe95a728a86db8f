"""The two executed examples (percent-format scripts, one per grid style) run and plot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"
SCRIPTS = {
    "cartesian_diffusion": ("matplotlib", "xarray"),
    "icon_mesh_diffusion": ("matplotlib", "xarray", "netCDF4"),
}


def _run(name: str, backend: str, out: Path) -> str:
    for module in SCRIPTS[name]:
        pytest.importorskip(module)
    env = dict(
        os.environ,
        STENCILKIT_EXAMPLE_BACKEND=backend,
        STENCILKIT_EXAMPLE_OUT=str(out),
        MPLBACKEND="Agg",
    )
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "matches NumPy" in run.stdout
    png = out / f"{name}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    return run.stdout


@pytest.mark.parametrize("name", sorted(SCRIPTS))
@pytest.mark.parametrize(
    "backend",
    [
        "embedded",
        "cpu",
        pytest.param("gpu", marks=pytest.mark.gpu),
    ],
)
def test_example_runs_and_plots(name: str, backend: str, tmp_path: Path) -> None:
    out = _run(name, backend, tmp_path)
    if name == "icon_mesh_diffusion":  # the mesh came through an ICON grid file
        assert (tmp_path / "torus_grid.nc").stat().st_size > 10_000
        assert "1344 cells, 2016 edges, 672 vertices" in out  # 24 x 28 near-equilateral
        assert "max |lap(psi) + k^2 psi| / k^2 = 0.0" in out  # a Laplacian, not a checkerboard


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_example_is_a_percent_format_notebook(name: str) -> None:
    text = (EXAMPLES / f"{name}.py").read_text()
    assert "jupytext:" in text and "formats: py:percent" in text
    cells = text.count("\n# %%")
    assert cells >= 6 and text.count("# %% [markdown]") >= 3
    try:  # where jupytext is installed, check that it reads the script as a notebook
        import jupytext
    except ImportError:
        return
    notebook = jupytext.reads(text, fmt="py:percent")
    kinds = [c.cell_type for c in notebook.cells]
    assert len(kinds) == cells and kinds.count("markdown") == text.count("# %% [markdown]")
