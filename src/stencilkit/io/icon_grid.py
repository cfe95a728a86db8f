"""ICON grid files (netCDF) <-> :class:`stencilkit.meshes.Mesh`, with their neighbour tables.

An ICON grid file stores each neighbour table transposed, as ``(neighbour, element)``, with
1-based (Fortran) indices and 0 (or a negative value) for a missing neighbour:

=========================  ===============  ==========================  =================
ICON variable              file dims        stencilkit table            missing
=========================  ===============  ==========================  =================
``vertex_of_cell``         (nv, cell)       ``c2v`` (n_cells, 3)        --
``edge_of_cell``           (nv, cell)       ``c2e`` (n_cells, 3)        --
``adjacent_cell_of_edge``  (nc, edge)       ``e2c`` (n_edges, 2)        boundary edges
``edge_vertices``          (nc, edge)       ``e2v`` (n_edges, 2)        --
``cells_of_vertex``        (ne, vertex)     ``v2c`` (n_vertices, 6)     pentagons, boundary
``edges_of_vertex``        (ne, vertex)     ``v2e`` (n_vertices, 6)     pentagons, boundary
``neighbor_cell_index``    (nv, cell)       C2E2C (tables only)         boundary cells
``vertices_of_vertex``     (ne, vertex)     V2E2V (tables only)         pentagons, boundary
=========================  ===============  ==========================  =================

Read tables are 0-based ``int32`` with -1 for every missing neighbour, in the file's order:
a real ICON grid follows ICON's own neighbour ordering, not the counterclockwise order that
:func:`~stencilkit.meshes.periodic_triangular_mesh` guarantees, and numbers its boundary
edges by refinement zone rather than first (``n_boundary_edges`` still counts them). Geometry comes from
``cell_area``, ``dual_area``, ``edge_length``, ``dual_edge_length``, ``orientation_of_normal``
(C2E orientation), ``edge_orientation`` (V2E orientation), ``zonal_normal_primal_edge`` /
``meridional_normal_primal_edge`` (edge normals) and the coordinates: on a planar or torus grid
(global attribute ``grid_geometry`` 2 or 4) the Cartesian ``cartesian_x_vertices``,
``cell_circumcenter_cartesian_x``, ``edge_middle_cartesian_x`` (and ``_y``) where present; else
``vlon/vlat``, ``clon/clat``, ``elon/elat`` in radians. A read mesh has ``nx = ny = 0`` unless
the file was written by :func:`write_icon_grid` from a synthetic mesh (attributes
``stencilkit_nx/ny``).

Needs the ``icon-grid`` extra (xarray and netCDF4; h5netcdf also works for netCDF-4 files): ``pip install 'stencilkit[icon-grid]'``.

>>> mesh = read_icon_grid("icon_grid_0013_R02B04_G.nc")
>>> vn_div(vn, geofac_div, out=div, offset_provider=mesh.offset_provider())
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.errors import StencilValueError
from ..fields.extras import require
from ..meshes import SKIP_VALUE, Mesh

#: ICON table name -> (stencilkit name, element dimension, neighbour dimension).
TABLES: dict[str, tuple[str, str, str]] = {
    "vertex_of_cell": ("c2v", "cell", "nv"),
    "edge_of_cell": ("c2e", "cell", "nv"),
    "adjacent_cell_of_edge": ("e2c", "edge", "nc"),
    "edge_vertices": ("e2v", "edge", "nc"),
    "cells_of_vertex": ("v2c", "vertex", "ne"),
    "edges_of_vertex": ("v2e", "vertex", "ne"),
    "neighbor_cell_index": ("c2e2c", "cell", "nv"),
    "vertices_of_vertex": ("v2e2v", "vertex", "ne"),
}
_MESH_TABLES = ("c2v", "c2e", "e2c", "e2v", "v2c", "v2e")

#: ICON's ``grid_geometry`` codes (mo_grid_geometry_info).
SPHERE, TORUS, PLANAR = 1, 2, 4

#: Mesh attribute -> (ICON variable, its dimension); coordinates are handled apart.
_GEOMETRY: dict[str, tuple[str, str]] = {
    "cell_area": ("cell_area", "cell"),
    "dual_area": ("dual_area", "vertex"),
    "edge_length": ("edge_length", "edge"),
    "dual_edge_length": ("dual_edge_length", "edge"),
    "edge_normal_x": ("zonal_normal_primal_edge", "edge"),
    "edge_normal_y": ("meridional_normal_primal_edge", "edge"),
}
#: Mesh coordinates -> (planar Cartesian variable, spherical variable, dimension).
_COORDS: dict[str, tuple[str, str, str]] = {
    "vertex_x": ("cartesian_x_vertices", "vlon", "vertex"),
    "vertex_y": ("cartesian_y_vertices", "vlat", "vertex"),
    "cell_x": ("cell_circumcenter_cartesian_x", "clon", "cell"),
    "cell_y": ("cell_circumcenter_cartesian_y", "clat", "cell"),
    "edge_x": ("edge_middle_cartesian_x", "elon", "edge"),
    "edge_y": ("edge_middle_cartesian_y", "elat", "edge"),
}


def _engine(what: str) -> str:
    """xarray's netCDF engine: netCDF4 (the extra's; reads netCDF-3 and -4), else h5netcdf."""
    if (
        importlib.util.find_spec("netCDF4") is None
        and importlib.util.find_spec("h5netcdf") is not None
    ):
        return "h5netcdf"
    require("netCDF4", "icon-grid", what)
    return "netcdf4"


def _open(path: str | os.PathLike[str]) -> Any:
    xr = require("xarray", "icon-grid", "read_icon_grid()")
    engine = _engine("read_icon_grid()")
    # no CF decoding: integer tables must stay integers (a _FillValue would turn them to floats)
    return xr.open_dataset(path, engine=engine, mask_and_scale=False, decode_times=False)


def _table(ds: Any, name: str) -> npt.NDArray[np.int32]:
    _, element, neighbour = TABLES[name]
    var = ds[name]
    if set(var.dims) != {element, neighbour}:
        raise StencilValueError(
            f"ICON grid variable {name!r} has dims {var.dims}, expected ({neighbour!r}, {element!r})"
        )
    raw = np.asarray(var.transpose(element, neighbour).values).astype(np.int64) - 1
    raw[raw < 0] = SKIP_VALUE  # 0 (and -1 in some files) mark a missing neighbour
    return np.ascontiguousarray(raw, dtype=np.int32)


def icon_grid_tables(path: str | os.PathLike[str]) -> dict[str, npt.NDArray[np.int32]]:
    """Every neighbour table of an ICON grid file, 0-based ``int32``, -1 for missing neighbours,
    by stencilkit name (``"c2e"``, ``"e2c"``, ..., ``"c2e2c"``, ``"v2e2v"``; see the module doc).

    >>> icon_grid_tables("grid.nc")["c2e2c"].shape
    (20480, 3)
    """
    with _open(path) as ds:
        return {TABLES[n][0]: _table(ds, n) for n in TABLES if n in ds.variables}


def read_icon_grid(path: str | os.PathLike[str]) -> Mesh:
    """The mesh of an ICON grid file: its six neighbour tables and its geometry.

    >>> mesh = read_icon_grid("icon_grid_0013_R02B04_G.nc")
    >>> mesh.n_cells, mesh.offset_provider()["C2E"].max_neighbors
    (20480, 3)
    """
    with _open(path) as ds:
        missing = [n for n in TABLES if TABLES[n][0] in _MESH_TABLES and n not in ds.variables]
        if missing:
            raise StencilValueError(
                f"{os.fspath(path)} is not an ICON grid file: it lacks {', '.join(missing)}",
                hint="ICON grid files hold vertex_of_cell, edge_of_cell, adjacent_cell_of_edge, ...",
            )
        tables: dict[str, Any] = {
            TABLES[n][0]: _table(ds, n) for n in TABLES if TABLES[n][0] in _MESH_TABLES
        }
        geometry = int(ds.attrs.get("grid_geometry", SPHERE))
        nx, ny = int(ds.attrs.get("stencilkit_nx", 0)), int(ds.attrs.get("stencilkit_ny", 0))
        planar = geometry in (TORUS, PLANAR)
        values: dict[str, Any] = {}
        for attr, (cartesian, spherical, _) in _COORDS.items():
            name = cartesian if planar and cartesian in ds.variables else spherical
            values[attr] = _floats(ds, name)
        for attr, (name, _) in _GEOMETRY.items():
            values[attr] = _floats(ds, name)
        c2e_orientation = _floats(ds, "orientation_of_normal").T
        v2e_orientation = _floats(ds, "edge_orientation").T
    e2c = tables["e2c"]
    return Mesh(
        nx=nx,
        ny=ny,
        periodic=geometry == TORUS,
        n_boundary_edges=int((e2c[:, 1] == SKIP_VALUE).sum()),
        **tables,
        **values,
        c2e_orientation=np.ascontiguousarray(c2e_orientation),
        v2e_orientation=np.ascontiguousarray(v2e_orientation),
    )


def _floats(ds: Any, name: str) -> npt.NDArray[np.float64]:
    if name not in ds.variables:
        raise StencilValueError(f"the ICON grid file lacks the variable {name!r}")
    return np.ascontiguousarray(ds[name].values, dtype=np.float64)


def _derived(mesh: Mesh) -> dict[str, npt.NDArray[np.int64]]:
    """C2E2C and V2E2V, which ICON files carry and a Mesh does not: 0-based, -1 for missing."""
    cells = np.arange(mesh.n_cells)[:, None]
    across = mesh.e2c[mesh.c2e]  # (cell, 3, 2): both cells of each edge
    c2e2c = np.where(across[..., 0] == cells, across[..., 1], across[..., 0])
    verts = np.arange(mesh.n_vertices)[:, None]
    ends = mesh.e2v[np.maximum(mesh.v2e, 0)]
    v2e2v = np.where(ends[..., 0] == verts, ends[..., 1], ends[..., 0])
    v2e2v = np.where(mesh.v2e == SKIP_VALUE, SKIP_VALUE, v2e2v)
    return {"c2e2c": c2e2c.astype(np.int64), "v2e2v": v2e2v.astype(np.int64)}


def write_icon_grid(mesh: Mesh, path: str | os.PathLike[str]) -> None:
    """Write ``mesh`` as an ICON grid file (netCDF-4): the tables transposed and 1-based with 0
    for a missing neighbour, the geometry and coordinates under ICON's names (see the module
    doc); a periodic mesh is a planar torus (``grid_geometry = 2``), a bounded one planar (4).
    Its planar coordinates are also written as ``vlon/vlat/...`` for tools that expect those.

    >>> write_icon_grid(periodic_triangular_mesh(8, 8), "torus_grid.nc")
    """
    xr = require("xarray", "icon-grid", "write_icon_grid()")
    engine = _engine("write_icon_grid()")
    element_dims = {"cell": mesh.n_cells, "edge": mesh.n_edges, "vertex": mesh.n_vertices}
    tables: dict[str, Any] = {n: getattr(mesh, n) for n in _MESH_TABLES} | _derived(mesh)
    data: dict[str, Any] = {}
    for icon_name, (name, element, neighbour) in TABLES.items():
        table = np.asarray(tables[name], dtype=np.int64)
        assert table.shape[0] == element_dims[element]
        data[icon_name] = (
            (neighbour, element),
            np.where(table < 0, 0, table + 1).T.astype(np.int32),
        )
    for attr, (cartesian, spherical, dim) in _COORDS.items():
        data[cartesian] = (dim, getattr(mesh, attr))
        data[spherical] = (dim, getattr(mesh, attr))
    for attr, (name, dim) in _GEOMETRY.items():
        data[name] = (dim, getattr(mesh, attr))
    data["orientation_of_normal"] = (("nv", "cell"), mesh.c2e_orientation.T.astype(np.int32))
    data["edge_orientation"] = (("ne", "vertex"), mesh.v2e_orientation.T.astype(np.int32))
    attrs: dict[str, Any] = {
        "title": "ICON grid written by stencilkit",
        "grid_geometry": TORUS if mesh.periodic else PLANAR,
        "grid_cell_type": 3,
        "domain_length": 1.0,
        "domain_height": 1.0,
        "stencilkit_nx": mesh.nx,
        "stencilkit_ny": mesh.ny,
    }
    ds = xr.Dataset({k: xr.Variable(*v) for k, v in data.items()}, attrs=attrs)
    ds.to_netcdf(path, engine=engine, format="NETCDF4")
