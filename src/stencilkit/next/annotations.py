"""Python type annotations -> DSL types."""

from __future__ import annotations

import builtins
import typing
from typing import Any

import numpy as np

from ..core.dtypes import dtype_name
from ..core.named_collections import NamedCollectionType, field_names, is_collection_class
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec, field_type_of

_PYTHON_SCALARS = {builtins.float: "float64", builtins.int: "int32", builtins.bool: "bool"}


def type_from_annotation(annotation: Any) -> TypeSpec:
    """The DSL type of an annotation; raises ``TypeError`` with a readable reason."""
    if isinstance(annotation, FieldType | ScalarType | TupleType):
        return annotation
    if annotation in _PYTHON_SCALARS:
        return ScalarType(_PYTHON_SCALARS[annotation])
    if isinstance(annotation, type) and issubclass(annotation, np.generic):
        return ScalarType(dtype_name(annotation))
    if is_collection_class(annotation):
        return collection_type(annotation)
    origin = typing.get_origin(annotation)
    if getattr(origin, "__stencilkit_field_annotation__", False):  # Field[Dims[...], dtype]
        return field_type_of(typing.get_args(annotation))
    if origin is tuple:
        args = typing.get_args(annotation)
        if len(args) == 2 and args[1] is Ellipsis:
            raise TypeError("variable-length tuples are not supported; list each element type")
        return TupleType(tuple(type_from_annotation(a) for a in args))
    raise TypeError(
        f"{annotation!r} is not a DSL type; use Field[Dims[...], dtype], a scalar type such as"
        " float64, tuple[...] of these, or a NamedTuple / dataclass of these"
    )


def collection_type(cls: type) -> NamedCollectionType:
    """The DSL type of a named collection class, from its (resolved) type hints."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception as err:
        raise TypeError(f"cannot evaluate the annotations of {cls.__name__}: {err}") from None
    names = field_names(cls)
    types = []
    for n in names:
        if n not in hints:
            raise TypeError(f"element '{n}' of {cls.__name__} has no type annotation")
        try:
            types.append(type_from_annotation(hints[n]))
        except TypeError as err:
            raise TypeError(f"element '{n}' of {cls.__name__}: {err}") from None
    return NamedCollectionType(tuple(types), names, cls)
