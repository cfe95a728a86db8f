"""Unstructured decomposition: an ICON-like mesh split over ranks, with halo layers.

Cells are partitioned along a space-filling (Morton) curve through their centroids: contiguous
pieces of the curve are compact patches, with no external partitioner. An edge belongs to the
owner of its first cell (``e2c[e, 0]``), a vertex to the owner of its first cell (``v2c[v, 0]``).
Halo layer ``k`` holds the elements ``k`` table hops away from the owned ones (any of the six
tables). Each rank numbers its elements locally, owned ones first, then layer 1, layer 2, ...
(each group by global index), and gets neighbour tables in that local numbering. Rows of the
outermost layer whose neighbours lie outside the local mesh point at local element 0 (or hold
the skip value where the global table has one): values computed there are never used.

>>> md = decompose_mesh(mesh, layers=2)
>>> u = md.scatter(Cell, u_global, name="u")            # halos filled
>>> provider = md.offset_provider()                     # local tables
>>> diffuse(u, ..., md.count(Edge, 1), offset_provider=provider)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.dims import Dimension
from ..core.domain import Domain, UnitRange, unit_range
from ..fields.constructors import as_connectivity, empty
from ..meshes import OFFSETS, SKIP_VALUE, Cell, Edge, Mesh, Vertex, morton_keys
from .base import Decomposition
from .comm import DistributedError, world
from .field import DecomposedField
from .halo import Message, Region

_KINDS = (Cell, Edge, Vertex)


def partition_cells(mesh: Mesh, parts: int) -> np.ndarray[Any, Any]:
    """The part (rank) of every cell: equal pieces of the Morton curve through the centroids."""
    if parts > mesh.n_cells:
        raise DistributedError(f"cannot split a mesh of {mesh.n_cells} cells over {parts} ranks")
    order = np.argsort(morton_keys(mesh.cell_x, mesh.cell_y), kind="stable")
    owner = np.empty(mesh.n_cells, np.int32)
    for r, chunk in enumerate(np.array_split(order, parts)):
        owner[chunk] = r
    return owner


def _grow(
    mesh: Mesh, sets: dict[Dimension, np.ndarray[Any, Any]]
) -> dict[Dimension, np.ndarray[Any, Any]]:
    """Every element one table hop from ``sets`` (boolean masks per kind), ``sets`` included."""
    c, e, v = sets[Cell], sets[Edge], sets[Vertex]
    out = {Cell: c.copy(), Edge: e.copy(), Vertex: v.copy()}

    def add(
        mask: np.ndarray[Any, Any], table: np.ndarray[Any, Any], rows: np.ndarray[Any, Any]
    ) -> None:
        idx = table[rows].ravel()
        mask[idx[idx >= 0]] = True

    add(out[Cell], mesh.e2c, e)
    add(out[Cell], mesh.v2c, v)
    add(out[Edge], mesh.c2e, c)
    add(out[Edge], mesh.v2e, v)
    add(out[Vertex], mesh.c2v, c)
    add(out[Vertex], mesh.e2v, e)
    return out


class MeshDecomposition(Decomposition):
    """An ICON-like mesh over the ranks of ``comm`` with ``layers`` halo layers."""

    kind = "mesh"

    def __init__(self, mesh: Mesh, layers: int = 1, comm: Any = None, gpu: bool = False) -> None:
        c = comm if comm is not None else world()
        super().__init__(c, gpu)
        if layers < 0:
            raise DistributedError(f"halo layers must be >= 0, got {layers}")
        self.mesh = mesh
        self.layers = layers
        cell_owner = partition_cells(mesh, self.size)
        self.owner = {
            Cell: cell_owner,
            Edge: cell_owner[mesh.e2c[:, 0]],
            Vertex: cell_owner[mesh.v2c[:, 0]],
        }
        # every rank's local elements in local order, and where each layer starts
        self.globals: list[dict[Dimension, np.ndarray[Any, Any]]] = []
        self.starts: list[dict[Dimension, list[int]]] = []
        for r in range(self.size):
            level = {k: self.owner[k] == r for k in _KINDS}
            seen = {k: m.copy() for k, m in level.items()}
            ids = {k: [np.flatnonzero(level[k])] for k in _KINDS}
            for _ in range(layers):
                grown = _grow(mesh, seen)
                for k in _KINDS:
                    ids[k].append(np.flatnonzero(grown[k] & ~seen[k]))
                seen = grown
            self.globals.append({k: np.concatenate(ids[k]).astype(np.int64) for k in _KINDS})
            self.starts.append({k: list(np.cumsum([0] + [len(a) for a in ids[k]])) for k in _KINDS})
        self.local_ids = self.globals[self.rank]
        self._local_of = {}
        for k in _KINDS:
            m = np.full(mesh.size(k), -1, np.int64)
            m[self.local_ids[k]] = np.arange(len(self.local_ids[k]))
            self._local_of[k] = m

    # -- geometry -------------------------------------------------------------------------------
    @property
    def dims(self) -> tuple[Dimension, ...]:
        """The decomposed (horizontal) dimensions."""
        return _KINDS

    def signature(self) -> tuple[Any, ...]:
        """Equal on two decompositions that split the same mesh the same way."""
        return ("mesh", id(self.mesh), self.mesh.n_cells, self.layers, self.size)

    def describe(self) -> str:
        """One line: the mesh, the number of ranks and the halo layers."""
        return (
            f"a {self.mesh.n_cells}-cell mesh over {self.size} ranks with {self.layers} halo layers"
        )

    def count(self, dim: Dimension, layers: int = 0, rank: int | None = None) -> int:
        """Local elements of kind ``dim`` in the owned part plus the first ``layers`` halo layers:
        ``count(Cell)`` is the number of owned cells, ``count(Edge, 1)`` ends the first layer."""
        return int(self.starts[self.rank if rank is None else rank][dim][layers + 1])

    def global_ids(self, dim: Dimension) -> np.ndarray[Any, Any]:
        """The global index of each local element of kind ``dim``."""
        return self.local_ids[dim]

    def local(self, dim: Dimension, values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """This rank's local values (local order) of a global per-element array along ``dim``."""
        return np.ascontiguousarray(np.asarray(values)[self.local_ids[dim]])

    def table(self, name: str) -> np.ndarray[Any, Any]:
        """A neighbour table (``"E2C"``, ...) of the local mesh in local numbering."""
        offset = next(o for o in OFFSETS if o.value == name)
        src, dst = offset.target[0], offset.source
        rows = self.mesh.table(offset)[self.local_ids[src]]
        local = np.where(rows >= 0, self._local_of[dst][np.maximum(rows, 0)], SKIP_VALUE)
        missing = (rows >= 0) & (local < 0)  # outside the local mesh: only on outermost rows
        has_skip = bool((self.mesh.table(offset) == SKIP_VALUE).any())
        local[missing] = SKIP_VALUE if has_skip else 0
        return local.astype(np.int32)

    def offset_provider(self, allocator: Any = None) -> dict[str, Any]:
        """``{"E2C": connectivity, ...}`` of the local mesh, as ``Mesh.offset_provider``."""
        out = {}
        for offset in OFFSETS:
            t = self.table(offset.value)
            skip = SKIP_VALUE if bool((t == SKIP_VALUE).any()) else None
            out[offset.value] = as_connectivity(
                list(offset.target), offset.source, t, allocator=allocator, skip_value=skip
            )
        return out

    def _horizontal(self, f: DecomposedField) -> tuple[int, Dimension]:
        for i, d in enumerate(f.field.domain.dims):
            if d in _KINDS:
                return i, d
        raise DistributedError(f"field '{f.name}' has no Cell, Edge or Vertex dimension")

    # -- fields ---------------------------------------------------------------------------------
    def owned_domain(self, f: DecomposedField) -> Domain:
        """The points of ``f`` this rank owns (its domain without the halo)."""
        _, h = self._horizontal(f)
        return Domain(
            *((d, UnitRange(0, self.count(h)) if d == h else r) for d, r in f.field.domain.items())
        )

    def empty(
        self,
        dims: Sequence[Dimension],
        dtype: Any = np.float64,
        *,
        extra: Mapping[Dimension, Any] | None = None,
        name: str | None = None,
        allocator: Any = None,
        halo: Any = None,
    ) -> DecomposedField:
        """A field on the local mesh (owned elements then halo layers), local numbering."""
        ranges = []
        for d in dims:
            if d in _KINDS:
                ranges.append((d, UnitRange(0, len(self.local_ids[d]))))
            elif extra is not None and d in extra:
                ranges.append((d, unit_range(extra[d])))
            else:
                raise DistributedError(
                    f"dimension {d.value} is not a mesh dimension; give its size: extra={{...}}"
                )
        field = empty(Domain(*ranges), dtype, allocator=allocator)
        h = next(d for d in dims if d in _KINDS)
        return self._wrap(field, {h: self.layers}, name)

    # -- messages -------------------------------------------------------------------------------
    def messages(self, fields: Sequence[DecomposedField]) -> list[Message]:
        """One message per neighbour rank: the owned elements it has in its halo, all fields."""
        out = []
        for other in range(self.size):
            if other == self.rank:
                continue
            send, recv = [], []
            for k, f in enumerate(fields):
                axis, h = self._horizontal(f)
                theirs = self.globals[other][h][self.count(h, 0, other) :]
                want = theirs[self.owner[h][theirs] == self.rank]  # in their local order
                mine = self.local_ids[h][self.count(h) :]
                get = mine[self.owner[h][mine] == other]
                if len(want) == 0 and len(get) == 0:
                    continue
                shape = list(f.field.ndarray.shape)
                s_shape, r_shape = list(shape), list(shape)
                s_shape[axis], r_shape[axis] = len(want), len(get)
                send.append((k, Region((axis, self._local_of[h][want]), tuple(s_shape))))
                recv.append((k, Region((axis, self._local_of[h][get]), tuple(r_shape))))
            if send or recv:
                out.append(Message(other, 0, 0, tuple(send), tuple(recv)))
        return out

    # -- global arrays --------------------------------------------------------------------------
    def global_shape(self, f: DecomposedField) -> tuple[int, ...]:
        """The shape of ``f`` gathered over all ranks (owned points only)."""
        axis, h = self._horizontal(f)
        shape = list(f.field.ndarray.shape)
        shape[axis] = self.mesh.size(h)
        return tuple(shape)

    def _index(self, f: DecomposedField, rank: int) -> tuple[Any, ...]:
        axis, h = self._horizontal(f)
        ids = self.globals[rank][h][: self.count(h, 0, rank)]
        return (slice(None),) * axis + (ids,)

    def take(
        self, arr: np.ndarray[Any, Any], f: DecomposedField, rank: int
    ) -> np.ndarray[Any, Any]:
        """``rank``'s owned block of the global array ``arr``."""
        block: np.ndarray[Any, Any] = arr[self._index(f, rank)]
        return block

    def place(self, arr: np.ndarray[Any, Any], f: DecomposedField, rank: int, block: Any) -> None:
        """Write ``rank``'s owned ``block`` of ``f`` into the global array ``arr``."""
        arr[self._index(f, rank)] = block


def decompose_mesh(
    mesh: Mesh, *, layers: int = 1, comm: Any = None, gpu: bool = False
) -> MeshDecomposition:
    """Split ``mesh`` over the ranks of ``comm`` (default: the world) with ``layers`` halo
    layers (take the ``layers`` of :func:`halo_requirements` of the programs you run)."""
    return MeshDecomposition(mesh, layers, comm, gpu)
