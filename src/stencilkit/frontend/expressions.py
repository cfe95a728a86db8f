"""Python expression AST -> typed operator-level IR."""

from __future__ import annotations

import ast
import builtins as py_builtins
from typing import Any

import numpy as np

from ..core.dims import CartesianOffset, Dimension, DimensionKind, FieldOffset, FieldOffsetElement
from ..core.dtypes import dtype_name, is_bool, is_float, is_integral
from ..core.types import FieldType, ScalarType, TupleType, canonical_dims
from ..ir import nodes as ir
from ..ir.ops import BINARY_OPS, MATH_BUILTINS, REDUCTIONS, UNARY_OPS
from ..ir.visit import substitute, walk
from .builtins import Builtin
from .scans import scan_call
from .source import SourceFunction
from .typing_rules import (
    TypingError,
    binop_type,
    dims_of,
    dtype_of,
    make_type,
    unary_type,
    unify_operands,
)

_PY_TO_BUILTIN = {py_builtins.abs: "abs", py_builtins.min: "minimum", py_builtins.max: "maximum"}


#: The dtype of an index along a dimension (``K`` in ``K == 0``); the loops count in int64.
INDEX_DTYPE = "int64"


def _is_pair(node: ast.expr) -> bool:
    return isinstance(node, ast.Tuple) and len(node.elts) == 2


def literal(value: Any) -> ir.Literal:
    if isinstance(value, bool | np.bool_):
        return ir.Literal(bool(value), ScalarType("bool"))
    if isinstance(value, np.generic):
        return ir.Literal(value.item(), ScalarType(dtype_name(value.dtype)))
    if isinstance(value, int):
        return ir.Literal(value, ScalarType("int32"), weak=True)
    if isinstance(value, float):
        return ir.Literal(value, ScalarType("float64"), weak=True)
    raise TypeError(f"{value!r} cannot be used as a constant")


