"""Shrinking a failing program without Hypothesis: shorten and simplify its list of decisions.

A program is the list of integers its ``Chooser`` drew; replaying a shorter or smaller list
(``Replay`` answers the simplest option once it runs out) draws a simpler program. Blocks are
deleted or zeroed, then single values lowered, keeping each change that still fails the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .choices import Replay
from .execute import Outcome, check
from .programs import draw_program


def fails_like(
    target: Outcome, backends: Sequence[str], rounds: int
) -> Callable[[list[int]], bool]:
    def test(values: list[int]) -> bool:
        try:
            p = draw_program(Replay(values))
        except Exception:
            return False
        o = check(p, backends, rounds)
        return o.status == target.status and o.backend == target.backend

    return test


def shrink(
    values: list[int], still_fails: Callable[[list[int]], bool], budget: int = 200
) -> list[int]:
    """The smallest list found (within ``budget`` trials) for which ``still_fails`` holds."""
    best = list(values)
    tries = 0

    def attempt(candidate: list[int]) -> bool:
        nonlocal best, tries
        if tries >= budget or candidate == best:
            return False
        tries += 1
        if still_fails(candidate):
            best = candidate
            return True
        return False

    improved = True
    while improved and tries < budget:
        improved = False
        for size in (16, 8, 4, 2, 1):
            i = 0
            while i < len(best) and tries < budget:
                if attempt(best[:i] + best[i + size :]) or attempt(
                    best[:i] + [0] * len(best[i : i + size]) + best[i + size :]
                ):
                    improved = True
                else:
                    i += size
        for i in range(len(best)):
            while (
                best[i] > 0
                and tries < budget
                and attempt([*best[:i], best[i] // 2, *best[i + 1 :]])
            ):
                improved = True
            while (
                best[i] > 0 and tries < budget and attempt([*best[:i], best[i] - 1, *best[i + 1 :]])
            ):
                improved = True
    return best
