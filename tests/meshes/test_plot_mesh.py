"""``stencilkit.meshes.plot``: triangulation of the cells and cell/vertex/edge plots, headless."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit.core import StencilValueError
from stencilkit.meshes import Cell, Vertex, periodic_triangular_mesh

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from stencilkit.meshes import plot  # noqa: E402

K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


@pytest.fixture(autouse=True)
def _close_figures() -> Any:
    yield
    plt.close("all")


@pytest.mark.parametrize("bounded", [False, True], ids=["torus", "bounded"])
def test_triangulation_has_one_triangle_per_cell_none_stretched(bounded: bool) -> None:
    mesh = periodic_triangular_mesh(8, 6, bounded=bounded)
    tri = plot.triangulation(mesh)
    assert tri.triangles.shape == (mesh.n_cells, 3)
    x, y = tri.x[tri.triangles], tri.y[tri.triangles]
    # every triangle is a half quad: no side longer than the quad's diagonal (no wrap-around)
    assert np.ptp(x, axis=1).max() <= 1 / 8 + 1e-12 and np.ptp(y, axis=1).max() <= 1 / 6 + 1e-12
    # the triangle centroids are the cells' centroids (mod the torus)
    cx = x.mean(1) % 1.0 if not bounded else x.mean(1)
    np.testing.assert_allclose(cx, mesh.cell_x % 1.0 if not bounded else mesh.cell_x, atol=1e-12)
    if bounded:
        assert len(tri.x) == mesh.n_vertices  # shared vertices where nothing wraps


def test_cell_field_gives_one_colour_per_cell(tmp_path: Path, rng: np.random.Generator) -> None:
    mesh = periodic_triangular_mesh(6, 5)
    values = rng.random((mesh.n_cells, 3))
    field = gtx.as_field([Cell, K], values)
    art = plot.plot_cell_field(mesh, field, level=2, cmap="viridis")
    colours = np.asarray(art.get_array())
    assert colours.shape == (mesh.n_cells,)
    np.testing.assert_array_equal(colours, values[:, 2])
    assert len(art.get_paths()) == mesh.n_cells
    assert len(art.figure.axes) == 2  # the plot and its colour bar
    art.figure.savefig(tmp_path / "cells.png")
    assert (tmp_path / "cells.png").stat().st_size > 1000


@pytest.mark.parametrize("bounded", [False, True], ids=["torus", "bounded"])
def test_vertex_field_takes_each_vertex_value(bounded: bool, rng: np.random.Generator) -> None:
    mesh = periodic_triangular_mesh(5, 4, bounded=bounded)
    values = rng.random(mesh.n_vertices)
    fig, ax = plt.subplots()
    art = plot.plot_vertex_field(mesh, gtx.as_field([Vertex], values), ax=ax, colorbar=False)
    assert art.axes is ax and len(fig.axes) == 1
    points = np.asarray(art.get_array())
    expect = values if bounded else values[mesh.c2v].ravel()
    np.testing.assert_array_equal(points, expect)


def test_edge_field_one_dot_per_edge(rng: np.random.Generator) -> None:
    mesh = periodic_triangular_mesh(4, 4)
    art = plot.plot_edge_field(mesh, rng.random(mesh.n_edges), s=3)
    assert len(art.get_offsets()) == mesh.n_edges


def test_wrong_length_is_refused() -> None:
    mesh = periodic_triangular_mesh(4, 4)
    with pytest.raises(StencilValueError, match="a Cell field on this mesh has 32 values"):
        plot.plot_cell_field(mesh, np.zeros(mesh.n_vertices))


@pytest.mark.gpu
def test_gpu_field_is_copied_to_the_host_for_plotting() -> None:
    mesh = periodic_triangular_mesh(4, 4)
    field = gtx.as_field([Cell], np.arange(mesh.n_cells, dtype=float), allocator=gtx.gpu)
    art = plot.plot_cell_field(mesh, field)
    np.testing.assert_array_equal(np.asarray(art.get_array()), np.arange(mesh.n_cells))
