"""High-level fields: buffers tagged with domains, neighbour tables, and their constructors."""

from .connectivity import Connectivity
from .constructors import FieldConstructor, as_connectivity, as_field, empty, full, ones, zeros
from .field import Field

__all__ = [
    "Connectivity",
    "Field",
    "FieldConstructor",
    "as_connectivity",
    "as_field",
    "empty",
    "full",
    "ones",
    "zeros",
]
