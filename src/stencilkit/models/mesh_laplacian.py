# DSL code is not plain typed Python for mypy (see shallow_water.py).
# mypy: disable-error-code="valid-type, type-arg, operator, no-untyped-def, no-any-return"
"""The unstructured part of ``stencilkit demo``: ICON's div(grad psi) on an ICON-like mesh.

The operator is the textbook one of ICON's triangular C-grid: the normal gradient on each edge,
``(psi(E2C[1]) - psi(E2C[0])) / dual_edge_length``, then its divergence on each cell,
``sum over C2E of orientation * edge_length * grad / cell_area``. It is a Laplacian only on a
mesh whose dual edges join circumcentres and cross the edges at right angles (a Voronoi dual,
as on ICON's grids). The demo checks it on such a mesh: ``psi = sin(2 pi x / Lx) sin(2 pi y /
Ly)`` on the ``Lx x Ly`` torus, whose Laplacian is ``-k^2 psi`` with ``k^2 = (2 pi / Lx)^2 +
(2 pi / Ly)^2`` (``-8 pi^2 psi`` on the unit square). The error is first order in the edge
length (in the max norm, as on ICON's own torus grids), so the check allows
``TOLERANCE_PER_EDGE * edge_length / Lx`` relative to ``k^2``: finer meshes must do better.

The mesh (:func:`demo_mesh`): an ICON torus grid from icon-grid-generator (package
``icon-grid-generator``, module ``grid_generator``) read with
:func:`stencilkit.io.icon_grid.read_icon_grid` where both it and the ``icon-grid`` extra are installed,
else :func:`stencilkit.meshes.periodic_equilateral_mesh`. Not
:func:`~stencilkit.meshes.periodic_triangular_mesh`: its right triangles with a centroid dual
turn this operator into a checkerboard (about +-200 where ``-8 pi^2 psi`` is +-79 at 16 x 16).

>>> check = run_mesh_check(None, n=16)
>>> check.ok
True
"""

from __future__ import annotations

import importlib.util
import math
import os
import tempfile
import time
from typing import Any

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64

from ..core.records import record
from ..meshes import C2E, E2C, C2EDim, Cell, Edge, Mesh, periodic_equilateral_mesh

#: relative max error allowed, per (edge length / domain length); observed 0.54 .. 0.79
TOLERANCE_PER_EDGE = 1.0
#: triangles per row of the demo's mesh (2 x 32 x 36 = 2304 cells)
DEMO_MESH_SIZE = 32


@gtx.field_operator
def laplacian(
    psi: Field[Dims[Cell], float64],
    inv_dual_edge_length: Field[Dims[Edge], float64],
    geofac_div: Field[Dims[Cell, C2EDim], float64],
) -> Field[Dims[Cell], float64]:
    grad = (psi(E2C[1]) - psi(E2C[0])) * inv_dual_edge_length
    return gtx.neighbor_sum(grad(C2E) * geofac_div, axis=C2EDim)


@gtx.program
def compute_laplacian(
    psi: Field[Dims[Cell], float64],
    inv_dual_edge_length: Field[Dims[Edge], float64],
    geofac_div: Field[Dims[Cell, C2EDim], float64],
    out: Field[Dims[Cell], float64],
):
    laplacian(psi, inv_dual_edge_length, geofac_div, out=out)


def geofac_div(mesh: Mesh) -> np.ndarray[Any, Any]:
    """ICON's divergence coefficients: orientation * edge length / cell area, per (cell, C2E)."""
    out: np.ndarray[Any, Any] = (
        mesh.c2e_orientation * mesh.edge_length[mesh.c2e] / mesh.cell_area[:, None]
    )
    return out


