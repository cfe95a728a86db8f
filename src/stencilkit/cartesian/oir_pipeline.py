"""``gt4py.cartesian.gtc.passes.oir_pipeline``: gt4py's optimisation pass names, as no-ops.

NDSL names passes to skip (``skip_passes=("PruneKCacheFills", ...)``), finds them by
``__name__`` in ``DefaultPipeline.all_steps()`` and passes ``oir_pipeline=DefaultPipeline(skip=
[...])`` to ``gtscript.stencil``. stencilkit has its own passes; these stand-ins make the
lookups succeed, and a stencil accepts the pipeline as a hint that changes nothing.

>>> [s.__name__ for s in DefaultPipeline(skip=[PruneKCacheFills]).steps][-1]
'PruneKCacheFlushes'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["DefaultPipeline", "OirPipeline", "PASS_NAMES"]

#: gt4py 1.2.3's default OIR passes, in its order
PASS_NAMES = (
    "AdjacentLoopMerging",
    "HorizontalExecutionMerging",
    "OnTheFlyMerging",
    "LocalTemporariesToScalars",
    "WriteBeforeReadTemporariesToScalars",
    "MaskStmtMerging",
    "MaskInlining",
    "UnreachableStmtPruning",
    "NoFieldAccessPruning",
    "IJCacheDetection",
    "KCacheDetection",
    "PruneKCacheFills",
    "PruneKCacheFlushes",
)


class _Pass:
    """A gt4py pass name; running it returns its input unchanged."""

    def __init__(self, node: Any = None) -> None:
        self.node = node

    def visit(self, node: Any, **kwargs: Any) -> Any:
        return node


def _make_pass(name: str) -> type[_Pass]:
    return type(name, (_Pass,), {"__doc__": f"gt4py's {name} pass (a no-op on stencilkit)."})


_PASSES: dict[str, type[_Pass]] = {name: _make_pass(name) for name in PASS_NAMES}
globals().update(_PASSES)
__all__ += list(PASS_NAMES)


class OirPipeline(Protocol):
    """What ``oir_pipeline=`` takes: hashable, printable, ``run(oir) -> oir``."""

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

    def run(self, oir: Any) -> Any: ...


class DefaultPipeline:
    """gt4py's default pass list with ``skip`` and ``add_steps``; ``run`` changes nothing."""

    def __init__(
        self, *, skip: Sequence[Any] | None = None, add_steps: Sequence[Any] | None = None
    ):
        self.skip = list(skip or [])
        self.add_steps = list(add_steps or [])

    @staticmethod
    def all_steps() -> Sequence[type[_Pass]]:
        return list(_PASSES.values())

    @property
    def steps(self) -> Sequence[Any]:
        return [s for s in self.all_steps() if s not in self.skip] + self.add_steps

    def run(self, oir: Any) -> Any:
        return oir

    def __repr__(self) -> str:
        return f"DefaultPipeline(skip={[getattr(s, '__name__', s) for s in self.skip]})"

    def __hash__(self) -> int:
        return hash(tuple(getattr(s, "__name__", repr(s)) for s in (*self.skip, *self.add_steps)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DefaultPipeline) and hash(self) == hash(other)
