"""An ICON-like mesh with every neighbour table icon4py's stencils use.

``stencilkit.meshes`` provides E2C, C2E, E2V, V2E, C2V, V2C; the compound tables are built
from them as ICON builds them:

* ``C2E2C[c, k]`` the cell across edge ``C2E[c, k]``; ``C2E2CO`` = ``[c, *C2E2C[c]]``;
* ``E2C2V[e]`` = the edge's two vertices, then the vertex of ``E2C[e, 0]`` and of ``E2C[e, 1]``
  opposite the edge (the "diamond");
* ``E2C2E[e]`` the other two edges of ``E2C[e, 0]`` then of ``E2C[e, 1]``; ``E2C2EO`` =
  ``[e, *E2C2E[e]]``;
* ``C2E2C2E[c]`` the edges of the three neighbour cells (9); ``C2E2C2E2C[c]`` the cells
  across those edges (9, the neighbours' neighbours including ``c`` itself);
* ``V2E2V[v, k]`` the vertex at the other end of edge ``V2E[v, k]``.

Dimensions compare by name, so ``Dimension("Cell")`` here is icon4py's ``CellDim``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ... import meshes
from ...core import Dimension, DimensionKind
from ...fields import as_connectivity

__all__ = ["IconMesh", "icon_mesh"]

Table = npt.NDArray[np.int32]

# offset name -> (source dim, target horizontal dim)
OFFSETS: dict[str, tuple[str, str]] = {
    "E2C": ("Cell", "Edge"),
    "C2E": ("Edge", "Cell"),
    "E2V": ("Vertex", "Edge"),
    "V2E": ("Edge", "Vertex"),
    "C2V": ("Vertex", "Cell"),
    "V2C": ("Cell", "Vertex"),
    "C2E2C": ("Cell", "Cell"),
    "C2E2CO": ("Cell", "Cell"),
    "E2C2V": ("Vertex", "Edge"),
    "E2C2E": ("Edge", "Edge"),
    "E2C2EO": ("Edge", "Edge"),
    "C2E2C2E": ("Edge", "Cell"),
    "C2E2C2E2C": ("Cell", "Cell"),
    "V2E2V": ("Vertex", "Vertex"),
}
VERTICAL = ("K", "KHalf")


@dataclass(frozen=True, eq=False)
class IconMesh:
    """Sizes, NumPy tables by offset name, and the offset provider."""

    mesh: meshes.Mesh
    nlev: int
    tables: dict[str, Table]

    def size(self, dim: Dimension) -> int:
        """Points along a horizontal or vertical dimension (``KHalf`` has ``nlev + 1``)."""
        if dim.value == "KHalf":
            return self.nlev + 1
        if dim.kind == DimensionKind.VERTICAL:
            return self.nlev
        return {
            "Cell": self.mesh.n_cells,
            "Edge": self.mesh.n_edges,
            "Vertex": self.mesh.n_vertices,
        }[dim.value]

    def local_size(self, dim: Dimension) -> int | None:
        """The width of a local dimension named after a table (None for unknown ones)."""
        t = self.tables.get(dim.value)
        return None if t is None else int(t.shape[1])

    def offset_provider(self, allocator: Any = None) -> dict[str, Any]:
        provider: dict[str, Any] = {}
        for name, table in self.tables.items():
            source, target = OFFSETS[name]
            provider[name] = as_connectivity(
                [Dimension(target), Dimension(name, DimensionKind.LOCAL)],
                Dimension(source),
                table.copy(),
                allocator=allocator,
                skip_value=None,
            )
        provider["Koff"] = Dimension("K", DimensionKind.VERTICAL)
        provider["KHalfOff"] = Dimension("KHalf", DimensionKind.VERTICAL)
        return provider


def _other(pair: Table, this: Table) -> Table:
    """Of each row's two entries, the one that is not ``this``."""
    return np.where(pair[:, 0] == this, pair[:, 1], pair[:, 0]).astype(np.int32)


def icon_mesh(nx: int = 4, ny: int = 4, nlev: int = 10) -> IconMesh:
    """The periodic ``nx x ny``-quad triangular mesh (no skip values) with ``nlev`` levels."""
    m = meshes.periodic_triangular_mesh(nx, ny)
    e2c, c2e, e2v, v2e, c2v = m.e2c, m.c2e, m.e2v, m.v2e, m.c2v
    n_c, n_e = len(c2e), len(e2c)
    cells = np.arange(n_c, dtype=np.int32)
    edges = np.arange(n_e, dtype=np.int32)
    c2e2c = np.stack([_other(e2c[c2e[:, k]], cells) for k in range(3)], axis=1)

    def opposite_vertex(c: Table) -> Table:
        """The vertex of cell ``c[e]`` not on edge ``e``."""
        vs = c2v[c]
        on_edge = (vs == e2v[:, :1]) | (vs == e2v[:, 1:])
        far: Table = vs[np.arange(n_e), np.argmin(on_edge, axis=1)].astype(np.int32)
        return far

    e2c2v = np.stack(
        [e2v[:, 0], e2v[:, 1], opposite_vertex(e2c[:, 0]), opposite_vertex(e2c[:, 1])], axis=1
    )

    def other_edges(c: Table) -> Table:
        es = c2e[c]
        keep = es != edges[:, None]
        rest: Table = es[keep].reshape(n_e, 2)
        return rest

    e2c2e = np.concatenate([other_edges(e2c[:, 0]), other_edges(e2c[:, 1])], axis=1)
    c2e2c2e = c2e[c2e2c].reshape(n_c, 9)
    c2e2c2e2c = c2e2c[c2e2c].reshape(n_c, 9)
    v2e2v = np.stack(
        [_other(e2v[v2e[:, k]], np.arange(len(v2e), dtype=np.int32)) for k in range(v2e.shape[1])],
        axis=1,
    )
    tables = {
        "E2C": e2c,
        "C2E": c2e,
        "E2V": e2v,
        "V2E": v2e,
        "C2V": c2v,
        "V2C": m.v2c,
        "C2E2C": c2e2c,
        "C2E2CO": np.concatenate([cells[:, None], c2e2c], axis=1),
        "E2C2V": e2c2v,
        "E2C2E": e2c2e,
        "E2C2EO": np.concatenate([edges[:, None], e2c2e], axis=1),
        "C2E2C2E": c2e2c2e,
        "C2E2C2E2C": c2e2c2e2c,
        "V2E2V": v2e2v,
    }
    return IconMesh(
        m, nlev, {k: np.ascontiguousarray(v, dtype=np.int32) for k, v in tables.items()}
    )
