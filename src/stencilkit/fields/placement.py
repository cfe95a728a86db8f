"""Where a new field's buffer goes: resolving ``allocator=``/``device=``, taking in foreign
arrays (DLPack, CUDA array interface, lists), deciding zero-copy versus copy, allocating."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from ..core.device import CPU_DEVICE, Device, DeviceType
from ..core.dims import Dimension
from ..core.domain import Domain
from ..core.errors import StencilTypeError, StencilValueError
from ..storage.allocation import Allocator, allocate, buffer_strides
from ..storage.layout import layout_for, resolve_layout
from ..storage.namespaces import check_cuda_device, current_cuda_device_id, device_of, import_cupy

_HOST = (DeviceType.CPU, DeviceType.CPU_PINNED)
_SUPPORTED = (DeviceType.CPU, DeviceType.CPU_PINNED, DeviceType.CUDA)
_NAMESPACE_DEVICE = {"numpy": DeviceType.CPU, "cupy": DeviceType.CUDA}


def as_device(device: Any) -> Device:
    """A supported :class:`Device` from a Device or a ``(DeviceType, id)`` pair."""
    dev: Device | None = None
    if isinstance(device, Device):
        dev = device
    elif isinstance(device, tuple) and len(device) == 2:
        try:
            dev = Device(DeviceType(int(device[0])), int(device[1]))
        except (TypeError, ValueError):
            dev = None
    if dev is None:
        raise StencilTypeError(
            f"unknown device {device!r}",
            hint="pass device=Device(DeviceType.CPU) or Device(DeviceType.CUDA, 0)",
        )
    if dev.device_type not in _SUPPORTED:
        raise StencilValueError(
            f"device {dev} is not supported; fields live on CPU, CPU_PINNED or CUDA devices",
            hint="pass device=Device(DeviceType.CPU) or Device(DeviceType.CUDA, 0)",
        )
    return dev


def _same_family(a: DeviceType, b: DeviceType) -> bool:
    return (a in _HOST) == (b in _HOST)


def resolve_target(
    allocator: Any, device: Any, default: Device | None
) -> tuple[Device, Allocator | None]:
    """The device to allocate on and a user allocator (None: stencilkit's own).

    ``allocator`` is None, an array namespace (``numpy``/``cupy``), a backend-like object
    (with a ``device_type`` attribute and optionally an ``allocator`` attribute), or an
    :class:`Allocator`. ``default`` is used when neither argument says where (None: CPU).
    """
    dev = as_device(device) if device is not None else None
    kind: DeviceType | None = None
    custom: Allocator | None = None
    if (
        allocator is not None
        and not hasattr(allocator, "device_type")
        and hasattr(allocator, "__gt_allocator__")
    ):
        allocator = allocator.__gt_allocator__  # a gt4py-style allocation tool
    if allocator is None:
        pass
    elif isinstance(allocator, ModuleType):
        root = allocator.__name__.split(".")[0]
        if root not in _NAMESPACE_DEVICE:
            raise StencilTypeError(
                f"module {allocator.__name__!r} is not a supported array namespace",
                hint="pass allocator=numpy or allocator=cupy",
            )
        kind = _NAMESPACE_DEVICE[root]
    elif hasattr(allocator, "device_type"):
        try:
            kind = DeviceType(int(allocator.device_type))
        except (TypeError, ValueError):
            raise StencilTypeError(
                f"allocator {allocator!r} has an unknown device_type {allocator.device_type!r}"
            ) from None
        inner = getattr(allocator, "allocator", None)
        if inner is not None and not hasattr(inner, "allocate"):
            inner = None  # e.g. ``backend.allocator``: only says where (the device type)
        if inner is not None and not isinstance(inner, ModuleType):
            if not isinstance(inner, Allocator):
                raise StencilTypeError(f"{allocator!r}.allocator has no allocate() method")
            custom = inner
    elif isinstance(allocator, Allocator):
        custom = allocator
    else:
        raise StencilTypeError(
            f"unknown allocator {allocator!r}",
            hint="pass numpy, cupy, a backend (e.g. gtx.gpu) or an object with allocate()",
        )
    if dev is not None:
        if kind is not None and not _same_family(kind, dev.device_type):
            raise StencilValueError(
                f"allocator {allocator!r} allocates on {kind.name} but device={dev} was given",
                hint="drop one of the two arguments or make them agree",
            )
    elif kind is None:
        dev = default if default is not None else CPU_DEVICE
    elif kind is DeviceType.CUDA:
        dev = Device(DeviceType.CUDA, current_cuda_device_id())
    else:
        dev = Device(kind, 0)
    dev = as_device(dev)
    if dev.device_type is DeviceType.CUDA:
        check_cuda_device(dev.device_id)
    return dev, custom


def ingest(data: Any) -> Any:
    """``data`` as a NumPy or CuPy array, without copying where the source allows it."""
    if isinstance(data, np.ndarray) or type(data).__module__.startswith("cupy"):
        return data
    if hasattr(data, "__dlpack__") and hasattr(data, "__dlpack_device__"):
        dev = device_of(data)
        if dev.device_type in _HOST:
            return np.from_dlpack(data)
        if dev.device_type in (DeviceType.CUDA, DeviceType.CUDA_MANAGED):
            return import_cupy().from_dlpack(data)
        raise StencilValueError(f"data on {dev} cannot be used", hint="move it to CPU or CUDA")
    if hasattr(data, "__cuda_array_interface__"):
        return import_cupy().asarray(data)
    try:
        array = np.asarray(data)
    except (TypeError, ValueError) as err:
        raise StencilTypeError(
            f"cannot make an array of {type(data).__name__}: {err}",
            hint="pass a NumPy/CuPy array, an object with __dlpack__, or a nested list",
        ) from None
    if array.dtype == object:
        raise StencilTypeError(
            f"cannot make a numeric array of {type(data).__name__}",
            hint="pass numbers, e.g. a nested list of floats of equal lengths",
        )
    return array


def fits(array: Any, dtype: np.dtype[Any], device: Device, writable: bool = True) -> bool:
    """Whether ``array`` can back a field on ``device`` as it is (zero copy). ``writable=False``:
    a field that is only read (a program's input) may sit on read-only memory."""
    return not why_copied(array, dtype, device, writable)


def why_copied(array: Any, dtype: np.dtype[Any], device: Device, writable: bool = True) -> str:
    """Why ``array`` cannot back such a field as it is ('' if it can), in the user's terms."""
    if array.dtype != dtype:
        return f"its dtype is {array.dtype}, not {dtype}"
    if device_of(array) != device:
        return f"it lives on {device_of(array)}, not {device}"
    if isinstance(array, np.ndarray):
        if writable and not array.flags.writeable:
            return "it is read-only"
        if not array.flags.aligned:
            return "its elements are not aligned"
        address = int(array.__array_interface__["data"][0])
    else:
        address = int(array.data.ptr)
    itemsize = dtype.itemsize
    if address % itemsize:
        return "its address is not a multiple of the element size"
    # a zero stride (``numpy.broadcast_to``) repeats elements: fine where the field is only read
    if not all(
        n <= 1 or (s % itemsize == 0 and (s > 0 or (s == 0 and not writable)))
        for s, n in zip(array.strides, array.shape, strict=True)
    ):
        if not writable:
            return (
                f"its strides {tuple(array.strides)} are not multiples of the element size"
                " that are positive or zero"
            )
        return f"its strides {tuple(array.strides)} are not positive multiples of the element size"
    return ""


def layout_mismatch(array: Any, domain: Domain, dtype: np.dtype[Any], layout: Any) -> str:
    """Why ``array`` is not laid out as ``layout`` asks ('' if it is: same strides, axes of one
    element aside), in the user's terms."""
    want = resolve_layout(layout, [d.kind for d in domain.dims])
    strides, _ = buffer_strides(tuple(array.shape), dtype.itemsize, want)
    if all(n <= 1 or a == b for a, b, n in zip(array.strides, strides, array.shape, strict=True)):
        return ""
    return f"its strides {tuple(array.strides)} are not those of layout {layout!r} {strides}"


def buffer_index(domain: Domain, aligned_index: Any) -> tuple[int, ...] | None:
    """The buffer-relative index of an absolute ``aligned_index`` (mapping or (dim, i) pairs)."""
    if aligned_index is None:
        return None
    pairs: list[Any] = []
    if isinstance(aligned_index, Mapping):
        pairs = list(aligned_index.items())
    elif isinstance(aligned_index, Sequence):
        pairs = list(aligned_index)
    if not pairs or not all(
        isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], Dimension) for p in pairs
    ):
        raise StencilTypeError(
            f"aligned_index must name dimensions, got {aligned_index!r}",
            hint="e.g. aligned_index=[I(1), K(0)], {I: 1, K: 0} or [(I, 1), (K, 0)]",
        )
    index = [0] * domain.ndim
    for dim, i in pairs:
        if dim not in domain.dims or int(i) not in domain.range_of(dim):
            raise StencilValueError(
                f"aligned_index {dim}={i} is outside the domain {domain}",
                hint="align an index inside the domain, e.g. the first point computed",
            )
        axis = domain.dims.index(dim)
        index[axis] = int(i) - domain.ranges[axis].start
    return tuple(index)


