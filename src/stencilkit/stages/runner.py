"""How the engine is reached: the :class:`Runner` protocol every backend's runner follows, and
the :class:`PlanCache` both runners (compiled and embedded) keep their plans in.

A runner runs one program (its :class:`~stencilkit.stages.interface.ProgramInterface`) on one
backend. ``runner(args, offset_provider)`` is a call: ``args`` are the flat arguments
(``ProgramInterface.flat`` order, temporaries included). ``runner.stages_for(...)`` runs every
stage ahead of time and keeps the plan for the calls that follow (``Program.compile``);
``runner.stages(..., until=...)`` runs the stages up to one and keeps nothing
(``Program.inspect``; ``until="generate"`` needs no device).

The plans of one program on one backend, one per argument signature: bounded, and safe when
the program is called from several threads at once.

A plan is what the slow first call with a signature produces (checked arguments, lowered and
planned kernels; on compiled backends the loaded binary and its argument block). Looking one up
is the per-call fast path, so :meth:`PlanCache.get` is a dictionary look-up and a move to the end
of the recency order, with no lock. Making one takes the cache's lock, so that two threads
calling with a new signature at once build (and, on the GPU, tune) it once; the least recently
used plan is dropped when the cache is full (a loop counter used in a domain bound makes one
plan per value: without a bound they would pile up for ever).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from .interface import ProgramInterface
from .pipeline import Stages

#: The stage a pipeline run stops after (``run_stages(until=...)``, ``Runner.stages``).
Until = Literal["plan", "generate", "tune"]


class Plan(Protocol):
    """What the cache needs of a plan: the neighbour tables checked when it was made. A call
    with another table object of the same layout must make its plan again (its entries must be
    checked: out-of-range entries would be read); holding the tables keeps their identity."""

    @property
    def tables(self) -> Mapping[str, Any]: ...


P = TypeVar("P", bound=Plan)


@runtime_checkable
class Runner(Protocol):
    """A program on one backend (see the module docstring). Backends of users may return any
    callable from ``Backend.runner``; only a ``Runner`` offers ``compile`` and ``inspect``."""

    interface: ProgramInterface

    def __call__(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> None: ...

    def stages_for(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> Stages: ...

    def stages(
        self,
        args: list[Any],
        offset_provider: Mapping[str, Any] | None,
        check_device: bool = True,
        until: Until = "tune",
    ) -> Stages: ...


class PlanCache(Generic[P]):
    """At most ``size`` plans by key, least recently used dropped first.

    >>> from types import SimpleNamespace
    >>> cache = PlanCache(size=2)
    >>> cache.find_or_make(("a",), {}, lambda: SimpleNamespace(tables={}, name="plan a")).name
    'plan a'
    >>> cache.find(("a",), {}).name
    'plan a'
    """

    __slots__ = ("_plans", "lock", "size")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a plan cache holds at least one plan, not {size}")
        self.size = size
        self._plans: OrderedDict[Hashable, P] = OrderedDict()
        #: held while a plan is made or kept (reentrant: making a plan may look up another); a caller
        #: that must check a plan before reusing it takes it around its own get and put
        self.lock = threading.RLock()

    def get(self, key: Hashable) -> P | None:
        """The plan for ``key``, or None. No lock: each OrderedDict operation is atomic under the
        GIL, and a plan dropped by another thread meanwhile is still a whole plan."""
        plan = self._plans.get(key)
        if plan is not None:
            try:
                self._plans.move_to_end(key)
            except KeyError:  # dropped by another thread since the look-up
                pass
        return plan

    def find(self, key: Hashable, offset_provider: Mapping[str, Any]) -> P | None:
        """The plan for ``key`` if it was made with these very tables, else None."""
        plan = self.get(key)
        if plan is None or all(offset_provider[t] is c for t, c in plan.tables.items()):
            return plan
        return None

    def find_or_make(
        self, key: Hashable, offset_provider: Mapping[str, Any], make: Callable[[], P]
    ) -> P:
        """:meth:`find`, else ``make()`` once however many threads ask at the same time."""
        plan = self.find(key, offset_provider)
        if plan is not None:
            return plan
        with self.lock:
            plan = self.find(key, offset_provider)
            if plan is None:
                plan = make()
                self.put(key, plan)
            return plan

    def put(self, key: Hashable, plan: P) -> None:
        """Keep ``plan`` under ``key`` (replacing one there), dropping the oldest beyond the size."""
        with self.lock:
            self._plans[key] = plan
            self._plans.move_to_end(key)
            while len(self._plans) > self.size:
                self._plans.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self._plans.clear()

    def values(self) -> list[P]:
        """The plans kept, oldest first (a copy: safe while other threads call)."""
        return list(self._plans.values())

    def __len__(self) -> int:
        return len(self._plans)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._plans

    def __repr__(self) -> str:
        return f"PlanCache({len(self._plans)} of {self.size} plans)"
