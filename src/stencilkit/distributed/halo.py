"""Halo exchange: one message per neighbour for any number of fields, blocking or not.

A :class:`Plan` lists, per neighbour rank, the regions each field sends and receives: tuples of
slices on Cartesian grids, index arrays on unstructured meshes. Plans are built once per set of
buffers and cached; an exchange then only posts messages. Three transports:

* ``"direct"`` (NumPy fields, the default on CPUs): each side of a message is ONE MPI derived
  datatype (an ``hindexed`` list of the byte runs of the fields' regions where they lie, built
  once per plan, freed with it), so MPI reads and writes the halos in the fields' own memory,
  all fields in one message (``datatypes.py``). Regions of short contiguous runs are packed
  into one buffer that is one more block of the same datatype. The messages go as persistent
  requests, made on first use and started by every exchange.
* ``"packed"``: every region is packed into one contiguous buffer per neighbour, sent, and
  unpacked; on CuPy fields with a CUDA-aware MPI the device buffers go to MPI directly.
* ``"staged"`` (CuPy fields, MPI without CUDA support): packed on the GPU, copied to pinned
  host memory, sent, copied back and unpacked on the GPU. On NumPy fields the same steps run
  with host buffers, so the staging logic is tested without a GPU.

A message to oneself (a periodic dimension with one rank) is a copy, never an MPI message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.records import record
from .buffers import (
    from_host,
    namespace,
    on_device,
    pinned,
    segments,
    synchronize,
    to_host,
    views,
)
from .comm import mpi
from .datatypes import describe, widen

METHODS = ("direct", "packed", "staged")
TAG_SPAN = 32  # message tags per exchange (27 directions in 3-D); the sequence number of the
_TAG_CYCLES = 512  # exchange picks a block of tags, so exchanges in flight together never mix
# exchanges of CPU fields post persistent requests with tags of their own, above the cycling
# ones (MPI guarantees tags up to 32767): blocking ones from PERSISTENT_TAG (they never overlap
# each other), non-blocking ones from PERSISTENT_TAG + TAG_SPAN
PERSISTENT_TAG = TAG_SPAN * _TAG_CYCLES


def tag_base(sequence: int) -> int:
    """The first tag of the ``sequence``-th exchange on a communicator (same on every rank)."""
    return (sequence % _TAG_CYCLES) * TAG_SPAN


@record
class Region:
    """Where a part of a message lies in a field's buffer: ``index`` is a tuple of slices, or
    ``(axis, indices)`` for the points of an unstructured mesh along ``axis``."""

    index: Any
    shape: tuple[int, ...]

    def take(self, xp: Any, arr: Any, out: Any) -> None:
        if isinstance(self.index, tuple) and self.index and isinstance(self.index[0], slice):
            out[...] = arr[self.index]
        else:
            axis, idx = self.index
            xp.take(arr, idx, axis=axis, out=out)

    def put(self, arr: Any, values: Any) -> None:
        if isinstance(self.index, tuple) and self.index and isinstance(self.index[0], slice):
            arr[self.index] = values
        else:
            axis, idx = self.index
            arr[(slice(None),) * axis + (idx,)] = values


@record
class Message:
    """What goes to and comes from one neighbour: per field a send and a receive region.
    ``tag_out`` / ``tag_in`` tell apart several messages between the same two ranks."""

    rank: int
    tag_out: int
    tag_in: int
    send: tuple[tuple[int, Region], ...]
    recv: tuple[tuple[int, Region], ...]


@dataclass
class _Side:
    """One side (what is sent, or what is received) of one message, ready for MPI: ``buffers``
    holds its one buffer or datatype message (none if nothing goes that way), ``packed`` the
    parts that go through a pack buffer as (field index, region, view into the pack buffer)."""

    buffers: list[Any]
    packed: list[tuple[int, Region, Any]]
    dev: Any = None  # the pack buffer where packing happens (device memory for GPU fields)
    host: Any = None  # its pinned host copy (staged) that MPI reads or writes

    @property
    def first(self) -> Any:
        """The side's one message for MPI (None: nothing goes that way)."""
        return self.buffers[0] if self.buffers else None


