"""Scan operators as values: ``ScanCall`` nodes, and turning an operator's result into statements.

A field operator may return a scan (``return backward(cp, dp)``) and pass one scan's columns to
another (``cp, dp = forward(a, b, c, d)``). Every scan becomes its own statement: the scans
whose columns are only used inside the operator write caller-invisible temporaries (allocated by
the runner like the output of the statement that reads them) over the part of the domain where
their columns are read, and the returned value is the last statement. A program statement with
one domain per output evaluates the operator once, then writes each output over its domain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.types import (
    FieldType,
    ScalarType,
    TupleType,
    TypeSpec,
    canonical_dims,
    scalar_type_of_value,
)
from ..ir import nodes as ir
from ..ir.extents import FIELD_START, FIELD_STOP
from ..ir.tuples import flat_name, flatten_value
from ..ir.visit import deep, map_children, substitute, walk
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


class _Hoister:
    """Moves every scan out of an expression into a statement writing temporaries. Such a
    statement has no domain of its own: it runs where the later statements read its columns
    (``stages/binding.py``), so a scan used in a ``concat_where`` branch starts at the branch's
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
            raise TypingError(
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
                raise TypingError(
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
    reads = [_read_names(v) for v in values]
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
            set().union(*(_read_names(_body(t)) for t in stmts[i + 1 :]))
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
        result.append(s if outs == list(s.outs) else _with_outs(s, tuple(outs)))
    return [*result, *copies], temps


def shared_domain_groups(prog: ir.Program) -> list[tuple[str, ...]]:
    """For each statement writing several fields over one domain without ``domain=`` (the
    first output's whole domain), the fields it writes: if their extents differ when the program
    is called, :func:`own_domains` gives the program to run instead."""
    temps = {t.name for t in prog.temps}
    groups = []
    for s in prog.body:
        names = tuple(dict.fromkeys(o.name for o in s.outs if o.name not in temps))
        if not s.domain and len(names) > 1:
            groups.append(names)
    return groups


def own_domains(prog: ir.Program) -> ir.Program:
    """``prog`` with every element of a tuple output written without ``domain=`` computed over
    its own field's domain (gt4py's rule when the extents differ): one statement per element,
    elements read by another element and the columns of a scan through temporaries."""
    from .outputs import field_bound  # outputs -> expressions -> scans

    temps = list(prog.temps)
    temp_names = {t.name for t in temps}
    body: list[ir.Apply | ir.ScanApply] = []
    for n, s in enumerate(prog.body):
        names = {o.name for o in s.outs if o.name not in temp_names}
        if s.domain or len(names) < 2:
            body.append(s)
            continue
        prefix = f"__own{n}_"
        if (
            isinstance(s, ir.ScanApply)
            and len(names) == len(s.outs)
            and not names & _read_names(s.step)
        ):
            # one scan per output over that output's domain, the other columns into temporaries
            for i, o in enumerate(s.outs):
                outs = tuple(
                    o if j == i else ir.Ref(f"{prefix}{i}_{j}", x.type)
                    for j, x in enumerate(s.outs)
                )
                temps += [ir.Param(r.name, r.type) for r in outs if r is not o]
                dom = tuple(
                    ir.DomainRange(
                        d, field_bound(o, d, FIELD_START, 0), field_bound(o, d, FIELD_STOP, 0)
                    )
                    for d in ir.field_dims(o.type)
                )
                body.append(
                    ir.ScanApply(
                        s.axis, s.forward, s.carry_name, s.init, s.step, outs, dom, s.label, s.where
                    )
                )
            continue
        if isinstance(s, ir.ScanApply):
            refs = tuple(ir.Ref(f"{prefix}{i}", o.type) for i, o in enumerate(s.outs))
            temps += [ir.Param(r.name, r.type) for r in refs]
            body.append(_with_outs(s, refs))
            body += [ir.Apply(r, (o,), (), s.label, s.where) for r, o in zip(refs, s.outs)]
            continue
        values = flatten_value(s.expr)
        reads = [_read_names(v) for v in values]
        copies: list[ir.Apply | ir.ScanApply] = []
        for i, (v, o) in enumerate(zip(values, s.outs)):
            if any(o.name in r for j, r in enumerate(reads) if j > i):
                t = ir.Ref(f"{prefix}{i}", o.type)
                temps.append(ir.Param(t.name, t.type))
                body.append(ir.Apply(v, (t,), (), s.label, s.where))
                copies.append(ir.Apply(t, (o,), (), s.label, s.where))
            else:
                body.append(ir.Apply(v, (o,), (), s.label, s.where))
        body += copies
    return ir.Program(prog.name, prog.params, tuple(body), tuple(temps))


def _body(s: ir.Apply | ir.ScanApply) -> ir.Expr:
    return s.expr if isinstance(s, ir.Apply) else s.step


def _with_outs(s: ir.Apply | ir.ScanApply, outs: tuple[ir.Ref, ...]) -> ir.Apply | ir.ScanApply:
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
            names |= _read_names(x)
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


def _read_names(e: ir.Expr) -> set[str]:
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
    init_t = _init_type(init)
    if init_t != carry.type:
        raise src.type_error(
            src.tree,
            f"Argument 'init' to scan operator '{name}' must have same type as"
            f" '{carry.name}' argument: expected '{carry.type}', got '{init_t}'.",
        )
    return _init_expr(init, carry.type)


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
        elems = tuple(_init_expr(x, s) for x, s in zip(v, t.types))
        return ir.MakeTuple(elems, t)
    assert isinstance(t, ScalarType)
    return ir.Literal(np.dtype(t.dtype).type(v).item(), t)
