"""Halo exchange: one message per neighbour for any number of fields, blocking or not.

A :class:`Plan` lists, per neighbour rank, the regions each field sends and receives: tuples of
slices on Cartesian grids, index arrays on unstructured meshes. Plans are built once per set of
buffers and cached; an exchange then only posts messages. Four transports, one per situation:

* ``"datatype"`` (NumPy fields, the default on CPUs): MPI derived datatypes describe the
  regions at their addresses in the fields, so MPI reads and writes the halos in place, with
  no packing by stencilkit: the bytes move as a plain ``Sendrecv`` of contiguous buffers would.
* ``"packed"``: the regions are packed into one contiguous buffer per neighbour, sent, and
  unpacked; on CuPy fields with a CUDA-aware MPI the device buffers go to MPI directly.
* ``"staged"`` (CuPy fields, MPI without CUDA support): packed on the GPU, copied to pinned
  host memory, sent, copied back and unpacked on the GPU. On NumPy fields the same steps run
  with host buffers, so the staging logic is tested without a GPU.

A message to oneself (a periodic dimension with one rank) is a copy, never an MPI message.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .comm import mpi

METHODS = ("datatype", "packed", "staged")
_ALIGN = 16  # bytes: each field's segment in a packed message starts aligned
TAG_SPAN = 32  # message tags per exchange (27 directions in 3-D); the sequence number of the
_TAG_CYCLES = 512  # exchange picks a block of tags, so exchanges in flight together never mix


def tag_base(sequence: int) -> int:
    """The first tag of the ``sequence``-th exchange on a communicator (same on every rank)."""
    return (sequence % _TAG_CYCLES) * TAG_SPAN


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class Message:
    """What goes to and comes from one neighbour: per field a send and a receive region.
    ``tag_out`` / ``tag_in`` tell apart several messages between the same two ranks."""

    rank: int
    tag_out: int
    tag_in: int
    send: tuple[tuple[int, Region], ...]
    recv: tuple[tuple[int, Region], ...]


def _segments(parts: Sequence[tuple[int, Region]], arrays: Sequence[Any]) -> tuple[list[int], int]:
    offsets, total = [], 0
    for i, region in parts:
        offsets.append(total)
        n = int(np.prod(region.shape)) * arrays[i].dtype.itemsize
        total += -(-n // _ALIGN) * _ALIGN
    return offsets, total


def _views(buf: Any, parts: Sequence[tuple[int, Region]], arrays: Sequence[Any], offsets: list[int]) -> list[Any]:
    out = []
    for (i, region), off in zip(parts, offsets):
        dt = arrays[i].dtype
        n = int(np.prod(region.shape)) * dt.itemsize
        out.append(buf[off:off + n].view(dt).reshape(region.shape))
    return out


def _region_type(MPI: Any, arr: Any, region: Region) -> tuple[Any, int]:
    """An MPI datatype for ``region`` of ``arr`` relative to the region's first byte, and that
    byte's absolute address."""
    base = MPI._typedict[arr.dtype.char]
    strides = arr.strides
    addr = int(arr.__array_interface__["data"][0])
    if isinstance(region.index, tuple) and region.index and isinstance(region.index[0], slice):
        addr += sum(s.start * st for s, st in zip(region.index, strides))
        return _strided(base, region.shape, strides), addr
    axis, idx = region.index
    inner_shape = region.shape[:axis] + region.shape[axis + 1:]
    inner_strides = strides[:axis] + strides[axis + 1:]
    row = _strided(base, inner_shape, inner_strides)
    t = row.Create_hindexed_block(1, [int(i) * strides[axis] for i in idx])
    row.Free()
    if axis:  # an unstructured axis inside: rare; keep it correct via a struct of the rows
        raise NotImplementedError("datatype exchange needs the mesh dimension first; use method='packed'")
    return t, addr


def _strided(base: Any, shape: Sequence[int], strides: Sequence[int]) -> Any:
    t = base.Dup()
    for n, st in zip(reversed(shape), reversed(strides)):
        if t.Get_extent()[1] == st and t.Get_size() == t.Get_extent()[1]:
            nt = t.Create_contiguous(n)
        else:
            nt = t.Create_hvector(n, 1, st)
        t.Free()
        t = nt
    return t


def _struct(MPI: Any, parts: Sequence[tuple[int, Region]], arrays: Sequence[Any]) -> Any:
    types, addrs = [], []
    for i, region in parts:
        t, addr = _region_type(MPI, arrays[i], region)
        types.append(t)
        addrs.append(addr)
    dt = MPI.Datatype.Create_struct([1] * len(types), addrs, types)
    for t in types:
        t.Free()
    dt.Commit()
    return dt


