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


def __getattr__(name: str) -> Any:
    """``cp`` (CuPy, or None where it is not installed) and ``CUPY_DEVICE_TYPE`` (None without
    CuPy, else ``DeviceType.ROCM`` or ``DeviceType.CUDA``), as gt4py; looked up on first use, so
    importing this module never imports CuPy."""
    if name not in ("cp", "CUPY_DEVICE_TYPE"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        import cupy
    except ImportError:
        cupy = None
    kind = None
    if cupy is not None:
        kind = DeviceType.ROCM if getattr(cupy.cuda.runtime, "is_hip", False) else DeviceType.CUDA
    globals().update(cp=cupy, CUPY_DEVICE_TYPE=kind)
    return globals()[name]
