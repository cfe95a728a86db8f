"""Tuples in the IR: their elements, and the flat names tuple parameters are passed under."""

from __future__ import annotations

from ..core.types import TupleType, TypeSpec
from . import nodes as n


def flatten_value(e: n.Expr) -> tuple[n.Expr, ...]:
    """The scalar-or-field elements of a (possibly nested) tuple value, in order."""
    if isinstance(e.type, TupleType):
        elems = (
            e.elems
            if isinstance(e, n.MakeTuple)
            else tuple(n.TupleGet(e, i, t) for i, t in enumerate(e.type.types))
        )
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


def flat_params(params: tuple[n.Param, ...]) -> tuple[n.Param, ...]:
    """The parameters as passed: a tuple parameter ``p`` becomes ``p__0``, ``p__1``, ... (nested
    tuples ``p__1__0``), each a field or a scalar."""
    out: list[n.Param] = []
    for p in params:
        out.extend(_flat_param(p.name, p.type))
    return tuple(out)


def _flat_param(name: str, t: TypeSpec) -> list[n.Param]:
    if isinstance(t, TupleType):
        return [q for i, s in enumerate(t.types) for q in _flat_param(f"{name}__{i}", s)]
    return [n.Param(name, t)]
