"""Global operations on decomposed fields: gather to a rank, scatter from a global array, and
reductions (sum, min, max) over every rank's owned points.

>>> h = scatter(d, [I, J], h0, halo=1, name="h")   # rank 0's array, halos exchanged
>>> total = global_sum(h)                           # the same float on every rank
>>> h_all = gather(h)                               # the global array on rank 0, None elsewhere
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.dims import Dimension
from .comm import agree, mpi
from .field import DecomposedField


def _host(a: Any) -> np.ndarray[Any, Any]:
    return a if isinstance(a, np.ndarray) else a.get()


def gather(f: DecomposedField, root: int = 0) -> np.ndarray[Any, Any] | None:
    """The global array of ``f``'s owned points (halos left out) on ``root``; None elsewhere.
    Collective. The array's axes follow ``f.dims``; on a mesh, elements in global numbering."""
    d = f.decomposition
    block = np.ascontiguousarray(_host(f.owned.ndarray))
    blocks = d.comm.gather(block, root=root)
    if d.rank != root:
        return None
    out = np.empty(d.global_shape(f), dtype=f.dtype)
    for rank, b in enumerate(blocks):
        d.place(out, f, rank, b)
    return out


def scatter(
    decomposition: Any,
    dims: Sequence[Dimension],
    data: Any,
    *,
    root: int = 0,
    halo: Any = 1,
    extra: Mapping[Dimension, Any] | None = None,
    name: str | None = None,
    allocator: Any = None,
) -> DecomposedField:
    """A decomposed field holding ``data`` (the global array, needed on ``root`` only; its axes
    follow ``dims``), with halos exchanged. Collective.

    >>> h = scatter(d, [I, J], h0, halo=1, name="h")
    """
    d = decomposition
    dtype = d.comm.bcast(np.asarray(data).dtype.str if d.rank == root else None, root=root)
    f: DecomposedField = d.empty(
        dims, np.dtype(dtype), halo=halo, extra=extra, name=name, allocator=allocator
    )
    blocks = None
    if d.rank == root:
        arr = np.asarray(data)
        want = d.global_shape(f)
        err = (
            None
            if arr.shape == want
            else (
                f"scatter of '{f.name}': the global array has shape {arr.shape}, the decomposition"
                f" needs {want}"
            )
        )
        agree(d.comm, err)
        blocks = [np.ascontiguousarray(d.take(arr, f, rank)) for rank in range(d.size)]
    else:
        agree(d.comm, None)
    block = d.comm.scatter(blocks, root=root)
    view = f.owned.ndarray
    view[...] = block if isinstance(view, np.ndarray) else f.field.xp.asarray(block)
    d.exchange(f)
    return f


def _reduce(f: DecomposedField, local: Any, op: str) -> float:
    MPI = mpi()
    value = np.array([float(local)], dtype=np.float64)
    out = np.empty_like(value)
    f.decomposition.comm.Allreduce(value, out, op=getattr(MPI, op))
    return float(out[0])


def global_sum(f: DecomposedField) -> float:
    """The sum of ``f`` over all owned points of all ranks (the same value on every rank).
    Summation order differs from one process: equal to rounding, not bitwise."""
    return _reduce(f, f.owned.ndarray.sum(), "SUM")


def global_min(f: DecomposedField) -> float:
    """The minimum of ``f`` over all ranks' owned points (exact: the same as on one process)."""
    return _reduce(f, f.owned.ndarray.min(), "MIN")


def global_max(f: DecomposedField) -> float:
    """The maximum of ``f`` over all ranks' owned points (exact: the same as on one process)."""
    return _reduce(f, f.owned.ndarray.max(), "MAX")
