"""The benchmark mesh: neighbour tables of a periodic triangular mesh and their checks."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass
class Mesh:
    """Neighbour tables of a mesh, int32, one row per element of the first location."""

    nx: int
    ny: int
    e2c: Any  # [edges, 2]
    c2e: Any  # [cells, 3]
    v2e: Any  # [vertices, 6]
    source: str

    @property
    def n_cells(self) -> int:
        return int(self.c2e.shape[0])

    @property
    def n_edges(self) -> int:
        return int(self.e2c.shape[0])

    @property
    def n_vertices(self) -> int:
        return int(self.v2e.shape[0])


def periodic_triangular_mesh(nx: int, ny: int) -> Mesh:
    """A doubly periodic mesh of ``nx * ny`` quads, each split into two triangles.

    Vertex ``(i, j)`` is ``i + nx*j`` (``q``); quad ``q`` owns cells ``2q`` (lower triangle
    v(i,j), v(i+1,j), v(i,j+1)) and ``2q+1`` (upper: v(i+1,j), v(i+1,j+1), v(i,j+1)) and edges
    ``3q`` (v(i,j)-v(i+1,j)), ``3q+1`` (v(i,j)-v(i,j+1)), ``3q+2`` (v(i+1,j)-v(i,j+1)).
    Cells = 2 nx ny, edges = 3 nx ny, vertices = nx ny; no boundary, so no skip values."""
    import numpy as np

    if nx < 3 or ny < 3:
        raise ValueError(f"a periodic triangular mesh needs nx, ny >= 3, got {nx} x {ny}")
    jg, ig = np.meshgrid(np.arange(ny, dtype=np.int64), np.arange(nx, dtype=np.int64), indexing="ij")
    ii, jj = ig.ravel(), jg.ravel()

    def q(i: Any, j: Any) -> Any:
        return (i % nx) + nx * (j % ny)

    qq = q(ii, jj)
    c2e = np.empty((2 * nx * ny, 3), dtype=np.int64)
    c2e[2 * qq] = np.stack([3 * qq, 3 * qq + 1, 3 * qq + 2], axis=1)
    c2e[2 * qq + 1] = np.stack([3 * qq + 2, 3 * q(ii, jj + 1), 3 * q(ii + 1, jj) + 1], axis=1)
    e2c = np.empty((3 * nx * ny, 2), dtype=np.int64)
    e2c[3 * qq] = np.stack([2 * qq, 2 * q(ii, jj - 1) + 1], axis=1)
    e2c[3 * qq + 1] = np.stack([2 * qq, 2 * q(ii - 1, jj) + 1], axis=1)
    e2c[3 * qq + 2] = np.stack([2 * qq, 2 * qq + 1], axis=1)
    v2e = np.stack([3 * qq, 3 * q(ii - 1, jj), 3 * qq + 1, 3 * q(ii, jj - 1) + 1,
                    3 * q(ii - 1, jj) + 2, 3 * q(ii, jj - 1) + 2], axis=1)
    return Mesh(nx, ny, e2c.astype(np.int32), c2e.astype(np.int32), v2e.astype(np.int32),
                "stencilkit.bench.periodic_triangular_mesh")


def mesh_problems(m: Mesh) -> list[str]:
    """What is wrong with the tables of ``m`` (empty: consistent)."""
    import numpy as np

    nc, ne, nv = 2 * m.nx * m.ny, 3 * m.nx * m.ny, m.nx * m.ny
    bad: list[str] = []
    for name, t, rows, cols, hi in (("e2c", m.e2c, ne, 2, nc), ("c2e", m.c2e, nc, 3, ne), ("v2e", m.v2e, nv, 6, ne)):
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


def _library_mesh(nx: int, ny: int, locality: bool = False) -> tuple[Mesh | None, str]:
    """The mesh of ``stencilkit.meshes.periodic_triangular_mesh`` (``locality``: renumbered by
    ``reorder_for_locality``) where that exists and gives consistent tables of the expected
    sizes; otherwise (None, why)."""
    import numpy as np

    try:
        mod = importlib.import_module("stencilkit.meshes")
        fn = mod.periodic_triangular_mesh
        got = fn(nx, ny)
        source = "stencilkit.meshes.periodic_triangular_mesh"
        if locality:
            got = mod.reorder_for_locality(got)
            source = f"stencilkit.meshes.reorder_for_locality({source})"
        tables = {}
        for key in ("e2c", "c2e", "v2e"):
            t = None
            for name in (key, key.upper()):
                t = got.get(name) if isinstance(got, dict) else getattr(got, name, None)
                if t is not None:
                    break
            if t is None:
                return None, f"stencilkit.meshes mesh has no {key} table"
            if hasattr(t, "asnumpy"):
                t = t.asnumpy()
            elif hasattr(t, "ndarray"):
                t = t.ndarray
            tables[key] = np.ascontiguousarray(np.asarray(t).astype(np.int32))
        m = Mesh(nx, ny, tables["e2c"], tables["c2e"], tables["v2e"], source)
    except Exception as err:
        return None, f"stencilkit.meshes not usable: {type(err).__name__}: {err}"
    problems = mesh_problems(m)
    if problems:
        return None, "stencilkit.meshes tables rejected: " + "; ".join(problems)
    return m, "ok"


def build_mesh(nx: int, ny: int, locality: bool = False) -> tuple[Mesh, str]:
    """The library's mesh generator if it exists and passes the checks, else our own.
    ``locality``: numbered along a space-filling curve, as ICON numbers its grids."""
    m, why = _library_mesh(nx, ny, locality)
    if m is not None:
        return m, why
    return periodic_triangular_mesh(nx, ny), why
