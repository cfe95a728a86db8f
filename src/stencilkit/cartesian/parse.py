"""A GTScript definition -> ``nodes.Definition``: the signature with its annotations resolved,
then ``with computation(...), interval(...)`` blocks of statements. Externals, ``__INLINED``,
``compile_assert`` and ``gtscript.function`` calls are resolved here, at decoration."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import nodes as cn
from . import vectors
from .axes import AxisIndex
from .constructs import call_of, compile_assert_call, horizontal_regions
from .context import Context
from .exprs import field_reads, parsed_reads, statement_reads
from .language import (
    BACKWARD,
    FORWARD,
    PARALLEL,
    GTScriptFunction,
    IterationOrder,
    _FieldDescriptor,
    computation,
    interval,
)
from .parse_expr import Const, Scope
from .signature import parse_signature
from .source import read_source

_ORDERS = {id(PARALLEL): "PARALLEL", id(FORWARD): "FORWARD", id(BACKWARD): "BACKWARD"}


def parse_definition(
    fn: Callable[..., Any],
    externals: dict[str, Any],
    dtypes: dict[Any, Any],
    int_dtype: str,
    float_dtype: str,
) -> cn.Definition:
    src = read_source(fn)
    ctx = Context(dict(externals), int_dtype, float_dtype, {}, set(), dict(dtypes))
    params = parse_signature(src, ctx)
    scope = Scope(src, ctx)
    parser = _BodyParser(scope, {p.name for p in params})
    comps: list[cn.Computation] = []
    inits: list[cn.Computation] = []  # declared temporaries' initial values, first (as gt4py)
    for s in src.tree.body:
        if isinstance(s, ast.ImportFrom) and s.module in ("__externals__", "__gtscript__"):
            scope.import_externals(s)
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            continue  # a docstring
        elif isinstance(s, ast.Expr) and compile_assert_call(scope, s.value):
            continue
        elif isinstance(s, ast.With):
            comps.append(parser.computation(s))
        elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
            init = parser.declare_temporary(s)
            if init is not None:
                inits.append(init)
        elif isinstance(s, ast.Pass):
            continue
        else:
            raise src.syntax(
                s,
                "a stencil's body holds `with computation(...), interval(...):` blocks only",
                hint="put the statement inside a computation block",
            )
    if not comps:
        raise src.definition(src.tree, f"stencil {fn.__name__} has no computation")
    # the elements of a temporary with data dimensions are temporaries of their own
    for comp, (base, _) in ctx.components.items():
        if base in parser.ddim_temps:
            dt, loc = parser.ddim_temps[base]
            parser.temps.append((comp, dt, loc))
    return cn.Definition(
        fn.__name__, params, (*inits, *comps), tuple(parser.temps), src.filename,
        frozenset(parser.flat_temps),
        tuple(
            (comp, base, idx)
            for comp, (base, idx) in ctx.components.items()
            if base not in parser.ddim_temps
        ),
    )  # fmt: skip


# ---------------------------------------------------------------- the body
class _BodyParser:
    def __init__(self, scope: Scope, params: set[str]) -> None:
        self.scope = scope
        self.src = scope.src
        self.params = params
        self.temps: list[tuple[str, str | None, Any]] = []
        self.flat_temps: set[str] = set()
        #: temporaries with data dimensions, declared at the top of the body: (dtype, where)
        self.ddim_temps: dict[str, tuple[str, Any]] = {}
        self.order = "PARALLEL"
        #: names assigned so far outside horizontal regions (in source order, every
        #: computation), and how deep the parser is inside regions
        self.written_outside: set[str] = set()
        self.in_region = 0

    def declare_temporary(self, s: ast.AnnAssign) -> cn.Computation | None:
        """``tmp: Field[IJK, (dtype, (n,))] = 0.0`` at the top of a definition (gt4py's form
        for temporaries with data dimensions, also without them): each element is a temporary;
        a constant value initialises every element over the whole domain before the
        computations."""
        src, scope = self.src, self.scope
        assert isinstance(s.target, ast.Name)
        name = s.target.id
        ann = scope.const(s.annotation, "a temporary's annotation")
        if not isinstance(ann, _FieldDescriptor):
            raise src.syntax(
                s, f"'{name}': a declaration at the top of a stencil is a Field[...] temporary",
                hint="annotate scalars where they are assigned, inside a computation",
            )  # fmt: skip
        if tuple(ann.axes) != ("I", "J", "K"):
            raise src.syntax(
                s, f"Found {''.join(ann.axes)}, but only IJK is currently supported for"
                " temporaries declared here (as in gt4py)",
            )  # fmt: skip
        if name in scope.ctx.fields or name in scope.ctx.scalars:
            raise src.syntax(s, f"'{name}' is already a parameter or temporary")
        dtype = ann.dtype
        dtype = scope.ctx.dtypes.get(dtype, dtype) if isinstance(dtype, str) else dtype
        dt = scope.ctx.cast_dtype(dtype.type if isinstance(dtype, np.dtype) else dtype)
        if dt is None:
            raise src.syntax(s.annotation, f"{dtype!r} is not a scalar type")
        loc = src.loc(s)
        scope.ctx.fields[name] = ("I", "J", "K")
        if ann.data_dims:
            scope.ctx.data_dims[name] = tuple(ann.data_dims)
            self.ddim_temps[name] = (dt, loc)
            targets = [
                scope.ctx.component(name, idx)
                for idx in itertools.product(*(range(n) for n in ann.data_dims))
            ]
        else:
            self.temps.append((name, dt, loc))
            targets = [name]
        if s.value is None:
            return None
        value = scope.const(s.value, "a declared temporary's initial value")
        if isinstance(value, bool) or not isinstance(value, int | float | np.number):
            raise src.syntax(s.value, "a declared temporary's initial value is a number")
        lit = scope.ctx.literal(value)
        whole = cn.Interval(cn.LevelBound(False, 0), cn.LevelBound(True, 0))
        body = tuple(cn.Assign(t, lit, loc) for t in targets)
        return cn.Computation("PARALLEL", (cn.Block(whole, body, loc),), loc)

    def computation(self, node: ast.With) -> cn.Computation:
        order, ivl = None, None
        for item in node.items:
            e = item.context_expr
            if (c := call_of(self.scope, e, computation)) is not None:
                if len(c.args) != 1:
                    raise self.src.syntax(c, "computation() takes PARALLEL, FORWARD or BACKWARD")
                o = self.scope.const(c.args[0], "the iteration order")
                if not isinstance(o, IterationOrder):
                    raise self.src.syntax(c, f"{o!r} is not PARALLEL, FORWARD or BACKWARD")
                order = o.name
            elif (c := call_of(self.scope, e, interval)) is not None:
                ivl = self.interval(c)
            else:
                raise self.src.syntax(e, "expected computation(...) or interval(...)")
        if order is None:
            raise self.src.syntax(node, "a top-level with block must name computation(ORDER)")
        self.order = order
        loc = self.src.loc(node)
        if ivl is not None:
            return cn.Computation(order, (self._block(ivl, self.stmts(node.body), loc),), loc)
        blocks = []
        for s in node.body:
            inner = None
            if isinstance(s, ast.With) and len(s.items) == 1:
                inner = call_of(self.scope, s.items[0].context_expr, interval)
            if inner is None:
                raise self.src.syntax(
                    s,
                    "the body of `with computation(...)` holds only `with interval(...)` blocks"
                    " when it names no interval itself",
                )
            assert isinstance(s, ast.With)
            blocks.append(self._block(self.interval(inner), self.stmts(s.body), self.src.loc(s)))
        self._check_order(blocks, order)
        return cn.Computation(order, tuple(blocks), loc)

    def _block(self, ivl: cn.Interval, body: tuple[cn.Stmt, ...], loc: Any) -> cn.Block:
        """A block; bounds read from 2-D fields become a mask on the block's levels."""
        mask: cn.Expr | None = None
        level = cn.LevelIndex(self.scope.ctx.int_dtype)
        for b, op in ((ivl.start, ">="), (ivl.end, "<")):
            if b.column is not None:
                # a float bound (a Field[IJ, float] temporary in gt4py's tests) counts whole
                # levels: truncated, as a level index
                part = cn.BinOp(op, level, cn.Cast("int64", b.column))
                mask = part if mask is None else cn.BinOp("and", mask, part)
        if mask is None:
            return cn.Block(ivl, body, loc)
        # the levels a read at a K offset would reach outside the array from are not run (in
        # gt4py such a column's bound makes the read undefined)
        dks = [r.offset[2] for r in statement_reads(body) if r.k_expr is None]
        start, end = ivl.start, ivl.end
        if start.column is not None:
            start = cn.LevelBound(False, max([0, *(-d for d in dks)]), None, start.column)
        if end.column is not None:
            end = cn.LevelBound(True, min([0, *(-d for d in dks)]), None, end.column)
        return cn.Block(cn.Interval(start, end), (cn.If(mask, body, (), loc),), loc)

    def _check_order(self, blocks: list[cn.Block], order: str) -> None:
        def key(b: cn.LevelBound) -> tuple[int, int]:
            return (1, b.offset) if b.from_top else (0, b.offset)

        for a, b in itertools.pairwise(blocks):
            ends = (a.interval.start, a.interval.end, b.interval.start, b.interval.end)
            if any(x.runtime is not None or x.column is not None for x in ends):
                continue  # known at the call only
            lo_first = key(a.interval.end) <= key(b.interval.start)
            hi_first = key(b.interval.end) <= key(a.interval.start)
            same_side = a.interval.end.from_top == b.interval.start.from_top or not (
                a.interval.end.from_top or b.interval.start.from_top
            )
            if order == "BACKWARD" and not hi_first and same_side:
                raise self.src.definition(
                    None,
                    "the interval blocks of a BACKWARD computation must go top first, without overlap",
                )
            if order != "BACKWARD" and not lo_first and same_side:
                raise self.src.definition(
                    None,
                    f"the interval blocks of a {order} computation must go bottom first, without overlap",
                )

    def interval(self, call: ast.Call) -> cn.Interval:
        src = self.src
        args = list(call.args)
        kw = {k.arg: k.value for k in call.keywords}
        if kw:
            if set(kw) != {"start", "end"} or args:
                raise src.syntax(call, "interval(start=..., end=...) needs both keywords")
            args = [kw["start"], kw["end"]]
        if len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value is Ellipsis:
            return cn.Interval(cn.LevelBound(False, 0), cn.LevelBound(True, 0))
        values = [self.scope.expr(a) for a in args]
        if len(values) == 2 and not all(isinstance(v, Const) for v in values):
            return self._runtime_interval(values, args, call)
        vals = [self.scope.const(a, "an interval bound") for a in args]
        if len(vals) == 1:
            b = self._level(vals[0], call, start=True)
            if b.from_top:
                raise src.syntax(call, "interval(k) with one argument needs k >= 0")
            return cn.Interval(b, cn.LevelBound(False, b.offset + 1))
        if len(vals) != 2:
            raise src.syntax(call, "interval takes (start, end), (k) or (...)")
        if vals[0] is None:
            raise src.syntax(call, "the start of an interval cannot be None", hint="write 0")
        s = self._level(vals[0], call, start=True)
        e = cn.LevelBound(True, 0) if vals[1] is None else self._level(vals[1], call, start=False)
        if s.from_top and not e.from_top:
            raise src.definition(
                call, "an interval cannot start from the top and end from the bottom"
            )
        if s.from_top == e.from_top and e.offset <= s.offset:
            raise src.definition(call, f"interval({vals[0]!r}, {vals[1]!r}) is empty")
        return cn.Interval(s, e)

    def _runtime_interval(
        self, values: list[Any], args: list[ast.expr], call: ast.Call
    ) -> cn.Interval:
        """``interval(0, kbot)``: a bound of scalar parameters, counted from the bottom."""
        bounds = []
        for v, a in zip(values, args):
            if isinstance(v, Const):
                if v.value is None and a is args[1]:
                    bounds.append(cn.LevelBound(True, 0))
                    continue
                bounds.append(self._level(v.value, call, start=a is args[0]))
                continue
            reads = [x for x in parsed_reads(v) if not isinstance(x, cn.ScalarRead)]
            for r in reads:
                if not isinstance(r, cn.FieldRead) or r.name not in self.scope.ctx.fields:
                    raise self.src.syntax(a, "an interval bound reads scalars and 2-D fields only")
                flat = r.name in self.flat_temps  # a Field[IJ, ...] temporary: one per column
                axes = self.scope.ctx.fields[r.name]
                if ("K" in axes and not flat) or r.offset != (0, 0, 0) or r.k_expr:
                    raise self.src.syntax(
                        a, f"an interval bound read from '{r.name}' must read a field without a K"
                        " axis, at the point",
                        hint="bound the interval by a Field[IJ, int] (one bound per column)",
                    )  # fmt: skip
            if reads:  # one bound per column: the whole side, masked per column
                whole = cn.LevelBound(False, 0) if a is args[0] else cn.LevelBound(True, 0)
                bounds.append(cn.LevelBound(whole.from_top, whole.offset, None, v))
                continue
            bounds.append(cn.LevelBound(False, 0, v))
        return cn.Interval(bounds[0], bounds[1])

    def _level(self, v: Any, call: ast.AST, start: bool) -> cn.LevelBound:
        if isinstance(v, AxisIndex):
            if v.axis != "K":
                raise self.src.syntax(call, f"interval bound {v!r} is not along K")
            return (
                cn.LevelBound(False, v.offset)
                if v.index == 0
                else cn.LevelBound(True, v.offset + 1)
            )
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            if isinstance(v, str) or v is None or isinstance(v, float):
                raise self.src.syntax(call, f"interval bound {v!r} is not an integer")
            raise self.src.unsupported(call, f"run-time interval bound {v!r}")
        v = int(v)
        if v < 0:
            return cn.LevelBound(True, v)
        if v == 0 and not start:
            raise self.src.definition(call, "an interval ending at level 0 is empty")
        return cn.LevelBound(False, v)

    # ------------------------------------------------------------ statements
    def stmts(self, body: list[ast.stmt]) -> tuple[cn.Stmt, ...]:
        out: list[cn.Stmt] = []
        for s in body:
            parsed = self.stmt(s)
            if not self.in_region:
                self.written_outside.update(_assigned(parsed))
            out.extend(parsed)
        return tuple(out)

    def region_body(self, s: ast.With) -> tuple[cn.Stmt, ...]:
        """The body of ``with horizontal(...)``. As in gt4py, a name assigned outside regions
        earlier in the definition must not be read at a horizontal offset inside one."""
        self.in_region += 1
        try:
            body = self.stmts(s.body)
        finally:
            self.in_region -= 1
        late = sorted(
            {r.name for r in statement_reads(body) if r.offset[:2] != (0, 0)} & self.written_outside
        )
        if late:
            raise self.src.syntax(
                s,
                f"{', '.join(repr(n) for n in late)} {'is' if len(late) == 1 else 'are'} written"
                " before this horizontal region and read in it at a horizontal offset"
                " (gt4py refuses this too)",
                hint="read a field that is not written before the region, or compute the"
                " values at the offset into another name inside the region",
            )
        return body

    def stmt(self, s: ast.stmt) -> list[cn.Stmt]:
        src, scope = self.src, self.scope
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise src.syntax(s, "chained assignment a = b = ... is not GTScript")
            return self.assign(s.targets[0], s.value, s)
        if isinstance(s, ast.AnnAssign):
            if s.value is None:
                raise src.syntax(s, "a declaration without a value")
            named = s.annotation.id if isinstance(s.annotation, ast.Name) else None
            if named is not None and named in scope.ctx.dtypes:
                # a key of the stencil's dtypes= (gt4py: tmp: MyFancySymbol = 0 with
                # dtypes={"MyFancySymbol": Field[IJ, np.float64]}) needs no Python binding
                ann = scope.ctx.dtypes[named]
            else:
                ann = scope.const(s.annotation, "a temporary's annotation")
            if isinstance(ann, str) and ann in scope.ctx.dtypes:
                ann = scope.ctx.dtypes[ann]
            flat = False
            if isinstance(ann, _FieldDescriptor):
                if ann.data_dims:
                    raise src.syntax(
                        s, f"a temporary with data dimensions {tuple(ann.data_dims)} is declared"
                        " at the top of the definition, before the computations (as in gt4py)",
                        hint=f"write {self._target_name(s.target)}: {ast.unparse(s.annotation)}"
                        " = 0.0 before the first `with computation(...)`",
                    )  # fmt: skip
                if tuple(ann.axes) not in (("I", "J"), ("I", "J", "K")):
                    raise src.syntax(  # gt4py's words first: its tests match on them
                        s, f"Typed temporaries must be IJ, temporaries for axes"
                        f" {''.join(ann.axes)} are not available (stencilkit: IJ and IJK"
                        " temporaries)",
                    )  # fmt: skip
                flat = tuple(ann.axes) == ("I", "J")
                dtype = ann.dtype  # a dtypes key, or a NumPy dtype
                dtype = scope.ctx.dtypes.get(dtype, dtype) if isinstance(dtype, str) else dtype
                ann = dtype.type if isinstance(dtype, np.dtype) else dtype
            dt = scope.ctx.cast_dtype(ann)
            if dt is None:
                raise src.syntax(s.annotation, f"{ann!r} is not a scalar type")
            out = self.assign(s.target, s.value, s, dt)
            if flat:
                self.flat_temps.add(self._target_name(s.target))
            return out
        if isinstance(s, ast.AugAssign):
            left = (
                s.target
                if isinstance(s.target, ast.Subscript)
                else ast.Name(self._target_name(s.target), ast.Load())
            )
            value = ast.BinOp(left, s.op, s.value)
            ast.copy_location(value, s)
            ast.fix_missing_locations(value)
            return self.assign(s.target, value, s)
        if isinstance(s, ast.If):
            cond = scope.expr(s.test)
            if isinstance(cond, Const):
                return list(self.stmts(s.body if cond.value else s.orelse))
            return [cn.If(cond, self.stmts(s.body), self.stmts(s.orelse), src.loc(s))]
        if isinstance(s, ast.While):
            return self.while_loop(s)
        if isinstance(s, ast.With):
            if call_of(scope, s.items[0].context_expr, computation) is not None:
                raise src.syntax(s, "computations cannot be nested")
            if call_of(scope, s.items[0].context_expr, interval) is not None:
                raise src.syntax(
                    s, "an interval block inside a computation that names its interval"
                )
            regions = horizontal_regions(scope, s)
            body = self.region_body(s)
            return [cn.If(cn.RegionMask(r), body, (), src.loc(s)) for r in regions]
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                return []
            if compile_assert_call(scope, s.value):
                return []
            raise src.syntax(s, "an expression statement has no effect in a stencil")
        if isinstance(s, ast.Pass):
            return []
        if isinstance(s, ast.ImportFrom) and s.module in ("__externals__", "__gtscript__"):
            scope.import_externals(s)
            return []
        if isinstance(s, ast.Return):
            raise src.syntax(s, "a stencil returns nothing; it writes its field arguments")
        raise src.syntax(s, f"{type(s).__name__} statements are not GTScript")

    def while_loop(self, s: ast.While) -> list[cn.Stmt]:
        src = self.src
        if s.orelse:
            raise src.syntax(s, "while ... else is not GTScript", hint="drop the else block")
        cond = self.scope.expr(s.test)
        if isinstance(cond, Const):
            if not cond.value:
                return []
            raise src.definition(
                s,
                f"while {ast.unparse(s.test)}: the condition is always true (the loop never ends)",
            )
        return [cn.While(cond, self.stmts(s.body), src.loc(s))]

    def _target_name(self, t: ast.expr) -> str:
        if isinstance(t, ast.Name):
            return t.id
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            return t.value.id
        raise self.src.syntax(t, "an assignment target is a field or temporary name")

    def assign(
        self, target: ast.expr, value: ast.expr, s: ast.stmt, dt: str | None = None
    ) -> list[cn.Stmt]:
        if isinstance(target, ast.Tuple):
            staged, results = self._tuple_value(value, target.elts)
            if len(results) != len(target.elts):
                raise self.src.syntax(s, f"{len(target.elts)} targets for {len(results)} values")
            writes = [w for t, r in zip(target.elts, results) for w in self._write(t, r, s, dt)]
            return staged + writes
        if self._vector_target(target):
            return self._write_vector(target, value, s)
        return self._write(target, self.scope.value(value), s, dt)

    def _vector_target(self, t: ast.expr) -> bool:
        """``t`` names a whole field with data dimensions (``v = ...``, ``v[0, 0, 0] = ...``)."""
        base = t.value if isinstance(t, ast.Subscript) else t
        ctx = self.scope.ctx
        return isinstance(base, ast.Name) and base.id in ctx.data_dims and not ctx.is_table(base.id)

    def _write_vector(self, t: ast.expr, value: ast.expr, s: ast.stmt) -> list[cn.Stmt]:
        """``v = expr`` for a field with data dimensions: one write per element, in order (as
        gt4py unrolls it), of the element of ``expr`` (a vector value, or one value broadcast)."""
        src, scope = self.src, self.scope
        name = self._target_name(t)
        axes = scope.ctx.fields[name]
        if "I" not in axes or "J" not in axes:
            raise src.definition(
                t, f"'{name}' is a field over {''.join(axes)}: all parallel axes (I, J) must be"
                " present in an assigned field",
            )  # fmt: skip
        if isinstance(t, ast.Subscript):
            off = scope.offset(t, cn.FieldRead(name, (0, 0, 0)))
            if off != (0, 0, 0):
                raise src.definition(t, f"'{name}' is assigned at an offset {off}")
        shape = scope.ctx.data_dims[name]
        v = scope.expr(value)
        vec = scope.vector(v)
        if vec is None:
            vec = vectors.broadcast(scope.as_expr(v, value), shape)
        if vec.shape != shape:
            raise src.definition(
                s, f"'{name}' has data dimensions {shape}; the value assigned has {vec.shape}"
            )
        loc = src.loc(s)
        return [
            cn.Assign(scope.ctx.component(name, idx), vec.element(idx), loc)
            for idx in vec.indices()
        ]

    def _tuple_value(
        self, node: ast.expr, targets: list[ast.expr]
    ) -> tuple[list[cn.Stmt], list[cn.Expr]]:
        """The values of ``targets = node`` and the statements to run before the targets are
        written (one after the other, as gt4py writes them)."""
        from .inline import inline_call

        if isinstance(node, ast.Tuple):  # gt4py: a, b = b, a writes a, then b from the new a
            return [], [self.scope.value(e) for e in node.elts]
        if isinstance(node, ast.Call):
            f = self.scope.expr(node.func)
            if isinstance(f, Const) and isinstance(f.value, GTScriptFunction):
                r = inline_call(self.scope, f.value, node)
                if isinstance(r, tuple):
                    results = [self.scope.as_expr(x, node) for x in r]
                    names = [_base_name(t) for t in targets]
                    if not _reads_earlier_target(names, results):
                        return [], results
                    # a later value reads a field an earlier target writes: the callee's
                    # locals are computed before any write, as gt4py's temporaries are
                    # (pyFV3 remap_profile: a4_1, a4_2, a4_3, a4_4 = remap_constraint(...))
                    staged: list[cn.Stmt] = []
                    r = inline_call(
                        self.scope,
                        f.value,
                        node,
                        lambda v: self._stage(v, set(names), node, staged),
                    )
                    assert isinstance(r, tuple)
                    return staged, [self.scope.as_expr(x, node) for x in r]
        raise self.src.syntax(node, "a tuple assignment needs a tuple or a function returning one")

    def _stage(self, v: Any, targets: set[str], at: ast.Call, out: list[cn.Stmt]) -> Any:
        """``v`` computed into a new temporary (a statement appended to ``out``) if it reads one
        of ``targets``; else ``v``."""
        if not isinstance(v, cn.Expr) or not (_all_reads(v) & targets):
            return v
        ctx = self.scope.ctx
        name = f"__staged_{at.lineno}_{at.col_offset}_{len(out)}"
        if name not in ctx.fields:
            ctx.fields[name] = ("I", "J", "K")
            self.temps.append((name, None, self.src.loc(at)))
        out.append(cn.Assign(name, v, self.src.loc(at)))
        return cn.FieldRead(name, (0, 0, 0), self.src.loc(at))

    def _write_element(self, t: ast.Subscript, value: cn.Expr, s: ast.stmt) -> list[cn.Stmt]:
        """``q[0, 0, 0][n] = value``: a write of one element field (a view of the array); with
        a run-time index, a masked write of each element it may name."""
        src, scope = self.src, self.scope
        assert isinstance(t.value, ast.Subscript) and isinstance(t.value.value, ast.Name)
        name = t.value.value.id
        axes = scope.ctx.fields[name]
        if "I" not in axes or "J" not in axes:
            raise src.definition(
                t, f"'{name}' is a field over {''.join(axes)}: all parallel axes (I, J) must be"
                " present in an assigned field",
            )  # fmt: skip
        off = scope.offset(t.value, cn.FieldRead(name, (0, 0, 0)))
        if off != (0, 0, 0):
            raise src.definition(
                t, f"'{name}' is assigned at an offset {off}",
                hint=f"write at the centre: {name}[0, 0, 0][n] = ...",
            )  # fmt: skip
        items = t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]
        choices = scope.element_choices(name, scope.data_index(name, items, t), t)
        loc = src.loc(s)
        # a run-time index out of range writes no element
        return [
            cn.If(cond, (cn.Assign(comp, value, loc),), (), loc)
            if cond is not None
            else cn.Assign(comp, value, loc)
            for cond, comp in choices
        ]

    def _write(self, t: ast.expr, value: cn.Expr, s: ast.stmt, dt: str | None) -> list[cn.Stmt]:
        src, ctx = self.src, self.scope.ctx
        base = t.value if isinstance(t, ast.Subscript) else t
        base = base.value if isinstance(base, ast.Attribute) else base
        if isinstance(base, ast.Name) and ctx.is_table(base.id):
            raise src.syntax(t, f"'{base.id}' is a GlobalTable, which is read-only")
        if (
            isinstance(t, ast.Subscript)
            and isinstance(t.value, ast.Subscript)
            and isinstance(t.value.value, ast.Name)
            and t.value.value.id in ctx.data_dims
        ):
            return self._write_element(t, value, s)
        name = self._target_name(t)
        if name in ctx.data_dims:
            raise src.syntax(
                t, f"'{name}' has data dimensions: assign one element of it",
                hint=f"write {name}[0, 0, 0][n] = ...",
            )  # fmt: skip
        k = 0
        if isinstance(t, ast.Subscript):
            if name not in ctx.fields:
                raise src.symbol(t, f"'{name}' is not a field")
            off = self.scope.offset(t, cn.FieldRead(name, (0, 0, 0)))
            if off[0] or off[1]:
                raise src.definition(
                    t, f"'{name}' is assigned at a horizontal offset {off[:2]}",
                    hint="write at the centre: a[0, 0, 0] = ... (or a = ...)",
                )  # fmt: skip
            if off[2]:
                if self.order == "PARALLEL":
                    raise src.definition(
                        t, "writes at a K offset are allowed only in FORWARD/BACKWARD"
                    )
            k = off[2]
        if name in ctx.scalars:
            raise src.syntax(t, f"'{name}' is a scalar parameter and cannot be assigned")
        if name in self.params:
            axes = ctx.fields[name]
            if "I" not in axes or "J" not in axes:
                raise src.definition(
                    t, f"'{name}' is a field over {''.join(axes)}: all parallel axes (I, J) must be"
                    " present in an assigned field",
                )  # fmt: skip
            if dt is not None:
                raise src.syntax(t, f"'{name}' is a parameter; it cannot be annotated here")
        elif name not in ctx.fields:
            if name in ctx.externals or name in self.scope.imported:
                raise src.syntax(t, f"'{name}' is an external and cannot be assigned")
            ctx.fields[name] = ("I", "J", "K")
            self.temps.append((name, dt, src.loc(t)))
        elif dt is not None:
            raise src.syntax(t, f"temporary '{name}' is annotated again")
        return [cn.Assign(name, value, src.loc(s), dt, k)]


