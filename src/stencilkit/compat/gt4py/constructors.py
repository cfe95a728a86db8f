"""gt4py.next's ``constructors`` module: ``gtx.constructors.zeros(...)`` etc.

>>> f = gtx.constructors.full({I: 4}, 1.5)
"""

from typing import Final

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

#: ``device=None``: the data's device for ``as_field``, else the CPU.
DEFAULT_DEVICE: Final = None
DEFAULT_DTYPE: Final = np.float64

__all__ = [
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