class ExprBuilder:
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
            raise self.error(node, f"name '{node.id}' is not defined")
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            try:
                return getattr(base, node.attr)
            except AttributeError:
                raise self.error(node, f"{ast.unparse(node.value)} has no attribute '{node.attr}'") from None
        raise self.error(node, f"'{ast.unparse(node)}' is not a name this stencil can use")

    def wrap(self, node: ast.AST, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except TypingError as err:
            raise self.error(node, err.message, err.hint) from None

    # ------------------------------------------------------------------ dispatch
    def build(self, node: ast.expr) -> ir.Expr:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise self.error(node, f"'{ast.unparse(node)}': this Python construct is not part of the DSL")
        return method(node)  # type: ignore[no-any-return]

    def _Constant(self, node: ast.Constant) -> ir.Expr:
        try:
            return literal(node.value)
        except TypeError:
            raise self.error(node, f"the constant {node.value!r} is not a number or boolean") from None

    def _Name(self, node: ast.Name) -> ir.Expr:
        if node.id in self.symbols:
            return self.symbols[node.id]
        value = self.resolve(node)
        return self._constant_value(node, value)

    def _Attribute(self, node: ast.Attribute) -> ir.Expr:
        return self._constant_value(node, self.resolve(node))

    def _constant_value(self, node: ast.expr, value: Any) -> ir.Expr:
        if isinstance(value, bool | int | float | np.generic):
            return literal(value)
        raise self.error(
            node,
            f"'{ast.unparse(node)}' is a {type(value).__name__}, which cannot be used as a value here",
            hint="only fields, scalars, and global numeric constants can be used in expressions",
        )

    def _Tuple(self, node: ast.Tuple) -> ir.Expr:
        elems = tuple(self.build(e) for e in node.elts)
        return ir.MakeTuple(elems, TupleType(tuple(e.type for e in elems)))

    def _Subscript(self, node: ast.Subscript) -> ir.Expr:
        if isinstance(node.value, ast.Name | ast.Attribute) and not (
                isinstance(node.value, ast.Name) and node.value.id in self.symbols):
            value = self.resolve(node.value)
            if isinstance(value, tuple | list) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
                try:
                    return self._constant_value(node, value[node.slice.value])  # a global constant tuple
                except (IndexError, TypeError):
                    raise self.error(node, f"'{ast.unparse(node)}' is not a valid index") from None
        base = self.build(node.value)
        if not isinstance(base.type, TupleType):
            raise self.error(node, "only tuples can be indexed", hint="to shift a field write a(I + 1)")
        idx = node.slice
        if not (isinstance(idx, ast.Constant) and isinstance(idx.value, int)):
            raise self.error(node, "tuple indices must be integer constants")
        n = len(base.type.types)
        if not -n <= idx.value < n:
            raise self.error(node, f"tuple index {idx.value} out of range for a tuple of {n}")
        i = idx.value % n
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
        if len(node.ops) != 1:
            raise self.error(node, "chained comparisons are not supported", hint="write (a < b) & (b < c)")
        op = BINARY_OPS[type(node.ops[0]).__name__]
        left, right = self._compared(node.left), self._compared(node.comparators[0])
        if isinstance(left, ir.DimIndex) or isinstance(right, ir.DimIndex):
            left, right = self._index_operand(node, left), self._index_operand(node, right)
        left, right, t = self.wrap(node, binop_type, op, left, right)
        return ir.BinOp(op, left, right, t)

    def _compared(self, node: ast.expr) -> ir.Expr:
        """An operand of a comparison; a dimension stands for the index along it (``K == 0``)."""
        if isinstance(node, ast.Name | ast.Attribute) and not (isinstance(node, ast.Name) and node.id in self.symbols):
            value = self.resolve(node)
            if isinstance(value, Dimension):
                return ir.DimIndex(value, FieldType((value,), INDEX_DTYPE))
        return self.build(node)

    def _index_operand(self, node: ast.AST, e: ir.Expr) -> ir.Expr:
        """Compare indices as int64: integer scalars of other widths are converted."""
        if isinstance(e, ir.DimIndex) or (isinstance(e, ir.Literal) and e.weak):
            return e
        if not (isinstance(e.type, ScalarType) and is_integral(e.type.dtype)):
            raise self.error(node, f"an index can be compared only with integer scalars, not {e.type}",
                             hint="e.g. concat_where(K == 0, a, b) or concat_where(I < n - 1, a, b)")
        if isinstance(e, ir.Literal):
            return ir.Literal(int(e.value), ScalarType(INDEX_DTYPE))
        return e if e.type.dtype == INDEX_DTYPE else ir.Call("astype", (e,), ScalarType(INDEX_DTYPE))

    def _UnaryOp(self, node: ast.UnaryOp) -> ir.Expr:
        op = UNARY_OPS[type(node.op).__name__]
        operand = self.build(node.operand)
        if isinstance(operand, ir.Literal) and op in ("-", "+"):
            value = -operand.value if op == "-" else operand.value
            return ir.Literal(value, operand.type, operand.weak)
        if op == "~" and isinstance(operand.type, FieldType | ScalarType) and is_bool(operand.type.dtype):
            op = "not" if not isinstance(operand.type, FieldType) else "~"
        t = self.wrap(node, unary_type, op, operand)
        return ir.UnaryOp(op, operand, t)

    def _IfExp(self, node: ast.IfExp) -> ir.Expr:
        cond = self.build(node.test)
        if not (isinstance(cond.type, ScalarType) and is_bool(cond.type.dtype)):
            raise self.error(node.test, "the condition of 'x if c else y' must be a scalar boolean",
                             hint="for element-wise choice on fields use where(mask, x, y)")
        t, f = self.build(node.body), self.build(node.orelse)
        if t.type != f.type:
            t, f, _ = self.wrap(node, unify_operands, t, f)
            if t.type != f.type:
                raise self.error(node, f"both branches must have the same type, got {t.type} and {f.type}")
        return ir.IfElse(cond, t, f, t.type)

    # ------------------------------------------------------------------ calls
    def _Call(self, node: ast.Call) -> ir.Expr:
        func = node.func
        if (isinstance(func, ast.Name) and func.id in self.symbols) or not isinstance(func, ast.Name | ast.Attribute):
            target = self.build(func)
            return self._shift(node, target)
        value = self.resolve(func)
        if isinstance(value, Builtin):
            return self._builtin(node, value.name)
        if value in _PY_TO_BUILTIN:
            return self._builtin(node, _PY_TO_BUILTIN[value])
        op_ir = getattr(value, "__stencilkit_operator__", None)
        if op_ir is not None:
            return self._inline(node, value)
        if isinstance(value, type) and issubclass(value, np.generic | float | int | bool):
            return self._cast(node, dtype_name(value if issubclass(value, np.generic) else
                                               {float: np.float64, int: np.int32, bool: np.bool_}[value]))
        raise self.error(node, f"'{ast.unparse(func)}' cannot be called inside a stencil",
                         hint="call fields (shifts), field operators, or stencilkit builtins")

    def _args(self, node: ast.Call, n: int, name: str) -> list[ir.Expr]:
        if node.keywords or len(node.args) != n:
            raise self.error(node, f"{name}() takes {n} positional argument{'s' * (n != 1)}")
        return [self.build(a) for a in node.args]

    def _cast(self, node: ast.Call, dtype: str) -> ir.Expr:
        (arg,) = self._args(node, 1, dtype)
        if isinstance(arg, ir.Literal):
            return ir.Literal(np.dtype(dtype).type(arg.value).item(), ScalarType(dtype))
        return ir.Call("astype", (arg,), make_type(dims_of(arg.type), dtype))

    def _shift(self, node: ast.Call, target: ir.Expr) -> ir.Expr:
        if not isinstance(target.type, FieldType):
            raise self.error(node, f"'{ast.unparse(node.func)}' is a {target.type}, not a field; only fields can be shifted")
        if len(node.args) != 1 or node.keywords:
            raise self.error(node, "a shift takes one offset, e.g. a(I + 1) or c(E2C[0])")
        arg = node.args[0]
        result = target
        by = self._offset(arg)
        dims = result.type.dims  # type: ignore[union-attr]
        if isinstance(by, ir.CartesianShift):
            if by.dim not in dims:
                raise self.error(arg, f"cannot shift along {by.dim}: the field has dimensions [{', '.join(map(str, dims))}]")
            return ir.Shift(result, by, result.type)
        if by.source not in dims:
            raise self.error(
                arg, f"offset {by.offset} reads a field over {by.source}, but this field has dimensions"
                f" [{', '.join(map(str, dims))}]")
        new = [d for d in dims if d != by.source]
        new.append(by.target[0])
        if by.index is None and len(by.target) == 2:
            new.append(by.target[1])
        if len(set(new)) != len(new):
            raise self.error(arg, f"shifting by {by.offset} would repeat a dimension")
        t = FieldType(canonical_dims(tuple(new)), result.type.dtype)  # type: ignore[union-attr]
        return ir.Shift(result, by, t)

    def _offset(self, node: ast.expr) -> ir.CartesianShift | ir.NeighborShift:
        try:
            value = self.resolve(node) if isinstance(node, ast.Name | ast.Attribute) else None
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
                dim = self.resolve(node.left)
                amount = node.right.value if isinstance(node.right, ast.Constant) else None
                if isinstance(dim, Dimension) and isinstance(amount, int):
                    value = CartesianOffset(dim, amount if isinstance(node.op, ast.Add) else -amount)
            elif isinstance(node, ast.Subscript):
                base = self.resolve(node.value)
                index = node.slice.value if isinstance(node.slice, ast.Constant) else None
                if isinstance(base, FieldOffset) and isinstance(index, int):
                    value = base[index]
        except Exception:
            value = None
        if isinstance(value, CartesianOffset):
            return ir.CartesianShift(value.dim, value.offset)
        if isinstance(value, FieldOffsetElement) and value.offset.is_cartesian:
            return ir.CartesianShift(value.offset.source, value.index)
        if isinstance(value, FieldOffsetElement):
            fo = value.offset
            if len(fo.target) != 2:
                raise self.error(node, f"{fo.value} has no local dimension to index")
            return ir.NeighborShift(fo.value, fo.source, fo.target, value.index)
        if isinstance(value, FieldOffset) and not value.is_cartesian:
            return ir.NeighborShift(value.value, value.source, value.target, None)
        if isinstance(value, FieldOffset):
            raise self.error(node, f"the Cartesian offset {value.value} needs an amount, e.g. {value.value}[1]")
        raise self.error(node, f"'{ast.unparse(node)}' is not an offset",
                         hint="write I + 1, I - 2, Koff[1], E2C or E2C[0]")

    def _inline(self, node: ast.Call, op: Any) -> ir.Expr:
        fop: ir.FieldOperator = op.__stencilkit_operator__
        scan = getattr(op, "__stencilkit_scan__", None)
        if node.keywords:
            raise self.error(node, f"{fop.name}() takes positional arguments only inside a field operator")
        if scan is not None:
            return self.wrap(node, scan_call, fop, scan, [self.build(a) for a in node.args])  # type: ignore[no-any-return]
        if len(node.args) != len(fop.params):
            raise self.error(node, f"{fop.name}() takes {len(fop.params)} arguments, got {len(node.args)}")
        mapping: dict[str, ir.Node] = {}
        for p, a in zip(fop.params, node.args):
            arg = self.build(a)
            mapping[p.name] = self.check_arg(a, arg, p, fop.name)
        return substitute(fop.body, mapping)

    def check_arg(self, node: ast.AST, arg: ir.Expr, p: ir.Param, callee: str) -> ir.Expr:
        pt = p.type
        if isinstance(arg, ir.Literal) and arg.weak and isinstance(pt, ScalarType):
            return ir.Literal(np.dtype(pt.dtype).type(arg.value).item(), pt)
        if arg.type != p.type:
            raise self.error(node, f"argument '{p.name}' of {callee} must be {p.type}, got {arg.type}")
        return arg

    def _builtin(self, node: ast.Call, name: str) -> ir.Expr:
        if name in MATH_BUILTINS:
            spec = MATH_BUILTINS[name]
            args = self._args(node, spec.arity, name)
            if spec.arity == 2:
                a, b, _ = self.wrap(node, unify_operands, args[0], args[1])
                args = [a, b]
            dims = canonical_dims(tuple(dict.fromkeys(d for a in args for d in dims_of(a.type))))
            dtype = self.wrap(node, dtype_of, args[0].type)
            if spec.needs_float and not is_float(dtype):
                raise self.error(node, f"{name}() needs a floating-point argument, got {dtype}",
                                 hint=f"convert first: {name}(astype(x, float64))")
            return ir.Call(name, tuple(args), make_type(dims, "bool" if spec.result == "bool" else dtype))
        if name in REDUCTIONS:
            return self._reduction(node, name)
        return getattr(self, f"_builtin_{name}")(node)  # type: ignore[no-any-return]

    def _reduction(self, node: ast.Call, name: str) -> ir.Expr:
        kw = {k.arg: k.value for k in node.keywords}
        if len(node.args) != 1 or set(kw) != {"axis"}:
            raise self.error(node, f"{name}() takes one field and axis=, e.g. {name}(f(E2C), axis=E2CDim)")
        expr = self.build(node.args[0])
        axis = self.resolve(kw["axis"])
        if not isinstance(axis, Dimension) or axis.kind is not DimensionKind.LOCAL:
            raise self.error(kw["axis"], f"axis= of {name}() must be a LOCAL dimension")
        dims = dims_of(expr.type)
        if axis not in dims:
            raise self.error(node, f"{name}() over {axis}, but the argument has dimensions [{', '.join(map(str, dims))}]")
        dtype = self.wrap(node, dtype_of, expr.type)
        return ir.Reduce(REDUCTIONS[name], expr, axis, make_type(tuple(d for d in dims if d != axis), dtype))

    def _builtin_where(self, node: ast.Call) -> ir.Expr:
        mask, t, f = self._args(node, 3, "where")
        if self.wrap(node, dtype_of, mask.type) != "bool":
            raise self.error(node.args[0], f"the mask of where() must be boolean, got {mask.type}")
        return self._select(node, "where", mask, t, f)

    def _select(self, node: ast.Call, fn: str, mask: ir.Expr, t: ir.Expr, f: ir.Expr) -> ir.Expr:
        """``where``/``concat_where`` of values or (nested) tuples, element by element."""
        if isinstance(t.type, TupleType) or isinstance(f.type, TupleType):
            if not (isinstance(t.type, TupleType) and isinstance(f.type, TupleType)) or len(t.type.types) != len(f.type.types):
                raise self.error(node, f"{fn}() on tuples needs two tuples of the same length")
            elems = []
            for i in range(len(t.type.types)):
                ti = t.elems[i] if isinstance(t, ir.MakeTuple) else ir.TupleGet(t, i, t.type.types[i])
                fi = f.elems[i] if isinstance(f, ir.MakeTuple) else ir.TupleGet(f, i, f.type.types[i])
                elems.append(self._select(node, fn, mask, ti, fi))
            return ir.MakeTuple(tuple(elems), TupleType(tuple(e.type for e in elems)))
        t, f, dtype = self.wrap(node, unify_operands, t, f)
        dims = canonical_dims(tuple(dict.fromkeys((*dims_of(mask.type), *dims_of(t.type), *dims_of(f.type)))))
        return ir.Call(fn, (mask, t, f), make_type(dims, dtype))

    def _builtin_astype(self, node: ast.Call) -> ir.Expr:
        if len(node.args) != 2 or node.keywords:
            raise self.error(node, "astype() takes a value and a dtype, e.g. astype(a, float32)")
        value = self.build(node.args[0])
        dtype_obj = self.resolve(node.args[1])
        try:
            dtype = dtype_name(dtype_obj)
        except TypeError:
            raise self.error(node.args[1], f"'{ast.unparse(node.args[1])}' is not a dtype") from None
        if isinstance(value, ir.Literal):
            return ir.Literal(np.dtype(dtype).type(value.value).item(), ScalarType(dtype))
        return ir.Call("astype", (value,), make_type(dims_of(value.type), dtype))

    def _builtin_broadcast(self, node: ast.Call) -> ir.Expr:
        if len(node.args) != 2 or node.keywords or not isinstance(node.args[1], ast.Tuple | ast.List):
            raise self.error(node, "broadcast() takes a value and a tuple of dimensions, e.g. broadcast(a, (I, J, K))")
        value = self.build(node.args[0])
        dims = tuple(self.resolve(e) for e in node.args[1].elts)  # type: ignore[union-attr]
        if not all(isinstance(d, Dimension) for d in dims):
            raise self.error(node.args[1], "broadcast() dimensions must be Dimension objects")
        missing = [d for d in dims_of(value.type) if d not in dims]
        if missing:
            raise self.error(node, f"broadcast() target lacks the argument's dimensions {', '.join(map(str, missing))}")
        dtype = self.wrap(node, dtype_of, value.type)
        if isinstance(value, ir.Literal) and value.weak:
            value = ir.Literal(value.value, value.type)
        return ir.Call("broadcast", (value,), FieldType(canonical_dims(dims), dtype))

    def _builtin_concat_where(self, node: ast.Call) -> ir.Expr:
        if node.keywords or len(node.args) < 2:
            raise self.error(node, "concat_where() takes a condition on indices and two values,"
                             " e.g. concat_where(K == 0, a, b)")
        if len(node.args) == 3 and not _is_pair(node.args[0]):
            mask, t, f = (self.build(a) for a in node.args)
            self._check_index_condition(node.args[0], mask)
            return self._select(node, "concat_where", mask, t, f)
        # concat_where((cond1, value1), (cond2, value2), ..., default)
        *pairs, last = node.args
        if not pairs or not all(_is_pair(p) for p in pairs):
            raise self.error(node, "concat_where() takes (condition, value) pairs followed by a default value")
        result = self.build(last)
        for p in reversed(pairs):
            cond_node, value_node = p.elts  # type: ignore[attr-defined]
            mask = self.build(cond_node)
            self._check_index_condition(cond_node, mask)
            result = self._select(node, "concat_where", mask, self.build(value_node), result)
        return result

    def _check_index_condition(self, node: ast.expr, mask: ir.Expr) -> None:
        ok = dims_of(mask.type) and isinstance(mask.type, FieldType) and mask.type.dtype == "bool"
        for x in walk(mask):
            if (isinstance(x, ir.Ref) and isinstance(x.type, FieldType)) or isinstance(x, ir.Shift | ir.Reduce | ir.ScanCall):
                ok = False
        if not ok:
            raise self.error(node, f"the condition of concat_where() must compare dimensions with integers,"
                             f" got '{ast.unparse(node)}'",
                             hint="e.g. K == 0, (I < 2) | (I >= n - 2); for a boolean field use where()")