def _all_reads(e: cn.Expr) -> set[str]:
    """The fields and temporaries ``e`` reads, in variable K offsets too."""
    out: set[str] = set()
    stack = [e]
    while stack:
        for r in field_reads(stack.pop()):
            out.add(r.name)
            if r.k_expr is not None:
                stack.append(r.k_expr)
    return out


def _base_name(t: ast.expr) -> str:
    """The field or temporary an assignment target names (``a``, ``a[0, 0, 1]``, ``v[0, 0, 0][1]``)."""
    while isinstance(t, ast.Subscript | ast.Attribute):
        t = t.value
    return t.id if isinstance(t, ast.Name) else ""


def _reads_earlier_target(names: list[str], values: list[cn.Expr]) -> bool:
    """Whether a value of a tuple assignment reads a field an earlier target writes."""
    return any(_all_reads(v) & set(names[:i]) for i, v in enumerate(values))


def _assigned(body: list[cn.Stmt] | tuple[cn.Stmt, ...]) -> set[str]:
    """The names ``body`` assigns outside horizontal regions, in branches and loops too."""
    out: set[str] = set()
    for x in body:
        if isinstance(x, cn.Assign):
            out.add(x.target)
        elif isinstance(x, cn.If) and not isinstance(x.cond, cn.RegionMask):
            out |= _assigned(x.body) | _assigned(x.orelse)
        elif isinstance(x, cn.While):
            out |= _assigned(x.body)
    return out
