"""The GTScript constructs recognised by identity inside a body, shared by stencils and
``gtscript.function``s: ``compile_assert(...)`` and ``with horizontal(region[...], ...)``."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from . import nodes as cn
from .axes import AxisIndex
from .exprs import axis_index_bound
from .language import compile_assert, horizontal, region
from .parse_expr import Const, Scope


def compile_assert_call(scope: Scope, node: ast.expr) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = scope.expr(node.func)
    if not (isinstance(f, Const) and f.value is compile_assert):
        return False
    if len(node.args) != 1:
        raise scope.src.syntax(node, "compile_assert takes one condition")
    ok = scope.const(node.args[0], "the condition of compile_assert")
    if not ok:
        raise scope.src.definition(
            node, f"compile_assert failed: {ast.unparse(node.args[0])}",
            hint="the externals given to this stencil do not satisfy its assertion",
        )  # fmt: skip
    return True


def call_of(scope: Scope, item: ast.expr, marker: Any) -> ast.Call | None:
    if isinstance(item, ast.Call):
        f = scope.expr(item.func)
        if isinstance(f, Const) and f.value is marker:
            return item
    return None


def horizontal_regions(scope: Scope, node: ast.With) -> list[cn.Region]:
    if len(node.items) != 1:
        raise scope.src.syntax(node, "with horizontal(...) takes no other context")
    call = call_of(scope, node.items[0].context_expr, horizontal)
    if call is None:
        raise scope.src.syntax(node, "only `with horizontal(region[...]):` is allowed here")
    out = []
    for r in call.args:
        if not (isinstance(r, ast.Subscript) and is_marker(scope, r.value, region)):
            raise scope.src.syntax(r, "horizontal(...) takes region[i_spec, j_spec] arguments")
        specs = r.slice.elts if isinstance(r.slice, ast.Tuple) else [r.slice]
        if len(specs) != 2:
            raise scope.src.syntax(r, "region[...] takes an I and a J spec")
        out.append(cn.Region(_spec(scope, specs[0], "I"), _spec(scope, specs[1], "J")))
    for s in node.body:
        if isinstance(s, ast.With):
            raise scope.src.syntax(s, "with blocks cannot be nested inside horizontal(...)")
    return out


def is_marker(scope: Scope, node: ast.expr, marker: Any) -> bool:
    v = scope.expr(node)
    return isinstance(v, Const) and v.value is marker


def _spec(scope: Scope, node: ast.expr, axis: str) -> tuple[cn.Bound | None, cn.Bound | None]:
    try:
        if isinstance(node, ast.Slice):
            if node.step is not None:
                raise ValueError("region slices take no step")
            lo = None if node.lower is None else scope.const(node.lower, "a region bound")
            hi = None if node.upper is None else scope.const(node.upper, "a region bound")
            return axis_index_bound(lo, axis), axis_index_bound(hi, axis)
        v = scope.const(node, "a region index")
        if isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_):
            if v == -1:
                # gt4py reads region[-1] as -1:0, the end's last point to the start: empty
                raise ValueError(
                    f"region index -1 along {axis} selects nothing in gt4py (-1:0);"
                    f" write {axis}[-1] for the last compute point"
                )
            return axis_index_bound(v, axis), axis_index_bound(v + 1, axis)
        if not isinstance(v, AxisIndex):
            raise ValueError(f"{v!r} is not an {axis}[0] + n / {axis}[-1] - n index or an int")
        return axis_index_bound(v, axis), axis_index_bound(v + 1, axis)
    except ValueError as err:
        raise scope.src.syntax(node, str(err)) from None
