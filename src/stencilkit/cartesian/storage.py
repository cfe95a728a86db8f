"""``gt4py.storage``: allocate arrays laid out for a gt4py.cartesian backend name.

The results are plain ``numpy.ndarray`` / ``cupy.ndarray`` objects (no wrapper class), allocated
by stencilkit's storage layer in the layout the backend name's record gives (:mod:`.backend_names`).
A GTScript stencil takes them as they are, and ``gtx.as_field(dims, array, copy=False)`` wraps
the same memory for a gt4py.next program, so both frontends can work on one buffer.

>>> a = zeros((4, 5, 6), backend="gt:cpu_ifirst", aligned_index=(1, 1, 0))
>>> a.strides                                   # I unit-stride: gt:cpu_ifirst's layout
(8, 32, 160)
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.device import Device, DeviceType
from ..core.errors import StencilTypeError, StencilValueError
from ..storage import allocate
from ..storage.namespaces import array_namespace, current_cuda_device_id, import_cupy
from . import layout_registry, storage_utils
from .backend_names import canonical_dimensions, storage_layout
from .layout_registry import from_name, register

__all__ = [
    "cartesian",
    "empty",
    "from_array",
    "from_name",
    "full",
    "layout",
    "layout_registry",
    "ones",
    "register",
    "storage_utils",
    "utils",
    "zeros",
]

#: gt4py.storage's submodules: ``layout`` (the registry functions), ``cartesian`` (the
#: allocators) and ``cartesian.utils`` (``cpu_copy``); all are served by these modules
layout = layout_registry
utils = storage_utils
cartesian = sys.modules[__name__]


def _int_tuple(values: Any, what: str) -> tuple[int, ...]:
    if not isinstance(values, Sequence) or isinstance(values, str):
        raise StencilTypeError(
            f"{what} must be a sequence of ints, got {values!r}", hint=f"e.g. {what}=(10, 10, 5)"
        )
    bad = [v for v in values if not isinstance(v, numbers.Integral) or isinstance(v, bool)]
    if bad:
        raise StencilTypeError(f"{what} must be a sequence of ints, got {tuple(values)!r}")
    return tuple(int(v) for v in values)


def _spec(
    shape: Any, dtype: npt.DTypeLike, aligned_index: Any, dimensions: Any
) -> tuple[tuple[int, ...], np.dtype[Any], tuple[int, ...], tuple[str, ...]]:
    """shape, scalar dtype, aligned index and dimension names, with a subarray dtype's shape
    appended as data dimensions (gt4py's normalisation)."""
    dims_shape = _int_tuple(shape, "shape")
    if any(s <= 0 for s in dims_shape):
        raise StencilValueError(
            f"shape {dims_shape} has an extent that is not positive",
            hint="every extent must be at least 1",
        )
    ndim = len(dims_shape)
    dims = canonical_dimensions(dimensions, ndim)
    if len(dims) != ndim:
        raise StencilValueError(
            f"dimensions {dims!r} name {len(dims)} axes but the shape {dims_shape} has {ndim}",
            hint="give one dimension name per axis of the shape",
        )
    index = (0,) * ndim if aligned_index is None else _int_tuple(aligned_index, "aligned_index")
    if len(index) != ndim:
        raise StencilValueError(
            f"aligned_index {index} has {len(index)} entries but the shape {dims_shape} has"
            f" {ndim} axes",
            hint="give one index per axis of the shape",
        )
    if any(i < 0 for i in index):  # past the extents is allowed, as in gt4py
        raise StencilValueError(
            f"aligned_index {index} contains a negative value",
            hint="give non-negative indices (usually the compute origin)",
        )
    dt = np.dtype(dtype)
    if dt.subdtype is not None:  # e.g. (np.float64, (3,)): trailing data dimensions
        base, sub_shape = dt.subdtype
        dims = (*dims, *(str(d) for d in range(len(sub_shape))))
        dims_shape = (*dims_shape, *sub_shape)
        index = (*index, *(0,) * len(sub_shape))
        dt = base
    return dims_shape, dt, index, dims


def _device(info: layout_registry.LayoutInfo) -> Device:
    if info["device"] == "gpu":
        return Device(DeviceType.CUDA, current_cuda_device_id())
    return Device(DeviceType.CPU, 0)


def empty(
    shape: Sequence[int],
    dtype: npt.DTypeLike = np.float64,
    *,
    backend: str,
    aligned_index: Sequence[int] | None = None,
    dimensions: Sequence[Any] | None = None,
) -> Any:
    """An uninitialised array laid out and aligned for ``backend`` (a gt4py.cartesian backend
    name), its element at ``aligned_index`` (default: the first) on the alignment boundary.

    ``dimensions`` names the axes (``"I"``, ``"J"``, ``"K"``, digit strings for data
    dimensions; default ``"IJK"[:ndim]``); a subarray ``dtype`` appends its shape as data
    dimensions. A NumPy array for CPU backends, a CuPy array for GPU ones.

    >>> empty((3, 4), backend="numpy", dimensions=["I", "K"]).shape
    (3, 4)
    """
    info = from_name(backend)
    full_shape, dt, index, dims = _spec(shape, dtype, aligned_index, dimensions)
    layout_map = tuple(info["layout_map"](dims))
    return allocate(
        full_shape,
        dt,
        storage_layout(layout_map, info["alignment"], dt.itemsize, info["device"]),
        _device(info),
        index,
    )


def full(
    shape: Sequence[int],
    fill_value: Any,
    dtype: npt.DTypeLike = np.float64,
    *,
    backend: str,
    aligned_index: Sequence[int] | None = None,
    dimensions: Sequence[Any] | None = None,
) -> Any:
    """An array like :func:`empty`'s, every element ``fill_value`` (cast to ``dtype``)."""
    out = empty(shape, dtype, backend=backend, aligned_index=aligned_index, dimensions=dimensions)
    out[...] = out.dtype.type(fill_value)
    return out


def zeros(
    shape: Sequence[int],
    dtype: npt.DTypeLike = np.float64,
    *,
    backend: str,
    aligned_index: Sequence[int] | None = None,
    dimensions: Sequence[Any] | None = None,
) -> Any:
    """An array like :func:`empty`'s, filled with 0."""
    return full(
        shape, 0, dtype, backend=backend, aligned_index=aligned_index, dimensions=dimensions
    )


def ones(
    shape: Sequence[int],
    dtype: npt.DTypeLike = np.float64,
    *,
    backend: str,
    aligned_index: Sequence[int] | None = None,
    dimensions: Sequence[Any] | None = None,
) -> Any:
    """An array like :func:`empty`'s, filled with 1."""
    return full(
        shape, 1, dtype, backend=backend, aligned_index=aligned_index, dimensions=dimensions
    )


def _source(data: Any) -> Any:
    """``data`` as a NumPy or CuPy array (a gt4py.next field gives its buffer)."""
    if hasattr(data, "ndarray") and not isinstance(data, np.ndarray):
        data = data.ndarray
    if type(data).__module__.startswith("cupy") or hasattr(data, "__cuda_array_interface__"):
        return import_cupy().asarray(data)
    if hasattr(data, "__dlpack_device__") and int(data.__dlpack_device__()[0]) != DeviceType.CPU:
        return import_cupy().from_dlpack(data)
    return np.asarray(data)


def from_array(
    data: Any,
    dtype: npt.DTypeLike = np.float64,
    *,
    backend: str,
    aligned_index: Sequence[int] | None = None,
    dimensions: Sequence[Any] | None = None,
) -> Any:
    """A **copy** of ``data`` (any array, nested list, or object with the (CUDA) array
    interface) in ``backend``'s layout, moved to the backend's device.

    ``dtype`` defaults to float64 **also for integer data**, as in gt4py; pass ``dtype=None`` to
    keep the data's dtype. A subarray dtype takes the trailing axes of ``data`` as its shape.

    >>> from_array([[1, 2], [3, 4]], backend="numpy").dtype
    dtype('float64')
    """
    src = _source(data)
    dt = src.dtype if dtype is None else np.dtype(dtype)
    shape = tuple(src.shape)
    if dt.subdtype is not None:
        sub_shape = dt.subdtype[1]
        if shape[len(shape) - len(sub_shape) :] != sub_shape:
            raise StencilValueError(
                f"data of shape {shape} does not end in the dtype's shape {sub_shape}",
                hint="the trailing axes of the data are the dtype's data dimensions",
            )
        shape = shape[: len(shape) - len(sub_shape)]
    out = empty(shape, dt, backend=backend, aligned_index=aligned_index, dimensions=dimensions)
    xp = array_namespace(out)
    if xp is np and array_namespace(src) is not np:
        src = src.get()  # a device array copied to a CPU backend's storage
    out[...] = xp.asarray(src)
    return out