class Plan:
    """The messages of one exchange of one list of buffers, with the buffers or datatypes
    they need; built once (see :func:`plan_for`), used by every exchange of those buffers."""

    def __init__(self, comm: Any, messages: Sequence[Message], arrays: Sequence[Any], method: str,
                 cuda_aware: bool) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.arrays = list(arrays)
        self.method = method
        xp = _namespace(arrays[0])
        self.xp = xp
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
        self.nbytes = 0
        MPI = mpi()
        self.types: list[Any] = []  # MPI datatypes to free with the plan
        self.send_specs: list[Any] = []  # per message, what mpi4py sends: a view or [BOTTOM, 1, type]
        self.recv_specs: list[Any] = []
        self.send_views: list[list[Any]] = []
        self.recv_views: list[list[Any]] = []
        self.send_dev: list[Any] = []  # device buffers (staged) whose host copies are sent
        self.recv_dev: list[Any] = []
        self.send_host: list[Any] = []
        self.recv_host: list[Any] = []
        for m in self.remote:
            if method == "datatype":
                self.send_specs.append(self._spec(MPI, m.send, arrays))
                self.recv_specs.append(self._spec(MPI, m.recv, arrays))
                self.nbytes += sum(int(np.prod(r.shape)) * arrays[i].itemsize for i, r in m.send)
                continue
            s_off, s_total = _segments(m.send, arrays)
            r_off, r_total = _segments(m.recv, arrays)
            sbuf, rbuf = xp.empty(s_total, np.uint8), xp.empty(r_total, np.uint8)
            self.nbytes += s_total
            self.send_views.append(_views(sbuf, m.send, arrays, s_off))
            self.recv_views.append(_views(rbuf, m.recv, arrays, r_off))
            self.send_dev.append(sbuf)
            self.recv_dev.append(rbuf)
            if method == "staged":
                self.send_host.append(_pinned(xp, s_total))
                self.recv_host.append(_pinned(xp, r_total))
            elif xp is not np and not cuda_aware:
                raise ValueError("method='packed' on GPU fields needs a CUDA-aware MPI; use 'staged'")

    def _spec(self, MPI: Any, parts: Sequence[tuple[int, Region]], arrays: Sequence[Any]) -> Any:
        """A message of one contiguous region is the field's memory itself (no datatype, no
        copy); anything else is a struct datatype over the regions where they lie."""
        if len(parts) == 1:
            i, region = parts[0]
            if isinstance(region.index[0], slice):
                view = arrays[i][region.index]
                if view.flags.c_contiguous:
                    return view
        t = _struct(MPI, parts, arrays)
        self.types.append(t)
        return [MPI.BOTTOM, 1, t]

    def free(self) -> None:
        for t in self.types:
            t.Free()
        self.types = []

    # -- one exchange ------------------------------------------------------------------------
    def start(self, tag_base: int) -> list[Any]:
        comm = self.comm
        requests = []
        if self.method == "datatype":
            for m, spec in zip(self.remote, self.recv_specs):
                requests.append(comm.Irecv(spec, m.rank, tag_base + m.tag_in))
            for m, spec in zip(self.remote, self.send_specs):
                requests.append(comm.Isend(spec, m.rank, tag_base + m.tag_out))
        else:
            receive_into = self.recv_host if self.method == "staged" else self.recv_dev
            for m, buf in zip(self.remote, receive_into):
                requests.append(comm.Irecv(buf, m.rank, tag_base + m.tag_in))
            self._pack()
            send_from = self.send_host if self.method == "staged" else self.send_dev
            for m, buf in zip(self.remote, send_from):
                requests.append(comm.Isend(buf, m.rank, tag_base + m.tag_out))
        self._copy_local()
        return requests

    def exchange(self, tag_base: int) -> None:
        """The whole exchange, blocking: shifts of ``Sendrecv`` where the messages allow it."""
        if self.shifts is None:
            self.finish(self.start(tag_base))
            return
        comm = self.comm
        null = mpi().PROC_NULL
        if self.method != "datatype":
            self._pack()
        for k, r in self.shifts:
            m = self.remote[k] if k is not None else None
            back = self.remote[r] if r is not None else None
            tag = tag_base + (m.tag_out if m is not None else back.tag_in)  # type: ignore[union-attr]
            comm.Sendrecv(self._buffer(k, True), m.rank if m is not None else null, tag,
                          self._buffer(r, False), back.rank if back is not None else null, tag)
        self._copy_local()
        if self.method != "datatype":
            self._unpack()

    def _buffer(self, k: int | None, send: bool) -> Any:
        if k is None:
            return None
        if self.method == "datatype":
            return (self.send_specs if send else self.recv_specs)[k]
        if self.method == "staged":
            return (self.send_host if send else self.recv_host)[k]
        return (self.send_dev if send else self.recv_dev)[k]

    def _pack(self) -> None:
        for m, views in zip(self.remote, self.send_views):
            for (i, region), view in zip(m.send, views):
                region.take(self.xp, self.arrays[i], view)
        if self.method == "staged":
            for dev, host in zip(self.send_dev, self.send_host):
                _to_host(self.xp, dev, host)
        _synchronize(self.xp)  # packed bytes must be in memory before MPI reads them

    def _unpack(self) -> None:
        if self.method == "staged":
            for dev, host in zip(self.recv_dev, self.recv_host):
                _from_host(self.xp, host, dev)
        for m, views in zip(self.remote, self.recv_views):
            for (i, region), view in zip(m.recv, views):
                region.put(self.arrays[i], view)

    def _copy_local(self) -> None:
        arrays, xp = self.arrays, self.xp
        for m, into in self.local_pairs:  # periodic wrap onto oneself: a copy
            for (i, sr), (_, rr) in zip(m.send, into.recv):
                if isinstance(sr.index[0], slice):
                    rr.put(arrays[i], arrays[i][sr.index])
                else:
                    tmp = xp.empty(sr.shape, arrays[i].dtype)
                    sr.take(xp, arrays[i], tmp)
                    rr.put(arrays[i], tmp)

    def finish(self, requests: list[Any]) -> None:
        mpi().Request.Waitall(requests)
        if self.method == "datatype":
            return
        self._unpack()


