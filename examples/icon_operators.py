"""ICON-like operators on an unstructured triangular mesh, with a vertical dimension K.

On a triangular mesh of the unit square (``stencilkit.meshes``; periodic, or bounded with -1
in the neighbour tables), with the coefficient fields ICON precomputes:

- divergence of the edge-normal velocity to cells:
  ``div = neighbor_sum(vn(C2E) * geofac_div, axis=C2EDim)``,
  ``geofac_div = c2e_orientation * edge_length / cell_area`` (a sparse field on ``Cell x C2E``);
- gradient of a cell field to edges, along the edge normal:
  ``grad = (psi(E2C[1]) - psi(E2C[0])) * inv_dual_edge_length``;
- relative vorticity at vertices (circulation around the dual cell / its area):
  ``rot = neighbor_sum(vn(V2E) * geofac_rot, axis=V2EDim)``,
  ``geofac_rot = v2e_orientation * dual_edge_length / dual_area``.

On the torus the discrete operators are mimetic: ``rot(grad(psi)) == 0`` at every vertex and
``sum(cell_area * div(vn)) == 0`` for any ``vn``; ``main()`` checks both besides the NumPy
references. On the bounded mesh, the gradient only exists on interior edges: those are
numbered after the boundary edges, so the program writes ``Edge: (n_boundary_edges, n_edges)``.

The stencils use nothing but ``import stencilkit as gtx`` (``import gt4py.next as gtx`` runs
them unchanged); only the mesh generator comes from ``stencilkit.meshes``, where a GT4Py user
would read an ICON grid file.

Run it: ``python examples/icon_operators.py`` (embedded backend) or
``STENCILKIT_EXAMPLE_BACKEND=cpu python examples/icon_operators.py`` (or ``gpu``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import stencilkit as gtx
from stencilkit.meshes import Mesh, periodic_triangular_mesh

Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
Vertex = gtx.Dimension("Vertex")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
V2EDim = gtx.Dimension("V2E", kind=gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
V2E = gtx.FieldOffset("V2E", source=Edge, target=(Vertex, V2EDim))

CellField = gtx.Field[gtx.Dims[Cell, K], gtx.float64]
EdgeField = gtx.Field[gtx.Dims[Edge, K], gtx.float64]
VertexField = gtx.Field[gtx.Dims[Vertex, K], gtx.float64]

N_LEVELS = 8


@gtx.field_operator
def divergence(
    vn: EdgeField, geofac_div: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64]
) -> CellField:
    return gtx.neighbor_sum(vn(C2E) * geofac_div, axis=C2EDim)


@gtx.field_operator
def gradient(
    psi: CellField, inv_dual_edge_length: gtx.Field[gtx.Dims[Edge], gtx.float64]
) -> EdgeField:
    return (psi(E2C[1]) - psi(E2C[0])) * inv_dual_edge_length


@gtx.field_operator
def vorticity(
    vn: EdgeField, geofac_rot: gtx.Field[gtx.Dims[Vertex, V2EDim], gtx.float64]
) -> VertexField:
    return gtx.neighbor_sum(vn(V2E) * geofac_rot, axis=V2EDim)


@gtx.program
def compute_divergence(
    vn: EdgeField, geofac_div: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64], div: CellField
):
    divergence(vn, geofac_div, out=div)


@gtx.program
def compute_gradient(
    psi: CellField,
    inv_dual_edge_length: gtx.Field[gtx.Dims[Edge], gtx.float64],
    grad: EdgeField,
    edge_start: gtx.int32,
    edge_end: gtx.int32,
    nlev: gtx.int32,
):
    gradient(
        psi, inv_dual_edge_length, out=grad, domain={Edge: (edge_start, edge_end), K: (0, nlev)}
    )


@gtx.program
def compute_vorticity(
    vn: EdgeField, geofac_rot: gtx.Field[gtx.Dims[Vertex, V2EDim], gtx.float64], rot: VertexField
):
    vorticity(vn, geofac_rot, out=rot)


# --- coefficients and NumPy references -------------------------------------------------------


def geofac_div(mesh: Mesh) -> np.ndarray:
    return mesh.c2e_orientation * mesh.edge_length[mesh.c2e] / mesh.cell_area[:, None]


def geofac_rot(mesh: Mesh) -> np.ndarray:
    # a missing neighbour has orientation 0, so its (arbitrary) gathered length does not count
    dual = mesh.dual_edge_length[np.maximum(mesh.v2e, 0)]
    return mesh.v2e_orientation * dual / mesh.dual_area[:, None]


def divergence_numpy(mesh: Mesh, vn: np.ndarray) -> np.ndarray:
    valid = (mesh.c2e >= 0)[:, :, None]
    return np.einsum("cn,cnk->ck", geofac_div(mesh), np.where(valid, vn[mesh.c2e], 0.0))


def gradient_numpy(mesh: Mesh, psi: np.ndarray) -> np.ndarray:
    """On interior edges ``n_boundary_edges:`` (all edges of the periodic mesh)."""
    inner = mesh.e2c[mesh.n_boundary_edges :]
    return (psi[inner[:, 1]] - psi[inner[:, 0]]) / mesh.dual_edge_length[
        mesh.n_boundary_edges :, None
    ]


def vorticity_numpy(mesh: Mesh, vn: np.ndarray) -> np.ndarray:
    valid = (mesh.v2e >= 0)[:, :, None]
    gathered = np.where(valid, vn[np.maximum(mesh.v2e, 0)], 0.0)
    return np.einsum("vn,vnk->vk", geofac_rot(mesh), gathered)


# --- running them ------------------------------------------------------------------------------


def run_divergence(
    backend: Any, mesh: Mesh, vn: np.ndarray, div: np.ndarray, allocator: Any = None
) -> np.ndarray:
    """Runs on ``backend``, fields and tables on ``allocator``'s device; returns ``div``."""
    out = gtx.as_field([Cell, K], div, allocator=allocator)
    compute_divergence.with_backend(backend)(
        gtx.as_field([Edge, K], vn, allocator=allocator),
        gtx.as_field([Cell, C2EDim], geofac_div(mesh), allocator=allocator),
        out,
        offset_provider=mesh.offset_provider(allocator),
    )
    return np.asarray(out.asnumpy())


