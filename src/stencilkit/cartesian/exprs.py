"""Operations on parsed GTScript expressions (``nodes``): moving one to another point (a
``gtscript.function`` argument read at an offset), and finding what it reads."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import nodes as cn
from .axes import AxisIndex


def shifted(e: cn.Expr, off: tuple[int, int, int]) -> cn.Expr:
    """``e`` read at ``off`` from the current point: every field read in it moves by ``off``."""
    if off == (0, 0, 0):
        return e
    # a gtscript.function's locals make the tree a DAG (a value read several times is one
    # node): each node is moved once, so shared subexpressions stay shared (without this,
    # pyFV3's d_sw.compute_kinetic_energy at hord 8 took 64 s to lower, exponential in depth)
    memo: dict[int, tuple[cn.Expr, cn.Expr]] = {}

    def move(x: cn.Expr) -> cn.Expr:
        hit = memo.get(id(x))
        if hit is not None:
            return hit[1]
        out = _moved(x, off, move)
        memo[id(x)] = (x, out)  # x kept alive so its id is not reused during this call
        return out

    return move(e)


def _moved(e: cn.Expr, off: tuple[int, int, int], move: Any) -> cn.Expr:
    if isinstance(e, cn.FieldRead):
        o = e.offset
        k = None if e.k_expr is None else move(e.k_expr)
        return cn.FieldRead(e.name, (o[0] + off[0], o[1] + off[1], o[2] + off[2]), e.loc, k)
    if isinstance(e, cn.Lit | cn.ScalarRead):
        return e
    if isinstance(e, cn.LevelIndex):
        return cn.BinOp("+", e, cn.Lit(off[2], e.dtype)) if off[2] else e
    if isinstance(e, cn.BinOp):
        return cn.BinOp(e.op, move(e.left), move(e.right))
    if isinstance(e, cn.UnaryOp):
        return cn.UnaryOp(e.op, move(e.operand))
    if isinstance(e, cn.Builtin):
        return cn.Builtin(e.fn, tuple(move(a) for a in e.args), e.loc)
    if isinstance(e, cn.Cast):
        return cn.Cast(e.dtype, move(e.arg))
    if isinstance(e, cn.Ternary):
        return cn.Ternary(move(e.cond), move(e.true), move(e.false))
    if isinstance(e, cn.RegionMask):
        return cn.RegionMask(e.region, (e.shift[0] + off[0], e.shift[1] + off[1]))
    if isinstance(e, cn.LoopVar):
        return e  # a value at the point, not a read
    if isinstance(e, cn.IntegerValue):
        return cn.IntegerValue(shifted(e.expr, off), e.what, e.loc)
    if isinstance(e, cn.TableRead):  # absolute indices: only what computes them moves
        return cn.TableRead(e.name, tuple(shifted(x, off) for x in e.index), e.loc)
    if isinstance(e, cn.LoopResult):
        return cn.LoopResult(shifted(e.loop, off), e.index)  # type: ignore[arg-type]
    if isinstance(e, cn.Loop):
        return cn.Loop(
            e.names, tuple(shifted(x, off) for x in e.inits), shifted(e.cond, off),
            tuple(shifted(x, off) for x in e.body), e.loc,
        )  # fmt: skip
    raise AssertionError(type(e))


def field_reads(e: cn.Expr) -> list[cn.FieldRead]:
    """The field reads of a parsed expression."""
    return [x for x in _leaves(e, cn.FieldRead) if isinstance(x, cn.FieldRead)]


def statement_reads(body: tuple[cn.Stmt, ...]) -> list[cn.FieldRead]:
    """The field reads of statements (conditions included, nested bodies too)."""
    out: list[cn.FieldRead] = []
    for s in body:
        if isinstance(s, cn.Assign):
            out += field_reads(s.value)
        elif isinstance(s, cn.If | cn.While):
            out += field_reads(s.cond)
            out += statement_reads(s.body)
            out += statement_reads(s.orelse) if isinstance(s, cn.If) else []
    return out


def parsed_reads(e: cn.Expr) -> list[cn.Expr]:
    """The leaves of a parsed expression that read a value (fields and scalars)."""
    return _leaves(e, cn.FieldRead | cn.ScalarRead | cn.RegionMask)


def _leaves(e: cn.Expr, kinds: Any) -> list[cn.Expr]:
    """The subexpressions of ``e`` of ``kinds``, not looked into, found depth first (the last
    operand first), each node once."""
    out: list[cn.Expr] = []
    stack = [e]
    seen: set[int] = set()  # a node shared by several parents (a DAG) is looked at once
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, kinds):
            out.append(x)
        elif isinstance(x, cn.BinOp):
            stack += [x.left, x.right]
        elif isinstance(x, cn.UnaryOp):
            stack.append(x.operand)
        elif isinstance(x, cn.Builtin):
            stack += list(x.args)
        elif isinstance(x, cn.Cast):
            stack.append(x.arg)
        elif isinstance(x, cn.Ternary):
            stack += [x.cond, x.true, x.false]
        elif isinstance(x, cn.IntegerValue):
            stack.append(x.expr)
        elif isinstance(x, cn.TableRead):
            stack += list(x.index)
        elif isinstance(x, cn.LoopResult):
            stack.append(x.loop)
        elif isinstance(x, cn.Loop):
            stack += [*x.inits, x.cond, *x.body]
    return out


def axis_index_bound(v: Any, axis: str) -> cn.Bound | None:
    """A region bound from a compile-time value: an ``AxisIndex`` along ``axis``, a plain int
    or None (unbounded). As in gt4py, an int ``c >= 0`` is ``c`` points after the compute
    domain's first point (``I[0] + c``) and ``c < 0`` is ``-c`` points before its end (``n + c``,
    ``I[-1] + c + 1``), so ``region[:, :-1]`` leaves out the last row, like a Python slice of
    the compute domain."""
    if v is None:
        return None
    if isinstance(v, AxisIndex) and v.axis == axis:
        return cn.Bound(v.index, v.offset)
    if isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_):
        return cn.Bound(0, int(v)) if v >= 0 else cn.Bound(-1, int(v) + 1)
    raise ValueError(
        f"{v!r} is not a bound along {axis} (write {axis}[0] + n, {axis}[-1] - n or an int)"
    )
