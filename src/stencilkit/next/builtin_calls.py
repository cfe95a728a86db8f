"""The stencilkit builtins called inside an operator: math functions, neighbour reductions,
``where``, ``astype``, ``broadcast`` and ``concat_where``, each typed and checked at the call."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.dims import Dimension, DimensionKind
from ..core.dtypes import dtype_name, is_float
from ..core.named_collections import NamedCollectionType
from ..core.types import FieldType, ScalarType, TupleType, canonical_dims, promote_dims
from ..ir import nodes as ir
from ..ir.ops import MATH_BUILTINS, REDUCTIONS
from ..ir.visit import walk
from .typing_rules import TypingError, dims_of, dtype_of, make_type, unary_type, unify_operands


def _is_pair(node: ast.expr) -> bool:
    return isinstance(node, ast.Tuple) and len(node.elts) == 2


def _astype(value: ir.Expr, dtype: str) -> ir.Expr:
    """``astype`` of a value, or of every element of a (nested) tuple."""
    if isinstance(value.type, TupleType):
        elems = tuple(
            _astype(
                value.elems[i] if isinstance(value, ir.MakeTuple) else ir.TupleGet(value, i, t),
                dtype,
            )
            for i, t in enumerate(value.type.types)
        )
        types = tuple(e.type for e in elems)
        vt = value.type
        return ir.MakeTuple(
            elems,
            NamedCollectionType(types, vt.names, vt.cls)
            if isinstance(vt, NamedCollectionType)
            else TupleType(types),
        )
    if isinstance(value, ir.Literal):
        return ir.Literal(np.dtype(dtype).type(value.value).item(), ScalarType(dtype))
    return ir.Call("astype", (value,), make_type(dims_of(value.type), dtype))


class BuiltinCalls:
    """Builtin calls, mixed into ``ExprBuilder`` (which provides the methods stubbed here)."""

    def error(self, node: ast.AST, message: str, hint: str = "") -> Exception:
        raise NotImplementedError

    def resolve(self, node: ast.expr) -> Any:
        raise NotImplementedError

    def wrap(self, node: ast.AST, fn: Any, *args: Any) -> Any:
        raise NotImplementedError

    def build(self, node: ast.expr) -> ir.Expr:
        raise NotImplementedError

    def _args(self, node: ast.Call, n: int, name: str) -> list[ir.Expr]:
        raise NotImplementedError

    def _builtin(self, node: ast.Call, name: str) -> ir.Expr:
        if name == "neg":  # neg(x) is -x
            (arg,) = self._args(node, 1, name)
            return ir.UnaryOp("-", arg, self.wrap(node, unary_type, "-", arg))
        if name in MATH_BUILTINS:
            spec = MATH_BUILTINS[name]
            args = self._args(node, spec.arity, name)
            if spec.arity == 2:
                a, b, _ = self.wrap(node, unify_operands, args[0], args[1])
                args = [a, b]
            dims = self.wrap(node, _promoted, *(dims_of(a.type) for a in args))
            dtype = self.wrap(node, dtype_of, args[0].type)
            if spec.needs_float and not is_float(dtype):
                raise self.error(
                    node,
                    f"{name}() needs a floating-point argument, got {dtype}",
                    hint=f"convert first: {name}(astype(x, float64))",
                )
            return ir.Call(
                name, tuple(args), make_type(dims, "bool" if spec.result == "bool" else dtype)
            )
        if name in REDUCTIONS:
            return self._reduction(node, name)
        special: Callable[[ast.Call], ir.Expr] = getattr(self, f"_builtin_{name}")
        return special(node)

    def _reduction(self, node: ast.Call, name: str) -> ir.Expr:
        kw = {k.arg: k.value for k in node.keywords}
        if len(node.args) != 1 or set(kw) != {"axis"}:
            raise self.error(
                node, f"{name}() takes one field and axis=, e.g. {name}(f(E2C), axis=E2CDim)"
            )
        expr = self.build(node.args[0])
        axis = self.resolve(kw["axis"])
        if not isinstance(axis, Dimension) or axis.kind is not DimensionKind.LOCAL:
            raise self.error(kw["axis"], f"axis= of {name}() must be a LOCAL dimension")
        dims = dims_of(expr.type)
        if axis not in dims:
            raise self.error(
                node,
                f"{name}() over {axis}, but the argument has dimensions [{', '.join(map(str, dims))}]",
            )
        dtype = self.wrap(node, dtype_of, expr.type)
        return ir.Reduce(
            REDUCTIONS[name], expr, axis, make_type(tuple(d for d in dims if d != axis), dtype)
        )

    def _builtin_where(self, node: ast.Call) -> ir.Expr:
        mask, t, f = self._args(node, 3, "where")
        if self.wrap(node, dtype_of, mask.type) != "bool":
            raise self.error(node.args[0], f"the mask of where() must be boolean, got {mask.type}")
        return self._select(node, "where", mask, t, f)

    def _select(self, node: ast.Call, fn: str, mask: ir.Expr, t: ir.Expr, f: ir.Expr) -> ir.Expr:
        """``where``/``concat_where`` of values or (nested) tuples, element by element."""
        if isinstance(t.type, TupleType) or isinstance(f.type, TupleType):
            if not (isinstance(t.type, TupleType) and isinstance(f.type, TupleType)) or len(
                t.type.types
            ) != len(f.type.types):
                raise self.error(
                    node,
                    f"Second and third argument to '{fn}' must have the same tuple/collection"
                    f" structure ({fn}() on tuples needs two tuples of the same length).",
                )
            elems = []
            for i in range(len(t.type.types)):
                ti = (
                    t.elems[i]
                    if isinstance(t, ir.MakeTuple)
                    else ir.TupleGet(t, i, t.type.types[i])
                )
                fi = (
                    f.elems[i]
                    if isinstance(f, ir.MakeTuple)
                    else ir.TupleGet(f, i, f.type.types[i])
                )
                elems.append(self._select(node, fn, mask, ti, fi))
            types = tuple(e.type for e in elems)
            named = t.type if isinstance(t.type, NamedCollectionType) else f.type
            if isinstance(named, NamedCollectionType):
                return ir.MakeTuple(
                    tuple(elems), NamedCollectionType(types, named.names, named.cls)
                )
            return ir.MakeTuple(tuple(elems), TupleType(types))
        t, f, dtype = self.wrap(node, unify_operands, t, f)
        # where()'s mask is a field with an order of its own; concat_where's condition is not (its
        # dimensions join in the values' order: concat_where((J > 2) & (I < 3), a_ij, b) is [I, J])
        mask_dims = (
            (dims_of(mask.type),) if fn == "where" else tuple((d,) for d in dims_of(mask.type))
        )
        dims = self.wrap(node, _promoted, dims_of(t.type), dims_of(f.type), *mask_dims)
        return ir.Call(fn, (mask, t, f), make_type(dims, dtype))

    def _builtin_astype(self, node: ast.Call) -> ir.Expr:
        if len(node.args) != 2 or node.keywords:
            raise self.error(node, "astype() takes a value and a dtype, e.g. astype(a, float32)")
        value = self.build(node.args[0])
        dtype_obj = self.resolve(node.args[1])
        try:
            dtype = dtype_name(dtype_obj)
        except TypeError:
            raise self.error(
                node.args[1], f"'{ast.unparse(node.args[1])}' is not a dtype"
            ) from None
        return _astype(value, dtype)

    def _builtin_as_offset(self, node: ast.Call) -> ir.Expr:
        raise self.error(
            node, "as_offset() makes an offset: use it inside a shift, e.g. a(as_offset(Koff, k))"
        )

    def _builtin_broadcast(self, node: ast.Call) -> ir.Expr:
        if (
            len(node.args) != 2
            or node.keywords
            or not isinstance(node.args[1], ast.Tuple | ast.List)
        ):
            raise self.error(
                node,
                "broadcast() takes a value and a tuple of dimensions, e.g. broadcast(a, (I, J, K))",
            )
        value = self.build(node.args[0])
        dims = tuple(self.resolve(e) for e in node.args[1].elts)
        if not all(isinstance(d, Dimension) for d in dims):
            raise self.error(node.args[1], "broadcast() dimensions must be Dimension objects")
        missing = [d for d in dims_of(value.type) if d not in dims]
        if missing:
            raise self.error(
                node,
                f"broadcast() target lacks the argument's dimensions {', '.join(map(str, missing))}",
            )
        dtype = self.wrap(node, dtype_of, value.type)
        if isinstance(value, ir.Literal) and value.weak:
            value = ir.Literal(value.value, value.type)
        return ir.Call("broadcast", (value,), FieldType(canonical_dims(dims), dtype))

    def _builtin_concat_where(self, node: ast.Call) -> ir.Expr:
        if node.keywords or len(node.args) < 2:
            raise self.error(
                node,
                "concat_where() takes a condition on indices and two values,"
                " e.g. concat_where(K == 0, a, b)",
            )
        if len(node.args) == 3 and not _is_pair(node.args[0]):
            mask, t, f = (self.build(a) for a in node.args)
            self._check_index_condition(node.args[0], mask)
            return self._select(node, "concat_where", mask, t, f)
        # concat_where((cond1, value1), (cond2, value2), ..., default)
        *pairs, last = node.args
        tuples = [p for p in pairs if isinstance(p, ast.Tuple) and _is_pair(p)]
        if not pairs or len(tuples) != len(pairs):
            raise self.error(
                node, "concat_where() takes (condition, value) pairs followed by a default value"
            )
        result = self.build(last)
        for p in reversed(tuples):
            cond_node, value_node = p.elts
            mask = self.build(cond_node)
            self._check_index_condition(cond_node, mask)
            result = self._select(node, "concat_where", mask, self.build(value_node), result)
        return result

    def _check_index_condition(self, node: ast.expr, mask: ir.Expr) -> None:
        ok = dims_of(mask.type) and isinstance(mask.type, FieldType) and mask.type.dtype == "bool"
        for x in walk(mask):
            if (isinstance(x, ir.Ref) and isinstance(x.type, FieldType)) or isinstance(
                x, ir.Shift | ir.Reduce | ir.ScanCall
            ):
                ok = False
        if not ok:
            raise self.error(
                node,
                f"the condition of concat_where() must compare dimensions with integers,"
                f" got '{ast.unparse(node)}'",
                hint="e.g. K == 0, (I < 2) | (I >= n - 2); for a boolean field use where()",
            )


def _promoted(*dim_lists: tuple[Dimension, ...]) -> tuple[Dimension, ...]:
    try:
        return promote_dims(*dim_lists, within_kinds=True)
    except ValueError as err:
        raise TypingError(str(err)) from None