def new_buffer(
    domain: Domain,
    dtype: np.dtype[Any],
    device: Device,
    custom: Allocator | None,
    aligned: tuple[int, ...] | None,
    layout: Any = None,
) -> Any:
    """An uninitialised buffer for ``domain`` in ``layout`` (a scheme name, ``LayoutScheme`` or
    ``Layout``; None: the default layout of ``device`` for the domain's dimension kinds)."""
    kinds = [d.kind for d in domain.dims]
    layout = (
        layout_for(kinds, device.device_type) if layout is None else resolve_layout(layout, kinds)
    )
    if custom is None:
        return allocate(domain.shape, dtype, layout, device, aligned)
    buf = custom.allocate(domain.shape, dtype, layout, device, aligned)
    if tuple(getattr(buf, "shape", ())) != domain.shape or getattr(buf, "dtype", None) != dtype:
        raise StencilTypeError(
            f"allocator {custom!r} returned {type(buf).__name__} of shape"
            f" {getattr(buf, 'shape', None)} and dtype {getattr(buf, 'dtype', None)};"
            f" expected shape {domain.shape}, dtype {dtype}",
        )
    return buf


def fill_from(buffer: Any, source: Any) -> None:
    """Copy ``source`` (NumPy or CuPy, any device) into ``buffer``, casting to its dtype."""
    if isinstance(buffer, np.ndarray):
        buffer[...] = source if isinstance(source, np.ndarray) else import_cupy().asnumpy(source)
        return
    cupy = import_cupy()
    with cupy.cuda.Device(buffer.device.id):
        if not isinstance(source, np.ndarray) and source.device.id != buffer.device.id:
            source = cupy.asnumpy(source)  # between GPUs via the host: simple, rarely needed
        buffer[...] = cupy.asarray(source)
