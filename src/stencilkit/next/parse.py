"""Function bodies -> IR: field operators, scan operators and programs."""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .. import config
from ..core.errors import BadAnnotationError, MissingAnnotationError
from ..core.named_collections import NamedCollectionType
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec
from ..ir import nodes as ir
from ..ir.neighbour_values import hoist_neighbour_values
from ..ir.statements import RewriteError, in_place, per_output_statements, statements
from ..ir.tuples import flatten_value
from ..ir.visit import deep, substitute
from .annotations import type_from_annotation
from .expressions import ExprBuilder, with_names
from .outputs import DomainOrderError, ScalarOutputError, TargetParser, check_domain_order, leaves
from .scans import scan_call
from .source import SourceFunction, parse_function
from .typing_rules import TypingError, unify_operands


def _annotations(fn: Callable[..., Any]) -> dict[str, Any]:
    """The evaluated annotations of ``fn``. Under ``from __future__ import annotations`` they are
    strings, evaluated in the module's globals; a name local to the function that defines ``fn``
    (``F = Field[...]`` in a test or a notebook cell's function) is not there. Such names are
    looked up in that enclosing function's frame, found on the stack while the decorator runs, and
    in ``fn``'s closure."""
    try:
        return inspect.get_annotations(fn, eval_str=True)
    except NameError:
        scope = _enclosing_locals(fn)
        if scope is None:
            raise
        return inspect.get_annotations(fn, eval_str=True, locals=scope)


def _enclosing_locals(fn: Callable[..., Any]) -> dict[str, Any] | None:
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    scope: dict[str, Any] = {}
    frame = sys._getframe(1)
    while frame is not None:
        if code in frame.f_code.co_consts:  # the function whose body defines fn
            scope.update(frame.f_locals)
            break
        frame = frame.f_back  # type: ignore[assignment]  # None ends the loop
    del frame
    scope.update(inspect.getclosurevars(fn).nonlocals)
    return scope or None


def parse_params(
    src: SourceFunction, read_return: bool = True
) -> tuple[tuple[ir.Param, ...], TypeSpec | None]:
    try:
        hints = _annotations(src.fn)
    except Exception as err:
        raise src.type_error(
            src.tree,
            f"cannot evaluate the annotations of {src.tree.name}: {err}",
            hint="with `from __future__ import annotations` the names in annotations must be"
            " visible where the function is decorated (module level, or the enclosing function"
            " while it runs)",
        ) from None
    params = []
    for arg in src.tree.args.args:
        if arg.arg not in hints:
            raise MissingAnnotationError(
                f"Parameter '{arg.arg}' is missing type annotations.",
                src.loc(arg),
                hint="annotate it, e.g. a: Field[Dims[I, J], float64] or x: float64",
            )
        try:
            params.append(ir.Param(arg.arg, type_from_annotation(hints[arg.arg])))
        except TypeError as err:
            raise BadAnnotationError(
                f"Invalid type annotation for parameter '{arg.arg}':"
                f" '{ast.unparse(arg.annotation) if arg.annotation else ''}'.",
                src.loc(arg.annotation or arg),
                hint=str(err),
            ) from None
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


def _body_expr(
    src: SourceFunction,
    builder: ExprBuilder,
    body: list[ast.stmt],
    live: frozenset[str] = frozenset(),
) -> ir.Expr:
    """Evaluate statements (assignments, if/else, return) to the returned expression."""
    result = _run(src, builder, body, live)
    if result is None:
        raise src.type_error(body[-1] if body else src.tree, "missing return statement")
    return result


