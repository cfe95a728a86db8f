"""``stencilkit.meshes.plot``: triangulation of the cells and cell/vertex/edge plots, headless."""

from __future__ import annotations

import dataclasses
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
    mesh = periodic_triangular_mesh(6, 5, bounded=True)
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


def _shifted(nx: int, ny: int) -> Any:
    """A torus mesh moved by a fraction of a cell (as an ICON grid's coordinates may be): cells
    cross the seam at x = 0 and y = 0."""
    mesh = periodic_triangular_mesh(nx, ny)
    return dataclasses.replace(
        mesh, vertex_x=(mesh.vertex_x + 0.3 / nx) % 1.0, vertex_y=(mesh.vertex_y + 0.4 / ny) % 1.0
    )


def test_on_a_torus_the_seam_cells_are_drawn_on_both_sides(rng: np.random.Generator) -> None:
    mesh = _shifted(6, 5)
    values = rng.random(mesh.n_cells)
    art = plot.plot_cell_field(mesh, values)
    colours = np.asarray(art.get_array())
    assert len(colours) > mesh.n_cells  # the copies that fill the seam
    np.testing.assert_array_equal(colours[: mesh.n_cells], values)  # every cell once, in order
    assert set(colours[mesh.n_cells :]) <= set(values)  # copies carry their cell's value


@pytest.mark.parametrize("kind", ["cell", "vertex", "edge"])
def test_plots_have_labelled_axes_and_colour_bar(kind: str, rng: np.random.Generator) -> None:
    mesh = periodic_triangular_mesh(5, 4)
    n = {"cell": mesh.n_cells, "vertex": mesh.n_vertices, "edge": mesh.n_edges}[kind]
    draw = getattr(plot, f"plot_{kind}_field")
    art = draw(mesh, rng.random(n), label="tracer (kg/kg)")
    ax, bar = art.figure.axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x", "y")
    assert bar.get_ylabel() == "tracer (kg/kg)"
    assert ax.get_xlim() == (0.0, 1.0) and ax.get_ylim() == (0.0, 1.0)  # one period, no margin
    default = draw(mesh, rng.random(n))
    assert default.figure.axes[1].get_ylabel() == f"{kind.capitalize()} value"


@pytest.mark.parametrize("kind", ["cell", "vertex"])
def test_no_white_fringe_at_the_periodic_seam(kind: str) -> None:
    mesh = _shifted(9, 7)  # cells cross the seam in x and in y
    n = mesh.n_cells if kind == "cell" else mesh.n_vertices
    fig = plt.figure(figsize=(3, 3), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    # values in the lower half of the colour map: every covered pixel is dark, none white
    getattr(plot, f"plot_{kind}_field")(
        mesh, np.full(n, 0.25), ax=ax, colorbar=False, cmap="viridis", vmin=0, vmax=1
    )
    fig.canvas.draw()
    pixels = np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(int)
    white = (pixels > 240).all(axis=-1)
    assert not white.any(), f"{white.sum()} white pixels, e.g. at {np.argwhere(white)[:3].tolist()}"


def test_edges_are_line_segments(rng: np.random.Generator) -> None:
    for bounded in (False, True):
        mesh = periodic_triangular_mesh(4, 4, bounded=bounded)
        values = rng.random(mesh.n_edges)
        art = plot.plot_edge_field(mesh, values, colorbar=False)
        segments = art.get_segments()
        assert len(segments) >= mesh.n_edges
        np.testing.assert_array_equal(np.asarray(art.get_array())[: mesh.n_edges], values)
        lengths = [np.hypot(*(s[1] - s[0])) for s in segments[: mesh.n_edges]]
        # each segment joins the edge's two vertices (unwrapped: never across the domain)
        np.testing.assert_allclose(lengths, mesh.edge_length, rtol=1e-12)


def test_vertex_field_on_a_torus_takes_each_corner_its_vertex_value(
    rng: np.random.Generator,
) -> None:
    mesh = periodic_triangular_mesh(5, 4)
    values = rng.random(mesh.n_vertices)
    art = plot.plot_vertex_field(mesh, values, colorbar=False)
    points = np.asarray(art.get_array())
    np.testing.assert_array_equal(points[: 3 * mesh.n_cells], values[mesh.c2v].ravel())


@pytest.mark.parametrize("bounded", [False, True], ids=["torus", "bounded"])
def test_vertex_field_takes_each_vertex_value(bounded: bool, rng: np.random.Generator) -> None:
    mesh = periodic_triangular_mesh(5, 4, bounded=bounded)
    values = rng.random(mesh.n_vertices)
    fig, ax = plt.subplots()
    art = plot.plot_vertex_field(mesh, gtx.as_field([Vertex], values), ax=ax, colorbar=False)
    assert art.axes is ax and len(fig.axes) == 1
    points = np.asarray(art.get_array())
    expect = values if bounded else values[mesh.c2v].ravel()
    np.testing.assert_array_equal(points[: len(expect)], expect)


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
