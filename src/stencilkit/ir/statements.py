"""Turning an operator's value into program statements: every scan becomes a statement of its own.

A field operator may return a scan (``return backward(cp, dp)``) and pass one scan's columns to
another (``cp, dp = forward(a, b, c, d)``). Every scan becomes its own statement: the scans
whose columns are only used inside the operator write caller-invisible temporaries (allocated by
the runner like the output of the statement that reads them, ``stages/temporaries.py``) over the
part of the domain where their columns are read, and the returned value is the last statement.
A program statement with one domain per output evaluates the operator once, then writes each
output over its own domain; ``in_place`` makes a statement that reads what it writes safe.
IR in, IR out: any frontend that builds ``ScanCall`` values uses these rewrites.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.types import FieldType, TupleType, TypeSpec
from . import nodes as ir
from .tuples import flat_name, flatten_value
from .visit import deep, map_children, walk


class RewriteError(Exception):
    """The value cannot become statements (a user's mistake): the frontend adds the source
    location and raises it as a user error."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class _Hoister:
    """Moves every scan out of an expression into a statement writing temporaries. Such a
    statement has no domain of its own: it runs where the later statements read its columns
    (``stages/inferred.py``), so a scan used in a ``concat_where`` branch starts at the branch's
    first level, and one read at a shifted level covers that level too."""

    def __init__(self, outs: tuple[ir.Ref, ...], where: str, prefix: str) -> None:
        self.outs = outs
        self.where = where
        self.prefix = prefix
        self.stmts: list[ir.Apply | ir.ScanApply] = []
        self.temps: list[ir.Param] = []
        self.carries: list[str] = []
        self.done: dict[
            int, tuple[ir.Node, ir.Node]
        ] = {}  # by id: a scan (cp, dp = scan(...)) runs once

    def hoist(self, e: ir.Node) -> ir.Node:
        hit = self.done.get(id(e))
        if hit is None:
            new = self.temporary(e) if isinstance(e, ir.ScanCall) else map_children(e, self.hoist)
            hit = self.done[id(e)] = (e, new)
        return hit[1]

    def step(self, call: ir.ScanCall) -> ir.Expr:
        self.carries.append(call.carry_name)
        try:
            return ir.as_expr(self.hoist(call.step))
        finally:
            self.carries.pop()

    def new_temp(self, t: TypeSpec) -> ir.Ref:
        ref = ir.Ref(f"{self.prefix}{len(self.temps)}", t)
        self.temps.append(ir.Param(ref.name, ref.type))
        return ref

    def temporary(self, call: ir.ScanCall) -> ir.Expr:
        used = {x.name for x in walk(call) if isinstance(x, ir.Ref)}
        if used & set(self.carries):
            raise RewriteError(
                f"the arguments of scan {call.label} depend on the carry of an enclosing scan"
            )
        out_dims = ir.field_dims(self.outs[0].type)
        refs: list[ir.Ref] = []

        def make(t: TypeSpec) -> ir.Expr:
            if isinstance(t, TupleType):
                elems = tuple(make(s) for s in t.types)
                return ir.MakeTuple(elems, TupleType(tuple(x.type for x in elems)))
            assert isinstance(t, FieldType)
            if not set(t.dims) <= set(out_dims):
                raise RewriteError(
                    f"scan {call.label} produces columns over [{', '.join(map(str, t.dims))}],"
                    f" which the result over [{', '.join(map(str, out_dims))}] does not cover",
                    hint="call the scan in its own program statement",
                )
            ref = self.new_temp(FieldType(out_dims, t.dtype))
            refs.append(ref)
            return ref

        value = make(call.type)
        step = self.step(call)
        self.stmts.append(
            ir.ScanApply(
                call.axis,
                call.forward,
                call.carry_name,
                call.init,
                step,
                tuple(refs),
                (),
                call.label,
                self.where,
            )
        )
        return value


Statements = tuple[list[ir.Apply | ir.ScanApply], list[ir.Param]]


@deep
def statements(
    expr: ir.Expr,
    outs: tuple[ir.Ref, ...],
    domain: tuple[ir.DomainRange, ...],
    label: str,
    where: str,
    prefix: str,
) -> Statements:
    """The statements that evaluate ``expr`` into ``outs`` over ``domain``, and the temporaries they need."""
    expr = _as_scan(expr)
    h = _Hoister(outs, where, prefix)
    if isinstance(expr, ir.ScanCall):
        step = h.step(expr)
        last: ir.Apply | ir.ScanApply = ir.ScanApply(
            expr.axis, expr.forward, expr.carry_name, expr.init, step, outs, domain, label, where
        )
    else:
        last = ir.Apply(ir.as_expr(h.hoist(expr)), outs, domain, label, where)
    return [*h.stmts, last], h.temps


def per_output_statements(
    expr: ir.Expr,
    outs: tuple[ir.Ref, ...],
    domains: Sequence[tuple[ir.DomainRange, ...]],
    label: str,
    where: str,
    prefix: str,
    may_alias: bool = False,
) -> Statements:
    """``expr`` evaluated once from the inputs, each element written over its own domain.

    An element whose output another element reads is computed into a temporary and copied
    into place after every element is computed; a scan writes temporaries over the union of
    the domains (it runs once), copied into each output over its own domain. With
    ``may_alias`` (a direct call: an output may be an argument too) every element but the last
    goes through a temporary."""
    expr = _as_scan(expr)
    h = _Hoister(outs, where, prefix)
    copies: list[ir.Apply | ir.ScanApply] = []
    if isinstance(expr, ir.ScanCall):
        step = h.step(expr)
        temps = tuple(h.new_temp(o.type) for o in outs)
        h.stmts.append(
            ir.ScanApply(
                expr.axis, expr.forward, expr.carry_name, expr.init, step, temps, (), label, where
            )
        )
        copies = [ir.Apply(t, (o,), d, label, where) for t, o, d in zip(temps, outs, domains)]
        return [*h.stmts, *copies], h.temps
    values = flatten_value(ir.as_expr(h.hoist(expr)))
    reads = [read_names(v) for v in values]
    evals: list[ir.Apply | ir.ScanApply] = []
    for i, (v, o, d) in enumerate(zip(values, outs, domains)):
        if (may_alias and i < len(values) - 1) or any(
            o.name in r for j, r in enumerate(reads) if j != i
        ):
            t = h.new_temp(o.type)
            evals.append(ir.Apply(v, (t,), d, label, where))
            copies.append(ir.Apply(t, (o,), d, label, where))
        else:
            evals.append(ir.Apply(v, (o,), d, label, where))
    return [*h.stmts, *evals, *copies], h.temps


def in_place(
    stmts: list[ir.Apply | ir.ScanApply], temps: list[ir.Param], prefix: str
) -> Statements:
    """``stmts`` (one program statement) made safe where an output is also read: a statement
    reading a field it writes at another point than the one written (``w(K + 1)`` in an
    operator writing ``w``), or followed by a statement of the group reading that field, writes
    a temporary instead, copied into the output after the group. Reads at the written point
    only keep the direct write (gt4py's in-place updates: ``op(q, out=q)``)."""
    temp_names = {t.name for t in temps}
    temps = list(temps)
    result: list[ir.Apply | ir.ScanApply] = []
    copies: list[ir.Apply | ir.ScanApply] = []
    first: dict[str, int] = {}
    for i, s in enumerate(stmts):
        for o in s.outs:
            first.setdefault(o.name, i)
    for i, s in enumerate(stmts):
        shifted = _shifted_reads(s.expr if isinstance(s, ir.Apply) else s.step)
        later = (
            set().union(*(read_names(_body(t)) for t in stmts[i + 1 :]))
            if i + 1 < len(stmts)
            else set()
        )
        outs = list(s.outs)
        for n, o in enumerate(outs):
            if (
                o.name in temp_names
                or first[o.name] != i
                or (o.name not in shifted and o.name not in later)
            ):
                continue
            t = ir.Ref(f"{prefix}{len(temps)}", o.type)
            temps.append(ir.Param(t.name, t.type))
            outs[n] = t
            copies.append(ir.Apply(t, (o,), s.domain, s.label, s.where))
        result.append(s if outs == list(s.outs) else with_outs(s, tuple(outs)))
    return [*result, *copies], temps


def _body(s: ir.Apply | ir.ScanApply) -> ir.Expr:
    return s.expr if isinstance(s, ir.Apply) else s.step


def with_outs(s: ir.Apply | ir.ScanApply, outs: tuple[ir.Ref, ...]) -> ir.Apply | ir.ScanApply:
    if isinstance(s, ir.Apply):
        return ir.Apply(s.expr, outs, s.domain, s.label, s.where)
    return ir.ScanApply(
        s.axis, s.forward, s.carry_name, s.init, s.step, outs, s.domain, s.label, s.where
    )


def _shifted_reads(e: ir.Expr) -> set[str]:
    """The flattened names ``e`` may read at another point than the one computed (under a
    shift, a neighbour selection or a reduction): a superset."""
    names: set[str] = set()
    for x in walk(e):
        if isinstance(x, ir.Shift | ir.LocalSelect | ir.Reduce | ir.ScanCall):
            names |= read_names(x)
    return names


def _as_scan(e: ir.Expr) -> ir.Expr:
    """``q, w = scan(...); return q, w`` returns the scan itself: no temporaries and copy."""
    if not isinstance(e, ir.MakeTuple):
        return e
    gets = [x for x in e.elems if isinstance(x, ir.TupleGet)]
    if gets and len(gets) == len(e.elems):
        first = gets[0].expr
        if (
            isinstance(first, ir.ScanCall)
            and isinstance(first.type, TupleType)
            and len(first.type.types) == len(gets)
            and all(x.expr == first and x.index == i for i, x in enumerate(gets))
        ):
            return first
    return e


def read_names(e: ir.Expr) -> set[str]:
    """The flattened names of the parameters ``e`` reads."""
    names: set[str] = set()
    for x in walk(e):
        if not isinstance(x, ir.Ref | ir.TupleGet):
            continue
        name = flat_name(x)
        if name is not None:
            names.add(name)
            names.update(p.name for p in _flat_names(name, x.type))
    return names


def _flat_names(name: str, t: TypeSpec) -> list[ir.Param]:
    if isinstance(t, TupleType):
        return [q for i, s in enumerate(t.types) for q in _flat_names(f"{name}__{i}", s)]
    return [ir.Param(name, t)]