class Plan:
    """The messages of one exchange of one list of buffers, with the pack buffers they need;
    built once per set of fields (cached by the decomposition), used by every exchange."""

    def __init__(
        self, comm: Any, messages: Sequence[Message], arrays: Sequence[Any], method: str
    ) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.arrays = list(arrays)
        self.method = method
        xp = namespace(arrays[0])
        self.xp = xp
        if xp is not np:  # index lists of mesh halos live on the device with the fields
            messages = [on_device(xp, m) for m in messages]
        self.local = [m for m in messages if m.rank == self.rank]
        self.remote = [m for m in messages if m.rank != self.rank]
        # what I send towards a direction, I receive from the opposite one: pair them by tag
        by_tag_in = {m.tag_in: m for m in self.local}
        self.local_pairs = [(m, by_tag_in[m.tag_out]) for m in self.local]
        # Cartesian messages (distinct tags per direction) can also go as shifts: everyone sends
        # towards direction v and receives from -v at once, one Sendrecv per direction, which
        # never deadlocks and is what a hand-written MPI halo exchange does
        tags = [m.tag_out for m in self.remote]
        self.shifts: list[tuple[int | None, int | None]] | None = None
        if len(set(tags)) == len(tags):
            index_in = {m.tag_in: k for k, m in enumerate(self.remote)}
            self.shifts = [(k, index_in.get(m.tag_out)) for k, m in enumerate(self.remote)]
            paired = {r for _, r in self.shifts}
            self.shifts += [(None, k) for k in range(len(self.remote)) if k not in paired]
        self.datatypes: list[Any] = []
        self.freed = False
        self.sends = [self._side(m.send) for m in self.remote]
        self.recvs = [self._side(m.recv) for m in self.remote]
        self.has_packing = any(side.packed for side in self.sends + self.recvs)
        self._copies()
        null = mpi().PROC_NULL
        # per shift: (send buffer, destination, receive buffer, source, tag offset); a side is
        # one buffer or datatype, or none
        self.shift_calls = [
            (
                self.sends[k].first if k is not None else None,
                self.remote[k].rank if k is not None else null,
                self.recvs[r].first if r is not None else None,
                self.remote[r].rank if r is not None else null,
                self.remote[k].tag_out if k is not None else self.remote[r].tag_in,  # type: ignore[index]
            )
            for k, r in (self.shifts or [])
        ]
        self.nbytes = sum(
            int(np.prod(r.shape)) * arrays[i].itemsize for m in self.remote for i, r in m.send
        )
        self.persistent: list[Any] | None = None  # made by the first blocking exchange
        self.posted: list[Any] | None = None  # made by the first non-blocking one
        self.started = False  # whether ``posted`` is in flight
        self.use_persistent = method == "direct" and self.shifts is not None

    def _side(self, parts: Sequence[tuple[int, Region]]) -> _Side:
        """``direct``: one MPI datatype over the fields' memory (see ``datatypes.py``);
        ``packed``/``staged``: every part packed into one buffer."""
        if self.method == "direct":
            d = describe(self.arrays, parts, self._nbytes)
            self.datatypes.append(d)
            return _Side([d.spec] if d.spec is not None else [], d.packed)
        if not parts:
            return _Side([], [])
        offsets, total = segments(parts, self.arrays)
        dev = self.xp.empty(total, np.uint8)
        packed = [(i, r, v) for (i, r), v in zip(parts, views(dev, parts, self.arrays, offsets))]
        host = pinned(self.xp, total) if self.method == "staged" else None
        return _Side([host if host is not None else dev], packed, dev, host)

    def _persistent(self) -> list[Any]:
        """The blocking exchange's messages as persistent requests, receives first: started
        together and completed together, each message with its datatype (no argument parsing
        per exchange, both directions in flight at once)."""
        comm, null, empty = self.comm, mpi().PROC_NULL, np.empty(0, np.uint8)
        recvs, sends = [], []
        for out, dest, into, source, offset in self.shift_calls:
            tag = PERSISTENT_TAG + offset
            if source != null:
                recvs.append(comm.Recv_init(into if into is not None else empty, source, tag))
            if dest != null:
                sends.append(comm.Send_init(out if out is not None else empty, dest, tag))
        return recvs + sends

    def _posted(self) -> list[Any]:
        """The non-blocking exchange's messages as persistent requests, receives first."""
        comm, tag = self.comm, PERSISTENT_TAG + TAG_SPAN
        return [
            comm.Recv_init(side.buffers[0], m.rank, tag + m.tag_in)
            for m, side in zip(self.remote, self.recvs)
            if side.buffers
        ] + [
            comm.Send_init(side.buffers[0], m.rank, tag + m.tag_out)
            for m, side in zip(self.remote, self.sends)
            if side.buffers
        ]

    def _nbytes(self, i: int, region: Region) -> int:
        return int(np.prod(region.shape)) * int(self.arrays[i].itemsize)

    @property
    def mpi_messages(self) -> list[tuple[int, int]]:
        """(neighbour rank, MPI messages sent to it) per message of this plan: 1 each."""
        return [(m.rank, len(side.buffers)) for m, side in zip(self.remote, self.sends)]

    def free(self) -> None:
        """Free the plan's MPI datatypes (the cache calls it on eviction); a freed plan is not
        used again (an exchange still in flight completes: MPI keeps a type its requests use)."""
        finalized = mpi().Is_finalized()
        # requests of a non-blocking exchange in flight are freed when it completes
        for r in (self.persistent or []) + ([] if self.started else self.posted or []):
            if not finalized:
                r.Free()
        self.persistent = None
        if not self.started:
            self.posted = None
        self.use_persistent = False
        for d in self.datatypes:
            d.free()
        self.datatypes.clear()
        self.freed = True

    # -- one exchange ------------------------------------------------------------------------
    def _copies(self) -> None:
        """The copies of every exchange as (destination, source) views, rows seen as single
        items where that is faster (``widen``): packing, unpacking, periodic wrap-around."""
        arrays = self.arrays

        def pair(dst: Any, src: Any) -> tuple[Any, Any] | None:
            got = widen(dst, src)
            return got if got is not None else (dst, src) if isinstance(dst, np.ndarray) else None

        def slices(r: Region) -> bool:
            return isinstance(r.index[0], slice)

        self.pack_ops = [
            [pair(v, arrays[i][r.index]) if slices(r) else None for i, r, v in side.packed]
            for side in self.sends
        ]
        self.unpack_ops = [
            [pair(arrays[i][r.index], v) if slices(r) else None for i, r, v in side.packed]
            for side in self.recvs
        ]
        self.local_ops = [
            (i, sr, rr, pair(arrays[i][rr.index], arrays[i][sr.index]) if slices(sr) else None)
            for m, into in self.local_pairs
            for (i, sr), (_, rr) in zip(m.send, into.recv)
        ]

    def _pack(self) -> None:
        xp, arrays = self.xp, self.arrays
        for side, ops in zip(self.sends, self.pack_ops):
            for (i, region, view), op in zip(side.packed, ops):
                if op is not None:
                    np.copyto(*op)
                else:
                    region.take(xp, arrays[i], view)
            if side.host is not None:
                to_host(xp, side.dev, side.host)
        synchronize(xp)  # packed bytes must be in memory before MPI reads them

    def _unpack(self) -> None:
        for side, ops in zip(self.recvs, self.unpack_ops):
            if side.host is not None:
                from_host(self.xp, side.host, side.dev)
            for (i, region, view), op in zip(side.packed, ops):
                if op is not None:
                    np.copyto(*op)
                else:
                    region.put(self.arrays[i], view)

    def _copy_local(self) -> None:
        arrays, xp = self.arrays, self.xp
        for i, sr, rr, op in self.local_ops:  # periodic wrap onto oneself: a copy
            if op is not None:
                np.copyto(*op)
            elif isinstance(sr.index[0], slice):
                rr.put(arrays[i], arrays[i][sr.index])
            else:
                tmp = xp.empty(sr.shape, arrays[i].dtype)
                sr.take(xp, arrays[i], tmp)
                rr.put(arrays[i], tmp)

    def start(self, tag_base: int) -> list[Any]:
        """Post every message (the non-blocking exchange); ``finish`` completes it. CPU fields
        start persistent requests (made on first use; tags of their own, which exchanges of
        other plans in flight share safely: every rank posts them in the same order), unless
        this plan's are in flight already: then its messages go with ``tag_base``."""
        if self.method == "direct" and not self.started and not self.freed:
            if self.posted is None:
                self.posted = self._posted()
            if self.has_packing:
                self._pack()
            if self.posted:
                mpi().Prequest.Startall(self.posted)
            self.started = True
            if self.local_pairs:
                self._copy_local()
            return self.posted
        comm = self.comm
        requests: list[Any] = []
        for m, side in zip(self.remote, self.recvs):
            if side.buffers:
                requests.append(comm.Irecv(side.buffers[0], m.rank, tag_base + m.tag_in))
        if self.has_packing or self.xp is not np:
            self._pack()
        for m, side in zip(self.remote, self.sends):
            if side.buffers:
                requests.append(comm.Isend(side.buffers[0], m.rank, tag_base + m.tag_out))
        if self.local_pairs:
            self._copy_local()
        return requests

    def finish(self, requests: list[Any]) -> None:
        mpi().Request.Waitall(requests)
        if requests is self.posted:
            self.started = False
            if self.freed:  # evicted while in flight: its requests go now
                for r in requests:
                    r.Free()
                self.posted = None
        if self.has_packing:
            self._unpack()

    def exchange(self, tag_base: int) -> None:
        """The whole exchange, blocking: shifts of ``Sendrecv`` where the messages allow it."""
        if self.shifts is None:
            self.finish(self.start(tag_base))
            return
        comm = self.comm
        if self.has_packing:
            self._pack()
        if self.use_persistent:
            if self.persistent is None:
                self.persistent = self._persistent()
            if self.persistent:
                MPI = mpi()
                MPI.Prequest.Startall(self.persistent)
                MPI.Request.Waitall(self.persistent)
            self._finish_blocking()
            return
        for out, dest, into, source, offset in self.shift_calls:
            tag = tag_base + offset  # one buffer (or datatype) each way: one message per side
            comm.Sendrecv(out, dest, tag, into, source, tag)
        self._finish_blocking()

    def _finish_blocking(self) -> None:
        if self.local_pairs:
            self._copy_local()
        if self.has_packing:
            self._unpack()


__all__ = ["METHODS", "PERSISTENT_TAG", "TAG_SPAN", "Message", "Plan", "Region", "tag_base"]
