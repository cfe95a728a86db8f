"""Scalar types of the DSL. They are NumPy scalar types, as in gt4py.next."""

from __future__ import annotations

from typing import Final

import numpy as np

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float32, float64 = np.float32, np.float64

#: Canonical names of every supported scalar type, mapped to the NumPy dtype.
DTYPES: Final[dict[str, np.dtype]] = {
    name: np.dtype(name)
    for name in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
    )
}

#: C/CUDA spelling of each scalar type.
C_TYPES: Final[dict[str, str]] = {
    "bool": "bool",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "float32": "float",
    "float64": "double",
}


def dtype_name(dtype: object) -> str:
    """Canonical name ('float64', 'int32', ...) of anything NumPy accepts as a dtype."""
    try:
        name = str(np.dtype(dtype).name)  # type: ignore[call-overload]  # anything dtype-like, checked below; NumPy's overloads do not take object
    except TypeError as err:
        raise TypeError(f"{dtype!r} is not a scalar type") from err
    if name not in DTYPES:
        raise TypeError(f"dtype {name} is not supported; use one of {', '.join(DTYPES)}")
    return name


def is_float(name: str) -> bool:
    return name.startswith("float")


def is_integral(name: str) -> bool:
    return name.startswith(("int", "uint"))


def is_bool(name: str) -> bool:
    return name == "bool"
