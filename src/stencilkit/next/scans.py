"""Scan operators as values: a call of a scan operator is a ``ScanCall`` node (its columns), and
``init=`` is checked at decoration. ``ir/statements.py`` turns those values into statements."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.named_collections import NamedCollectionType, collection_values
from ..core.types import (
    FieldType,
    ScalarType,
    TupleType,
    TypeSpec,
    canonical_dims,
    scalar_type_of_value,
)
from ..ir import nodes as ir
from ..ir.visit import substitute
from .source import SourceFunction
from .typing_rules import TypingError, literal_value


def carry_name(fop: ir.FieldOperator) -> str:
    """The carry's name inside the step: unique to the scan, so that substituting the arguments
    of an enclosing operator never captures it."""
    return f"{fop.name}_carry_"


def _column_type(carry: TypeSpec, dims: tuple[Any, ...]) -> TypeSpec:
    if isinstance(carry, TupleType):
        return TupleType(tuple(_column_type(t, dims) for t in carry.types))
    assert isinstance(carry, ScalarType)
    return FieldType(dims, carry.dtype)


def scan_call(fop: ir.FieldOperator, scan: tuple[Any, ...], args: list[ir.Expr]) -> ir.ScanCall:
    """The columns ``fop`` (a scan operator with ``scan = (axis, forward, init)``) computes from ``args``.

    An argument may be a field (over the scan axis or not: one without it is constant along each
    column), a scalar, or, for a tuple parameter, a tuple of those; the columns span the
    dimensions of every field argument and the axis."""
    axis, forward, init = scan
    carry, params = fop.params[0], fop.params[1:]
    if len(args) != len(params):
        raise TypingError(f"{fop.name}() takes {len(params)} arguments, got {len(args)}")
    mapping: dict[str, ir.Node] = {}
    dims: list[Any] = []
    for p, a in zip(params, args):
        mapping[p.name] = _promote(p.type, a, dims, p.name, fop.name)
    name = carry_name(fop)
    mapping[carry.name] = ir.Ref(name, carry.type)
    step = substitute(fop.body, mapping)
    column_dims = canonical_dims(tuple(dict.fromkeys([*dims, axis])))
    return ir.ScanCall(
        axis, forward, name, init, step, _column_type(carry.type, column_dims), fop.name
    )


def _promote(pt: TypeSpec, a: ir.Expr, dims: list[Any], pname: str, callee: str) -> ir.Expr:
    """The argument ``a`` for a scan parameter of type ``pt``: fields stand for their values at
    each point (their dimensions are added to ``dims``), literals take the parameter's dtype."""
    at = a.type
    if isinstance(pt, TupleType):
        if not isinstance(at, TupleType) or len(at.types) != len(pt.types):
            raise TypingError(f"argument '{pname}' of {callee} must be {pt}, got {at}")
        elems = [
            a.elems[i] if isinstance(a, ir.MakeTuple) else ir.TupleGet(a, i, t)
            for i, t in enumerate(at.types)
        ]
        new = tuple(
            _promote(s, e, dims, f"{pname}[{i}]", callee)
            for i, (s, e) in enumerate(zip(pt.types, elems))
        )
        if isinstance(a, ir.MakeTuple) and all(x is y for x, y in zip(new, elems)):
            return a
        # a tuple of elements, so that each element keeps its own type in the step
        return ir.MakeTuple(new, TupleType(tuple(x.type for x in new)))
    if isinstance(a, ir.Literal) and a.weak and isinstance(pt, ScalarType):
        return ir.Literal(literal_value(a.value, pt.dtype), pt)
    if isinstance(at, FieldType) and isinstance(pt, ScalarType):
        if at.dtype != pt.dtype:
            raise TypingError(f"argument '{pname}' of {callee} must have dtype {pt}, got {at}")
        dims.extend(at.dims)
        return a
    if at != pt:
        raise TypingError(f"argument '{pname}' of {callee} must be {pt}, got {at}")
    return a


# ---------------------------------------------------------------------- decoration-time checks
def scan_init(fn: Any, fop: ir.FieldOperator, src: SourceFunction, init: Any) -> ir.Expr:
    """``init=`` of the scan operator ``fop`` as IR, after gt4py's checks of the definition."""
    name = fop.name
    if not fop.params:
        raise src.type_error(
            src.tree, f"Scan operator '{name}' must have at least one argument (the carry)."
        )
    carry = fop.params[0]
    ret = _return_annotation(fn)
    if ret is not None and ret != carry.type:
        raise src.type_error(
            src.tree.args.args[0],
            f"Argument '{carry.name}' to scan operator '{name}' must have"
            f" same type as its return: expected '{ret}', got '{carry.type}'.",
        )
    if carry.type != fop.body.type:
        raise src.type_error(
            src.tree,
            f"scan operator {name} must return its carry type {carry.type},"
            f" returns {fop.body.type}",
        )
    if not _is_scalars(carry.type):
        raise src.type_error(
            src.tree.args.args[0],
            f"the carry of a scan must be scalars or (nested) tuples of scalars, not {carry.type}",
        )
    plain = _plain_values(init)
    if isinstance(carry.type, NamedCollectionType) and type(init) is carry.type.cls:
        init_t: TypeSpec | str = carry.type  # an instance of the carry's class: its types
    else:
        init_t = _init_type(plain)
    if init_t != carry.type:
        raise src.type_error(
            src.tree,
            f"Argument 'init' to scan operator '{name}' must have same type as"
            f" '{carry.name}' argument: expected '{carry.type}', got '{init_t}'.",
        )
    return _init_expr(plain, carry.type)


def _plain_values(v: Any) -> Any:
    """``init=`` with named-collection instances (dataclasses) turned into tuples, at any depth."""
    v = collection_values(v)
    return tuple(_plain_values(x) for x in v) if isinstance(v, tuple) else v


def _return_annotation(fn: Callable[..., Any]) -> TypeSpec | None:
    import inspect

    from .annotations import type_from_annotation

    try:
        hint = inspect.get_annotations(fn, eval_str=True).get("return")
        return None if hint is None else type_from_annotation(hint)
    except Exception:
        return None  # parse_field_operator reported what is wrong with it


def _is_scalars(t: TypeSpec) -> bool:
    return isinstance(t, ScalarType) or (
        isinstance(t, TupleType) and all(_is_scalars(s) for s in t.types)
    )


def _init_type(v: Any) -> TypeSpec | str:
    """The type of a scan's ``init=`` value as gt4py sees it: ``int`` is int32, ``float`` float64."""
    if isinstance(v, tuple):
        types = [_init_type(x) for x in v]
        specs = [t for t in types if not isinstance(t, str)]
        if len(specs) == len(types):
            return TupleType(tuple(specs))
        return f"tuple[{', '.join(map(str, types))}]"
    t = scalar_type_of_value(v)
    return t if t is not None else type(v).__name__


def _init_expr(v: Any, t: TypeSpec) -> ir.Expr:
    if isinstance(t, TupleType):
        elems = tuple(_init_expr(x, s) for x, s in zip(v, t.types, strict=True))
        return ir.MakeTuple(elems, t)
    assert isinstance(t, ScalarType)
    return ir.Literal(np.dtype(t.dtype).type(v).item(), t)
