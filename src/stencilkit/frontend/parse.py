"""Function bodies -> IR: field operators, scan operators and programs."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import Any

from ..core.dims import Dimension
from ..core.dtypes import is_integral
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec
from ..ir import nodes as ir
from ..ir.tuples import flat_name, flatten_value
from ..ir.visit import deep, substitute
from .annotations import type_from_annotation
from .expressions import ExprBuilder
from .scans import scan_call, statements
from .source import SourceFunction, parse_function
from .typing_rules import TypingError, unify_operands


def parse_params(src: SourceFunction, read_return: bool = True) -> tuple[tuple[ir.Param, ...], TypeSpec | None]:
    try:
        hints = inspect.get_annotations(src.fn, eval_str=True)
    except Exception as err:
        raise src.type_error(src.tree, f"cannot evaluate the annotations of {src.tree.name}: {err}") from None
    params = []
    for arg in src.tree.args.args:
        if arg.arg not in hints:
            raise src.type_error(arg, f"parameter '{arg.arg}' has no type annotation",
                                 hint="annotate it, e.g. a: Field[Dims[I, J], float64] or x: float64")
        try:
            params.append(ir.Param(arg.arg, type_from_annotation(hints[arg.arg])))
        except TypeError as err:
            raise src.type_error(arg.annotation or arg, f"parameter '{arg.arg}': {err}") from None
    a = src.tree.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        raise src.type_error(src.tree, "stencil functions take plain positional parameters only")
    ret = None
    if read_return and "return" in hints:
        try:
            ret = type_from_annotation(hints["return"])
        except TypeError as err:
            raise src.type_error(src.tree.returns, f"return annotation: {err}") from None
    return tuple(params), ret


def _body_expr(src: SourceFunction, builder: ExprBuilder, body: list[ast.stmt],
               live: frozenset[str] = frozenset()) -> ir.Expr:
    """Evaluate statements (assignments, if/else, return) to the returned expression."""
    result = _run(src, builder, body, live)
    if result is None:
        raise src.type_error(body[-1] if body else src.tree, "missing return statement")
    return result


def _run(src: SourceFunction, builder: ExprBuilder, body: list[ast.stmt],
         live: frozenset[str]) -> ir.Expr | None:
    """Run ``body`` on ``builder.symbols``: the returned expression, or None where the block
    ends without ``return``. ``live``: names read after the block. Each statement is built once:
    values stay shared (a name used twice is one node), and an ``if`` whose branches do not
    return binds the names it assigns once, through the tuple of their values in each branch."""
    after = _live_after(body, live)
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Return):
            if stmt.value is None:
                raise src.type_error(stmt, "a field operator must return a value")
            if i != len(body) - 1:
                raise src.type_error(body[i + 1], "unreachable code after return")
            return builder.build(stmt.value)
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if stmt.value is None:
                raise src.type_error(stmt, "declarations without a value are not supported")
            value = builder.build(stmt.value)
            for target in targets:
                _bind(src, builder, target, value)
            continue
        if isinstance(stmt, ast.If):
            cond = builder.build(stmt.test)
            if not (isinstance(cond.type, ScalarType) and cond.type.dtype == "bool"):
                raise src.type_error(stmt.test, "an if statement needs a scalar boolean condition",
                                     hint="for fields use where(mask, a, b)")
            if not _may_return(stmt.body) and not _may_return(stmt.orelse):
                _merge_if(src, builder, stmt, cond, after[i])
                continue
            rest = body[i + 1:]
            # a branch that returns ends there; one that does not continues with the rest
            t_body = stmt.body + ([] if _returns(stmt.body) else rest)
            f_body = (stmt.orelse or []) + ([] if _returns(stmt.orelse) else rest)
            t = _run(src, ExprBuilder(src, dict(builder.symbols)), t_body, live)
            f = _run(src, ExprBuilder(src, dict(builder.symbols)), f_body, live)
            if t is None or f is None:
                if t is None and f is None:
                    return None  # only possible in a block: the enclosing one carries on
                raise src.type_error(stmt, "one branch of this if returns and the other does not,"
                                     " and no return follows",
                                     hint="return in both branches, or after the if statement")
            if t.type != f.type:
                raise src.type_error(stmt, f"the branches return different types: {t.type} and {f.type}")
            return ir.IfElse(cond, t, f, t.type)
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            continue  # docstring
        if isinstance(stmt, ast.Pass):
            continue
        raise src.type_error(stmt, f"'{ast.unparse(stmt).splitlines()[0]}': this statement is not part of the DSL",
                             hint="field operators hold assignments, if/else on scalars, and return")
    return None


def _merge_if(src: SourceFunction, builder: ExprBuilder, stmt: ast.If, cond: ir.Expr,
              live: frozenset[str]) -> None:
    """Bind the names an ``if`` without ``return`` assigns (and that are read later) to
    ``(n1, n2, ...) = cond ? (t1, t2, ...) : (f1, f2, ...)``, each branch built once."""
    before = builder.symbols
    branches = []
    for block in (stmt.body, stmt.orelse):
        b = ExprBuilder(src, dict(before))
        _run(src, b, block, live)
        branches.append(b.symbols)
    t_syms, f_syms = branches
    names, ts, fs = [], [], []
    for name in dict.fromkeys([*t_syms, *f_syms]):
        t, f = t_syms.get(name), f_syms.get(name)
        if t is not None and t is f:
            before[name] = t
            continue
        if t is None or f is None:  # assigned on one path only: not defined after the if
            before.pop(name, None)
            continue
        if name not in live:
            before.pop(name, None)
            continue
        if t.type != f.type:
            try:
                t, f, _ = unify_operands(t, f)
            except (TypingError, TypeError):
                pass
            t, f = _as_field_like(t, f), _as_field_like(f, t)
            if t.type != f.type:
                raise src.type_error(stmt, f"'{name}' is {t.type} after one branch of this if and {f.type}"
                                     " after the other", hint="give it the same type in both branches")
        names.append(name)
        ts.append(t)
        fs.append(f)
    if len(names) == 1:
        before[names[0]] = ir.IfElse(cond, ts[0], fs[0], ts[0].type)
    elif names:
        tt = TupleType(tuple(t.type for t in ts))
        merged = ir.IfElse(cond, ir.MakeTuple(tuple(ts), tt), ir.MakeTuple(tuple(fs), tt), tt)
        for i, name in enumerate(names):
            before[name] = ir.TupleGet(merged, i, tt.types[i])


def _as_field_like(e: ir.Expr, other: ir.Expr) -> ir.Expr:
    """A scalar assigned on one path and a field of its dtype on the other: the scalar stands
    for the field holding it everywhere (``broadcast``)."""
    ot = other.type
    if isinstance(e.type, ScalarType) and isinstance(ot, FieldType) and e.type.dtype == ot.dtype:
        return ir.Call("broadcast", (e,), ot)
    return e


def _loads(node: ast.AST) -> set[str]:
    return {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}


def _live_after(body: list[ast.stmt], live: frozenset[str]) -> list[frozenset[str]]:
    """For each statement of ``body``, the names read after it (a superset)."""
    out: list[frozenset[str]] = []
    acc = set(live)
    for stmt in reversed(body):
        out.append(frozenset(acc))
        acc |= _loads(stmt)
    return out[::-1]


def _returns(body: list[ast.stmt]) -> bool:
    """Whether ``body`` returns on every path."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _returns(last.body) and _returns(last.orelse)


