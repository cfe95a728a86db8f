"""Core vocabulary: dimensions, domains, dtypes, devices, types and errors."""

from .device import CPU_DEVICE, Device, DeviceType
from .dims import (
    CartesianOffset,
    Dimension,
    DimensionKind,
    Dims,
    FieldOffset,
    FieldOffsetElement,
)
from .domain import Domain, UnitRange, domain, unit_range
from .errors import (
    BackendUnavailableError,
    BuildError,
    InternalError,
    SourceLocation,
    StencilError,
    StencilTypeError,
    StencilValueError,
)
from .types import FieldType, ScalarType, TupleType, TypeSpec

__all__ = [
    "CPU_DEVICE",
    "BackendUnavailableError",
    "BuildError",
    "CartesianOffset",
    "Device",
    "DeviceType",
    "Dimension",
    "DimensionKind",
    "Dims",
    "Domain",
    "FieldOffset",
    "FieldOffsetElement",
    "FieldType",
    "InternalError",
    "ScalarType",
    "SourceLocation",
    "StencilError",
    "StencilTypeError",
    "StencilValueError",
    "TupleType",
    "TypeSpec",
    "UnitRange",
    "domain",
    "unit_range",
]
