"""The few names of ``gt4py._core.definitions`` that user code puts in annotations.

Served as ``gt4py._core.definitions`` by the alias (``stencilkit.compat.gt4py.alias``).
"""

from __future__ import annotations

from typing import TypeAlias, TypeVar

import numpy as np

from ...core import Device, DeviceType

__all__ = [
    "BoolScalar",
    "Device",
    "DeviceType",
    "FloatingScalar",
    "IntegralScalar",
    "Scalar",
    "ScalarT",
]

BoolScalar: TypeAlias = bool | np.bool_
IntegralScalar: TypeAlias = int | np.integer
FloatingScalar: TypeAlias = float | np.floating
Scalar: TypeAlias = BoolScalar | IntegralScalar | FloatingScalar
ScalarT = TypeVar("ScalarT", bound=Scalar)
