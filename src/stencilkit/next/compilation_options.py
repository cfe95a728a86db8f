"""gt4py.next's compilation options of a program (``prog.with_compilation_options(...)``).

>>> CompilationOptions().enable_jit
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any


@dataclasses.dataclass(frozen=True)
class CompilationOptions:
    """What gt4py.next 1.2.3 lets a user set on a program before it is compiled."""

    #: False: only what ``compile(...)`` made may run (a call with static values not compiled,
    #: or a program never compiled, raises gt4py's RuntimeError)
    enable_jit: bool = True
    #: the scalar parameters whose values specialise a build
    static_params: Sequence[str] | None = None
    #: the offset providers known ahead of time (gt4py uses them for DaCe orchestration)
    connectivities: Mapping[str, Any] | None = None
    #: whether the domains are compile-time values
    static_domains: bool = False