def _run(
    src: SourceFunction, builder: ExprBuilder, body: list[ast.stmt], live: frozenset[str]
) -> ir.Expr | None:
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
            if not isinstance(cond.type, ScalarType):
                raise src.type_error(
                    stmt.test,
                    f"Condition for 'if' must be scalar, got '{cond.type}' instead.",
                    hint="an if statement needs a scalar boolean condition; for fields use"
                    " where(mask, a, b)",
                )
            if cond.type.dtype != "bool":
                raise src.type_error(
                    stmt.test,
                    f"Condition for 'if' must be of boolean type, got '{cond.type}' instead.",
                    hint="an if statement needs a scalar boolean condition, e.g. x > 0",
                )
            if not _may_return(stmt.body) and not _may_return(stmt.orelse):
                _merge_if(src, builder, stmt, cond, after[i])
                continue
            rest = body[i + 1 :]
            # a branch that returns ends there; one that does not continues with the rest
            t_body = stmt.body + ([] if _returns(stmt.body) else rest)
            f_body = (stmt.orelse or []) + ([] if _returns(stmt.orelse) else rest)
            t = _run(src, ExprBuilder(src, dict(builder.symbols)), t_body, live)
            f = _run(src, ExprBuilder(src, dict(builder.symbols)), f_body, live)
            if t is None or f is None:
                if t is None and f is None:
                    return None  # only possible in a block: the enclosing one carries on
                raise src.type_error(
                    stmt,
                    "one branch of this if returns and the other does not, and no return follows",
                    hint="return in both branches, or after the if statement",
                )
            if t.type != f.type:
                raise src.type_error(
                    stmt,
                    f"the branches return different types: {t.type} and {f.type}",
                    hint="return values of one type from every branch, e.g. broadcast a scalar"
                    " to the field's dimensions or convert with astype",
                )
            return ir.IfElse(cond, t, f, t.type)
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            continue  # docstring
        if isinstance(stmt, ast.Pass):
            continue
        raise src.unsupported(
            stmt,
            f"'{ast.unparse(stmt).splitlines()[0]}': this statement is not part of the DSL;"
            " field operators hold assignments, if/else on scalars, and return",
        )
    return None


def _merge_if(
    src: SourceFunction, builder: ExprBuilder, stmt: ast.If, cond: ir.Expr, live: frozenset[str]
) -> None:
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
                if not _literals_of_two_dtypes(t, f):
                    t, f, _ = unify_operands(t, f)
            except (TypingError, TypeError):
                pass
            t, f = _as_field_like(t, f), _as_field_like(f, t)
            if t.type != f.type:
                raise src.type_error(
                    stmt,
                    f"Inconsistent types between two branches for variable '{name}':"
                    f" got types '{t.type}' and '{f.type}.",
                    hint=f"'{name}' is {t.type} after one branch of this if and {f.type}"
                    " after the other; give it the same type in both branches",
                )
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


def _literals_of_two_dtypes(t: ir.Expr, f: ir.Expr) -> bool:
    """``x = 1`` on one path and ``x = 2.0`` on the other: neither literal gives the other a
    dtype, so ``x`` has none after the if (gt4py: "Inconsistent types between two branches").
    A literal against a typed value takes that value's dtype, as in an operator."""
    return all(isinstance(e, ir.Literal) and e.weak for e in (t, f)) and t.type != f.type


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
        if any(isinstance(t, ast.Starred) for t in target.elts):
            _bind_starred(src, builder, target, value)
            return
        vt = value.type
        _check_unpack(src, target, vt, len(target.elts))
        assert isinstance(vt, TupleType)
        for i, t in enumerate(target.elts):
            elem = (
                value.elems[i]
                if isinstance(value, ir.MakeTuple)
                else ir.TupleGet(value, i, vt.types[i])
            )
            _bind(src, builder, t, elem)
        return
    raise src.type_error(target, "only names and tuples of names can be assigned")


def _check_unpack(src: SourceFunction, target: ast.expr, t: TypeSpec, n: int) -> None:
    if not isinstance(t, TupleType):
        raise src.type_error(
            target,
            f"Assignment value must be of type tuple, got '{t}'.",
            hint=f"cannot unpack {t} into {n} names",
        )
    if len(t.types) > n:
        raise src.type_error(
            target,
            f"Too many values to unpack (expected {n}).",
            hint=f"cannot unpack {t} into {n} names",
        )
    if len(t.types) < n:
        raise src.type_error(
            target,
            f"Not enough values to unpack (expected {n}, got {len(t.types)}).",
            hint=f"cannot unpack {t} into {n} names",
        )