def _may_return(body: list[ast.stmt]) -> bool:
    """Whether ``body`` returns on some path."""
    return any(isinstance(x, ast.Return) for s in body for x in ast.walk(s))


def _bind(src: SourceFunction, builder: ExprBuilder, target: ast.expr, value: ir.Expr) -> None:
    if isinstance(target, ast.Name):
        builder.symbols[target.id] = value
        return
    if isinstance(target, ast.Tuple | ast.List):
        if not isinstance(value.type, TupleType) or len(value.type.types) != len(target.elts):
            raise src.type_error(target, f"cannot unpack {value.type} into {len(target.elts)} names")
        for i, t in enumerate(target.elts):
            elem = value.elems[i] if isinstance(value, ir.MakeTuple) else ir.TupleGet(value, i, value.type.types[i])
            _bind(src, builder, t, elem)
        return
    raise src.type_error(target, "only names and tuples of names can be assigned")


@deep
def parse_field_operator(fn: Callable[..., Any]) -> tuple[ir.FieldOperator, SourceFunction]:
    src = parse_function(fn)
    params, ret = parse_params(src)
    builder = ExprBuilder(src, {p.name: ir.Ref(p.name, p.type) for p in params})
    body = _body_expr(src, builder, src.tree.body)
    if ret is not None and not _compatible(body.type, ret):
        raise src.type_error(src.tree.returns or src.tree,
                             f"{src.tree.name} is annotated to return {ret} but returns {body.type}")
    if isinstance(body, ir.Literal) and body.weak:
        body = ir.Literal(body.value, body.type)
    return ir.FieldOperator(src.tree.name, params, body), src


