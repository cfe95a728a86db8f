"""ICON grid files: write a synthetic mesh in ICON's format, read it back, run stencils on it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit.core import StencilValueError
from stencilkit.meshes import (
    C2E,
    V2E,
    C2EDim,
    Cell,
    Edge,
    Mesh,
    V2EDim,
    Vertex,
    periodic_triangular_mesh,
)

pytest.importorskip("xarray")
netCDF4 = pytest.importorskip("netCDF4")

from stencilkit.io import icon_grid_tables, read_icon_grid, write_icon_grid  # noqa: E402

K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


@gtx.field_operator
def _div(
    vn: gtx.Field[gtx.Dims[Edge, K], gtx.float64], w: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64]
) -> gtx.Field[gtx.Dims[Cell, K], gtx.float64]:
    return gtx.neighbor_sum(vn(C2E) * w, axis=C2EDim)


@gtx.field_operator
def _rot(
    vn: gtx.Field[gtx.Dims[Edge, K], gtx.float64],
    w: gtx.Field[gtx.Dims[Vertex, V2EDim], gtx.float64],
) -> gtx.Field[gtx.Dims[Vertex, K], gtx.float64]:
    return gtx.neighbor_sum(vn(V2E) * w, axis=V2EDim)


def _same_mesh(a: Mesh, b: Mesh) -> None:
    for f in dataclasses.fields(Mesh):
        if f.name.startswith("_"):
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, f.name
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        else:
            assert x == y, f.name


@pytest.mark.parametrize("bounded", [False, True], ids=["torus", "bounded"])
def test_write_then_read_gives_the_same_mesh(tmp_path: Path, bounded: bool) -> None:
    mesh = periodic_triangular_mesh(6, 5, bounded=bounded)
    path = tmp_path / "grid.nc"
    write_icon_grid(mesh, path)
    back = read_icon_grid(path)
    _same_mesh(mesh, back)
    assert back.periodic is (not bounded)
    assert bool((back.e2c == -1).any()) is bounded  # boundary edges: missing second cell


def test_file_follows_icon_conventions(tmp_path: Path) -> None:
    # read with netCDF4 directly: transposed (neighbour, element), 1-based, 0 for missing
    mesh = periodic_triangular_mesh(4, 3, bounded=True)
    path = tmp_path / "grid.nc"
    write_icon_grid(mesh, path)
    with netCDF4.Dataset(path) as nc:
        assert nc.dimensions["cell"].size == mesh.n_cells and nc.dimensions["nv"].size == 3
        assert nc["vertex_of_cell"].dimensions == ("nv", "cell")
        np.testing.assert_array_equal(nc["vertex_of_cell"][:].T, mesh.c2v + 1)
        e2c = np.asarray(nc["adjacent_cell_of_edge"][:]).T
        np.testing.assert_array_equal(e2c, np.where(mesh.e2c < 0, 0, mesh.e2c + 1))
        assert nc.grid_geometry == 4 and nc["cells_of_vertex"].dimensions == ("ne", "vertex")
        for name in ("clon", "clat", "vlon", "vlat", "elon", "elat", "edge_length", "cell_area"):
            assert name in nc.variables


def _hand_written_grid(path: Path, mesh: Mesh, missing: int) -> None:
    """An ICON grid file written without stencilkit, marking missing neighbours with ``missing``."""
    with netCDF4.Dataset(path, "w") as nc:
        for name, size in (
            ("cell", mesh.n_cells),
            ("edge", mesh.n_edges),
            ("vertex", mesh.n_vertices),
            ("nv", 3),
            ("nc", 2),
            ("ne", 6),
        ):
            nc.createDimension(name, size)
        tables = {
            "vertex_of_cell": ("nv", "cell", mesh.c2v),
            "edge_of_cell": ("nv", "cell", mesh.c2e),
            "adjacent_cell_of_edge": ("nc", "edge", mesh.e2c),
            "edge_vertices": ("nc", "edge", mesh.e2v),
            "cells_of_vertex": ("ne", "vertex", mesh.v2c),
            "edges_of_vertex": ("ne", "vertex", mesh.v2e),
        }
        for name, (nb, el, table) in tables.items():
            var = nc.createVariable(name, "i4", (nb, el))
            var[:] = np.where(table < 0, missing, table + 1).T
        floats = {
            "clon": ("cell", mesh.cell_x),
            "clat": ("cell", mesh.cell_y),
            "vlon": ("vertex", mesh.vertex_x),
            "vlat": ("vertex", mesh.vertex_y),
            "elon": ("edge", mesh.edge_x),
            "elat": ("edge", mesh.edge_y),
            "cell_area": ("cell", mesh.cell_area),
            "dual_area": ("vertex", mesh.dual_area),
            "edge_length": ("edge", mesh.edge_length),
            "dual_edge_length": ("edge", mesh.dual_edge_length),
            "zonal_normal_primal_edge": ("edge", mesh.edge_normal_x),
            "meridional_normal_primal_edge": ("edge", mesh.edge_normal_y),
        }
        for name, (dim, values) in floats.items():
            nc.createVariable(name, "f8", (dim,))[:] = values
        nc.createVariable("orientation_of_normal", "i4", ("nv", "cell"))[:] = mesh.c2e_orientation.T
        nc.createVariable("edge_orientation", "i4", ("ne", "vertex"))[:] = mesh.v2e_orientation.T


@pytest.mark.parametrize("missing", [0, -1])
def test_reads_a_grid_written_by_another_tool(tmp_path: Path, missing: int) -> None:
    mesh = periodic_triangular_mesh(5, 4, bounded=True)
    path = tmp_path / "icon.nc"
    _hand_written_grid(path, mesh, missing)
    back = read_icon_grid(path)  # no grid_geometry: a sphere, lon/lat as coordinates
    for name in ("c2v", "c2e", "e2c", "e2v", "v2c", "v2e"):
        np.testing.assert_array_equal(getattr(back, name), getattr(mesh, name), err_msg=name)
        assert getattr(back, name).dtype == np.int32
    np.testing.assert_array_equal(back.cell_x, mesh.cell_x)
    assert back.nx == 0 and not back.periodic and back.n_boundary_edges == mesh.n_boundary_edges
    assert set(icon_grid_tables(path)) == {"c2v", "c2e", "e2c", "e2v", "v2c", "v2e"}


def test_derived_tables_c2e2c_and_v2e2v(tmp_path: Path) -> None:
    mesh = periodic_triangular_mesh(4, 4)
    path = tmp_path / "grid.nc"
    write_icon_grid(mesh, path)
    tables = icon_grid_tables(path)
    c2e2c, v2e2v = tables["c2e2c"], tables["v2e2v"]
    for c in range(mesh.n_cells):  # each neighbour shares exactly one edge with the cell
        for k in range(3):
            assert len(set(mesh.c2e[c]) & set(mesh.c2e[c2e2c[c, k]])) == 1
    for v in range(mesh.n_vertices):
        for k in range(6):
            assert set(mesh.e2v[mesh.v2e[v, k]]) == {v, v2e2v[v, k]}


def test_not_an_icon_grid_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.nc"
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("x", 3)
        nc.createVariable("t", "f8", ("x",))[:] = [1.0, 2.0, 3.0]
    with pytest.raises(StencilValueError, match="not an ICON grid file: it lacks vertex_of_cell"):
        read_icon_grid(path)


@pytest.mark.parametrize("bounded", [False, True], ids=["torus", "bounded"])
def test_stencils_on_the_read_mesh_match_the_original(
    case: Any, rng: np.random.Generator, tmp_path: Path, bounded: bool
) -> None:
    mesh = periodic_triangular_mesh(6, 4, bounded=bounded)
    write_icon_grid(mesh, tmp_path / "grid.nc")
    read = read_icon_grid(tmp_path / "grid.nc")
    nk = 3
    vn = rng.standard_normal((mesh.n_edges, nk))
    wd = mesh.c2e_orientation * mesh.edge_length[mesh.c2e] / mesh.cell_area[:, None]
    wr = np.where(
        mesh.v2e < 0, 0.0, mesh.v2e_orientation * mesh.dual_edge_length[np.maximum(mesh.v2e, 0)]
    )
    results = []
    for m in (mesh, read):
        provider = m.offset_provider(allocator=case.allocator)
        args = dict(vn=case.field([Edge, K], vn))
        div = case.field([Cell, K], np.full((m.n_cells, nk), 9.0))
        rot = case.field([Vertex, K], np.full((m.n_vertices, nk), 9.0))
        _div.with_backend(case.backend)(
            **args, w=case.field([Cell, C2EDim], wd), out=div, offset_provider=provider
        )
        _rot.with_backend(case.backend)(
            **args, w=case.field([Vertex, V2EDim], wr), out=rot, offset_provider=provider
        )
        results.append((div.asnumpy(), rot.asnumpy()))
    np.testing.assert_allclose(results[0][0], (vn[mesh.c2e] * wd[..., None]).sum(1), rtol=1e-12)
    expect_rot = np.where(
        mesh.v2e[..., None] < 0, 0.0, vn[np.maximum(mesh.v2e, 0)] * wr[..., None]
    ).sum(1)
    np.testing.assert_allclose(results[0][1], expect_rot, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])
