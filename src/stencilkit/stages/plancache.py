"""The plans of one program on one backend, one per argument signature: bounded, and safe when
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
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

P = TypeVar("P")


class PlanCache(Generic[P]):
    """At most ``size`` plans by key, least recently used dropped first.

    >>> cache = PlanCache[str](size=2)
    >>> cache.get_or_make(("a",), lambda: "plan a")
    'plan a'
    >>> cache.get(("a",))
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

    def get_or_make(self, key: Hashable, make: Callable[[], P]) -> P:
        """The plan for ``key``, made by ``make()`` if there is none (once, also when several
        threads ask at the same time)."""
        plan = self.get(key)
        if plan is not None:
            return plan
        with self.lock:
            plan = self._plans.get(key)
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