def _namespace(arr: Any) -> Any:
    if isinstance(arr, np.ndarray):
        return np
    import cupy

    return cupy


def _pinned(xp: Any, nbytes: int) -> Any:
    if xp is np:
        return np.empty(nbytes, np.uint8)  # the host-side emulation of a pinned buffer
    import cupyx

    return cupyx.empty_pinned((nbytes,), np.uint8)


def _to_host(xp: Any, dev: Any, host: Any) -> None:
    if xp is np:
        np.copyto(host, dev)
    else:
        dev.get(out=host)


def _from_host(xp: Any, host: Any, dev: Any) -> None:
    if xp is np:
        np.copyto(dev, host)
    else:
        dev.set(host)


def _synchronize(xp: Any) -> None:
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


class PhasedPlan:
    """Plans run one after the other (the phases of a blocking Cartesian exchange)."""

    def __init__(self, phases: Sequence[Plan]) -> None:
        self.phases = list(phases)
        self.nbytes = sum(p.nbytes for p in phases)

    @property
    def remote(self) -> list[Message]:
        return [m for p in self.phases for m in p.remote]

    def exchange(self, tag_base: int) -> None:
        for p in self.phases:
            p.exchange(tag_base)

    def free(self) -> None:
        for p in self.phases:
            p.free()


class PlanCache:
    """Plans by buffer addresses and layouts: valid while buffers of that layout live there."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self.plans: OrderedDict[tuple[Any, ...], Plan | PhasedPlan] = OrderedDict()

    def get(self, key: tuple[Any, ...]) -> Plan | PhasedPlan | None:
        plan = self.plans.get(key)
        if plan is not None:
            self.plans.move_to_end(key)
        return plan

    def put(self, key: tuple[Any, ...], plan: Plan | PhasedPlan) -> None:
        self.plans[key] = plan
        while len(self.plans) > self.size:
            _, old = self.plans.popitem(last=False)
            old.free()


class Exchange:
    """A halo exchange in flight: ``wait()`` completes it (idempotent) and marks the fields'
    halos fresh. Work that does not read the halos can run between start and wait.

    >>> pending = exchange_start(h, hu, hv)
    >>> interior(...)            # overlaps the communication
    >>> pending.wait()
    """

    __slots__ = ("_fields", "_plan", "_requests")

    def __init__(self, plan: Plan, requests: list[Any], fields: Sequence[Any]) -> None:
        self._plan = plan
        self._requests: list[Any] | None = requests
        self._fields = fields

    @property
    def done(self) -> bool:
        return self._requests is None

    def wait(self) -> None:
        if self._requests is None:
            return
        requests, self._requests = self._requests, None
        self._plan.finish(requests)
        for f in self._fields:
            f.mark_exchanged()

    def __enter__(self) -> Exchange:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.wait()


__all__ = ["METHODS", "TAG_SPAN", "Exchange", "Message", "PhasedPlan", "Plan", "PlanCache", "Region", "tag_base"]