def _compatible(actual: TypeSpec, declared: TypeSpec) -> bool:
    if actual == declared:
        return True
    if isinstance(actual, FieldType) and isinstance(declared, FieldType):
        return set(actual.dims) == set(declared.dims) and actual.dtype == declared.dtype
    if isinstance(actual, TupleType) and isinstance(declared, TupleType):
        return len(actual.types) == len(declared.types) and all(
            _compatible(a, d) for a, d in zip(actual.types, declared.types))
    return False


# ---------------------------------------------------------------------- programs
class ProgramParser:
    """Parses a ``@program`` body: calls of operators with ``out=`` and ``domain=``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.src = parse_function(fn)
        self.params, _ = parse_params(self.src, read_return=False)  # gt4py ignores it too (-> None)
        self.builder = ExprBuilder(self.src, {p.name: ir.Ref(p.name, p.type) for p in self.params})

    def parse(self) -> ir.Program:
        stmts: list[ir.Apply | ir.ScanApply] = []
        temps: list[ir.Param] = []
        for stmt in self.src.tree.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
                raise self.src.type_error(stmt, "a program body holds only calls of field operators with out=",
                                          hint="e.g. lap(a, out=b, domain={I: (1, n - 1)})")
            new, new_temps = self.statement(stmt.value, f"__tmp{len(stmts)}_")
            stmts.extend(new)
            temps.extend(new_temps)
        return ir.Program(self.src.tree.name, self.params, tuple(stmts), tuple(temps))

    def statement(self, call: ast.Call, prefix: str) -> tuple[list[ir.Apply | ir.ScanApply], list[ir.Param]]:
        op = self.builder.resolve(call.func)
        fop: ir.FieldOperator | None = getattr(op, "__stencilkit_operator__", None)
        if fop is None:
            raise self.src.type_error(call.func, f"'{ast.unparse(call.func)}' is not a field operator or scan operator")
        kw = {k.arg: k.value for k in call.keywords}
        unknown = set(kw) - {"out", "domain"}
        if unknown or None in kw:
            raise self.src.type_error(call, f"unexpected keyword argument(s) {', '.join(map(str, unknown))}",
                                      hint="operator calls in a program take out= and domain=")
        if "out" not in kw:
            raise self.src.type_error(call, f"the call of {fop.name} needs out=", hint=f"{fop.name}(..., out=result)")
        args = [self.builder.build(a) for a in call.args]
        outs = self.outputs(kw["out"])
        per_output = self.domains_per_output(kw["domain"], len(outs)) if "domain" in kw else None
        if per_output is not None:
            return self.split_by_domain(op, args, outs, per_output, call, prefix)
        domain = self.domain(kw["domain"]) if "domain" in kw else ()
        return build_apply(op, args, outs, domain, self.src, call, self.builder, prefix)

    def domains_per_output(self, node: ast.expr, n_outs: int) -> list[tuple[ir.DomainRange, ...]] | None:
        """``domain=(d0, d1, ...)`` with differing domains for a tuple ``out=``: one per output."""
        if not isinstance(node, ast.Tuple):
            return None
        doms = [self.domain(e) for e in node.elts]
        if all(d == doms[0] for d in doms):
            return None
        if len(doms) != n_outs:
            raise self.src.type_error(node, f"domain= gives {len(doms)} domains for {n_outs} outputs",
                                      hint="give one domain per output field, or a single domain for all")
        return doms

    def split_by_domain(self, op: Any, args: list[ir.Expr], outs: tuple[ir.Ref, ...],
                        doms: list[tuple[ir.DomainRange, ...]], call: ast.Call,
                        prefix: str) -> tuple[list[ir.Apply | ir.ScanApply], list[ir.Param]]:
        """One statement per output, each over its own domain (the values are recomputed)."""
        stmts, temps = build_apply(op, args, outs, doms[0], self.src, call, self.builder, prefix)
        *before, last = stmts
        if not isinstance(last, ir.Apply):
            raise self.src.type_error(call, "the outputs of a scan must share one domain",
                                      hint="split the scan's outputs into separate calls")
        values = flatten_value(last.expr)
        split = [ir.Apply(v, (o,), d, last.label, last.where) for v, o, d in zip(values, outs, doms)]
        return [*before, *split], temps

    def outputs(self, node: ast.expr) -> tuple[ir.Ref, ...]:
        value = self.builder.build(node)
        refs = _flatten_refs(value)
        if refs is None:
            raise self.src.type_error(node, "out= must name program parameters (a field or a tuple of fields)")
        for r in refs:
            if not isinstance(r.type, FieldType):
                raise self.src.type_error(node, f"out= must be fields, '{r.name}' is a {r.type}")
        return refs

    def domain(self, node: ast.expr) -> tuple[ir.DomainRange, ...]:
        if isinstance(node, ast.Tuple):  # equal domains (differing ones: domains_per_output)
            return self.domain(node.elts[0])
        if not isinstance(node, ast.Dict):
            raise self.src.type_error(node, "domain= must be a dict {Dim: (start, stop)}")
        ranges = []
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise self.src.type_error(node, "domain= cannot use ** unpacking")
            dim = self.builder.resolve(k)
            if not isinstance(dim, Dimension):
                raise self.src.type_error(k, f"domain keys must be dimensions, '{ast.unparse(k)}' is not")
            if not (isinstance(v, ast.Tuple) and len(v.elts) == 2):
                raise self.src.type_error(v, f"the range of {dim} must be a (start, stop) tuple")
            bounds = [self._bound(e) for e in v.elts]
            ranges.append(ir.DomainRange(dim, bounds[0], bounds[1]))
        return tuple(ranges)

    def _bound(self, node: ast.expr) -> ir.Expr:
        e = self.builder.build(node)
        if not (isinstance(e.type, ScalarType) and is_integral(e.type.dtype)):
            raise self.src.type_error(node, f"domain bounds must be integer scalars, got {e.type}")
        if isinstance(e, ir.Literal):
            return ir.Literal(int(e.value), ScalarType("int64"))
        return e


def _flatten_refs(e: ir.Expr) -> tuple[ir.Ref, ...] | None:
    """The flattened parameters (``y``, ``y__0``...) that ``out=`` names, or None."""
    if isinstance(e, ir.MakeTuple):
        out: list[ir.Ref] = []
        for x in e.elems:
            sub = _flatten_refs(x)
            if sub is None:
                return None
            out.extend(sub)
        return tuple(out)
    name = flat_name(e)
    if name is None:
        return None
    if isinstance(e.type, TupleType):
        return _flatten_refs(ir.MakeTuple(tuple(ir.Ref(f"{name}__{i}", t) for i, t in enumerate(e.type.types)),
                                          e.type))
    return (ir.Ref(name, e.type),)


def build_apply(
    op: Any, args: list[ir.Expr], outs: tuple[ir.Ref, ...], domain: tuple[ir.DomainRange, ...],
    src: SourceFunction, node: ast.AST, builder: ExprBuilder, prefix: str = "__tmp",
) -> tuple[list[ir.Apply | ir.ScanApply], list[ir.Param]]:
    """The statements that evaluate ``op(*args)`` into ``outs``, and the temporaries they write
    (named ``prefix0``, ``prefix1``...)."""
    fop: ir.FieldOperator = op.__stencilkit_operator__
    scan = getattr(op, "__stencilkit_scan__", None)
    params = fop.params[1:] if scan is not None else fop.params
    if len(args) != len(params):
        raise src.type_error(node, f"{fop.name}() takes {len(params)} arguments, got {len(args)}")
    try:
        if scan is not None:
            expr: ir.Expr = scan_call(fop, scan, args)
        else:
            mapping = {p.name: builder.check_arg(node, a, p, fop.name) for p, a in zip(params, args)}
            expr = substitute(fop.body, dict(mapping))
        values = flatten_value(expr)
        if len(values) != len(outs):
            raise src.type_error(node, f"{fop.name} returns {len(values)} value(s) but out= names {len(outs)} field(s)")
        for v, o in zip(values, outs):
            _check_out(src, node, v.type, o)
        return statements(expr, outs, domain, fop.name, str(src.loc(node)), prefix)
    except TypingError as err:
        raise src.type_error(node, err.message, err.hint) from None


def _check_out(src: SourceFunction, node: ast.AST, vt: TypeSpec, o: ir.Ref) -> None:
    ot = o.type
    assert isinstance(ot, FieldType)
    vdims = vt.dims if isinstance(vt, FieldType) else ()
    vdtype = vt.dtype if isinstance(vt, FieldType | ScalarType) else "?"
    if vdtype != ot.dtype:
        raise src.type_error(node, f"result of dtype {vdtype} cannot be written to '{o.name}' of dtype {ot.dtype}",
                             hint="convert with astype(...) in the operator")
    if not set(vdims) <= set(ot.dims):
        raise src.type_error(node, f"result over [{', '.join(map(str, vdims))}] cannot be written to '{o.name}'"
                             f" over [{', '.join(map(str, ot.dims))}]")
    if set(vdims) != set(ot.dims):
        raise src.type_error(node, f"result over [{', '.join(map(str, vdims))}] does not cover all dimensions"
                             f" of '{o.name}' [{', '.join(map(str, ot.dims))}]",
                             hint="use broadcast(value, (dims...)) to extend it")
