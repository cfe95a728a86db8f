"""The few names of ``gt4py._core.definitions`` that user code puts in annotations.

Served as ``gt4py._core.definitions`` by the alias (``stencilkit.compat.gt4py.alias``).
"""

from __future__ import annotations

from typing import Any, TypeAlias, TypeVar

import numpy as np

from ...core import Device, DeviceType

__all__ = [
    "BoolScalar",
    "Device",
    "DeviceType",
    "DeviceTypeT",
    "FloatingScalar",
    "IntegralScalar",
    "Scalar",
    "ScalarT",
    "is_scalar_type",
]

BoolScalar: TypeAlias = bool | np.bool_
IntegralScalar: TypeAlias = int | np.integer
FloatingScalar: TypeAlias = float | np.floating
Scalar: TypeAlias = BoolScalar | IntegralScalar | FloatingScalar
ScalarT = TypeVar("ScalarT", bound=Scalar)
DeviceTypeT = TypeVar("DeviceTypeT", bound=DeviceType)


def is_scalar_type(value: Any) -> bool:
    """Whether ``value`` is a scalar (a Python or NumPy bool, integer or floating-point number)."""
    return isinstance(value, bool | int | float | np.bool_ | np.number)
