"""What every decomposition shares: the communicator, its GPU, plan caching and the exchange.

A decomposition (:class:`~stencilkit.distributed.cartesian.CartesianDecomposition`,
:class:`~stencilkit.distributed.unstructured.MeshDecomposition`) says which points a rank owns
and which messages fill a halo; this base turns that into checked, cached exchanges.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.dims import Dimension
from .comm import DistributedError, agree, cuda_aware, install_abort_hook, select_device
from .field import DecomposedField
from .halo import Message, Plan, tag_base
from .plans import Exchange, PhasedPlan, PlanCache


class Decomposition:
    """Base of the decompositions: ``exchange(*fields)`` and ``exchange_start(*fields)``."""

    kind = "decomposition"

    def __init__(self, comm: Any, gpu: bool) -> None:
        self.comm = comm
        self.rank = int(comm.Get_rank())
        self.size = int(comm.Get_size())
        self.device_id: int | None = select_device(comm) if gpu else None
        self._cache = PlanCache()
        # (method, blocking, the fields' ids) -> (plan, the fields' buffers when it was made)
        self._last: dict[tuple[Any, ...], tuple[Plan | PhasedPlan, tuple[Any, ...]]] = {}
        # blocking -> (plan, method, fields, their buffers) of the last exchange of that kind
        self._hot: dict[bool, tuple[Plan | PhasedPlan, str | None, tuple[Any, ...], Any]] = {}
        self._sequence = 0
        self._names = 0
        self._cuda_aware: bool | None = None
        install_abort_hook()
        # the plans' MPI datatypes and persistent requests are freed with the decomposition,
        # or at exit before mpi4py finalizes MPI (MPICH reports requests left at finalize)
        weakref.finalize(self, self._cache.clear)

    # -- to be provided by a decomposition ---------------------------------------------------
    def messages(self, fields: Sequence[DecomposedField]) -> list[Message]:
        """The point-to-point messages that refresh the halos of ``fields``."""
        raise NotImplementedError

    def phases(self, fields: Sequence[DecomposedField]) -> list[list[Message]]:
        """The messages of a blocking exchange, in phases run one after the other."""
        return [self.messages(fields)]

    def signature(self) -> tuple[Any, ...]:
        """Equal on two decompositions that split the same points the same way."""
        raise NotImplementedError

    @property
    def dims(self) -> tuple[Dimension, ...]:
        """The decomposed dimensions."""
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------------
    def _name(self, name: str | None) -> str:
        if name is not None:
            return name
        self._names += 1
        return f"field{self._names}"

    def _wrap(self, field: Any, halo: dict[Dimension, int], name: str | None) -> DecomposedField:
        out = DecomposedField(field, self, halo, self._name(name))
        err = self.check_device(out)
        if err:
            raise DistributedError(f"rank {self.rank}: {err}")
        return out

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
        """A decomposed field of uninitialised values (see the decompositions)."""
        raise NotImplementedError

    def zeros(
        self, dims: Sequence[Dimension], dtype: Any = np.float64, **kwargs: Any
    ) -> DecomposedField:
        """A decomposed field of zeros, halo included (so the halo is fresh); arguments as for
        ``empty``: ``d.zeros([I, J, K], halo=1, extra={K: 80}, name="h", allocator=gtx.gpu)``."""
        f = self.empty(dims, dtype, **kwargs)
        f.field.ndarray[...] = 0
        f.mark_exchanged()  # zeros everywhere: the halo agrees with the neighbours
        return f

    def check_device(self, f: DecomposedField) -> str | None:
        """An error text if ``f`` is not on this rank's device, else None."""
        on_gpu = not isinstance(f.field.ndarray, np.ndarray)
        if self.device_id is None and on_gpu:
            return (
                f"field '{f.name}' is on GPU {f.field.device.device_id} but this decomposition"
                " was made for CPU fields (decompose(..., gpu=True) for GPU fields)"
            )
        if self.device_id is not None:
            if not on_gpu:
                return f"field '{f.name}' is on the CPU; this decomposition runs one GPU per rank"
            if f.field.device.device_id != self.device_id:
                return (
                    f"field '{f.name}' is on GPU {f.field.device.device_id}, but rank"
                    f" {self.rank} uses GPU {self.device_id}"
                )
        return None

    def _check(self, fields: Sequence[DecomposedField]) -> str | None:
        """Local checks of an exchange's fields: the same decomposition, the right device."""
        if not fields:
            return "exchange() needs at least one field"
        for f in fields:
            if not isinstance(f, DecomposedField):
                return f"exchange() takes decomposed fields, got a {type(f).__name__}"
            if f.decomposition is not self and f.decomposition.signature() != self.signature():
                return (
                    f"field '{f.name}' is decomposed as {f.decomposition.describe()}, but"
                    f" field '{fields[0].name}' as {self.describe()}: exchange them separately"
                    " or create both from one decomposition"
                )
            err = self.check_device(f)
            if err:
                return err
        kinds = {isinstance(f.field.ndarray, np.ndarray) for f in fields}
        if len(kinds) > 1:
            return "one exchange cannot mix CPU and GPU fields"
        return None

    def describe(self) -> str:
        """One line saying how the points are split (for logs and errors)."""
        return self.kind

    def default_method(self, fields: Sequence[DecomposedField]) -> str:
        """The transport for CPU fields when none is asked for."""
        return "direct"

    def owned_domain(self, f: DecomposedField) -> Any:
        """The points of ``f`` this rank owns (its domain without the halo)."""
        raise NotImplementedError

    def _method(self, fields: Sequence[DecomposedField], method: str | None) -> str:
        on_gpu = not isinstance(fields[0].field.ndarray, np.ndarray)
        if method is None:
            if not on_gpu:
                return self.default_method(fields)
            if self._cuda_aware is None:
                self._cuda_aware = cuda_aware()
            return "packed" if self._cuda_aware else "staged"
        if method not in ("direct", "packed", "staged"):
            raise DistributedError(
                f"unknown exchange method {method!r}: 'direct', 'packed' or 'staged'"
            )
        if method == "direct" and on_gpu:
            raise DistributedError("method='direct' is for CPU fields; GPU halos are packed")
        if method == "packed" and on_gpu:
            if self._cuda_aware is None:
                self._cuda_aware = cuda_aware()
            if not self._cuda_aware:
                raise DistributedError(
                    "method='packed' hands GPU buffers to MPI, and this MPI library"
                    " does not take them (MPIX_Query_cuda_support)",
                    hint="use method='staged' (the default), or STENCILKIT_MPI_CUDA=1"
                    " if the library supports CUDA without saying so",
                )
        return method

    def plan(self, fields: Sequence[DecomposedField], method: str | None = None) -> Plan:
        """The (cached) plan of a non-blocking exchange of ``fields``; collective on first use."""
        plan = self._plan(fields, method, phased=False)
        assert isinstance(plan, Plan)
        return plan

    def _plan(
        self, fields: Sequence[DecomposedField], method: str | None, phased: bool
    ) -> Plan | PhasedPlan:
        # fastest path: the same fields as the last exchange of this kind, on the same buffers
        hot = self._hot.get(phased)
        if hot is not None and hot[1] == method and len(hot[2]) == len(fields):
            for f, g, b in zip(fields, hot[2], hot[3]):
                if f is not g or f.field is not b:
                    break
            else:
                if not hot[0].freed:
                    return hot[0]
        # fast path: the same field objects as some recent exchange, still on the same buffers
        quick = (method, phased, *map(id, fields))
        hit = self._last.get(quick)
        if hit is not None and not hit[0].freed:
            for f, g in zip(fields, hit[1]):
                if f.field is not g:
                    break
            else:
                self._hot[phased] = (hit[0], method, tuple(fields), hit[1])
                return hit[0]
        plan = self._plan_slow(fields, method, phased)
        if len(self._last) > 64:
            self._last.clear()
        buffers = tuple(f.field for f in fields)
        self._last[quick] = (plan, buffers)
        self._hot[phased] = (plan, method, tuple(fields), buffers)
        return plan

    def _plan_slow(
        self, fields: Sequence[DecomposedField], method: str | None, phased: bool
    ) -> Plan | PhasedPlan:
        chosen = (
            self._method(fields, method)
            if fields and isinstance(fields[0], DecomposedField)
            else "?"
        )
        key = (
            chosen,
            phased,
            *(
                (f.field.address, f.field.signature, tuple(f.halo.items()))
                for f in fields
                if isinstance(f, DecomposedField)
            ),
        )
        plan = self._cache.get(key)
        if plan is not None:
            return plan
        agree(self.comm, self._check(fields))
        self._agree_signatures(fields, chosen)
        arrays = [f.field.ndarray for f in fields]
        if phased:
            plan = PhasedPlan([Plan(self.comm, ms, arrays, chosen) for ms in self.phases(fields)])
        else:
            plan = Plan(self.comm, self.messages(fields), arrays, chosen)
        self._cache.put(key, plan)
        return plan

    def message_sizes(
        self, fields: Sequence[DecomposedField], blocking: bool = True
    ) -> list[tuple[int, int]]:
        """(neighbour rank, bytes) of every message this rank sends in one exchange of
        ``fields`` (``blocking=False``: the non-blocking exchange's messages). Collective."""
        plan = self._plan(fields, None, phased=blocking)
        arrays = [f.field.ndarray for f in fields]
        return [
            (m.rank, sum(int(np.prod(r.shape)) * arrays[i].itemsize for i, r in m.send))
            for m in plan.remote
        ]

    def message_counts(
        self, fields: Sequence[DecomposedField], blocking: bool = True, method: str | None = None
    ) -> list[tuple[int, int]]:
        """(neighbour rank, MPI messages posted to it) for every message of ``message_sizes``:
        1 each, however many fields (``method`` as for ``exchange``). Collective."""
        return list(self._plan(fields, method, phased=blocking).mpi_messages)

    def free(self) -> None:
        """Free the MPI datatypes of every cached exchange plan (they are rebuilt on the next
        exchange). Call it before ``MPI.Finalize`` when decompositions come and go."""
        self._cache.clear()
        self._last.clear()
        self._hot.clear()

    def _agree_signatures(self, fields: Sequence[DecomposedField], method: str = "?") -> None:
        """Every rank must exchange the same fields (names, dtypes, halos, other dimensions)
        with transports that agree on the bytes (``direct`` against ``packed`` do not)."""
        mine = [
            (
                f.name,
                str(f.dtype),
                tuple((d.value, w) for d, w in f.halo.items()),
                tuple((d.value, len(r)) for d, r in f.domain.items() if d not in f.halo),
            )
            for f in fields
        ]
        wire = "direct" if method == "direct" else "packed"
        all_wires, all_sigs = zip(*self.comm.allgather((wire, mine)))
        if len(set(all_wires)) > 1:
            raise DistributedError(
                "ranks exchange with transports that do not fit together: "
                + ", ".join(f"rank {r}: {w}" for r, w in enumerate(all_wires))
                + " (method='direct' sends fields' regions back to back, 'packed' and 'staged'"
                " aligned segments)",
                hint="pass the same method= on every rank",
            )
        if all(s == all_sigs[0] for s in all_sigs):
            return
        bad = [r for r, s in enumerate(all_sigs) if s != all_sigs[0]]
        detail = next(
            (
                f"field '{a[0]}' on rank 0 is {a[1:]}, on rank {r} field '{b[0]}' is {b[1:]}"
                for r in bad
                for a, b in zip(all_sigs[0], all_sigs[r])
                if a != b
            ),
            f"rank 0 exchanges {len(all_sigs[0])} fields, rank {bad[0]} {len(all_sigs[bad[0]])}",
        )
        raise DistributedError(
            f"ranks {', '.join(map(str, bad))} exchange other fields than rank 0: {detail}"
        )

    def exchange_start(self, *fields: DecomposedField, method: str | None = None) -> Exchange:
        """Start filling the halos of ``fields`` (one message per neighbour for all of them);
        returns a handle whose ``wait()`` completes it. Collective over the decomposition."""
        plan = self.plan(fields, method)
        base = tag_base(self._sequence)
        self._sequence += 1
        return Exchange(plan, plan.start(base), fields)

    def exchange(self, *fields: DecomposedField, method: str | None = None) -> None:
        """Fill the halos of ``fields`` with their neighbours' owned values (blocking)."""
        plan = self._plan(fields, method, phased=True)
        base = tag_base(self._sequence)
        self._sequence += 1
        plan.exchange(base)
        for f in fields:
            f.mark_exchanged()


def exchange(*fields: DecomposedField, method: str | None = None) -> None:
    """Fill the halos of ``fields`` from their neighbours (blocking, collective).

    >>> exchange(h, hu, hv)     # one message per neighbour carries all three
    """
    _first(fields).decomposition.exchange(*fields, method=method)


def exchange_start(*fields: DecomposedField, method: str | None = None) -> Exchange:
    """Start a halo exchange; ``.wait()`` on the result completes it (see :class:`Exchange`)."""
    handle: Exchange = _first(fields).decomposition.exchange_start(*fields, method=method)
    return handle


def _first(fields: Sequence[Any]) -> DecomposedField:
    if not fields or not isinstance(fields[0], DecomposedField):
        got = type(fields[0]).__name__ if fields else "nothing"
        raise DistributedError(f"exchange() takes decomposed fields, got {got}")
    return fields[0]
