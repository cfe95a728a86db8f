"""gt4py.next's allocator helpers: ``device_allocators`` (an allocator per device type) and
``is_field_allocation_tool`` (what ``allocator=`` accepts).

>>> f = gtx.zeros({I: 10}, allocator=device_allocators[gtx.DeviceType.CPU])
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ...backends import Backend, FieldAllocator
from ...core.device import DeviceType
from ...storage import Allocator

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


def get_allocator(obj: Any, *, default: Any = None) -> Any:
    """``obj``'s allocator: ``obj.__gt_allocator__`` for a backend, ``obj`` for an allocator."""
    if obj is None:
        return default
    if hasattr(obj, "__gt_allocator__"):
        return obj.__gt_allocator__
    if is_field_allocation_tool(obj):
        return obj
    raise TypeError(f"{obj!r} is not a field allocation tool")


__all__ = ["device_allocators", "get_allocator", "is_field_allocation_tool"]
