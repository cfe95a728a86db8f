"""gt4py.next's ``constructors`` module: ``gtx.constructors.zeros(...)`` etc.

>>> f = gtx.constructors.full({I: 4}, 1.5)
"""

import functools
from typing import Any, Final, TypeAlias

import numpy as np

from ...fields.constructors import (
    FieldConstructor,
    as_connectivity,
    as_field,
    empty,
    full,
    ones,
    zeros,
)

#: What ``allocator=`` takes: an array namespace (``numpy``, ``cupy``), a backend or an allocator.
Allocator: TypeAlias = Any


class _FluidPartial(functools.partial):  # type: ignore[type-arg]
    """``as_field.partial(allocator=a)``: a partial application that can be refined again."""

    def partial(self, *args: Any, **kwargs: Any) -> "_FluidPartial":
        return _FluidPartial(self, *args, **kwargs)


# gt4py's constructors carry ``.partial`` (eve's ``with_fluid_partial``); ours too
for _constructor in (empty, zeros, ones, full, as_field, as_connectivity):
    setattr(_constructor, "partial", functools.partial(_FluidPartial, _constructor))  # noqa: B010

#: ``device=None``: the data's device for ``as_field``, else the CPU.
DEFAULT_DEVICE: Final = None
DEFAULT_DTYPE: Final = np.float64

__all__ = [
    "Allocator",
    "DEFAULT_DEVICE",
    "DEFAULT_DTYPE",
    "FieldConstructor",
    "as_connectivity",
    "as_field",
    "empty",
    "full",
    "ones",
    "zeros",
]
