# DSL code is not plain typed Python for mypy (see shallow_water.py).
# mypy: disable-error-code="valid-type, type-arg, operator, no-untyped-def, no-any-return"
"""Diffusion of a cell field on an ICON-like triangular mesh, decomposed over MPI ranks.

Each step computes the gradient flux on edges (``u(E2C[1]) - u(E2C[0])``, scaled) and its
divergence back to cells through ``C2E``. The program reads ``u`` two table hops away from the
cells it updates, which ``halo_requirements`` derives from its IR: the mesh is decomposed with
two halo layers, edges are computed on the owned part plus the first layer, cells on the owned
part, and ``u`` is exchanged after each step. Rank 0 gathers the result and compares it bit for
bit with the same program on the whole mesh in one process.

Run it: ``mpiexec -n 4 python -m stencilkit.models.mesh_diffusion_mpi [cpu]`` (also on one process).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

import stencilkit as gtx
from stencilkit import distributed as dist
from stencilkit.meshes import C2E, E2C, C2EDim, Cell, Edge, periodic_triangular_mesh

K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)

CellField = gtx.Field[gtx.Dims[Cell, K], gtx.float64]
EdgeField = gtx.Field[gtx.Dims[Edge, K], gtx.float64]
N_LEVELS = 4


@gtx.field_operator
def edge_flux(u: CellField, weight: gtx.Field[gtx.Dims[Edge], gtx.float64]) -> EdgeField:
    return weight * (u(E2C[1]) - u(E2C[0]))


@gtx.field_operator
def update(
    u: CellField,
    flux: EdgeField,
    geofac: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64],
    nu: gtx.float64,
) -> CellField:
    return u + nu * gtx.neighbor_sum(flux(C2E) * geofac, axis=C2EDim)


@gtx.program
def diffusion_step(
    u: CellField,
    weight: gtx.Field[gtx.Dims[Edge], gtx.float64],
    geofac: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64],
    nu: gtx.float64,
    flux: EdgeField,
    u_new: CellField,
    n_edges: gtx.int32,
    n_cells: gtx.int32,
):
    edge_flux(u, weight, out=flux, domain={Edge: (0, n_edges), K: (0, N_LEVELS)})
    update(u, flux, geofac, nu, out=u_new, domain={Cell: (0, n_cells), K: (0, N_LEVELS)})


def coefficients(mesh: Any) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    weight = mesh.edge_length / mesh.dual_edge_length
    geofac = mesh.c2e_orientation / mesh.cell_area[:, None]
    return weight, geofac


def initial(mesh: Any) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(7)
    return rng.random((mesh.n_cells, N_LEVELS))


def one_process(mesh: Any, steps: int, nu: float, backend: Any) -> np.ndarray[Any, Any]:
    """The same program on the whole mesh in one process: the reference."""
    weight, geofac = coefficients(mesh)
    u = gtx.as_field([Cell, K], initial(mesh))
    u_new = gtx.zeros({Cell: mesh.n_cells, K: N_LEVELS})
    flux = gtx.zeros({Edge: mesh.n_edges, K: N_LEVELS})
    w = gtx.as_field([Edge], weight)
    g = gtx.as_field([Cell, C2EDim], geofac)
    step = diffusion_step.with_backend(backend)
    provider = mesh.offset_provider()
    for _ in range(steps):
        step(u, w, g, nu, flux, u_new, mesh.n_edges, mesh.n_cells, offset_provider=provider)
        u, u_new = u_new, u
    return u.asnumpy()


def decomposed(mesh: Any, steps: int, nu: float, backend: Any) -> np.ndarray[Any, Any] | None:
    """The program on this rank's part of the mesh; the whole result on rank 0."""
    step = dist.distribute(diffusion_step.with_backend(backend))
    layers = step.halos(mesh.offset_provider())["u"].layers  # 2: E2C after C2E
    md = dist.decompose_mesh(mesh, layers=layers)
    weight, geofac = coefficients(mesh)
    u = dist.scatter(
        md, [Cell, K], initial(mesh) if md.rank == 0 else None, extra={K: N_LEVELS}, name="u"
    )
    u_new = md.zeros([Cell, K], extra={K: N_LEVELS}, name="u_new")
    flux = md.zeros([Edge, K], extra={K: N_LEVELS}, name="flux")
    w = gtx.as_field([Edge], md.local(Edge, weight))
    g = gtx.as_field([Cell, C2EDim], md.local(Cell, geofac))
    provider = md.offset_provider()
    n_edges, n_cells = md.count(Edge, layers=1), md.count(Cell)
    for _ in range(steps):
        step(u, w, g, nu, flux, u_new, n_edges, n_cells, offset_provider=provider)
        md.exchange(u_new)
        u, u_new = u_new, u
    return dist.gather(u)


def main(argv: list[str]) -> int:
    backend = gtx.cpu if "cpu" in argv else None
    mesh = periodic_triangular_mesh(24, 20)
    steps, nu = 20, 0.02
    with dist.abort_on_error():
        result = decomposed(mesh, steps, nu, backend)
    if result is None:
        return 0
    ref = one_process(mesh, steps, nu, backend)
    same = np.array_equal(result, ref)
    size = dist.world().Get_size()
    print(
        f"diffusion on a {mesh.n_cells}-cell mesh, {steps} steps, {size} rank{'s' if size > 1 else ''}:"
        f" {'bitwise identical to one process' if same else 'DIFFERENT from one process'}"
        f" (max abs difference {float(np.max(np.abs(result - ref))):.1e})"
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
