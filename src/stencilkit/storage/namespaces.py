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


def to_host(a: Any, max_spread: float | None = None) -> np.ndarray[Any, Any]:
    """A NumPy copy of ``a`` (a NumPy or CuPy array, any strides). A CuPy view is brought over
    as the raw bytes it spans, with one device-to-host copy, and viewed with its strides on the
    host: no CuPy kernel is compiled (CuPy gathers a non-contiguous array with a kernel of its
    own, whose first use costs a process a tenth of a second or more). ``max_spread``: a view
    spanning more than that many times its own bytes (a few columns of a large array) is left
    to CuPy, which copies only its elements; None: always the raw bytes."""
    if not _is_cupy_array(a):
        return np.asarray(a)
    if a.size == 0 or a.ndim == 0 or any(s < 0 for s in a.strides) or a.flags.c_contiguous:
        return np.asarray(a.get())
    span = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + a.itemsize
    if max_spread is not None and span > max_spread * a.nbytes:
        return np.asarray(a.get())
    # CuPy strides are whole elements, so the span is too: one typed buffer, the view on it
    raw = np.empty(span // a.itemsize, dtype=a.dtype)
    import_cupy().cuda.runtime.memcpy(raw.ctypes.data, a.data.ptr, span, 2)  # 2: device to host
    return np.lib.stride_tricks.as_strided(raw, shape=a.shape, strides=a.strides).copy()
