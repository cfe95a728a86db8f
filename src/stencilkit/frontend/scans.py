"""Scan operators as values: ``ScanCall`` nodes, and turning an operator's result into statements.

A field operator may return a scan (``return backward(cp, dp)``) and pass one scan's columns to
another (``cp, dp = forward(a, b, c, d)``). Every scan becomes its own statement: the scans
whose columns are only used inside the operator write caller-invisible temporaries (allocated by
the runner over the domain of the operator's output), and the returned value is the last
statement.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.types import FieldType, ScalarType, TupleType, TypeSpec, canonical_dims
from ..ir import nodes as ir
from ..ir.visit import deep, map_children, substitute, walk
from .typing_rules import TypingError


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
    """The columns ``fop`` (a scan operator with ``scan = (axis, forward, init)``) computes from ``args``."""
    axis, forward, init = scan
    carry, params = fop.params[0], fop.params[1:]
    if len(args) != len(params):
        raise TypingError(f"{fop.name}() takes {len(params)} arguments, got {len(args)}")
    mapping: dict[str, ir.Node] = {}
    dims: list[Any] = []
    for p, a in zip(params, args):
        at = a.type
        if isinstance(a, ir.Literal) and a.weak and isinstance(p.type, ScalarType):
            a = ir.Literal(np.dtype(p.type.dtype).type(a.value).item(), p.type)
        elif isinstance(at, FieldType):
            if at.dtype != getattr(p.type, "dtype", None):
                raise TypingError(f"argument '{p.name}' of {fop.name} must have dtype {p.type}, got {at}")
            if axis not in at.dims:
                raise TypingError(f"argument '{p.name}' of scan {fop.name} must have the scan axis {axis}",
                                  hint=f"broadcast it first: broadcast(x, (..., {axis}))")
            dims.extend(at.dims)
        elif at != p.type:
            raise TypingError(f"argument '{p.name}' of {fop.name} must be {p.type}, got {at}")
        mapping[p.name] = a
    if not dims:
        raise TypingError(f"scan {fop.name} needs at least one field argument over {axis}")
    name = carry_name(fop)
    mapping[carry.name] = ir.Ref(name, carry.type)
    step = substitute(fop.body, mapping)
    column_dims = canonical_dims(tuple(dict.fromkeys(dims)))
    return ir.ScanCall(axis, forward, name, init, step, _column_type(carry.type, column_dims), fop.name)


class _Hoister:
    """Moves every scan out of an expression into a statement writing temporaries."""

    def __init__(self, outs: tuple[ir.Ref, ...], domain: tuple[ir.DomainRange, ...], where: str,
                 prefix: str) -> None:
        self.outs = outs
        self.domain = domain
        self.where = where
        self.prefix = prefix
        self.stmts: list[ir.Apply | ir.ScanApply] = []
        self.temps: list[ir.Param] = []
        self.carries: list[str] = []
        self.done: dict[int, tuple[ir.Node, ir.Node]] = {}  # by id: a scan (cp, dp = scan(...)) runs once

    def hoist(self, e: ir.Node) -> ir.Node:
        hit = self.done.get(id(e))
        if hit is None:
            new = self.temporary(e) if isinstance(e, ir.ScanCall) else map_children(e, self.hoist)
            hit = self.done[id(e)] = (e, new)
        return hit[1]

    def step(self, call: ir.ScanCall) -> ir.Expr:
        self.carries.append(call.carry_name)
        try:
            return self.hoist(call.step)  # type: ignore[return-value]
        finally:
            self.carries.pop()

    def temporary(self, call: ir.ScanCall) -> ir.Expr:
        used = {x.name for x in walk(call) if isinstance(x, ir.Ref)}
        if used & set(self.carries):
            raise TypingError(f"the arguments of scan {call.label} depend on the carry of an enclosing scan")
        out_dims = self.outs[0].type.dims  # type: ignore[union-attr]
        refs: list[ir.Ref] = []

        def make(t: TypeSpec) -> ir.Expr:
            if isinstance(t, TupleType):
                elems = tuple(make(s) for s in t.types)
                return ir.MakeTuple(elems, TupleType(tuple(x.type for x in elems)))
            assert isinstance(t, FieldType)
            if not set(t.dims) <= set(out_dims):
                raise TypingError(f"scan {call.label} produces columns over [{', '.join(map(str, t.dims))}],"
                                  f" which the result over [{', '.join(map(str, out_dims))}] does not cover",
                                  hint="call the scan in its own program statement")
            ref = ir.Ref(f"{self.prefix}{len(self.temps)}", FieldType(out_dims, t.dtype))
            self.temps.append(ir.Param(ref.name, ref.type))
            refs.append(ref)
            return ref

        value = make(call.type)
        step = self.step(call)
        self.stmts.append(ir.ScanApply(call.axis, call.forward, call.carry_name, call.init, step,
                                       tuple(refs), self.domain, call.label, self.where))
        return value


@deep
def statements(expr: ir.Expr, outs: tuple[ir.Ref, ...], domain: tuple[ir.DomainRange, ...], label: str,
               where: str, prefix: str) -> tuple[list[ir.Apply | ir.ScanApply], list[ir.Param]]:
    """The statements that evaluate ``expr`` into ``outs``, and the temporaries they need."""
    h = _Hoister(outs, domain, where, prefix)
    if isinstance(expr, ir.ScanCall):
        step = h.step(expr)
        last: ir.Apply | ir.ScanApply = ir.ScanApply(expr.axis, expr.forward, expr.carry_name, expr.init, step,
                                                     outs, domain, label, where)
    else:
        last = ir.Apply(h.hoist(expr), outs, domain, label, where)  # type: ignore[arg-type]
    temps = {t.name for t in h.temps}
    for stmt in [*h.stmts, last] if temps else []:
        for x in walk(stmt):
            if isinstance(x, ir.Shift) and any(isinstance(r, ir.Ref) and r.name in temps for r in walk(x.expr)):
                raise TypingError(
                    "the result of a scan is read at a shifted point inside this operator; stencilkit"
                    " computes such columns only where the result is written",
                    hint="write the scan's result to a field in one program statement and shift it in the next")
    return [*h.stmts, last], h.temps
