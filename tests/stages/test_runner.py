"""The PlanCache both runners keep their plans in (``stages/runner.py``) and the Runner protocol."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

import stencilkit as gtx
from stencilkit.stages import PlanCache, Runner


@dataclass
class _Plan:
    name: str
    tables: dict[str, Any] = field(default_factory=dict)


def test_the_least_recently_used_plan_is_dropped() -> None:
    cache: PlanCache[_Plan] = PlanCache(size=2)
    cache.put(("a",), _Plan("a"))
    cache.put(("b",), _Plan("b"))
    assert cache.get(("a",)) is not None  # a is now the most recent
    cache.put(("c",), _Plan("c"))
    assert ("b",) not in cache and ("a",) in cache and ("c",) in cache and len(cache) == 2


def test_a_plan_made_with_other_tables_is_not_found() -> None:
    table, other = object(), object()
    cache: PlanCache[_Plan] = PlanCache(size=4)
    cache.put(("k",), _Plan("with table", {"E2C": table}))
    assert cache.find(("k",), {"E2C": table}) is not None
    assert cache.find(("k",), {"E2C": other}) is None
    remade = cache.find_or_make(("k",), {"E2C": other}, lambda: _Plan("remade", {"E2C": other}))
    assert remade.name == "remade" and cache.find(("k",), {"E2C": other}) is remade


def test_a_plan_is_made_once_when_threads_ask_at_the_same_time() -> None:
    cache: PlanCache[_Plan] = PlanCache(size=4)
    made: list[int] = []
    start = threading.Barrier(6)

    def make() -> _Plan:
        made.append(1)
        time.sleep(0.05)  # long enough for every thread to arrive while it is being made
        return _Plan("slow")

    got: list[_Plan] = []

    def ask() -> None:
        start.wait()
        got.append(cache.find_or_make(("k",), {}, make))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1 and len(got) == 6 and all(p is got[0] for p in got)


def test_a_cache_holds_at_least_one_plan() -> None:
    with pytest.raises(ValueError, match="at least one plan"):
        PlanCache(size=0)


@pytest.mark.parametrize("backend", [None, gtx.cpu], ids=["embedded", "cpu"])
def test_both_runners_are_runners(backend: object) -> None:
    from stencilkit import Dims, Field, float64

    I = gtx.Dimension("I")

    @gtx.field_operator
    def copy(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
        return a

    @gtx.program(backend=backend)
    def run(a: Field[Dims[I], float64], out: Field[Dims[I], float64]):
        copy(a, out=out)

    assert isinstance(run._runner, Runner) and isinstance(run._runner.plans, PlanCache)
