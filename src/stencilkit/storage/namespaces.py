"""Which array library and which device a buffer belongs to; lazy access to CuPy.

CuPy is imported only inside these functions, so ``import stencilkit`` never loads a GPU library.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np

from ..core import cuda_probe
from ..core.device import Device, DeviceType
from ..core.errors import StencilTypeError, StencilValueError


def import_cupy() -> ModuleType:
    """CuPy, or a :class:`BackendUnavailableError` saying how to install it."""
    return cuda_probe.import_cupy()


def cuda_device_count() -> int:
    """Number of CUDA devices CuPy can see (0 without a driver)."""
    cupy = import_cupy()
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no driver or no device: CuPy raises CUDARuntimeError
        return 0


def check_cuda_device(device_id: int) -> ModuleType:
    """CuPy, after checking that the driver works and CUDA device ``device_id`` exists."""
    cupy = cuda_probe.usable_cupy()
    count = cuda_device_count()
    if not 0 <= device_id < count:
        raise StencilValueError(
            f"CUDA device {device_id} does not exist; this machine has {count}"
            f" (ids 0..{count - 1})",
            hint="pass device=Device(DeviceType.CUDA, id) with a valid id",
        )
    return cupy


def current_cuda_device_id() -> int:
    """CuPy's current device (what ``with cupy.cuda.Device(n)`` selected), default 0."""
    return int(cuda_probe.usable_cupy().cuda.Device().id)


def _is_cupy_array(array: object) -> bool:
    return type(array).__module__.startswith("cupy")


def array_namespace(array: object) -> ModuleType:
    """The array library of a NumPy or CuPy array: the ``numpy`` or ``cupy`` module.

    >>> array_namespace(np.zeros(3)) is np
    True
    """
    if isinstance(array, np.ndarray):
        return np
    if _is_cupy_array(array):
        return sys.modules["cupy"]
    if hasattr(array, "__dlpack_device__"):
        dev = device_of(array)
        return np if dev.device_type in (DeviceType.CPU, DeviceType.CPU_PINNED) else import_cupy()
    raise StencilTypeError(
        f"{type(array).__name__} is not a NumPy or CuPy array",
        hint="convert it first, e.g. numpy.asarray(x) or cupy.asarray(x)",
    )


def device_of(array: Any) -> Device:
    """The device holding an array, from ``__dlpack_device__`` where the array has it.

    >>> device_of(np.zeros(3))
    Device(device_type=<DeviceType.CPU: 1>, device_id=0)
    """
    if isinstance(array, np.ndarray):
        return Device(DeviceType.CPU, 0)
    if _is_cupy_array(array):
        return Device(DeviceType.CUDA, int(array.device.id))
    if hasattr(array, "__dlpack_device__"):
        dev_type, dev_id = array.__dlpack_device__()
        try:
            return Device(DeviceType(int(dev_type)), int(dev_id))
        except ValueError:
            raise StencilValueError(
                f"{type(array).__name__} lives on DLPack device type {dev_type}, which"
                " stencilkit does not know",
                hint="move the data to the CPU or a CUDA GPU first",
            ) from None
    if hasattr(array, "__cuda_array_interface__"):
        return Device(DeviceType.CUDA, current_cuda_device_id())
    if isinstance(array, list | tuple | int | float | complex | np.generic) or hasattr(
        array, "__array_interface__"
    ):
        return Device(DeviceType.CPU, 0)
    raise StencilTypeError(
        f"cannot tell which device a {type(array).__name__} lives on",
        hint="pass an array that supports DLPack or the (CUDA) array interface, or a list",
    )
