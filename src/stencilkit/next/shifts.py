"""Shifts inside an operator: ``a(I + 1)``, ``c(E2C)``, ``a(X + 1, Y - 1)``, half-integer shifts
between a dimension and its staggered counterpart (``f(X + 0.5)``), ``as_offset`` shifts by an
integer field, and neighbour-slot selection ``f[C2EDim(0)]``."""

from __future__ import annotations

import ast
import math
from typing import Any

from ..core.dims import CartesianOffset, Dimension, DimensionKind, FieldOffset, FieldOffsetElement
from ..core.dtypes import is_integral
from ..core.staggered import flip_staggered, is_staggered
from ..core.types import FieldType, canonical_dims, promote_dims
from ..ir import nodes as ir
from .builtins import Builtin
from .source import SourceFunction
from .typing_rules import dims_of, dtype_of, make_type

Shift = ir.CartesianShift | ir.NeighborShift | ir.DynamicShift | ir.StaggeredShift


class ShiftCalls:
    """Shifts and slot selection, mixed into ``ExprBuilder`` (which provides the methods stubbed here)."""

    def error(self, node: ast.AST, message: str, hint: str = "") -> Exception:
        raise NotImplementedError

    def resolve(self, node: ast.expr) -> Any:
        raise NotImplementedError

    def build(self, node: ast.expr) -> ir.Expr:
        raise NotImplementedError

    def undefined(self, node: ast.Name, kinds: tuple[type, ...] = ()) -> Exception:
        raise NotImplementedError

    symbols: dict[str, ir.Expr]
    src: SourceFunction

    def _named_index(self, node: ast.expr) -> tuple[Dimension, int] | None:
        """``C2EDim(0)`` as (dimension, slot), or None if ``node`` is not of that form."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)):
            return None
        if isinstance(node.func, ast.Name) and node.func.id in self.symbols:
            return None
        try:
            dim = self.resolve(node.func)
        except Exception:
            return None
        if not isinstance(dim, Dimension):
            return None
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        index = int_literal(arg) if arg is not None else None
        if index is None:
            raise self.error(
                node, f"{dim}(...) selects a neighbour slot with one integer literal, e.g. {dim}(0)"
            )
        return dim, index

    def _local_select(
        self, node: ast.Subscript, base: ir.Expr, dim: Dimension, index: int
    ) -> ir.Expr:
        if not isinstance(base.type, FieldType) or dim not in base.type.dims:
            raise self.error(
                node,
                f"'{ast.unparse(node.value)}' is a {base.type}, which has no dimension {dim}"
                " to select a neighbour slot of",
            )
        if dim.kind is not DimensionKind.LOCAL:
            raise self.error(
                node, f"{dim} is not a local dimension: only neighbour slots can be selected"
            )
        if index < 0:
            raise self.error(
                node,
                f"neighbour slot {index} of {dim} is negative",
                hint="slots count from 0 and do not wrap around: write the last slot's number",
            )
        t = make_type(tuple(d for d in base.type.dims if d != dim), base.type.dtype)
        return ir.LocalSelect(base, dim, index, t)

    def _shift(self, node: ast.Call, target: ir.Expr) -> ir.Expr:
        if not isinstance(target.type, FieldType):
            raise self.error(
                node,
                f"'{ast.unparse(node.func)}' is a {target.type}, not a field; only fields can be shifted",
            )
        if not node.args or node.keywords:
            raise self.error(node, "a shift takes offsets, e.g. a(I + 1) or c(E2C[0])")
        result: ir.Expr = target
        shifts = [self._offset(arg) for arg in node.args]
        if len(shifts) > 1 and any(isinstance(by, ir.NeighborShift) for by in shifts):
            raise self.error(
                node,
                "Function takes only 1 argument in unstructured case.",
                hint="several offsets in one call must all be Cartesian: a(I + 1, J - 1)",
            )
        for arg, by in zip(node.args, shifts):  # f(o1, o2) is f(o1)(o2)
            result = self._shift_by(arg, result, by)
        return result

    def _shift_by(self, arg: ast.expr, result: ir.Expr, by: Shift) -> ir.Expr:
        dims, dtype = dims_of(result.type), dtype_of(result.type)  # a field: _shift checked
        if isinstance(by, ir.CartesianShift | ir.DynamicShift):
            if by.dim not in dims:
                raise self.error(
                    arg,
                    f"cannot shift along {by.dim}: the field has dimensions [{', '.join(map(str, dims))}]",
                )
            if isinstance(by, ir.DynamicShift):
                t = FieldType(promote_dims(dims, dims_of(by.amount.type)), dtype)
                return ir.Shift(result, by, t)
            return ir.Shift(result, by, result.type)
        if isinstance(by, ir.StaggeredShift):
            if by.source not in dims:
                raise self.error(
                    arg,
                    f"a half-integer shift to {by.target} reads a field over {by.source}, but this"
                    f" field has dimensions [{', '.join(map(str, dims))}]",
                )
            new = tuple(by.target if d == by.source else d for d in dims)
            return ir.Shift(result, by, FieldType(canonical_dims(new), dtype))
        if by.source not in dims:
            raise self.error(
                arg,
                f"offset {by.offset} reads a field over {by.source}, but this field has dimensions"
                f" [{', '.join(map(str, dims))}]",
            )
        new_dims = [d for d in dims if d != by.source]
        new_dims.append(by.target[0])
        if by.index is None and len(by.target) == 2:
            new_dims.append(by.target[1])
        if len(set(new_dims)) != len(new_dims):
            raise self.error(arg, f"shifting by {by.offset} would repeat a dimension")
        t = FieldType(canonical_dims(tuple(new_dims)), dtype)
        return ir.Shift(result, by, t)

    def _offset(self, node: ast.expr) -> Shift:
        head = node.left if isinstance(node, ast.BinOp) else node
        head = head.value if isinstance(head, ast.Subscript) else head
        if isinstance(head, ast.Name) and head.id not in {**self.src.names, **self.symbols}:
            raise self.undefined(head, (Dimension, FieldOffset))
        if isinstance(node, ast.Call):
            return self._as_offset(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            staggered = self._half_shift(node)
            if staggered is not None:
                return staggered
        try:
            value = self.resolve(node) if isinstance(node, ast.Name | ast.Attribute) else None
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
                dim = self.resolve(node.left)
                amount = int_literal(node.right)  # I + 1, I - 2, I + (-1)
                if isinstance(dim, Dimension) and amount is not None:
                    value = CartesianOffset(
                        dim, amount if isinstance(node.op, ast.Add) else -amount
                    )
            elif isinstance(node, ast.Subscript):
                base = self.resolve(node.value)
                index = int_literal(node.slice)  # Koff[1], Koff[-1]
                if isinstance(base, FieldOffset) and index is not None:
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
            if value.index < 0:  # gt4py: out of bounds on embedded, unchecked on gtfn
                raise self.error(
                    node,
                    f"neighbour index {value.index} of {fo.value} is negative",
                    hint="neighbours count from 0 and do not wrap around: write e.g."
                    f" {fo.value}[0] or {fo.value}[1]",
                )
            return ir.NeighborShift(fo.value, fo.source, fo.target, value.index)
        if isinstance(value, FieldOffset) and not value.is_cartesian:
            return ir.NeighborShift(value.value, value.source, value.target, None)
        if isinstance(value, FieldOffset):
            raise self.error(
                node, f"the Cartesian offset {value.value} needs an amount, e.g. {value.value}[1]"
            )
        raise self.error(
            node,
            f"'{ast.unparse(node)}' is not an offset",
            hint="write I + 1, I - 2, Koff[1], E2C or E2C[0]",
        )

    def _half_shift(self, node: ast.BinOp) -> ir.CartesianShift | ir.StaggeredShift | None:
        """``D + 0.5``: a shift onto ``D`` from its staggered counterpart (ADR 0026); None if
        ``node`` is not ``Dimension +/- number``."""
        try:
            dim = (
                self.resolve(node.left) if isinstance(node.left, ast.Name | ast.Attribute) else None
            )
        except Exception:
            return None
        if not isinstance(dim, Dimension):
            return None
        right, sign = node.right, 1
        if isinstance(node.right, ast.UnaryOp) and isinstance(
            node.right.op, ast.USub | ast.UAdd
        ):  # I + (-1)
            right, sign = node.right.operand, -1 if isinstance(node.right.op, ast.USub) else 1
        if not (
            isinstance(right, ast.Constant)
            and isinstance(right.value, int | float)
            and not isinstance(right.value, bool)
        ):
            raise self.error(
                node,
                "Cartesian offsets are only supported with a literal right-hand side,"
                f" got '{ast.unparse(node)}'",
                hint="write e.g. I + 1 or I - 0.5",
            )
        offset = sign * (right.value if isinstance(node.op, ast.Add) else -right.value)
        whole = math.floor(offset)
        if offset == whole:
            return ir.CartesianShift(dim, int(whole))
        if offset - whole != 0.5:
            raise self.error(
                node,
                f"Invalid offset '{right.value}' for a Cartesian shift of dimension '{dim}'.",
                hint="only whole and half-integer offsets exist (staggered dimensions)",
            )
        return ir.StaggeredShift(
            flip_staggered(dim), dim, int(whole) + (0 if is_staggered(dim) else 1)
        )

    def _as_offset(self, node: ast.Call) -> ir.DynamicShift:
        """``as_offset(Off, idx)``: a Cartesian shift by an integer field."""
        try:
            fn = (
                self.resolve(node.func) if isinstance(node.func, ast.Name | ast.Attribute) else None
            )
        except Exception:
            fn = None
        if not (isinstance(fn, Builtin) and fn.name == "as_offset"):
            raise self.error(
                node,
                f"'{ast.unparse(node)}' is not an offset",
                hint=f"to select a neighbour slot index the field: f[{ast.unparse(node)}]"
                if isinstance(fn, Dimension)
                else "write I + 1, Koff[1], E2C, E2C[0] or as_offset(Koff, k_field)",
            )
        if len(node.args) != 2 or node.keywords:
            raise self.error(
                node, "as_offset() takes an offset and an integer field, e.g. as_offset(Koff, k)"
            )
        off = (
            self.resolve(node.args[0])
            if isinstance(node.args[0], ast.Name | ast.Attribute)
            else None
        )
        if isinstance(off, Dimension):
            dim = off
        elif isinstance(off, FieldOffset) and off.is_cartesian:
            dim = off.source
        else:
            raise self.error(
                node.args[0],
                "'as_offset' is only supported for Cartesian offsets,"
                f" got '{ast.unparse(node.args[0])}'",
            )
        amount = self.build(node.args[1])
        if not (isinstance(amount.type, FieldType) and is_integral(amount.type.dtype)):
            raise self.error(
                node.args[1],
                f"the offsets of as_offset() must be an integer field, got {amount.type}",
            )
        if dim not in amount.type.dims:
            raise self.error(
                node.args[1],
                f"the offsets of as_offset() must be a field over {dim}, got {amount.type}",
            )
        return ir.DynamicShift(dim, amount)


def int_literal(node: ast.expr) -> int | None:
    """The value of an integer literal, signed (``1``, ``-1``, ``+2``; Python's AST has ``-1``
    as a minus applied to ``1``), else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        if not isinstance(node.value, bool):
            return sign * node.value
    return None
