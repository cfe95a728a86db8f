"""Python expression AST -> typed operator-level IR."""

from __future__ import annotations

import ast
import builtins as py_builtins
import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.dims import Dimension
from ..core.dtypes import dtype_name, is_bool, is_integral
from ..core.errors import UndefinedNameError
from ..core.named_collections import NamedCollectionType, is_collection_class
from ..core.suggest import did_you_mean
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec
from ..ir import nodes as ir
from ..ir.ops import BINARY_OPS, UNARY_OPS
from ..ir.visit import substitute
from .annotations import collection_type as _collection_type
from .builtin_calls import BuiltinCalls
from .builtins import Builtin
from .scans import scan_call
from .shifts import ShiftCalls, int_literal
from .source import SourceFunction
from .typing_rules import (
    TypingError,
    binop_type,
    dims_of,
    literal_value,
    make_type,
    unary_type,
    unify_operands,
)

_PY_TO_BUILTIN = {py_builtins.abs: "abs", py_builtins.min: "minimum", py_builtins.max: "maximum"}


#: The dtype of an index along a dimension (``K`` in ``K == 0``); the loops count in int64.
INDEX_DTYPE = "int64"


def literal(value: Any) -> ir.Literal:
    if isinstance(value, bool | np.bool_):
        return ir.Literal(bool(value), ScalarType("bool"))
    if isinstance(value, np.generic):
        return ir.Literal(value.item(), ScalarType(dtype_name(value.dtype)))
    if isinstance(value, int):  # int32, or int64 where int32 cannot hold it (gt4py's rule)
        if not -(2**63) <= value < 2**63:
            raise OverflowError(f"the integer constant {value} does not fit in int64")
        wide = not -(2**31) <= value < 2**31
        return ir.Literal(value, ScalarType("int64" if wide else "int32"), weak=True)
    if isinstance(value, float):
        return ir.Literal(value, ScalarType("float64"), weak=True)
    raise TypeError(f"{value!r} cannot be used as a constant")


def with_names(t: TypeSpec, like: TypeSpec) -> TypeSpec:
    """``t`` with the collection names of the structurally equal type ``like`` (recursively)."""
    if not (
        isinstance(t, TupleType) and isinstance(like, TupleType) and len(t.types) == len(like.types)
    ):
        return t
    types = tuple(with_names(a, b) for a, b in zip(t.types, like.types))
    if isinstance(like, NamedCollectionType):
        return NamedCollectionType(types, like.names, like.cls)
    return TupleType(types)


def _fits(actual: TypeSpec, declared: TypeSpec) -> bool:
    if isinstance(actual, FieldType) and isinstance(declared, FieldType):
        return set(actual.dims) == set(declared.dims) and actual.dtype == declared.dtype
    if isinstance(actual, TupleType) and isinstance(declared, TupleType):
        return len(actual.types) == len(declared.types) and all(
            map(_fits, actual.types, declared.types)
        )
    return actual == declared


