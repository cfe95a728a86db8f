"""Inlining ``gtscript.function`` calls: the callee's body is evaluated with its parameters
bound to the caller's argument expressions; its locals become expressions, its ``if``s
selections (``a if cond else b``), and its result (or tuple of results) is the call's value."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from . import nodes as cn
from .language import GTScriptFunction
from .parse_expr import Const, Scope, Value
from .source import Source, read_source

_SOURCES: dict[int, tuple[Any, Source]] = {}


def _source(f: GTScriptFunction) -> Source:
    hit = _SOURCES.get(id(f))
    if hit is None or hit[0] is not f:
        hit = (f, read_source(f.fn))
        _SOURCES[id(f)] = hit
    return hit[1]


#: ``stage(value)`` of a tuple assignment's call: the value of a local the callee assigned, as
#: the caller will read it when it writes the targets (see ``inline_call``)
Stage = Callable[[Value], Value]


def inline_call(
    caller: Scope, f: GTScriptFunction, node: ast.Call, stage: Stage | None = None
) -> Value | tuple[Value, ...]:
    """The value of ``f(...)`` at ``node``, inlined. ``stage``: the call's tuple result is
    assigned to fields, one target after the other; as in gt4py, whose inliner turns the
    callee's assigned names into temporaries computed before the targets are written (and leaves
    its other names the caller's), each such local that the returned tuple names is passed to
    ``stage``, and the result reads what it returns."""
    ctx = caller.ctx
    if f.__name__ in ctx.functions:
        raise caller.src.syntax(node, f"gtscript.function {f.__name__}() calls itself")
    src = _source(f)
    args = src.tree.args
    params = [a.arg for a in args.posonlyargs + args.args]
    kwonly = [a.arg for a in args.kwonlyargs]
    bound: dict[str, Value] = {}
    if len(node.args) > len(params):
        raise caller.src.syntax(
            node, f"{f.__name__}() takes {len(params)} positional arguments, got {len(node.args)}"
        )
    for p, a in zip(params, node.args):
        bound[p] = caller.expr(a)
    for kw in node.keywords:
        if kw.arg is None or kw.arg not in params + kwonly:
            raise caller.src.syntax(kw, f"{f.__name__}() has no parameter '{kw.arg}'")
        if kw.arg in bound:
            raise caller.src.syntax(kw, f"{f.__name__}() got '{kw.arg}' twice")
        bound[kw.arg] = caller.expr(kw.value)
    defaults = dict(zip(params[len(params) - len(args.defaults) :], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    callee = Scope(src, ctx, {})
    for p in params + kwonly:
        if p not in bound:
            if p not in defaults:
                raise caller.src.syntax(node, f"{f.__name__}() is missing the argument '{p}'")
            bound[p] = callee.expr(defaults[p])
    callee.local.update(bound)
    ctx.functions.append(f.__name__)
    try:
        result = _body(callee, src.tree.body, top=True, stage=stage)
    finally:
        ctx.functions.pop()
    if result is None:
        raise caller.src.syntax(node, f"gtscript.function {f.__name__}() returns nothing")
    out: Value | tuple[Value, ...] = result
    return out


def _body(scope: Scope, stmts: list[ast.stmt], top: bool, stage: Stage | None = None) -> Any:
    src = scope.src
    for i, s in enumerate(stmts):
        if isinstance(s, ast.Return):
            if not top:
                raise src.syntax(
                    s,
                    "a return inside a branch of a gtscript.function is not allowed",
                    hint="assign the result in each branch and return once at the end",
                )
            if i != len(stmts) - 1:
                raise src.syntax(s, "statements after return")
            if s.value is None:
                return None
            if isinstance(s.value, ast.Tuple):
                if stage is not None:
                    _stage_locals(scope, stmts, s.value, stage)
                return tuple(scope.expr(e) for e in s.value.elts)
            return scope.expr(s.value)
        _statement(scope, s)
    return None


def _stage_locals(scope: Scope, stmts: list[ast.stmt], value: ast.expr, stage: Stage) -> None:
    """Pass each local assigned in ``stmts`` and named by ``value`` through ``stage``."""
    assigned = {
        t.id
        for x in stmts
        for t in ast.walk(x)
        if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
    }
    named = {t.id for t in ast.walk(value) if isinstance(t, ast.Name)}
    for name in sorted(assigned & named):
        if name in scope.local:
            scope.local[name] = stage(scope.local[name])


def _statement(scope: Scope, s: ast.stmt) -> None:
    src = scope.src
    if isinstance(s, ast.ImportFrom) and s.module in ("__externals__", "__gtscript__"):
        scope.import_externals(s)
    elif isinstance(s, ast.Expr):
        _expression_statement(scope, s)
    elif isinstance(s, ast.Pass):
        pass
    elif isinstance(s, ast.Assign):
        if len(s.targets) != 1:
            raise src.syntax(s, "chained assignment a = b = ... is not GTScript")
        _assign(scope, s.targets[0], s.value)
    elif isinstance(s, ast.AnnAssign) and s.value is not None:
        _assign(scope, s.target, s.value)
    elif isinstance(s, ast.AugAssign):
        tgt = s.target
        if not isinstance(tgt, ast.Name):
            raise src.syntax(s, "a gtscript.function assigns local names only")
        value = ast.BinOp(ast.Name(tgt.id, ast.Load()), s.op, s.value)
        ast.copy_location(value, s)
        ast.fix_missing_locations(value)
        _assign(scope, tgt, value)
    elif isinstance(s, ast.If):
        _if(scope, s)
    elif isinstance(s, ast.While):
        _while(scope, s)
    elif isinstance(s, ast.With):
        from .constructs import horizontal_regions

        regions = horizontal_regions(scope, s)
        for r in regions:
            _merge(scope, cn.RegionMask(r), s.body, [], s)
    elif isinstance(s, ast.Return):
        raise src.syntax(s, "a return inside a branch of a gtscript.function is not allowed")
    else:
        raise src.syntax(s, f"{type(s).__name__} statements are not allowed in a gtscript.function")


def _expression_statement(scope: Scope, s: ast.Expr) -> None:
    from .constructs import compile_assert_call

    if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
        return  # a docstring
    if not compile_assert_call(scope, s.value):
        raise scope.src.syntax(s, "an expression statement has no effect in a gtscript.function")


def _assign(scope: Scope, target: ast.expr, value_node: ast.expr) -> None:
    src = scope.src
    if isinstance(target, ast.Tuple):
        v = _call_result(scope, value_node)
        if not isinstance(v, tuple) or len(v) != len(target.elts):
            raise src.syntax(target, f"{len(target.elts)} names for a value that is not as many")
        for t, x in zip(target.elts, v):
            _bind(scope, t, x)
        return
    _bind(scope, target, scope.expr(value_node))


def _call_result(scope: Scope, node: ast.expr) -> Any:
    if isinstance(node, ast.Call):
        fn = scope.expr(node.func)
        if isinstance(fn, Const) and isinstance(fn.value, GTScriptFunction):
            return inline_call(scope, fn.value, node)
    if isinstance(node, ast.Tuple):
        return tuple(scope.expr(e) for e in node.elts)
    return scope.expr(node)


def _bind(scope: Scope, target: ast.expr, v: Value) -> None:
    if not isinstance(target, ast.Name):
        raise scope.src.syntax(
            target, "a gtscript.function may not write fields (its arguments)",
            hint="return the value and assign it in the stencil",
        )  # fmt: skip
    # an argument is a value: assigning it rebinds the callee's name, as in gt4py (the
    # caller's field or temporary keeps its value)
    scope.local[target.id] = v


def _while(scope: Scope, s: ast.While) -> None:
    """A loop: the locals its body assigns that have a value before it are its variables
    (``cn.Loop``); those first assigned inside it exist only inside it."""
    src = scope.src
    if s.orelse:
        raise src.syntax(s, "while ... else is not GTScript", hint="drop the else block")
    assigned = sorted(
        {
            t.id
            for x in s.body
            for t in ast.walk(x)
            if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
        }
    )
    carried = [n for n in assigned if n in scope.local]
    before = dict(scope.local)
    names = tuple(scope.ctx.loop_var(n) for n in carried)
    inits = tuple(scope.as_expr(before[n], s) for n in carried)
    for n, v in zip(carried, names):
        scope.local[n] = cn.LoopVar(v)
    cond = scope.expr(s.test)
    if isinstance(cond, Const):
        scope.local = before
        if not cond.value:
            return
        raise src.definition(
            s, f"while {ast.unparse(s.test)}: the condition is always true (the loop never ends)"
        )
    for x in s.body:
        _statement(scope, x)
    body = tuple(scope.as_expr(scope.local[n], s) for n in carried)
    loop = cn.Loop(names, inits, cond, body, src.loc(s))
    scope.local = {k: v for k, v in before.items()}
    for i, n in enumerate(carried):
        scope.local[n] = cn.LoopResult(loop, i)


def _if(scope: Scope, s: ast.If) -> None:
    cond = scope.expr(s.test)
    if isinstance(cond, Const):
        for x in s.body if cond.value else s.orelse:
            _statement(scope, x)
        return
    _merge(scope, cond, s.body, s.orelse, s)


def _merge(
    scope: Scope, cond: cn.Expr, body: list[ast.stmt], orelse: list[ast.stmt], at: ast.AST
) -> None:
    """Run both branches on copies of the locals; a name either assigns becomes a selection."""
    before = dict(scope.local)
    outcomes = []
    for branch in (body, orelse):
        scope.local = dict(before)
        for x in branch:
            _statement(scope, x)
        outcomes.append(scope.local)
    t, f = outcomes
    scope.local = dict(before)
    for name in {*t, *f}:
        tv, fv = t.get(name), f.get(name)
        if tv is fv:
            scope.local[name] = tv  # type: ignore[assignment]
            continue
        if tv is None or fv is None:
            # assigned on one path only (and not before): defined only where that path runs
            tv = tv if tv is not None else cn.Lit(0, scope.ctx.int_dtype)
            fv = fv if fv is not None else cn.Lit(0, scope.ctx.int_dtype)
        scope.local[name] = cn.Ternary(cond, scope.as_expr(tv, at), scope.as_expr(fv, at))
