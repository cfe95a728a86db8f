"""gt4py.next's allocator helpers: ``device_allocators`` (an allocator per device type) and
``is_field_allocation_tool`` (what ``allocator=`` accepts).

>>> f = gtx.zeros({I: 10}, allocator=device_allocators[gtx.DeviceType.CPU])
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Protocol, TypeAlias, TypeVar

from ...backends import Backend, FieldAllocator
from ...core.device import DeviceType
from ...storage import Allocator

_DeviceT = TypeVar("_DeviceT", bound=DeviceType, covariant=True)


class FieldBufferAllocatorProtocol(Protocol[_DeviceT]):
    """gt4py's protocol of a buffer allocator (for annotations; ``FieldAllocator`` is one)."""

    @property
    def device_type(self) -> DeviceType: ...


class FieldBufferAllocatorFactoryProtocol(Protocol[_DeviceT]):
    """gt4py's protocol of an object that hands out an allocator (a backend)."""

    @property
    def __gt_allocator__(self) -> FieldBufferAllocatorProtocol[_DeviceT]: ...


#: What ``allocator=`` accepts (annotations only; ``is_field_allocation_tool`` checks a value).
FieldBufferAllocationUtil: TypeAlias = Any

#: One allocator per device type stencilkit allocates on.
device_allocators: dict[DeviceType, FieldAllocator] = {
    DeviceType.CPU: FieldAllocator(DeviceType.CPU),
    DeviceType.CPU_PINNED: FieldAllocator(DeviceType.CPU_PINNED),
    DeviceType.CUDA: FieldAllocator(DeviceType.CUDA),
}


def is_field_allocation_tool(obj: Any) -> bool:
    """Whether ``obj`` can be passed as ``allocator=`` to the field constructors."""
    if isinstance(obj, Backend | FieldAllocator | Allocator):
        return True
    if isinstance(obj, ModuleType):
        return obj.__name__.split(".")[0] in ("numpy", "cupy")
    return hasattr(obj, "__gt_allocator__") or hasattr(obj, "device_type")


def _device_type(obj: Any) -> DeviceType | None:
    """The device type ``obj`` allocates on, or None if it is not an allocation tool."""
    if not is_field_allocation_tool(obj):
        return None
    if isinstance(obj, ModuleType):
        return DeviceType.CPU if obj.__name__.split(".")[0] == "numpy" else DeviceType.CUDA
    for attr in ("__gt_device_type__", "device_type"):
        value = getattr(obj, attr, None)
        if value is not None:
            return DeviceType(value)
    inner = getattr(obj, "__gt_allocator__", None)
    return None if inner is None or inner is obj else _device_type(inner)


def is_field_allocator(obj: Any) -> bool:
    """Whether ``obj`` is an allocator itself (not a backend that hands one out)."""
    return is_field_allocation_tool(obj) and not isinstance(obj, Backend)


def is_field_allocator_for(obj: Any, device: DeviceType) -> bool:
    """Whether ``obj`` is an allocator for ``device``."""
    return is_field_allocator(obj) and _device_type(obj) == device


def is_field_allocator_factory(obj: Any) -> bool:
    """Whether ``obj`` hands out an allocator (``__gt_allocator__``: a backend)."""
    return hasattr(obj, "__gt_allocator__")


def is_field_allocator_factory_for(obj: Any, device: DeviceType) -> bool:
    """Whether ``obj`` hands out an allocator for ``device``."""
    return is_field_allocator_factory(obj) and _device_type(obj.__gt_allocator__) == device


def is_field_allocation_tool_for(obj: Any, device: DeviceType) -> bool:
    """Whether ``obj`` (an allocator, a backend, ``numpy``/``cupy``) allocates on ``device``:
    icon4py's ``device_utils.is_cupy_device`` asks it with ``gtx.CUPY_DEVICE_TYPE``."""
    return _device_type(obj) == device


def get_allocator(obj: Any, *, default: Any = None) -> Any:
    """``obj``'s allocator: ``obj.__gt_allocator__`` for a backend, ``obj`` for an allocator."""
    if obj is None:
        return default
    if hasattr(obj, "__gt_allocator__"):
        return obj.__gt_allocator__
    if is_field_allocation_tool(obj):
        return obj
    raise TypeError(f"{obj!r} is not a field allocation tool")


__all__ = [
    "FieldBufferAllocationUtil",
    "FieldBufferAllocatorFactoryProtocol",
    "FieldBufferAllocatorProtocol",
    "device_allocators",
    "get_allocator",
    "is_field_allocation_tool",
    "is_field_allocation_tool_for",
    "is_field_allocator",
    "is_field_allocator_factory",
    "is_field_allocator_factory_for",
    "is_field_allocator_for",
]
