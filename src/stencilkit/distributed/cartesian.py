"""Cartesian decomposition: a process grid over the horizontal dimensions, global indices.

>>> d = decompose({I: 256, J: 256}, periodic=True)      # MPI.Compute_dims over the ranks
>>> h = d.zeros([I, J, K], halo=1, extra={K: 80}, name="h")
>>> h.field.domain                                       # this rank's points, global indices
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.dims import Dimension
from ..core.domain import Domain, UnitRange, unit_range
from ..fields.constructors import empty
from .base import Decomposition
from .comm import DistributedError, mpi, world
from .field import DecomposedField
from .halo import Message, Region


def _blocks(n: int, p: int) -> list[tuple[int, int]]:
    """``n`` points over ``p`` ranks, the first ``n % p`` ranks one point more."""
    q, r = divmod(n, p)
    out, start = [], 0
    for c in range(p):
        size = q + (1 if c < r else 0)
        out.append((start, start + size))
        start += size
    return out


class CartesianDecomposition(Decomposition):
    """A block decomposition of a rectangular global domain over a Cartesian process grid.

    ``ranges`` gives each decomposed dimension's global interior (``UnitRange``); ``periodic``
    whether it wraps. Each rank owns ``owned_range(dim)``; fields it makes add a halo around.
    """

    kind = "Cartesian"

    def __init__(
        self,
        ranges: Mapping[Dimension, UnitRange],
        periodic: Mapping[Dimension, bool],
        comm: Any = None,
        grid: Sequence[int] | None = None,
        gpu: bool = False,
    ) -> None:
        MPI = mpi()
        base = comm if comm is not None else world()
        dims = tuple(ranges)
        nranks = base.Get_size()
        sizes = [len(ranges[d]) for d in dims]
        if grid is None:
            grid = MPI.Compute_dims(nranks, len(dims))
            # Compute_dims knows nothing of the sizes: put the larger rank count on the longer axis
            grid = sorted(grid, reverse=True)
            order = sorted(range(len(dims)), key=lambda i: -sizes[i])
            g = [0] * len(dims)
            for i, c in zip(order, grid):
                g[i] = c
            grid = g
        grid = [int(g) for g in grid]
        if int(np.prod(grid)) != nranks:
            raise DistributedError(
                f"a process grid {'x'.join(map(str, grid))} needs {int(np.prod(grid))} ranks,"
                f" the communicator has {nranks}"
            )
        for d, n, p in zip(dims, sizes, grid):
            if n < p:
                raise DistributedError(
                    f"cannot decompose {d.value} ({n} points) over {p} ranks (process grid"
                    f" {'x'.join(map(str, grid))} of {nranks} ranks): each rank needs at least one point",
                    hint="run on fewer ranks or a larger grid",
                )
        self._dims = dims
        self.ranges = {d: ranges[d] for d in dims}
        self.periodic = tuple(bool(periodic.get(d, False)) for d in dims)
        self.grid = tuple(grid)
        cart = base.Create_cart(self.grid, periods=list(self.periodic), reorder=False)
        super().__init__(cart, gpu)
        self.coords = tuple(int(c) for c in cart.Get_coords(self.rank))
        self._blocks = [
            [(ranges[d].start + a, ranges[d].start + b) for a, b in _blocks(n, p)]
            for d, n, p in zip(dims, sizes, self.grid)
        ]

    # -- geometry -------------------------------------------------------------------------------
    @property
    def dims(self) -> tuple[Dimension, ...]:
        """The decomposed dimensions, in order."""
        return self._dims

    def signature(self) -> tuple[Any, ...]:
        """Equal on two decompositions that split the same points the same way."""
        return (
            "cartesian",
            tuple((d.value, r.start, r.stop) for d, r in self.ranges.items()),
            self.periodic,
            self.grid,
        )

    def describe(self) -> str:
        """One line: each dimension's global range, periodicity and the process grid."""
        ext = " x ".join(
            f"{d.value}[{r.start}:{r.stop}]{' periodic' if p else ''}"
            for (d, r), p in zip(self.ranges.items(), self.periodic)
        )
        return f"{ext} over a {'x'.join(map(str, self.grid))} process grid"

    def owned_range(self, dim: Dimension, rank: int | None = None) -> UnitRange:
        """The global indices of ``dim`` that ``rank`` (default: this rank) owns."""
        coords = self.coords if rank is None else tuple(self.comm.Get_coords(rank))
        i = self._dims.index(dim)
        return UnitRange(*self._blocks[i][coords[i]])

    def owned(self, rank: int | None = None) -> Domain:
        """The owned points of ``rank`` (default: this rank) as a domain."""
        return Domain(*((d, self.owned_range(d, rank)) for d in self._dims))

    def min_block(self, dim: Dimension) -> int:
        """The smallest block any rank owns along ``dim`` (a halo must not be wider)."""
        i = self._dims.index(dim)
        return min(b - a for a, b in self._blocks[i])

    def neighbor(self, direction: Sequence[int]) -> int | None:
        """The rank in ``direction`` (-1/0/+1 per decomposed dimension), None past a bounded edge."""
        coords = []
        for c, step, p, wrap in zip(self.coords, direction, self.grid, self.periodic):
            c2 = c + step
            if not 0 <= c2 < p:
                if not wrap:
                    return None
                c2 %= p
            coords.append(c2)
        return int(self.comm.Get_cart_rank(coords))

    # -- fields ---------------------------------------------------------------------------------
    def _halo(self, halo: int | Mapping[Dimension, int]) -> dict[Dimension, int]:
        widths = (
            {d: int(halo) for d in self._dims}
            if isinstance(halo, int)
            else {d: int(halo.get(d, 0)) for d in self._dims}
        )
        for d, w in widths.items():
            if w < 0:
                raise DistributedError(f"halo width along {d.value} must be >= 0, got {w}")
            if w > self.min_block(d) and self.size > 1:
                raise DistributedError(
                    f"a halo of {w} along {d.value} is wider than the smallest block ({self.min_block(d)}"
                    f" points over {self.grid[self._dims.index(d)]} ranks): the values would come"
                    " from ranks beyond the neighbours",
                    hint="use fewer ranks or a narrower halo",
                )
        return widths

    def owned_domain(self, f: DecomposedField) -> Domain:
        """The owned points of the decomposed field ``f``: its domain without the halo."""
        return Domain(
            *(
                (d, UnitRange(r.start + f.halo.get(d, 0), r.stop - f.halo.get(d, 0)))
                for d, r in f.field.domain.items()
            )
        )

    def local_domain(
        self,
        dims: Sequence[Dimension],
        halo: Mapping[Dimension, int],
        extra: Mapping[Dimension, Any] | None = None,
    ) -> Domain:
        """This rank's domain over ``dims``: its owned range widened by ``halo`` in each decomposed
        dimension, ``extra`` ranges for the others."""
        ranges = []
        for d in dims:
            if d in self.ranges:
                r = self.owned_range(d)
                ranges.append((d, UnitRange(r.start - halo[d], r.stop + halo[d])))
            elif extra is not None and d in extra:
                ranges.append((d, unit_range(extra[d])))
            else:
                raise DistributedError(
                    f"dimension {d.value} is not decomposed; give its size: extra={{{d.value}: n}}"
                )
        return Domain(*ranges)

    def empty(
        self,
        dims: Sequence[Dimension],
        dtype: Any = np.float64,
        *,
        halo: Any = 1,
        extra: Mapping[Dimension, Any] | None = None,
        name: str | None = None,
        allocator: Any = None,
    ) -> DecomposedField:
        """A decomposed field of uninitialised values on ``dims`` with ``halo`` points per side.

        ``extra`` sizes the dimensions that are not decomposed (``{K: 80}``); ``allocator`` as
        for :func:`stencilkit.empty` (``gtx.gpu`` for this rank's GPU)."""
        widths = self._halo(halo)
        field = empty(self.local_domain(dims, widths, extra), dtype, allocator=allocator)
        return self._wrap(field, {d: widths[d] for d in dims if d in widths}, name)

    # -- messages -------------------------------------------------------------------------------
    def messages(self, fields: Sequence[DecomposedField]) -> list[Message]:
        """One message per neighbour direction (faces, edges and corners), all fields in it:
        every message can be in flight at once (the non-blocking exchange)."""
        nd = len(self._dims)
        directions = [v for v in itertools.product((-1, 0, 1), repeat=nd) if any(v)]
        return self._messages(fields, directions, set())

    def phases(self, fields: Sequence[DecomposedField]) -> list[list[Message]]:
        """The blocking exchange, one decomposed dimension after the other: a phase sends the
        faces along its dimension, spanning the halos the phases before it filled, so corners
        arrive without diagonal messages. The dimension of the largest stride goes last: its
        faces are then contiguous in memory and go to MPI as they lie, without packing."""
        strides = dict(zip(fields[0].field.domain.dims, fields[0].field.ndarray.strides))
        order = sorted(self._dims, key=lambda d: strides.get(d, 0))
        done: set[Dimension] = set()
        out = []
        for d in order:
            k = self._dims.index(d)
            directions = [
                tuple(s if i == k else 0 for i in range(len(self._dims))) for s in (-1, 1)
            ]
            out.append(self._messages(fields, directions, done))
            done.add(d)
        return out

    def _messages(
        self,
        fields: Sequence[DecomposedField],
        directions: Sequence[tuple[int, ...]],
        full: set[Dimension],
    ) -> list[Message]:
        nd = len(self._dims)
        tag = {
            v: i
            for i, v in enumerate(v for v in itertools.product((-1, 0, 1), repeat=nd) if any(v))
        }
        out = []
        for v in directions:
            nb = self.neighbor(v)
            if nb is None:
                continue
            send, recv = [], []
            for k, f in enumerate(fields):
                regions = self._regions(f, v, full)
                if regions is not None:
                    send.append((k, regions[0]))
                    recv.append((k, regions[1]))
            if send:
                back = tuple(-x for x in v)
                out.append(Message(nb, tag[v], tag[back], tuple(send), tuple(recv)))
        return out

    def _regions(
        self, f: DecomposedField, v: Sequence[int], full: set[Dimension]
    ) -> tuple[Region, Region] | None:
        dom = f.field.domain
        send: list[slice] = []
        recv: list[slice] = []
        for d, r in dom.items():
            if d not in self.ranges or d in full:
                send.append(slice(0, len(r)))
                recv.append(slice(0, len(r)))
                continue
            step = v[self._dims.index(d)]
            h = f.halo[d]
            if step and not h:
                return None
            lo, hi = h, len(r) - h  # owned part, buffer positions
            s, t = {
                -1: ((lo, lo + h), (0, h)),
                0: ((lo, hi), (lo, hi)),
                1: ((hi - h, hi), (hi, hi + h)),
            }[step]
            send.append(slice(*s))
            recv.append(slice(*t))
        shape = tuple(x.stop - x.start for x in send)
        return Region(tuple(send), shape), Region(tuple(recv), shape)

    # -- global arrays --------------------------------------------------------------------------
    def _owned_index(self, f: DecomposedField, rank: int) -> tuple[slice, ...]:
        """Where ``rank``'s owned points of ``f`` lie in the global array (interior only)."""
        index = []
        for d, r in f.field.domain.items():
            if d in self.ranges:
                o = self.owned_range(d, rank)
                g = self.ranges[d].start
                index.append(slice(o.start - g, o.stop - g))
            else:
                index.append(slice(0, len(r)))
        return tuple(index)

    def global_shape(self, f: DecomposedField) -> tuple[int, ...]:
        """The shape of ``f`` gathered over all ranks (owned points only)."""
        return tuple(
            len(self.ranges[d]) if d in self.ranges else len(r) for d, r in f.field.domain.items()
        )

    def take(
        self, arr: np.ndarray[Any, Any], f: DecomposedField, rank: int
    ) -> np.ndarray[Any, Any]:
        """``rank``'s owned block of the global array ``arr``."""
        return arr[self._owned_index(f, rank)]

    def place(self, arr: np.ndarray[Any, Any], f: DecomposedField, rank: int, block: Any) -> None:
        """Write ``rank``'s owned ``block`` of ``f`` into the global array ``arr``."""
        arr[self._owned_index(f, rank)] = block


def decompose(
    domain: Mapping[Dimension, Any],
    *,
    periodic: bool | Mapping[Dimension, bool] = False,
    comm: Any = None,
    grid: Sequence[int] | None = None,
    gpu: bool = False,
) -> CartesianDecomposition:
    """Split ``domain`` (``{I: 256, J: (1, 257)}``: sizes or global index ranges of the
    horizontal dimensions) over the ranks of ``comm`` (default: the world) in a Cartesian
    process grid (``MPI.Compute_dims`` unless ``grid`` is given). ``periodic``: for every
    dimension or per dimension. ``gpu=True``: one GPU per rank (rank -> its local index).

    >>> d = decompose({I: 128, J: 128}, periodic=True)
    """
    ranges = {d: unit_range(r) for d, r in domain.items()}
    wrap = {d: bool(periodic) for d in ranges} if isinstance(periodic, bool) else dict(periodic)
    return CartesianDecomposition(ranges, wrap, comm, grid, gpu)
