"""gt4py.next's ``utils`` helpers used in user code: ``tree_map``, ``flatten_nested_tuple`` and
``FrozenNamespace`` (gt4py has the last in ``gt4py.eve.utils``).

>>> tree_map(lambda a, b: a + b)((1, (2, 3)), (10, (20, 30)))
(11, (22, 33))
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any

from ...fields.partials import fluid_partial, with_fluid_partial


def tree_map(
    fun: Callable[..., Any] | None = None,
    *,
    collection_type: Any = tuple,
    result_collection_constructor: Callable[..., Any] | None = None,
) -> Any:
    """``tree_map(fn)(*trees)``: ``fn`` applied leaf-wise over nested tuples of the same shape.
    Usable as a decorator, with or without arguments."""
    if fun is None:
        return lambda f: tree_map(
            f,
            collection_type=collection_type,
            result_collection_constructor=result_collection_constructor,
        )
    make = result_collection_constructor or (
        collection_type if isinstance(collection_type, type) else tuple
    )

    def impl(*args: Any) -> Any:
        if isinstance(args[0], collection_type):
            if any(not isinstance(a, collection_type) or len(a) != len(args[0]) for a in args):
                raise ValueError("tree_map: the arguments have different structures")
            return make(impl(*elems) for elems in zip(*args))
        return fun(*args)

    return impl


def flatten_nested_tuple(value: Any) -> tuple[Any, ...]:
    """The leaves of nested tuples, in order: ``((1, 2), 3)`` -> ``(1, 2, 3)``."""
    if isinstance(value, tuple):
        return tuple(x for v in value for x in flatten_nested_tuple(v))
    return (value,)


def is_tuple_of(value: Any, types_: type | tuple[type, ...]) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, types_) for v in value)


def equalize_tuple_structure(
    d1: Any, d2: Any, *, fill_value: Any, bidirectional: bool = True
) -> tuple[Any, Any]:
    """Broadcast a leaf against a tuple so both have the same nested structure."""
    t1, t2 = isinstance(d1, tuple), isinstance(d2, tuple)
    if t1 and t2:
        if len(d1) != len(d2):
            raise ValueError("cannot equalize tuples of different lengths")
        pairs = [
            equalize_tuple_structure(a, b, fill_value=fill_value, bidirectional=bidirectional)
            for a, b in zip(d1, d2)
        ]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    if t1 and not t2:
        return equalize_tuple_structure(d1, tuple(fill_value for _ in d1), fill_value=fill_value)
    if t2 and not t1 and bidirectional:
        return equalize_tuple_structure(tuple(fill_value for _ in d2), d2, fill_value=fill_value)
    return d1, d2


class FrozenNamespace(types.SimpleNamespace):
    """An immutable, hashable namespace of constants: ``C = FrozenNamespace(G=np.float64(9.81))``,
    then ``C.G * h`` inside an operator."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError("Trying to modify immutable 'FrozenNamespace' instance.")

    def __delattr__(self, name: str) -> None:
        raise TypeError("Trying to modify immutable 'FrozenNamespace' instance.")

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    def keys(self) -> Iterator[str]:
        return iter(self.as_dict().keys())

    def values(self) -> Iterator[Any]:
        return iter(self.as_dict().values())

    def items(self) -> Iterator[tuple[str, Any]]:
        return iter(self.as_dict().items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrozenNamespace) and self.as_dict() == other.as_dict()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted((k, _hashable(v)) for k, v in self.as_dict().items())))

    def __repr__(self) -> str:
        return "FrozenNamespace(" + ", ".join(f"{k}={v!r}" for k, v in self.items()) + ")"


def _hashable(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return id(v)


__all__ = [
    "FrozenNamespace",
    "fluid_partial",
    "equalize_tuple_structure",
    "flatten_nested_tuple",
    "is_tuple_of",
    "tree_map",
    "with_fluid_partial",
]