def _bind_starred(
    src: SourceFunction, builder: ExprBuilder, target: ast.Tuple | ast.List, value: ir.Expr
) -> None:
    """``first, *mid, last = t``: the starred name gets a tuple of the middle elements."""
    star = [i for i, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
    after = len(target.elts) - star[0] - 1
    if (
        len(star) > 1
        or not isinstance(value.type, TupleType)
        or len(value.type.types) < len(target.elts) - 1
    ):
        raise src.type_error(target, f"cannot unpack {value.type} into {ast.unparse(target)}")
    n = len(value.type.types)
    elems = [
        value.elems[i]
        if isinstance(value, ir.MakeTuple)
        else ir.TupleGet(value, i, value.type.types[i])
        for i in range(n)
    ]
    mid = elems[star[0] : n - after]
    groups: list[ir.Expr] = [
        *elems[: star[0]],
        ir.MakeTuple(tuple(mid), TupleType(tuple(e.type for e in mid))),
        *elems[n - after :],
    ]
    for t, elem in zip(target.elts, groups):
        _bind(src, builder, t.value if isinstance(t, ast.Starred) else t, elem)


@deep
def parse_field_operator(fn: Callable[..., Any]) -> tuple[ir.FieldOperator, SourceFunction]:
    src = parse_function(fn)
    params, ret = parse_params(src)
    builder = ExprBuilder(src, {p.name: ir.Ref(p.name, p.type) for p in params})
    body = _body_expr(src, builder, src.tree.body)
    if ret is not None and not _compatible(body.type, ret):
        raise src.type_error(
            src.tree.returns or src.tree,
            f"{src.tree.name} is annotated to return {ret} but returns {body.type}",
        )
    if isinstance(body, ir.Literal) and body.weak:
        body = ir.Literal(body.value, body.type)
    if (
        ret is not None
        and isinstance(body.type, TupleType)
        and _has_names(ret)
        and not _has_names(body.type)
    ):
        body = _named_result(body, with_names(body.type, ret))  # -> Polar: callers may write .speed
    return ir.FieldOperator(src.tree.name, params, body), src


def _has_names(t: TypeSpec) -> bool:
    return isinstance(t, NamedCollectionType) or (
        isinstance(t, TupleType) and any(map(_has_names, t.types))
    )


def _named_result(body: ir.Expr, t: TypeSpec) -> ir.Expr:
    assert isinstance(t, TupleType)
    elems = (
        body.elems
        if isinstance(body, ir.MakeTuple)
        else tuple(ir.TupleGet(body, i, s) for i, s in enumerate(t.types))
    )
    return ir.MakeTuple(
        tuple(
            _named_result(e, s) if isinstance(s, TupleType) else e for e, s in zip(elems, t.types)
        ),
        t,
    )


def _compatible(actual: TypeSpec, declared: TypeSpec) -> bool:
    if actual == declared:
        return True
    if isinstance(actual, FieldType) and isinstance(declared, FieldType):
        return set(actual.dims) == set(declared.dims) and actual.dtype == declared.dtype
    if isinstance(actual, ScalarType) and isinstance(declared, FieldType) and not declared.dims:
        return actual.dtype == declared.dtype  # a 0-d field is a scalar inside an operator
    if isinstance(actual, TupleType) and isinstance(declared, TupleType):
        return len(actual.types) == len(declared.types) and all(
            _compatible(a, d) for a, d in zip(actual.types, declared.types)
        )
    return False


# ---------------------------------------------------------------------- programs
def with_neighbour_temporaries(prog: ir.Program) -> ir.Program:
    """``prog`` with the values its statements read at several neighbours of each point
    computed once into temporaries (``ir/neighbour_values.py``), unless
    ``config.NEIGHBOUR_TEMPORARIES`` (``STENCILKIT_NEIGHBOUR_TEMPORARIES``) is off."""
    return hoist_neighbour_values(prog) if config.NEIGHBOUR_TEMPORARIES else prog


class ProgramParser:
    """Parses a ``@program`` body: calls of operators with ``out=`` and ``domain=``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.src = parse_function(fn)
        self.params, _ = parse_params(self.src, read_return=False)  # gt4py ignores it too (-> None)
        self.builder = ExprBuilder(self.src, {p.name: ir.Ref(p.name, p.type) for p in self.params})
        # a statement whose out= is a scalar, or whose domain= orders the output's dimensions
        # otherwise: gt4py accepts such a program when it is defined and fails when it runs; here
        # the program parses (without that statement) and this error is raised by every call and
        # compile, before anything runs
        self.deferred: ScalarOutputError | DomainOrderError | None = None

    def parse(self) -> ir.Program:
        stmts: list[ir.Apply | ir.ScanApply] = []
        temps: list[ir.Param] = []
        for stmt in self.src.tree.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
                raise self.src.type_error(
                    stmt,
                    "a program body holds only calls of field operators with out=",
                    hint="e.g. lap(a, out=b, domain={I: (1, n - 1)})",
                )
            try:
                new, new_temps = self.statement(stmt.value, f"__tmp{len(stmts)}_")
            except (ScalarOutputError, DomainOrderError) as err:
                self.deferred = self.deferred or err
                continue
            stmts.extend(new)
            temps.extend(new_temps)
        return with_neighbour_temporaries(
            ir.Program(self.src.tree.name, self.params, tuple(stmts), tuple(temps))
        )

    def statement(
        self, call: ast.Call, prefix: str
    ) -> tuple[list[ir.Apply | ir.ScanApply], list[ir.Param]]:
        op = self.builder.resolve(call.func)
        fop: ir.FieldOperator | None = getattr(op, "__stencilkit_operator__", None)
        if fop is None:
            raise self.src.type_error(
                call.func, f"'{ast.unparse(call.func)}' is not a field operator or scan operator"
            )
        if any(k.arg is None for k in call.keywords):
            raise self.src.type_error(call, "** unpacking is not supported in a program statement")
        kw = {k.arg: k.value for k in call.keywords if k.arg is not None}
        if "out" not in kw:
            raise self.src.type_error(
                call,
                f"Invalid call to '{fop.name}'.\nMissing required keyword argument 'out'.",
                hint=f"the call of {fop.name} needs out=: {fop.name}(..., out=result)",
            )
        if any(isinstance(a, ast.Starred) for a in call.args):
            raise self.src.type_error(
                call, "*args unpacking is not supported in a program statement"
            )
        params = (
            fop.params[1:] if getattr(op, "__stencilkit_scan__", None) is not None else fop.params
        )
        given = {k: v for k, v in kw.items() if k not in ("out", "domain")}
        try:
            nodes = order_arguments([p.name for p in params], list(call.args), given, fop.name)
        except TypingError as err:
            raise self.src.type_error(call, err.message, err.hint) from None
        args = [self.builder.build(a) for a in nodes]
        targets = TargetParser(self.src, self.builder)
        tree = targets.outputs(kw["out"])
        outs = leaves(tree)
        domains = (
            targets.domains(kw["domain"], tree) if "domain" in kw else [t.domain for t in outs]
        )
        if "domain" in kw:
            check_domain_order(self.src, kw["domain"], outs, domains)
        return build_apply(
            op, args, tuple(t.ref for t in outs), domains, self.src, call, self.builder, prefix
        )


def order_arguments(
    names: list[str], args: list[Any], kwargs: dict[str, Any], callee: str
) -> list[Any]:
    """``args`` and ``kwargs`` in the order of the parameters ``names``; gt4py's errors."""
    problems = []
    if len(args) > len(names):
        problems.append(
            f"Function takes {len(names)} positional arguments, but {len(args)} were given."
        )
    values: dict[str, Any] = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            problems.append(f"Got unexpected keyword argument '{k}'.")
        elif k in values:
            problems.append(f"Got multiple values for argument '{k}'.")
        else:
            values[k] = v
    missing = [n for n in names if n not in values]
    if missing:
        s = "s" if len(missing) > 1 else ""
        problems.append(
            f"Missing {len(missing)} required positional argument{s}: "
            + ", ".join(f"'{n}'" for n in missing)
        )
    if problems:
        raise TypingError(
            f"Invalid argument types in call to '{callee}'.\n  " + "\n  ".join(problems)
        )
    return [values[n] for n in names]


class ArgCheck(Protocol):
    """Checks one argument of an operator call against the parameter it is given for (an
    ``ExprBuilder`` in a program body; the argument types themselves in a direct call)."""

    def check_arg(self, node: Any, arg: ir.Expr, p: ir.Param, callee: str) -> ir.Expr: ...


def build_apply(
    op: Any,
    args: list[ir.Expr],
    outs: tuple[ir.Ref, ...],
    domains: Sequence[tuple[ir.DomainRange, ...]],
    src: SourceFunction,
    node: ast.AST,
    builder: ArgCheck,
    prefix: str = "__tmp",
    may_alias: bool = False,
) -> tuple[list[ir.Apply | ir.ScanApply], list[ir.Param]]:
    """The statements that evaluate ``op(*args)`` into ``outs``, each over its domain in
    ``domains`` (empty: its whole field), and the temporaries they write (named ``prefix0``,
    ``prefix1``...). The operator is evaluated once, from the values before the statement;
    ``may_alias``: an output may also be passed as an argument (direct calls)."""
    fop: ir.FieldOperator = op.__stencilkit_operator__
    scan = getattr(op, "__stencilkit_scan__", None)
    params = fop.params[1:] if scan is not None else fop.params
    if len(args) != len(params):
        raise src.type_error(node, f"{fop.name}() takes {len(params)} arguments, got {len(args)}")
    try:
        if scan is not None:
            expr: ir.Expr = scan_call(fop, scan, args)
        else:
            mapping = {
                p.name: builder.check_arg(node, a, p, fop.name) for p, a in zip(params, args)
            }
            expr = substitute(fop.body, dict(mapping))
        values = flatten_value(expr)
        if len(values) != len(outs):
            raise src.type_error(
                node,
                f"{fop.name} returns {len(values)} value(s) but out= names {len(outs)} field(s)",
            )
        for v, o in zip(values, outs):
            _check_out(src, node, v.type, o)
        where = str(src.loc(node))
        dims = {frozenset(ir.field_dims(o.type)) for o in outs}
        if len(dims) == 1 and all(d == domains[0] for d in domains):
            stmts, temps = statements(expr, outs, domains[0], fop.name, where, prefix)
        else:
            stmts, temps = per_output_statements(
                expr, outs, domains, fop.name, where, prefix, may_alias
            )
        return in_place(stmts, temps, prefix)
    except RewriteError as err:  # TypingError is one
        raise src.type_error(node, err.message, err.hint) from None


def _check_out(src: SourceFunction, node: ast.AST, vt: TypeSpec, o: ir.Ref) -> None:
    ot = o.type
    assert isinstance(ot, FieldType)
    vdims = vt.dims if isinstance(vt, FieldType) else ()
    vdtype = vt.dtype if isinstance(vt, FieldType | ScalarType) else "?"
    if vdtype != ot.dtype:
        raise src.type_error(
            node,
            f"result of dtype {vdtype} cannot be written to '{o.name}' of dtype {ot.dtype}",
            hint="convert with astype(...) in the operator",
        )
    if not set(vdims) <= set(ot.dims):
        raise src.type_error(
            node,
            f"result over [{', '.join(map(str, vdims))}] cannot be written to '{o.name}'"
            f" over [{', '.join(map(str, ot.dims))}]",
        )
    if set(vdims) != set(ot.dims):
        raise src.type_error(
            node,
            f"result over [{', '.join(map(str, vdims))}] does not cover all dimensions"
            f" of '{o.name}' [{', '.join(map(str, ot.dims))}]",
            hint="use broadcast(value, (dims...)) to extend it",
        )
