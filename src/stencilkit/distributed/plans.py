"""Plans in use: the phases of a blocking exchange, the plan cache, and an exchange in flight."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from .comm import mpi
from .halo import Message, Plan


class PhasedPlan:
    """Plans run one after the other (the phases of a blocking Cartesian exchange)."""

    def __init__(self, phases: Sequence[Plan]) -> None:
        self.phases = [
            p for p in phases if p.remote or p.local_pairs
        ]  # a phase with no neighbour is skipped
        self.nbytes = sum(p.nbytes for p in phases)
        self.freed = False
        # the requests of each phase, once every phase is only persistent requests (no
        # packing, no local copy): the exchange is then Startall + Waitall per phase
        self.requests: list[list[Any]] | None = None

    @property
    def remote(self) -> list[Message]:
        return [m for p in self.phases for m in p.remote]

    @property
    def mpi_messages(self) -> list[tuple[int, int]]:
        return [x for p in self.phases for x in p.mpi_messages]

    def exchange(self, tag_base: int) -> None:
        if self.requests is not None:
            MPI = mpi()
            for requests in self.requests:
                MPI.Prequest.Startall(requests)
                MPI.Request.Waitall(requests)
            return
        for p in self.phases:
            p.exchange(tag_base)
        persistent = [p.persistent for p in self.phases if not (p.has_packing or p.local_pairs)]
        if len(persistent) == len(self.phases) and all(r is not None for r in persistent):
            self.requests = [r for r in persistent if r]

    def free(self) -> None:
        self.requests = None
        for p in self.phases:
            p.free()
        self.freed = True


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

    def clear(self) -> None:
        """Free every plan (their MPI datatypes)."""
        while self.plans:
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
        """Whether ``wait()`` has completed the exchange."""
        return self._requests is None

    def wait(self) -> None:
        """Complete the exchange (idempotent) and mark the fields' halos fresh."""
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


__all__ = ["Exchange", "PhasedPlan", "PlanCache"]
