"""Tuples in the IR: their elements, and the flat names tuple parameters are passed under."""

from __future__ import annotations

from ..core.types import TupleType
from . import nodes as n


def flatten_value(e: n.Expr) -> tuple[n.Expr, ...]:
    """The scalar-or-field elements of a (possibly nested) tuple value, in order."""
    if isinstance(e.type, TupleType):
        elems = e.elems if isinstance(e, n.MakeTuple) else tuple(
            n.TupleGet(e, i, t) for i, t in enumerate(e.type.types))
        return tuple(x for el in elems for x in flatten_value(el))
    return (e,)


def flat_name(e: n.Expr) -> str | None:
    """``a`` for ``Ref(a)``, ``a__1`` for ``Ref(a)[1]``: the name a tuple element is passed under."""
    if isinstance(e, n.Ref):
        return e.name
    if isinstance(e, n.TupleGet):
        base = flat_name(e.expr)
        return None if base is None else f"{base}__{e.index}"
    return None
