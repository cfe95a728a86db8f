"""Allocation of aligned buffers: NumPy on the host, CuPy on CUDA devices, pinned host memory.

Buffers are plain ``numpy.ndarray`` / ``cupy.ndarray`` objects, so they already speak DLPack and
the (CUDA) array interface. This level knows shapes, dtypes and layouts, no dimension names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..core.device import CPU_DEVICE, Device, DeviceType
from ..core.errors import StencilValueError
from .layout import Layout
from .namespaces import check_cuda_device, import_cupy


@runtime_checkable
class Allocator(Protocol):
    """Anything that allocates buffers; pass one as ``allocator=`` to the field constructors.

    ``aligned_index`` is relative to the buffer (0 = first element of each axis), or None for
    the origin. The result must be a NumPy or CuPy array of exactly ``shape`` and ``dtype``.
    """

    def allocate(
        self,
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        layout: Layout,
        device: Device,
        aligned_index: tuple[int, ...] | None,
    ) -> Any: ...


def buffer_strides(
    shape: tuple[int, ...], itemsize: int, layout: Layout
) -> tuple[tuple[int, ...], int]:
    """Byte strides of a buffer of ``shape`` in ``layout``, and the number of bytes it spans."""
    padded = list(shape)
    fastest = layout.fastest_axis
    if layout.padding and fastest is not None:
        per_row = max(layout.row_bytes // itemsize, 1)
        padded[fastest] = -(-shape[fastest] // per_row) * per_row
    strides = [0] * len(shape)
    span = itemsize
    for axis in reversed(layout.stride_order):
        strides[axis] = span
        span *= padded[axis]
    return tuple(strides), span


def _check(
    shape: tuple[int, ...], layout: Layout, aligned_index: Sequence[int] | None
) -> tuple[int, ...]:
    if any(s < 0 for s in shape):
        raise StencilValueError(f"buffer shape {shape} has a negative extent")
    if layout.ndim != len(shape):
        raise StencilValueError(
            f"layout {layout} is for {layout.ndim} axes but the shape {shape} has {len(shape)}"
        )
    index = tuple(int(i) for i in aligned_index) if aligned_index is not None else (0,) * len(shape)
    # an index at or past an extent is fine (gt4py.storage allows it: NDSL passes a quantity's
    # origin, which may sit at the end of an axis); only the byte it would start on is aligned
    if len(index) != len(shape) or any(i < 0 for i in index):
        raise StencilValueError(
            f"aligned index {index} does not fit a buffer of shape {shape}",
            hint="give one non-negative index per axis",
        )
    return index


def _place(
    raw: npt.NDArray[np.uint8],
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    strides: tuple[int, ...],
    first_aligned_byte: int,
    alignment: int,
) -> npt.NDArray[Any]:
    base = int(raw.__array_interface__["data"][0])
    shift = -(base + first_aligned_byte) % alignment
    return np.ndarray(shape, dtype, buffer=raw, offset=shift, strides=strides)


def allocate(
    shape: Sequence[int],
    dtype: npt.DTypeLike,
    layout: Layout,
    device: Device = CPU_DEVICE,
    aligned_index: Sequence[int] | None = None,
) -> Any:
    """An uninitialised buffer whose element at ``aligned_index`` is ``layout.alignment``-aligned.

    Returns a ``numpy.ndarray`` for ``DeviceType.CPU`` and ``CPU_PINNED`` (page-locked, via
    CuPy) and a ``cupy.ndarray`` for ``DeviceType.CUDA``.

    >>> a = allocate((10, 7), "float64", Layout((1, 0), alignment=128, padding=True))
    >>> a.strides                       # axis 0 unit-stride, axis 1 padded to 16 elements
    (8, 128)
    """
    shape = tuple(int(s) for s in shape)
    dt = np.dtype(dtype)
    index = _check(shape, layout, aligned_index)
    strides, span = buffer_strides(shape, dt.itemsize, layout)
    if 0 in shape:
        span = 0
    first_aligned_byte = sum(i * s for i, s in zip(index, strides, strict=True))
    nbytes = span + layout.alignment
    kind = device.device_type
    if kind == DeviceType.CPU:
        raw = np.empty(nbytes, np.uint8)
        return _place(raw, shape, dt, strides, first_aligned_byte, layout.alignment)
    if kind == DeviceType.CPU_PINNED:
        cupy = import_cupy()
        pinned = cupy.cuda.alloc_pinned_memory(nbytes)
        raw = np.frombuffer(pinned, np.uint8, nbytes)
        return _place(raw, shape, dt, strides, first_aligned_byte, layout.alignment)
    if kind == DeviceType.CUDA:
        cupy = check_cuda_device(device.device_id)
        with cupy.cuda.Device(device.device_id):
            mem = cupy.cuda.alloc(nbytes)
            shift = -(int(mem.ptr) + first_aligned_byte) % layout.alignment
            return cupy.ndarray(shape, dt, memptr=mem + shift, strides=strides)
    raise StencilValueError(
        f"cannot allocate on device {device}: only CPU, CPU_PINNED and CUDA are supported",
        hint="use Device(DeviceType.CPU) or Device(DeviceType.CUDA, id)",
    )
