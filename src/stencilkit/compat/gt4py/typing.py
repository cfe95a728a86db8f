"""gt4py.next's ``typing`` module: names for annotating user code that handles stencils.

>>> def run(prog: stencilkit.typing.Program, backend: stencilkit.typing.Backend | None) -> None: ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

import numpy as np

from ...backends import Backend, FieldAllocator
from ...next.operator import FieldOperator
from ...next.program import Program, ProgramWithBoundArgs
from ...storage import Allocator as BufferAllocator

#: What ``allocator=`` accepts: a backend, ``backend.allocator``, an array namespace or an allocator.
Allocator: TypeAlias = Backend | FieldAllocator | BufferAllocator | Any
OffsetProvider: TypeAlias = Mapping[str, Any]
#: A DSL scalar value.
Scalar: TypeAlias = bool | int | float | np.bool_ | np.integer[Any] | np.floating[Any]

__all__ = [
    "Allocator",
    "Backend",
    "FieldOperator",
    "OffsetProvider",
    "Program",
    "ProgramWithBoundArgs",
    "Scalar",
]