def laplacian_numpy(mesh: Mesh, psi: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The same operator in NumPy: the reference for the DSL version."""
    grad = (psi[mesh.e2c[:, 1]] - psi[mesh.e2c[:, 0]]) / mesh.dual_edge_length
    out: np.ndarray[Any, Any] = (grad[mesh.c2e] * geofac_div(mesh)).sum(axis=1)
    return out


@record
class DemoMesh:
    """The mesh the demo runs on, the size of its torus and where it comes from."""

    mesh: Mesh
    length: float  # Lx
    height: float  # Ly
    edge_length: float  # of the triangles' base (the mesh spacing)
    source: str


def icon_generator_available() -> bool:
    """Whether icon-grid-generator and the icon-grid extra (xarray, netCDF4) are installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("grid_generator", "xarray"))


def icon_torus(n: int) -> DemoMesh:
    """ICON's planar torus grid of ``n`` equilateral triangles' bases per row (edge 1/n) and the
    even number of rows nearest to ``2 n / sqrt(3)``, written by icon-grid-generator to a
    temporary file and read back with :func:`stencilkit.io.icon_grid.read_icon_grid`."""
    from grid_generator import TorusGridSpec, generate_grid

    from ..io import read_icon_grid

    spec = TorusGridSpec(nx=n, ny=max(4, 2 * round(n / math.sqrt(3.0))), edge_length=1.0 / n)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{spec.name}.nc")
        generate_grid(spec).to_netcdf(path)
        mesh = read_icon_grid(path)
    return DemoMesh(
        mesh,
        float(spec.domain_length),
        float(spec.domain_height),
        1.0 / n,
        f"ICON torus grid {spec.name} from icon-grid-generator",
    )


def demo_mesh(n: int) -> DemoMesh:
    """The ICON torus where icon-grid-generator is installed, else stencilkit's own equivalent."""
    if icon_generator_available():
        return icon_torus(max(3, n))
    mesh = periodic_equilateral_mesh(n)
    source = "periodic_equilateral_mesh (icon-grid-generator not installed)"
    return DemoMesh(mesh, 1.0, 1.0, 1.0 / n, source)


@record
class MeshCheck:
    """What ``run_mesh_check`` measured."""

    source: str
    n_cells: int
    max_rel_error: float  # max |lap(psi) + k^2 psi| / k^2
    tolerance: float
    max_abs_diff: float  # against laplacian_numpy
    seconds: float  # building (or loading) and running the program once

    @property
    def ok(self) -> bool:
        return self.max_rel_error <= self.tolerance and self.max_abs_diff < 1e-9


def run_mesh_check(
    backend: Any = None, n: int = DEMO_MESH_SIZE, mesh: DemoMesh | None = None
) -> MeshCheck:
    """div(grad psi) on ``mesh`` (default ``demo_mesh(n)``) on ``backend`` against ``-k^2 psi``."""
    from .shallow_water import BACKENDS

    if isinstance(backend, str):
        backend = BACKENDS[backend]
    dm = demo_mesh(n) if mesh is None else mesh
    m = dm.mesh
    kx, ky = 2 * math.pi / dm.length, 2 * math.pi / dm.height
    psi = np.sin(kx * m.cell_x) * np.sin(ky * m.cell_y)
    k2 = kx * kx + ky * ky
    allocator = backend if backend is not None else None
    fields = (
        gtx.as_field([Cell], psi, allocator=allocator),
        gtx.as_field([Edge], 1.0 / m.dual_edge_length, allocator=allocator),
        gtx.as_field([Cell, C2EDim], geofac_div(m), allocator=allocator),
    )
    out = gtx.as_field([Cell], np.zeros(m.n_cells), allocator=allocator)
    program = compute_laplacian if backend is None else compute_laplacian.with_backend(backend)
    t0 = time.perf_counter()
    program(*fields, out, offset_provider=m.offset_provider(allocator=allocator))
    lap = out.asnumpy()
    seconds = time.perf_counter() - t0
    return MeshCheck(
        source=dm.source,
        n_cells=m.n_cells,
        max_rel_error=float(np.max(np.abs(lap + k2 * psi))) / k2,
        tolerance=TOLERANCE_PER_EDGE * dm.edge_length / dm.length,
        max_abs_diff=float(np.max(np.abs(lap - laplacian_numpy(m, psi)))),
        seconds=seconds,
    )
