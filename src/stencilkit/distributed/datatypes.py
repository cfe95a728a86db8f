"""MPI derived datatypes: one message per neighbour read from and written to the fields' memory.

One side of one message (what goes to a neighbour, or what comes from it) lists, per field, a
region of that field. On CPU fields it becomes ONE message: a ``MPI_Type_create_struct`` whose
blocks are the regions where they lie in the fields (``hvector``/``hindexed`` over their
strides) and, for the regions not worth describing, one pack buffer they are copied to with
NumPy. MPI then moves the halos of every field without a copy through an intermediate buffer
where the library can: its single-copy path (CMA in MPICH) reads the sender's blocks and
writes the receiver's blocks directly.

What is described and what is packed follows MPICH (5.0) on shared memory, measured here:

* a type of few large contiguous blocks (a face along the slowest axis of each field) moves
  as fast as one contiguous buffer of the same bytes: its "density" (bytes per contiguous
  block) is above ``MPIR_CVAR_CH4_IOV_DENSITY_MIN`` (16 KiB), so the single-copy path takes
  it block by block;
* a type of many short blocks (a face along a fast axis: one run per row) goes through
  MPICH's pipelined pack into 8 KiB shared-memory cells: 1.3-3.7x slower than packing with
  NumPy and sending one contiguous buffer. Such regions are packed (:data:`MIN_RUN`, which
  follows that variable when it is set);
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
    """One side of one message for MPI: ``spec`` (``[buffer, count, MPI_BYTE or type]``, None
    when nothing goes that way), the parts packed into ``buffer`` as (field index, region,
    view into ``buffer``), and the committed type to free with the plan."""

    spec: list[Any] | None
    packed: list[tuple[int, Any, Any]] = field(default_factory=list)
    buffer: Any = None
    datatype: Any = None

    def free(self) -> None:
        if self.datatype is not None:
            if not mpi().Is_finalized():
                self.datatype.Free()
            self.datatype = None
            self.spec = None


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


class _Builder:
    """Makes the types of one struct, remembering the intermediate ones to free after commit."""

    def __init__(self) -> None:
        self.MPI = mpi()
        self.temporaries: list[Any] = []

    def _keep(self, t: Any) -> Any:
        self.temporaries.append(t)
        return t

    def strided(self, dims: list[tuple[int, int]], itemsize: int) -> tuple[Any, int, int]:
        """(type, count, shortest contiguous run in bytes) of a strided block of elements."""
        run = itemsize
        if dims and dims[-1][1] == itemsize:
            run = dims[-1][0] * itemsize
            dims = dims[:-1]
        if not dims:
            return self.MPI.BYTE, run, run
        n, s = dims[-1]
        t = self._keep(self.MPI.BYTE.Create_hvector(n, run, s))
        for n, s in reversed(dims[:-1]):
            t = self._keep(t.Create_hvector(n, 1, s))
        return t, 1, run

    def region(self, arr: np.ndarray[Any, Any], index: Any) -> tuple[int, Any, int, int] | None:
        """(address, type, count, shortest run) of ``arr``'s region ``index``: a tuple of slices
        or ``(axis, indices)``. None where a datatype would not be worth it or cannot say it."""
        if isinstance(index, tuple) and index and isinstance(index[0], slice):
            view = arr[index]
            if view.size == 0 or any(s < 0 for s in view.strides):
                return None
            t, count, run = self.strided(_collapse(view.shape, view.strides), view.itemsize)
            return int(view.ctypes.data), t, count, run
        axis, idx = index
        idx = np.asarray(idx, np.int64)
        if arr.size == 0 or len(idx) == 0 or any(s < 0 for s in arr.strides):
            return None
        inner_t, inner_n, run = self.strided(
            _collapse(arr.shape[axis + 1 :], arr.strides[axis + 1 :]), arr.itemsize
        )
        disp = idx * arr.strides[axis]
        if inner_t is self.MPI.BYTE:  # inner rows contiguous: merge rows that follow each other
            starts = np.flatnonzero(np.diff(disp, prepend=-1 - inner_n) != inner_n)
            lengths = np.diff(np.append(starts, len(disp))) * inner_n
            t = self._keep(self.MPI.BYTE.Create_hindexed(lengths.tolist(), disp[starts].tolist()))
            run = int(lengths.min())
        else:
            t = self._keep(inner_t.Create_hindexed_block(1, disp.tolist()))
        for n, s in reversed(_collapse(arr.shape[:axis], arr.strides[:axis])):
            t = self._keep(t.Create_hvector(n, 1, s))
        return int(arr.ctypes.data), t, 1, run

    def struct(self, blocks: list[tuple[int, Any, int]]) -> tuple[int, Any]:
        """The struct of (address, type, count) blocks, relative to the first address."""
        base = blocks[0][0]
        t = self.MPI.Datatype.Create_struct(
            [c for _, _, c in blocks], [a - base for a, _, _ in blocks], [t for _, t, _ in blocks]
        ).Commit()
        self.release()
        return base, t

    def release(self) -> None:
        """Free the intermediate types (a committed struct keeps what it needs of them)."""
        for tmp in self.temporaries:
            tmp.Free()
        self.temporaries.clear()


def describe(
    arrays: Sequence[np.ndarray[Any, Any]],
    parts: Sequence[tuple[int, Any]],
    nbytes: Any,
    align: int,
) -> Described:
    """One side of one message as one MPI message (see the module's text). ``nbytes(i, region)``
    gives a part's bytes; packed parts start ``align``-byte aligned in the pack buffer (1:
    back to back, so that a message packed whole is one contiguous buffer)."""
    if not parts:
        return Described(None)
    b = _Builder()
    found = [b.region(arrays[i], r.index) if nbytes(i, r) else None for i, r in parts]
    zero_copy = [g is not None and g[3] >= MIN_RUN for g in found]
    # MPICH takes the single-copy path only if the whole type is dense enough: the blocks
    # described in place, plus the pack buffer, must average MIN_RUN bytes or more
    rest_bytes = sum(nbytes(i, r) for (i, r), z in zip(parts, zero_copy) if not z)
    blocks_n = (rest_bytes > 0) + sum(
        -(-nbytes(i, r) // g[3]) for (i, r), g, z in zip(parts, found, zero_copy) if z and g
    )
    total_bytes = sum(nbytes(i, r) for i, r in parts)
    if blocks_n and total_bytes < MIN_RUN * blocks_n:
        zero_copy = [False] * len(parts)
    if len(parts) == 1 and found[0] is not None and found[0][1] is b.MPI.BYTE:
        zero_copy = [True]  # one contiguous region: sent as it lies, whatever its size
    rest = [(k, i, r) for k, ((i, r), z) in enumerate(zip(parts, zero_copy)) if not z]
    offsets, total = [], 0
    for _, i, r in rest:
        offsets.append(total)
        total += -(-nbytes(i, r) // align) * align
    buf = np.empty(max(total, 1), np.uint8)
    packed = []
    for (k, i, r), off in zip(rest, offsets):
        view = buf[off : off + nbytes(i, r)].view(arrays[i].dtype).reshape(r.shape)
        packed.append((i, r, view))
        found[k] = None
        if nbytes(i, r):
            found[k] = (int(buf.ctypes.data) + off, b.MPI.BYTE, nbytes(i, r), nbytes(i, r))
    blocks: list[tuple[int, Any, int]] = []
    for a, t, c, _ in (g for g in found if g is not None):
        if blocks and t is b.MPI.BYTE and blocks[-1][1] is t and sum(blocks[-1][::2]) == a:
            blocks[-1] = (blocks[-1][0], t, blocks[-1][2] + c)  # packed parts back to back
        else:
            blocks.append((a, t, c))
    if not blocks:  # nothing to move (empty regions)
        b.release()
        return Described(None)
    if len(blocks) == 1 and blocks[0][1] is b.MPI.BYTE:  # one contiguous block: no type
        b.release()
        a, _, c = blocks[0]
        return Described([b.MPI.buffer.fromaddress(a, c), c, b.MPI.BYTE], packed, buf)
    base, t = b.struct(blocks)
    return Described([b.MPI.buffer.fromaddress(base, 1), 1, t], packed, buf, t)


__all__ = ["MIN_RUN", "Described", "describe"]
