"""gt4py.next's DaCe transformations: only the hook names code refers to when configuring a DaCe
backend (``GT4PyAutoOptHook``, ``TransientMemoryMode``). stencilkit has no DaCe backend
(``stencilkit.program_processors.runners.dace``): any transformation itself refuses."""

from __future__ import annotations

import enum
from typing import Any


class GT4PyAutoOptHook(enum.Enum):
    """The stages of gt4py's DaCe auto-optimizer that accept hooks (names only here)."""

    TopLevelDataFlowPre = enum.auto()
    TopLevelDataFlowMapFusionVerticalCallBack = enum.auto()
    TopLevelDataFlowMapFusionHorizontalCallBack = enum.auto()
    TopLevelDataFlowMapPromotionCallBack = enum.auto()
    TopLevelDataFlowVerticalSplitCallBack = enum.auto()
    TopLevelDataFlowHorizontalSplitCallBack = enum.auto()
    TopLevelDataFlowStep = enum.auto()
    TopLevelDataFlowPost = enum.auto()
    AfterToGPU = enum.auto()


class TransientMemoryMode(str, enum.Enum):  # noqa: UP042  (gt4py's bases: str() is the member's name)
    SCOPED = "SCOPED"
    PERSISTENT = "PERSISTENT"
    POOL = "POOL"
    EXTERNAL = "EXTERNAL"


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .. import DaceNotAvailableError

    raise DaceNotAvailableError(
        f"gt4py.next.program_processors.runners.dace.transformations.{name}: stencilkit has no"
        " DaCe backend, so no DaCe transformations; use stencilkit's cpu or gpu backend"
    )


__all__ = ["GT4PyAutoOptHook", "TransientMemoryMode"]
