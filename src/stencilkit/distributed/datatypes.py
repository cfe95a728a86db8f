"""MPI derived datatypes: one message per neighbour read from and written to the fields' memory.

One side of one message (what goes to a neighbour, or what comes from it) lists, per field, a
region of that field. On CPU fields it becomes ONE message: an ``MPI_Type_create_hindexed`` of
bytes whose blocks are the contiguous runs of the regions where they lie in the fields and,
for the regions not worth describing, one pack buffer they are copied to with NumPy. MPI then
moves the halos of every field without a copy through an intermediate buffer where the library
can: its single-copy path (CMA in MPICH) reads the sender's blocks and writes the receiver's.

What is described and what is packed follows MPICH (5.0) on shared memory, measured here:

* a type of few large contiguous blocks (a face along the slowest axis of each field) moves
  as fast as one contiguous buffer of the same bytes: its "density" (bytes per contiguous
  block) is above ``MPIR_CVAR_CH4_IOV_DENSITY_MIN`` (16 KiB), so the single-copy path takes
  it block by block;
* a type of many short blocks (a face along a fast axis: one run per row) goes through
  MPICH's pipelined pack into 8 KiB shared-memory cells: 1.3-9x slower than packing with
  NumPy and sending one contiguous buffer. Such regions are packed (:data:`MIN_RUN`, which
  follows that variable when it is set);
* the same blocks as a struct of ``hvector`` types (one per strided region) take the slow
  path too (3.4x at 400 KB): every type here is one flat ``hindexed`` list of runs;
* the buffer handed to MPI is the address of the side's first block with displacements
  relative to it, never ``MPI_BOTTOM`` with absolute addresses: from ``MPI_BOTTOM`` MPICH
  takes the pipelined path even for one contiguous block (3.5x the time at 200 KB).

Every type counts bytes (``MPI_BYTE``), so the two ends of a message agree on its signature
whichever of them packs a part; ranks share one data representation (as the ``packed``
transport already assumes).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .comm import mpi


def _min_run() -> int:
    try:
        return int(os.environ.get("MPIR_CVAR_CH4_IOV_DENSITY_MIN", 16384))
    except ValueError:
        return 16384


MIN_RUN = _min_run()  # bytes: a region whose contiguous runs are shorter is packed


@dataclass
class Described:
    """One side of one message for MPI: ``spec`` (``[buffer, count, datatype]``, None when
    nothing goes that way), the parts packed into ``buffer`` as (field index, region, view
    into ``buffer``), and the committed type to free with the plan (None: no type needed)."""

    spec: list[Any] | None
    packed: list[tuple[int, Any, Any]] = field(default_factory=list)
    buffer: Any = None
    datatype: Any = None
    blocks: int = 0  # contiguous blocks MPI moves (1: a plain buffer)

    def free(self) -> None:
        if self.datatype is not None:
            if not mpi().Is_finalized():
                self.datatype.Free()
            self.datatype = None
            self.spec = None


Runs = tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]  # (addresses, lengths) in bytes


def _collapse(shape: Sequence[int], strides: Sequence[int]) -> list[tuple[int, int]]:
    """(size, byte stride) per axis, slowest first, without axes of size 1 and with adjacent
    axes merged where one steps exactly over the other: the same bytes in the same order."""
    dims = [(int(n), int(s)) for n, s in zip(shape, strides) if n != 1]
    out: list[tuple[int, int]] = []
    for n, s in reversed(dims):
        if out and out[0][1] * out[0][0] == s:
            out[0] = (out[0][0] * n, out[0][1])
        else:
            out.insert(0, (n, s))
    return out


def _offsets(dims: list[tuple[int, int]]) -> np.ndarray[Any, Any]:
    """Byte offsets of every index of ``dims`` (size, stride), in C order."""
    off = np.zeros(1, np.int64)
    for n, s in dims:
        off = (off[:, None] + np.arange(n, dtype=np.int64) * s).ravel()
    return off


def _strided(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> tuple[Any, int, int]:
    """(offsets of the runs, run length, number of runs) of a strided block of elements."""
    dims = _collapse(shape, strides)
    run = itemsize
    if dims and dims[-1][1] == itemsize:
        run *= dims[-1][0]
        dims = dims[:-1]
    return dims, run, int(np.prod([n for n, _ in dims], dtype=np.int64))


def merge(runs: Runs) -> Runs:
    """Runs that follow each other in memory joined into one."""
    addr, length = runs
    if len(addr) <= 1:
        return addr, length
    starts = np.flatnonzero(np.concatenate(([True], addr[1:] != addr[:-1] + length[:-1])))
    return addr[starts], np.add.reduceat(length, starts)


def region_runs(arr: np.ndarray[Any, Any], index: Any, max_runs: int) -> Runs | None:
    """The contiguous runs of ``arr``'s region ``index`` (a tuple of slices or ``(axis,
    indices)``) in the region's C order, merged; None if more than ``max_runs`` before
    merging, or if the region has negative strides (then it is packed)."""
    if any(s < 0 for s in arr.strides):
        return None
    if isinstance(index, tuple) and index and isinstance(index[0], slice):
        view = arr[index]
        if any(s < 0 for s in view.strides):
            return None
        dims, run, n = _strided(view.shape, view.strides, view.itemsize)
        if n > max_runs:
            return None
        addr = _offsets(dims) + int(view.ctypes.data)
    else:
        axis, idx = index
        outer = _collapse(arr.shape[:axis], arr.strides[:axis])
        inner, run, n_inner = _strided(arr.shape[axis + 1 :], arr.strides[axis + 1 :], arr.itemsize)
        n = int(np.prod([k for k, _ in outer], dtype=np.int64)) * len(idx) * n_inner
        if n > max_runs:
            return None
        along = np.asarray(idx, np.int64) * arr.strides[axis]
        addr = (_offsets(outer)[:, None, None] + along[None, :, None] + _offsets(inner)).ravel()
        addr += int(arr.ctypes.data)
    return merge((addr, np.full(len(addr), run, np.int64)))


def describe(
    arrays: Sequence[np.ndarray[Any, Any]], parts: Sequence[tuple[int, Any]], nbytes: Any
) -> Described:
    """One side of one message as one MPI message (see the module's text). ``nbytes(i, region)``
    gives a part's bytes; packed parts lie back to back in the pack buffer, so that a message
    packed whole is one contiguous buffer."""
    MPI = mpi()
    size = [int(nbytes(i, r)) for i, r in parts]
    cap = max(sum(size) // max(MIN_RUN, 1), 1)  # more runs than that cannot average MIN_RUN
    found = [region_runs(arrays[i], r.index, cap) if n else None for (i, r), n in zip(parts, size)]
    in_place = [g is not None and int(g[1].min()) >= MIN_RUN for g in found]
    if len(parts) == 1 and found[0] is not None and len(found[0][0]) == 1:
        in_place = [True]  # one contiguous region: sent as it lies, whatever its size
    # MPICH takes its single-copy path only if the type is dense enough: the runs described
    # in place and the pack buffer must average MIN_RUN bytes or more; else pack it all
    rest = sum(n for n, z in zip(size, in_place) if not z)
    blocks = (rest > 0) + sum(len(g[0]) for g, z in zip(found, in_place) if z and g is not None)
    if blocks > 1 and sum(size) < MIN_RUN * blocks:
        in_place = [False] * len(parts)
    buf = np.empty(max(sum(n for n, z in zip(size, in_place) if not z), 1), np.uint8)
    packed, runs, off = [], [], 0
    for (i, r), n, z, g in zip(parts, size, in_place, found):
        if z and g is not None:
            runs.append(g)
            continue
        view = buf[off : off + n].view(arrays[i].dtype).reshape(r.shape)
        packed.append((i, r, view))
        if n:
            runs.append((np.array([buf.ctypes.data + off]), np.array([n])))
        off += n
    if not runs:  # nothing to move (empty regions)
        return Described(None, packed, buf)
    addr, length = merge(
        (np.concatenate([a for a, _ in runs]), np.concatenate([b for _, b in runs]))
    )
    if len(addr) == 1:  # one contiguous block: no type
        spec = [MPI.buffer.fromaddress(int(addr[0]), int(length[0])), int(length[0]), MPI.BYTE]
        return Described(spec, packed, buf, None, 1)
    base = int(addr[0])
    t = MPI.BYTE.Create_hindexed(length.tolist(), (addr - base).tolist()).Commit()
    return Described([MPI.buffer.fromaddress(base, 1), 1, t], packed, buf, t, len(addr))


def widen(a: Any, b: Any) -> tuple[Any, Any] | None:
    """``a`` and ``b`` (NumPy views of one shape and dtype) with each row of their last axis
    seen as one item of its bytes, where both rows are contiguous: NumPy then copies one item
    per row instead of looping over a short row (2-5x faster on the strips of a face along a
    fast axis). None where that does not apply (CuPy arrays, strided rows)."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.ndim == 0:
        return None
    if a.shape[-1] < 2 or a.strides[-1] != a.itemsize or b.strides[-1] != b.itemsize:
        return None
    item = np.dtype((np.void, a.shape[-1] * a.itemsize))
    try:
        return a.view(item), b.view(item)
    except ValueError:
        return None


__all__ = ["MIN_RUN", "Described", "describe", "merge", "region_runs", "widen"]
