"""Named collections (gt4py.next): ``typing.NamedTuple`` classes and user dataclasses whose
elements are fields, scalars, tuples or other collections.

In the DSL a collection is a tuple whose elements also have names: its type is a ``TupleType``
(so flattening, lowering and argument passing treat it as one) that remembers the class and
the element names. Structurally equal tuple types compare equal, whatever the class.

>>> class Wind(NamedTuple):
...     u: Field[Dims[X], float64]
...     v: Field[Dims[X], float64]
>>> is_collection_class(Wind)
True
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .records import record
from .types import TupleType


@record(repr=False, eq=False)
class NamedCollectionType(TupleType):
    """The type of a named collection: element ``types`` under ``names``, of class ``cls``."""

    names: tuple[str, ...] = ()
    cls: type | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TupleType) and self.types == other.types

    def __hash__(self) -> int:
        return hash(TupleType(self.types))

    def __str__(self) -> str:
        name = self.cls.__name__ if self.cls is not None else "collection"
        return f"{name}({', '.join(f'{n}: {t}' for n, t in zip(self.names, self.types))})"

    def __repr__(self) -> str:
        return str(self)


def is_collection_class(cls: Any) -> bool:
    """Whether ``cls`` is a NamedTuple class or a user dataclass usable as a named collection."""
    if not isinstance(cls, type):
        return False
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return bool(cls._fields)
    if not dataclasses.is_dataclass(cls) or cls.__module__.split(".")[0] == "stencilkit":
        return False
    fields = dataclasses.fields(cls)
    return bool(fields) and all(
        f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        for f in fields
    )


def field_names(cls: type) -> tuple[str, ...]:
    if issubclass(cls, tuple):
        return tuple(cls._fields)  # type: ignore[attr-defined]  # a NamedTuple class: typeshed's tuple has no _fields
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} is neither a NamedTuple nor a dataclass")
    return tuple(f.name for f in dataclasses.fields(cls))


def collection_values(value: Any) -> Any:
    """The elements of a collection instance as a tuple (a NamedTuple already is one); any
    other value unchanged."""
    if (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and is_collection_class(type(value))
    ):
        return tuple(getattr(value, f.name) for f in dataclasses.fields(value))
    return value
