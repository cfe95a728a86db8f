"""Where the fuzzer's decisions come from: a seeded NumPy generator, a recorded sequence, or Hypothesis.

Every decision is one bounded integer (``integer(lo, hi)``), so a whole program is the list of
integers drawn for it. That list is what a failure saves (``tests/fuzz/regressions/*.json``),
what replays it, and what the script's shrinker shortens. ``0`` is always the simplest answer:
options are listed simplest first and a replayed list that runs out keeps answering ``lo``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


class Chooser:
    """The decisions of one program; subclasses say where the integers come from."""

    def __init__(self) -> None:
        self.record: list[int] = []  # v - lo of every draw: replays through ``Replay``

    def _draw(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def integer(self, lo: int, hi: int) -> int:
        assert lo <= hi, (lo, hi)
        if lo == hi:
            return lo
        v = self._draw(lo, hi)
        self.record.append(v - lo)
        return v

    def choice(self, options: Sequence[T]) -> T:
        return options[self.integer(0, len(options) - 1)]

    def chance(self, percent: int) -> bool:
        """True with about ``percent``% probability; False is the simple answer."""
        return self.integer(0, 99) >= 100 - percent

    def real(self, lo: float, hi: float, steps: int = 64) -> float:
        """A float on a grid of ``steps`` values in [lo, hi] (exact in binary: short literals)."""
        return lo + (hi - lo) * self.integer(0, steps) / steps


class RandomChooser(Chooser):
    """Decisions from ``numpy.random.Generator``: the long runs, no Hypothesis needed."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.rng = np.random.default_rng(seed)

    def _draw(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))


class Replay(Chooser):
    """Decisions read back from a recorded list; past its end every answer is the simplest."""

    def __init__(self, values: Sequence[int]) -> None:
        super().__init__()
        self.values = list(values)
        self.pos = 0

    def _draw(self, lo: int, hi: int) -> int:
        v = self.values[self.pos] if self.pos < len(self.values) else 0
        self.pos += 1
        return lo + min(max(int(v), 0), hi - lo)


class HypothesisChooser(Chooser):
    """Decisions drawn through Hypothesis's ``data()`` strategy, so that Hypothesis shrinks them."""

    def __init__(self, data: Any) -> None:
        super().__init__()
        self.data = data

    def _draw(self, lo: int, hi: int) -> int:
        from hypothesis import strategies as st

        return int(self.data.draw(st.integers(lo, hi)))
