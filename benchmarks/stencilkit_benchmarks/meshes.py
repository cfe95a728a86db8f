"""The benchmark's mesh: ``stencilkit.meshes.periodic_triangular_mesh`` (as generated, and
renumbered along a space-filling curve as ICON numbers its grids), with a check of its tables.

The suite has no mesh generator of its own: it measures the library's tables, so a regression
in ``stencilkit.meshes`` shows up here as a failed check, not as a silently different mesh.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stencilkit.meshes import Mesh, periodic_triangular_mesh, reorder_for_locality


@dataclass(frozen=True)
class BenchMesh:
    """A library mesh and how it was made (``source``, printed in the report)."""

    mesh: Mesh
    source: str

    @property
    def e2c(self) -> Any:
        return self.mesh.e2c

    @property
    def c2e(self) -> Any:
        return self.mesh.c2e

    @property
    def v2e(self) -> Any:
        return self.mesh.v2e

    @property
    def n_cells(self) -> int:
        return int(self.mesh.n_cells)

    @property
    def n_edges(self) -> int:
        return int(self.mesh.n_edges)

    @property
    def n_vertices(self) -> int:
        return int(self.mesh.n_vertices)


def mesh_problems(m: Mesh | BenchMesh) -> list[str]:
    """What is wrong with the E2C / C2E / V2E tables of a periodic mesh (empty: consistent)."""
    import numpy as np

    nc, ne, nv = int(m.n_cells), int(m.n_edges), int(m.n_vertices)
    bad: list[str] = []
    if (2 * ne, ne) != (3 * nc, 3 * nv):
        bad.append(f"{nc} cells, {ne} edges, {nv} vertices is not a periodic triangular mesh")
    for name, t, rows, cols, hi in (
        ("e2c", m.e2c, ne, 2, nc),
        ("c2e", m.c2e, nc, 3, ne),
        ("v2e", m.v2e, nv, 6, ne),
    ):
        if t.shape != (rows, cols):
            bad.append(f"{name} has shape {t.shape}, expected {(rows, cols)}")
        elif t.min() < 0 or t.max() >= hi:
            bad.append(f"{name} has entries outside 0..{hi - 1}")
        elif (np.diff(np.sort(t, axis=1), axis=1) == 0).any():
            bad.append(f"{name} has a row with a repeated neighbour")
    if bad:
        return bad
    if not (np.bincount(m.c2e.ravel(), minlength=ne) == 2).all():
        bad.append("not every edge is in exactly two cells' C2E rows")
    if not (np.bincount(m.v2e.ravel(), minlength=ne) == 2).all():
        bad.append("not every edge is in exactly two vertices' V2E rows")
    if not (np.bincount(m.e2c.ravel(), minlength=nc) == 3).all():
        bad.append("not every cell is in exactly three edges' E2C rows")
    e = m.c2e.astype(np.int64)
    cells = np.arange(nc)[:, None]
    if not ((m.e2c[e, 0] == cells) | (m.e2c[e, 1] == cells)).all():
        bad.append("C2E and E2C are not inverse to each other")
    return bad


def build_mesh(nx: int, ny: int, locality: bool = False) -> tuple[BenchMesh, str]:
    """The periodic ``nx`` x ``ny`` mesh of ``stencilkit.meshes`` (``locality``: renumbered by
    ``reorder_for_locality``) and ``"ok"``, or what is wrong with its tables."""
    mesh = periodic_triangular_mesh(nx, ny)
    source = "stencilkit.meshes.periodic_triangular_mesh"
    if locality:
        mesh = reorder_for_locality(mesh)
        source = f"stencilkit.meshes.reorder_for_locality({source})"
    m = BenchMesh(mesh, source)
    problems = mesh_problems(m)
    return m, "; ".join(problems) if problems else "ok"