class ExprBuilder(ShiftCalls, BuiltinCalls):
    """Builds IR for expressions of one function; ``symbols`` maps local names to IR."""

    def __init__(self, src: SourceFunction, symbols: dict[str, ir.Expr]) -> None:
        self.src = src
        self.symbols = symbols

    # ------------------------------------------------------------------ helpers
    def error(self, node: ast.AST, message: str, hint: str = "") -> Exception:
        return self.src.type_error(node, message, hint)

    def resolve(self, node: ast.expr) -> Any:
        """The Python value of a global name or attribute chain (``gtx.float64``)."""
        if isinstance(node, ast.Name):
            if node.id in self.src.names:
                return self.src.names[node.id]
            raise self.undefined(node)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            try:
                return getattr(base, node.attr)
            except AttributeError:
                raise self.error(
                    node, f"{ast.unparse(node.value)} has no attribute '{node.attr}'"
                ) from None
        raise self.error(node, f"'{ast.unparse(node)}' is not a name this stencil can use")

    def undefined(self, node: ast.Name, kinds: tuple[type, ...] = ()) -> UndefinedNameError:
        """gt4py's "Undeclared symbol" for ``node``, with the nearest name that exists (of
        ``kinds`` where given: the dimensions and offsets for an offset) as the hint."""
        names = [*self.symbols, *self.src.names]
        if kinds:
            names = [n for n, v in self.src.names.items() if isinstance(v, kinds)]
        return UndefinedNameError(
            f"Undeclared symbol '{node.id}'.", self.src.loc(node), did_you_mean(node.id, names)
        )

    def wrap(self, node: ast.AST, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except TypingError as err:
            raise self.error(node, err.message, err.hint) from None

    # ------------------------------------------------------------------ dispatch
    def build(self, node: ast.expr) -> ir.Expr:
        method: Callable[[ast.expr], ir.Expr] | None = getattr(
            self, f"_{type(node).__name__}", None
        )
        if method is None:
            raise self.src.unsupported(
                node, f"'{ast.unparse(node)}': this Python construct is not part of the DSL"
            )
        return method(node)

    def _Constant(self, node: ast.Constant) -> ir.Expr:
        try:
            return literal(node.value)
        except OverflowError as err:
            raise self.error(node, str(err)) from None
        except TypeError:
            raise self.error(
                node, f"the constant {node.value!r} is not a number or boolean"
            ) from None

    def _Name(self, node: ast.Name) -> ir.Expr:
        if node.id in self.symbols:
            return self.symbols[node.id]
        value = self.resolve(node)
        return self._constant_value(node, value)

    def _Attribute(self, node: ast.Attribute) -> ir.Expr:
        if self._is_local(node.value):
            return self._member(node, self.build(node.value))
        return self._constant_value(node, self.resolve(node))

    def _is_local(self, node: ast.expr) -> bool:
        """Whether ``node`` is a value of this function (``w``, ``w.u``, ``f(x).total``) rather
        than a global name or attribute chain (``gtx.float64``)."""
        while isinstance(node, ast.Attribute):
            node = node.value
        return not isinstance(node, ast.Name) or node.id in self.symbols

    def _member(self, node: ast.Attribute, base: ir.Expr) -> ir.Expr:
        """``w.u``: an element of a named collection."""
        t = base.type
        if not isinstance(t, NamedCollectionType):
            raise self.error(
                node, f"'{ast.unparse(node.value)}' is a {t}, which has no attribute '{node.attr}'"
            )
        if node.attr not in t.names:
            raise self.error(node, f"{t} has no element '{node.attr}'")
        i = t.names.index(node.attr)
        return base.elems[i] if isinstance(base, ir.MakeTuple) else ir.TupleGet(base, i, t.types[i])

    def _construct(self, node: ast.Call, cls: type) -> ir.Expr:
        """``Polar(angle=a, speed=s)``: a named collection value."""
        declared = self.wrap(node, _collection_type, cls)
        arg_nodes = self.call_arguments(node, cls.__name__, list(declared.names))
        elems = []
        for name, t, a in zip(declared.names, declared.types, arg_nodes):
            e = self.build(a)
            if isinstance(e, ir.Literal) and e.weak and isinstance(t, ScalarType):
                e = ir.Literal(self.wrap(a, literal_value, e.value, t.dtype), t)
            if not _fits(e.type, t):
                raise self.error(a, f"element '{name}' of {cls.__name__} must be {t}, got {e.type}")
            elems.append(e)
        return ir.MakeTuple(
            tuple(elems), NamedCollectionType(tuple(e.type for e in elems), declared.names, cls)
        )

    def _constant_value(self, node: ast.expr, value: Any) -> ir.Expr:
        if isinstance(value, bool | int | float | np.generic):
            try:
                return literal(value)
            except OverflowError as err:
                raise self.error(node, str(err)) from None
        raise self.error(
            node,
            f"'{ast.unparse(node)}' is a {type(value).__name__}, which cannot be used as a value here",
            hint="only fields, scalars, and global numeric constants can be used in expressions",
        )

    def _Tuple(self, node: ast.Tuple) -> ir.Expr:
        elems = tuple(self.build(e) for e in node.elts)
        return ir.MakeTuple(elems, TupleType(tuple(e.type for e in elems)))

    def _Subscript(self, node: ast.Subscript) -> ir.Expr:
        if isinstance(node.value, ast.Name | ast.Attribute) and not self._is_local(node.value):
            value = self.resolve(node.value)
            if isinstance(value, list | dict | set | bytearray | np.ndarray):
                raise self.error(
                    node.value,
                    f"'{ast.unparse(node.value)}' is a {type(value).__name__}, a mutable"
                    " object: the stencil would keep the value it had when it was compiled",
                    hint="use a tuple or a module-level constant, or pass the value as a parameter",
                )
            at = int_literal(node.slice)
            if isinstance(value, tuple) and at is not None:
                try:
                    return self._constant_value(node, value[at])  # a global constant tuple
                except (IndexError, TypeError):
                    raise self.error(node, f"'{ast.unparse(node)}' is not a valid index") from None
        local = self._named_index(node.slice)
        base = self.build(node.value)
        if local is not None:
            return self._local_select(node, base, *local)
        if not isinstance(base.type, TupleType):
            raise self.error(
                node, "only tuples can be indexed", hint="to shift a field write a(I + 1)"
            )
        at = int_literal(node.slice)  # t[0], t[-1]
        if at is None:
            raise self.error(node, "tuple indices must be integer constants")
        n = len(base.type.types)
        if not -n <= at < n:
            raise self.error(node, f"tuple index {at} out of range for a tuple of {n}")
        i = at % n
        if isinstance(base, ir.MakeTuple):
            return base.elems[i]
        return ir.TupleGet(base, i, base.type.types[i])

    def _BinOp(self, node: ast.BinOp) -> ir.Expr:
        op = BINARY_OPS.get(type(node.op).__name__)
        if op is None:
            raise self.error(node, f"operator {type(node.op).__name__} is not supported")
        left, right = self.build(node.left), self.build(node.right)
        left, right, t = self.wrap(node, binop_type, op, left, right)
        return ir.BinOp(op, left, right, t)

    def _BoolOp(self, node: ast.BoolOp) -> ir.Expr:
        op = BINARY_OPS[type(node.op).__name__]
        result = self.build(node.values[0])
        for v in node.values[1:]:
            right = self.build(v)
            left, right, t = self.wrap(node, binop_type, op, result, right)
            result = ir.BinOp(op, left, right, t)
        return result

    def _Compare(self, node: ast.Compare) -> ir.Expr:
        """``a < b``; a chain ``a < b <= c`` is ``(a < b) & (b <= c)`` (gt4py's unchaining)."""
        operands = [self._compared(n) for n in (node.left, *node.comparators)]
        result: ir.Expr | None = None
        for i, cmp in enumerate(node.ops):
            pair = self._comparison(node, BINARY_OPS[type(cmp).__name__], *operands[i : i + 2])
            if result is None:
                result = pair
            else:
                result, pair, t = self.wrap(node, binop_type, "&", result, pair)
                result = ir.BinOp("&", result, pair, t)
        assert result is not None
        return result

    def _comparison(self, node: ast.Compare, op: str, left: ir.Expr, right: ir.Expr) -> ir.Expr:
        if isinstance(left, ir.DimIndex) or isinstance(right, ir.DimIndex):
            left, right = self._index_operand(node, left), self._index_operand(node, right)
        left, right, t = self.wrap(node, binop_type, op, left, right)
        return ir.BinOp(op, left, right, t)

    def _compared(self, node: ast.expr) -> ir.Expr:
        """An operand of a comparison; a dimension stands for the index along it (``K == 0``)."""
        if isinstance(node, ast.Name | ast.Attribute) and not self._is_local(node):
            value = self.resolve(node)
            if isinstance(value, Dimension):
                return ir.DimIndex(value, FieldType((value,), INDEX_DTYPE))
        return self.build(node)

    def _index_operand(self, node: ast.AST, e: ir.Expr) -> ir.Expr:
        """Compare indices as int64: integer scalars of other widths are converted."""
        if isinstance(e, ir.DimIndex) or (isinstance(e, ir.Literal) and e.weak):
            return e
        if not (isinstance(e.type, ScalarType) and is_integral(e.type.dtype)):
            raise self.error(
                node,
                f"an index can be compared only with integer scalars, not {e.type}",
                hint="e.g. concat_where(K == 0, a, b) or concat_where(I < n - 1, a, b)",
            )
        if isinstance(e, ir.Literal):
            return ir.Literal(int(e.value), ScalarType(INDEX_DTYPE))
        return (
            e if e.type.dtype == INDEX_DTYPE else ir.Call("astype", (e,), ScalarType(INDEX_DTYPE))
        )

    def _UnaryOp(self, node: ast.UnaryOp) -> ir.Expr:
        op = UNARY_OPS[type(node.op).__name__]
        operand = self.build(node.operand)
        if isinstance(operand, ir.Literal) and op in ("-", "+"):
            value = -operand.value if op == "-" else operand.value
            return ir.Literal(value, operand.type, operand.weak)
        if (
            op == "~"
            and isinstance(operand.type, FieldType | ScalarType)
            and is_bool(operand.type.dtype)
        ):
            op = "not" if not isinstance(operand.type, FieldType) else "~"
        t = self.wrap(node, unary_type, op, operand)
        return ir.UnaryOp(op, operand, t)

    def _IfExp(self, node: ast.IfExp) -> ir.Expr:
        cond = self.build(node.test)
        if not (isinstance(cond.type, ScalarType) and is_bool(cond.type.dtype)):
            raise self.error(
                node.test,
                "the condition of 'x if c else y' must be a scalar boolean",
                hint="for element-wise choice on fields use where(mask, x, y)",
            )
        t, f = self.build(node.body), self.build(node.orelse)
        if t.type != f.type:
            t, f, _ = self.wrap(node, unify_operands, t, f)
            if t.type != f.type:
                raise self.error(
                    node, f"both branches must have the same type, got {t.type} and {f.type}"
                )
        return ir.IfElse(cond, t, f, t.type)

    # ------------------------------------------------------------------ calls
    def _Call(self, node: ast.Call) -> ir.Expr:
        func = node.func
        if self._is_local(func):
            target = self.build(func)
            return self._shift(node, target)
        value = self.resolve(func)
        if is_collection_class(value):
            return self._construct(node, value)
        if isinstance(value, Builtin):
            return self._builtin(node, value.name)
        if value in _PY_TO_BUILTIN:
            return self._builtin(node, _PY_TO_BUILTIN[value])
        op_ir = getattr(value, "__stencilkit_operator__", None)
        if op_ir is not None:
            return self._inline(node, value)
        if isinstance(value, type) and issubclass(value, np.generic | float | int | bool):
            return self._cast(node, dtype_name(value))  # int(...) is int64, as in gt4py
        raise self.error(
            node,
            f"'{ast.unparse(func)}' cannot be called inside a stencil",
            hint="call fields (shifts), field operators, or stencilkit builtins",
        )

    def _args(self, node: ast.Call, n: int, name: str) -> list[ir.Expr]:
        if node.keywords or len(node.args) != n:
            raise self.error(node, f"{name}() takes {n} positional argument{'s' * (n != 1)}")
        return [self.build(a) for a in node.args]

    def _cast(self, node: ast.Call, dtype: str) -> ir.Expr:
        if (
            len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            # wpfloat("0.5"): the text is parsed in the target precision (rounded once)
            text = node.args[0].value
            try:
                value = (
                    np.dtype(dtype).type(text.strip()) if dtype != "bool" else np.bool_(float(text))
                )
            except (ValueError, TypeError, OverflowError):
                raise self.error(node, f"'{text}' is not a {dtype} literal") from None
            return ir.Literal(value.item(), ScalarType(dtype))
        (arg,) = self._args(node, 1, dtype)
        if isinstance(arg, ir.Literal):
            return ir.Literal(self.wrap(node, literal_value, arg.value, dtype), ScalarType(dtype))
        return ir.Call("astype", (arg,), make_type(dims_of(arg.type), dtype))

    def _inline(self, node: ast.Call, op: Any) -> ir.Expr:
        fop: ir.FieldOperator = op.__stencilkit_operator__
        scan = getattr(op, "__stencilkit_scan__", None)
        params = fop.params[1:] if scan is not None else fop.params
        arg_nodes = self.call_arguments(node, fop.name, [p.name for p in params])
        if scan is not None:
            call = self.wrap(node, scan_call, fop, scan, [self.build(a) for a in arg_nodes])
            named: ir.Expr = dataclasses.replace(
                call, type=with_names(call.type, fop.params[0].type)
            )
            return named
        mapping: dict[str, ir.Node] = {}
        for p, a in zip(params, arg_nodes):
            arg = self.build(a)
            mapping[p.name] = self.check_arg(a, arg, p, fop.name)
        return substitute(fop.body, mapping)

    def call_arguments(self, node: ast.Call, callee: str, names: list[str]) -> list[ast.expr]:
        """The argument expressions of ``node`` in parameter order: positional ones first, then
        keywords in any order (gt4py's rules and messages)."""
        problems: list[str] = []
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            problems.append("Unpacking (*args, **kwargs) is not supported in calls.")
        given: dict[str, ast.expr] = {}
        if len(node.args) > len(names):
            problems.append(f"{callee}() takes {len(names)} arguments, got {len(node.args)}.")
        for name, a in zip(names, node.args):
            given[name] = a
        for k in node.keywords:
            if k.arg is None:
                continue
            if k.arg not in names:
                problems.append(f"Got unexpected keyword argument '{k.arg}'.")
            elif k.arg in given:
                problems.append(f"Got multiple values for argument '{k.arg}'.")
            else:
                given[k.arg] = k.value
        missing = [n for n in names if n not in given]
        if missing and not problems:
            problems.append(
                f"Missing {len(missing)} required positional argument{'s' * (len(missing) != 1)}: "
                + ", ".join(f"'{n}'" for n in missing)
            )
        if problems:
            raise self.error(
                node, f"Invalid argument types in call to '{callee}'.\n" + "\n".join(problems)
            )
        return [given[n] for n in names]

    def check_arg(self, node: ast.AST, arg: ir.Expr, p: ir.Param, callee: str) -> ir.Expr:
        pt = p.type
        if isinstance(arg, ir.Literal) and arg.weak and isinstance(pt, ScalarType):
            return ir.Literal(self.wrap(node, literal_value, arg.value, pt.dtype), pt)
        if (
            isinstance(pt, FieldType)
            and not pt.dims
            and isinstance(arg.type, ScalarType)
            and arg.type.dtype == pt.dtype
        ):
            # a scalar of exactly the dtype serves as a 0-d field
            return ir.Literal(arg.value, arg.type) if isinstance(arg, ir.Literal) else arg
        if arg.type != p.type:
            raise self.error(
                node, f"argument '{p.name}' of {callee} must be {p.type}, got {arg.type}"
            )
        return arg
