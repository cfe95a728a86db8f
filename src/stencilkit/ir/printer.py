"""Readable text form of IR nodes (``str(node)``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import nodes as n


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
    n.Call: lambda x: f"{x.fn}[{x.type}]({', '.join(map(to_text, x.args))})"
    if x.fn in ("astype", "broadcast")
    else f"{x.fn}({', '.join(map(to_text, x.args))})",
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
    n.ScanCall: lambda x: f"scan[{x.axis}, {'forward' if x.forward else 'backward'}]"
    f"({x.carry_name} = {to_text(x.init)}; {to_text(x.step)})",
    n.MakeTuple: lambda x: "(" + ", ".join(map(to_text, x.elems)) + ",)",
    n.TupleGet: lambda x: f"{to_text(x.expr)}[{x.index}]",
    n.Pos: _pos,
    n.ConstIndex: lambda x: str(x.value),
    n.LocalIndex: lambda x: f"#{x.dim}" + (f"{x.var}" if x.var else ""),
    n.Lookup: lambda x: f"{x.table}[{_idx(x.source)}, {_idx(x.neighbor)}]",
    n.Access: lambda x: f"{x.field}[{', '.join(map(_idx, x.index))}]",
    n.Valid: lambda x: f"valid({x.table}[{_idx(x.source)}, {_idx(x.neighbor)}])",
    n.LocalReduce: lambda x: f"{x.op}(#{x.dim}{x.var or ''} < {x.size}"
    + (f" if {to_text(x.mask)}" if x.mask is not None else "")
    + f": {to_text(x.body)})",
    n.Param: lambda x: f"{x.name}: {x.type}",
    n.DomainRange: lambda x: f"{x.dim}: {to_text(x.start)}:{to_text(x.stop)}",
    n.FieldOperator: lambda x: f"field_operator {x.name}({', '.join(map(to_text, x.params))})"
    f" {{\n  return {to_text(x.body)}\n}}",
    n.Apply: lambda x: f"{', '.join(o.name for o in x.outs)} @ {_domain(x.domain)}"
    f" <- {to_text(x.expr)}" + (f"  # {x.label}" if x.label else ""),
    n.ScanApply: lambda x: f"{', '.join(o.name for o in x.outs)} @ {_domain(x.domain)}"
    f" <- scan[{x.axis}, {'forward' if x.forward else 'backward'}]"
    f"({x.carry_name} = {to_text(x.init)}; {to_text(x.step)})"
    + (f"  # {x.label}" if x.label else ""),
    n.Scan: lambda x: f"scan[{x.axis}, {'forward' if x.forward else 'backward'}]("
    + ", ".join(f"{c} = {to_text(i)}" for c, i in zip(x.carries, x.inits)) + ")",
    n.Kernel: lambda x: f"kernel {x.name} over [{', '.join(map(str, x.dims))}] @ {_domain(x.domain)}"
    + (f" {to_text(x.scan)}" if x.scan else "") + " {\n"
    + "".join(f"    {o} = {to_text(v)}\n" for o, v in zip(x.outs, x.values)) + "  }",
    n.StencilProgram: lambda x: f"stencil_program {x.name}({', '.join(map(to_text, x.params))}) {{\n"
    + "".join(f"  {to_text(k)}\n" for k in x.kernels) + "}",
    n.Program: lambda x: f"program {x.name}({', '.join(map(to_text, x.params))}) {{\n"
    + "".join(f"  temp {to_text(t)}\n" for t in x.temps)
    + "".join(f"  {to_text(s)}\n" for s in x.body)
    + "}",
}


def to_text(node: Any) -> str:
    rule = _RULES.get(type(node))
    if rule is None:
        return repr(node) if not isinstance(node, n.Node) else type(node).__name__
    return rule(node)
