"""Low-level storage: memory layouts and aligned buffer allocation (no dimension names)."""

from .allocation import Allocator, allocate, buffer_strides
from .layout import (
    C_ORDER,
    DEVICE_SCHEMES,
    GPU_COLUMN_SCHEME,
    HORIZONTAL_FIRST,
    SCHEMES,
    VERTICAL_FIRST,
    Layout,
    LayoutScheme,
    is_column,
    layout_for,
    resolve_layout,
    scheme_for,
)
from .namespaces import array_namespace, device_of

__all__ = [
    "C_ORDER",
    "DEVICE_SCHEMES",
    "GPU_COLUMN_SCHEME",
    "HORIZONTAL_FIRST",
    "SCHEMES",
    "VERTICAL_FIRST",
    "Allocator",
    "Layout",
    "LayoutScheme",
    "allocate",
    "array_namespace",
    "buffer_strides",
    "device_of",
    "is_column",
    "layout_for",
    "resolve_layout",
    "scheme_for",
]
