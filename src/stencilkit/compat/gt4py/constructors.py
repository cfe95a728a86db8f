"""gt4py.next's ``constructors`` module: ``gtx.constructors.zeros(...)`` etc.

>>> f = gtx.constructors.full({I: 4}, 1.5)
"""

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
