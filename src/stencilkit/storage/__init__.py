"""Low-level storage: memory layouts and aligned buffer allocation (no dimension names)."""

from .allocation import Allocator, allocate, buffer_strides
from .layout import (
    C_ORDER,
    DEVICE_SCHEMES,
    HORIZONTAL_FIRST,
    SCHEMES,
    Layout,
    LayoutScheme,
    layout_for,
)
from .namespaces import array_namespace, device_of

__all__ = [
    "C_ORDER",
    "DEVICE_SCHEMES",
    "HORIZONTAL_FIRST",
    "SCHEMES",
    "Allocator",
    "Layout",
    "LayoutScheme",
    "allocate",
    "array_namespace",
    "buffer_strides",
    "device_of",
    "layout_for",
]
