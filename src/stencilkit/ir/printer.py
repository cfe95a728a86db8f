"""Readable text form of IR nodes (``str(node)``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import nodes as n
from .visit import deep, postorder, use_counts


def _idx(i: Any) -> str:
    return to_text(i)


def _domain(rs: tuple[n.DomainRange, ...]) -> str:
    if not rs:
        return "{out}"
    return "{" + ", ".join(f"{r.dim}: {to_text(r.start)}:{to_text(r.stop)}" for r in rs) + "}"


def _lit(x: n.Literal) -> str:
    v = repr(x.value)
    return v if x.weak else f"{x.type}({v})"


def _pos(x: n.Pos) -> str:
    if x.offset == 0:
        return str(x.dim)
    return f"{x.dim}{x.offset:+d}"


_RULES: dict[type, Callable[[Any], str]] = {
    n.Literal: _lit,
    n.Ref: lambda x: x.name,
    n.BinOp: lambda x: f"({to_text(x.left)} {x.op} {to_text(x.right)})",
    n.UnaryOp: lambda x: f"({x.op}{to_text(x.operand)})",
    n.Call: lambda x: (
        f"{x.fn}[{x.type}]({', '.join(map(to_text, x.args))})"
        if x.fn in ("astype", "broadcast")
        else f"{x.fn}({', '.join(map(to_text, x.args))})"
    ),
    n.IfElse: lambda x: f"({to_text(x.true)} if {to_text(x.cond)} else {to_text(x.false)})",
    n.CartesianShift: lambda x: f"{x.dim}{x.amount:+d}",
    n.NeighborShift: lambda x: x.offset if x.index is None else f"{x.offset}[{x.index}]",
    n.DynamicShift: lambda x: f"{x.dim}+{to_text(x.amount)}",
    n.StaggeredShift: lambda x: f"{x.source}->{x.target}{x.amount:+d}",
    n.LocalSelect: lambda x: f"{to_text(x.expr)}[{x.dim}={x.index}]",
    n.DynIndex: lambda x: f"({_idx(x.base)}+{to_text(x.amount)})",
    n.Shift: lambda x: f"{to_text(x.expr)}({to_text(x.by)})",
    n.Reduce: lambda x: f"{x.op}_over[{x.axis}]({to_text(x.expr)})",
    n.DimIndex: lambda x: f"index({x.dim})",
    n.IndexValue: lambda x: f"index({_idx(x.index)})",
    n.ScanCall: lambda x: (
        f"scan[{x.axis}, {'forward' if x.forward else 'backward'}]"
        f"({x.carry_name} = {to_text(x.init)}; {to_text(x.step)})"
    ),
    n.While: lambda x: (
        "while["
        + ", ".join(f"{a} = {to_text(i)}" for a, i in zip(x.names, x.inits))
        + f"]({to_text(x.cond)}: "
        + ", ".join(f"{a} <- {to_text(b)}" for a, b in zip(x.names, x.body))
        + ")"
    ),
    n.MakeTuple: lambda x: "(" + ", ".join(map(to_text, x.elems)) + ",)",
    n.TupleGet: lambda x: f"{to_text(x.expr)}[{x.index}]",
    n.Pos: _pos,
    n.ConstIndex: lambda x: str(x.value),
    n.LocalIndex: lambda x: f"#{x.dim}" + (f"{x.var}" if x.var else ""),
    n.Lookup: lambda x: f"{x.table}[{_idx(x.source)}, {_idx(x.neighbor)}]",
    n.Access: lambda x: f"{x.field}[{', '.join(map(_idx, x.index))}]",
    n.Valid: lambda x: f"valid({x.table}[{_idx(x.source)}, {_idx(x.neighbor)}])",
    n.LocalReduce: lambda x: (
        f"{x.op}(#{x.dim}{x.var or ''} < {x.size}"
        + (f" if {to_text(x.mask)}" if x.mask is not None else "")
        + f": {to_text(x.body)})"
    ),
    n.Param: lambda x: f"{x.name}: {x.type}",
    n.DomainRange: lambda x: f"{x.dim}: {to_text(x.start)}:{to_text(x.stop)}",
    n.FieldOperator: lambda x: _field_operator(x),
    n.Apply: lambda x: _apply(x),
    n.ScanApply: lambda x: _scan_apply(x),
    n.Scan: lambda x: (
        f"scan[{x.axis}, {'forward' if x.forward else 'backward'}]("
        + ", ".join(f"{c} = {to_text(i)}" for c, i in zip(x.carries, x.inits))
        + ")"
    ),
    n.Kernel: lambda x: _kernel(x),
    n.StencilProgram: lambda x: (
        f"stencil_program {x.name}({', '.join(map(to_text, x.params))}) {{\n"
        + "".join(f"  {to_text(k)}\n" for k in x.kernels)
        + "}"
    ),
    n.Program: lambda x: (
        f"program {x.name}({', '.join(map(to_text, x.params))}) {{\n"
        + "".join(f"  temp {to_text(t)}\n" for t in x.temps)
        + "".join(f"  {to_text(s)}\n" for s in x.body)
        + "}"
    ),
}


def to_text(node: Any) -> str:
    """``node`` as text; a value used more than once is printed once, as ``let tN = ...``."""
    names = getattr(_ctx, "names", None)
    if names is None:
        return _top(node)
    name: str | None = names.get(id(node))
    if name is not None:
        return name
    return _rule(node)


def _rule(node: Any) -> str:
    rule = _RULES.get(type(node))
    if rule is None:
        return repr(node) if not isinstance(node, n.Node) else type(node).__name__
    return rule(node)


# ---------------------------------------------------------------- shared values: let bindings
_ctx = threading.local()

#: Nodes printed in place even when shared: leaves and indices, as short as a name.
_INLINE = (
    n.Literal,
    n.Ref,
    n.Pos,
    n.ConstIndex,
    n.LocalIndex,
    n.Lookup,
    n.Access,
    n.IndexValue,
    n.DimIndex,
    n.CartesianShift,
    n.NeighborShift,
    n.Param,
    n.DomainRange,
)


@deep
def _top(node: Any) -> str:
    with _scope():
        if isinstance(node, n.Node) and type(node) not in _STATEMENTS:
            lets = _lets((node,))
            return "".join(f"{line}\n" for line in lets) + to_text(node)
        return _rule(node)


@contextmanager
def _scope() -> Iterator[None]:
    """Names bound inside the block are forgotten after it."""
    outer = getattr(_ctx, "names", None)
    _ctx.names = dict(outer or {})
    try:
        yield
    finally:
        _ctx.names = outer


def _lets(roots: tuple[Any, ...]) -> list[str]:
    """``let tN = ...`` for every value the ``roots`` use more than once, each after the values
    it uses; from now on (in this scope) they print as their names."""
    nodes = tuple(r for r in roots if isinstance(r, n.Node))
    counts = use_counts(*nodes)
    names: dict[int, str] = _ctx.names
    lines: list[str] = []
    for x in postorder(*nodes):
        if counts[id(x)] > 1 and not isinstance(x, _INLINE) and id(x) not in names:
            text = _rule(x)
            names[id(x)] = name = f"t{len(lines)}"
            lines.append(f"let {name} = {text}")
    return lines


def _block(lets: list[str], indent: str) -> str:
    return "".join(f"{indent}{line}\n" for line in lets)


def _field_operator(x: n.FieldOperator) -> str:
    with _scope():
        lets = _lets((x.body,))
        return (
            f"field_operator {x.name}({', '.join(map(to_text, x.params))}) {{\n"
            f"{_block(lets, '  ')}  return {to_text(x.body)}\n}}"
        )


def _statement(
    outs: tuple[n.Ref, ...],
    domain: tuple[n.DomainRange, ...],
    label: str,
    roots: tuple[Any, ...],
    value: Callable[[], str],
) -> str:
    with _scope():
        lets = _lets(roots)
        head = f"{', '.join(o.name for o in outs)} @ {_domain(domain)} <- "
        tail = f"  # {label}" if label else ""
        if not lets:
            return head + value() + tail
        return head + "{\n" + _block(lets, "    ") + f"    {value()}\n  }}" + tail


def _apply(x: n.Apply) -> str:
    return _statement(x.outs, x.domain, x.label, (x.expr,), lambda: to_text(x.expr))


def _scan_apply(x: n.ScanApply) -> str:
    return _statement(
        x.outs,
        x.domain,
        x.label,
        (x.init, x.step),
        lambda: (
            f"scan[{x.axis}, {'forward' if x.forward else 'backward'}]"
            f"({x.carry_name} = {to_text(x.init)}; {to_text(x.step)})"
        ),
    )


def _kernel(x: n.Kernel) -> str:
    with _scope():
        lets = _lets((*x.values, *(x.scan.inits if x.scan else ())))
        return (
            f"kernel {x.name} over [{', '.join(map(str, x.dims))}] @ {_domain(x.domain)}"
            + (f" {to_text(x.scan)}" if x.scan else "")
            + " {\n"
            + _block(lets, "    ")
            + "".join(f"    {o} = {to_text(v)}\n" for o, v in zip(x.outs, x.values))
            + "  }"
        )


_STATEMENTS = frozenset(
    {
        n.FieldOperator,
        n.Apply,
        n.ScanApply,
        n.Kernel,
        n.Program,
        n.StencilProgram,
        n.Scan,
        n.Param,
        n.DomainRange,
    }
)