def run_gradient(
    backend: Any, mesh: Mesh, psi: np.ndarray, grad: np.ndarray, allocator: Any = None
) -> np.ndarray:
    out = gtx.as_field([Edge, K], grad, allocator=allocator)
    inv_dual = np.zeros(mesh.n_edges)
    inv_dual[mesh.n_boundary_edges :] = 1.0 / mesh.dual_edge_length[mesh.n_boundary_edges :]
    compute_gradient.with_backend(backend)(
        gtx.as_field([Cell, K], psi, allocator=allocator),
        gtx.as_field([Edge], inv_dual, allocator=allocator),
        out,
        mesh.n_boundary_edges,
        mesh.n_edges,
        psi.shape[1],
        offset_provider=mesh.offset_provider(allocator),
    )
    return np.asarray(out.asnumpy())


def run_vorticity(
    backend: Any, mesh: Mesh, vn: np.ndarray, rot: np.ndarray, allocator: Any = None
) -> np.ndarray:
    out = gtx.as_field([Vertex, K], rot, allocator=allocator)
    compute_vorticity.with_backend(backend)(
        gtx.as_field([Edge, K], vn, allocator=allocator),
        gtx.as_field([Vertex, V2EDim], geofac_rot(mesh), allocator=allocator),
        out,
        offset_provider=mesh.offset_provider(allocator),
    )
    return np.asarray(out.asnumpy())


def main(backend: Any = None) -> None:
    rng = np.random.default_rng(0)
    name = getattr(backend, "name", None) or "embedded"
    for bounded in (False, True):
        mesh = periodic_triangular_mesh(24, 16, bounded=bounded)
        vn = rng.standard_normal((mesh.n_edges, N_LEVELS))
        psi = rng.standard_normal((mesh.n_cells, N_LEVELS))
        div = run_divergence(backend, mesh, vn, np.zeros((mesh.n_cells, N_LEVELS)), backend)
        grad = run_gradient(backend, mesh, psi, np.zeros((mesh.n_edges, N_LEVELS)), backend)
        rot = run_vorticity(backend, mesh, vn, np.zeros((mesh.n_vertices, N_LEVELS)), backend)
        errors = {
            "div": np.abs(div - divergence_numpy(mesh, vn)).max(),
            "grad": np.abs(grad[mesh.n_boundary_edges :] - gradient_numpy(mesh, psi)).max(),
            "rot": np.abs(rot - vorticity_numpy(mesh, vn)).max(),
        }
        kind = "bounded" if bounded else "periodic"
        print(
            f"{kind} mesh, {mesh.n_cells} cells x {N_LEVELS} levels on {name}: max error "
            + ", ".join(f"{k} {v:.1e}" for k, v in errors.items())
        )
        assert max(errors.values()) < 1e-9
        if not bounded:
            # mimetic identities of the discrete operators on the torus
            curl_grad = run_vorticity(
                backend, mesh, grad, np.zeros((mesh.n_vertices, N_LEVELS)), backend
            )
            total_div = (mesh.cell_area[:, None] * div).sum(axis=0)
            print(
                f"  max |rot(grad psi)| = {np.abs(curl_grad).max():.1e},"
                f" max |sum(area * div vn)| = {np.abs(total_div).max():.1e}"
            )
            assert np.abs(curl_grad).max() < 1e-9 and np.abs(total_div).max() < 1e-9


def example_backend() -> Any:
    """The backend named by ``STENCILKIT_EXAMPLE_BACKEND``: embedded (default), cpu or gpu."""
    name = os.environ.get("STENCILKIT_EXAMPLE_BACKEND", "embedded")
    backends = {"embedded": None, "cpu": gtx.cpu, "gpu": gtx.gpu}
    if name not in backends:
        raise SystemExit(f"STENCILKIT_EXAMPLE_BACKEND={name!r}: use one of {', '.join(backends)}")
    return backends[name]


if __name__ == "__main__":
    main(example_backend())
