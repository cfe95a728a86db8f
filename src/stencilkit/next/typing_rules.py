"""Typing rules of the DSL: how operand types combine, with errors in the user's terms."""

from __future__ import annotations

import numpy as np

from ..core.dims import Dimension
from ..core.dtypes import is_bool, is_float, is_integral
from ..core.staggered import flip_staggered, is_staggered
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec, promote_dims
from ..ir import nodes as ir
from ..ir.ops import BITWISE, COMPARISONS, LOGICAL
from ..ir.statements import RewriteError


class TypingError(RewriteError):
    """A typing rule was broken; the frontend adds the source location and re-raises as a user
    error (as for the IR rewrites' own ``RewriteError``)."""


def dtype_of(t: TypeSpec) -> str:
    if isinstance(t, FieldType | ScalarType):
        return t.dtype
    raise TypingError(f"expected a field or scalar, got a {t}")


def dims_of(t: TypeSpec) -> tuple[Dimension, ...]:
    return t.dims if isinstance(t, FieldType) else ()


def make_type(dims: tuple[Dimension, ...], dtype: str) -> TypeSpec:
    return FieldType(dims, dtype) if dims else ScalarType(dtype)


def retype_literal(lit: ir.Literal, dtype: str) -> ir.Literal:
    """A weak Python literal takes the dtype of the operand it meets."""
    if is_float(dtype) and isinstance(lit.value, bool):
        raise TypingError(f"cannot use the boolean {lit.value} as a {dtype}")
    if is_integral(dtype) and isinstance(lit.value, float):
        raise TypingError(
            f"the float literal {lit.value} cannot combine with {dtype} values",
            hint="write an integer literal, or convert with astype(x, float64)",
        )
    if is_bool(dtype) and not isinstance(lit.value, bool):
        raise TypingError(f"cannot combine the number {lit.value} with booleans")
    return ir.Literal(literal_value(lit.value, dtype), ScalarType(dtype))


def literal_value(value: bool | int | float, dtype: str) -> bool | int | float:
    """``value`` as a constant of ``dtype`` (a Python number); a value the dtype cannot hold
    (``3000000000`` as an int32) is an error, not NumPy's OverflowError without a location."""
    try:
        result: bool | int | float = np.dtype(dtype).type(value).item()
        return result
    except OverflowError:
        raise TypingError(
            f"the constant {value} does not fit in {dtype}",
            hint="use a wider dtype for the operands, e.g. astype(x, int64)",
        ) from None


def unify_operands(left: ir.Expr, right: ir.Expr) -> tuple[ir.Expr, ir.Expr, str]:
    """Make weak literals concrete and check that both dtypes agree; return the common dtype."""
    lw = left if isinstance(left, ir.Literal) and left.weak else None
    rw = right if isinstance(right, ir.Literal) and right.weak else None
    ld, rd = dtype_of(left.type), dtype_of(right.type)
    if lw is not None and rw is None:
        return retype_literal(lw, rd), right, rd
    if rw is not None and lw is None:
        return left, retype_literal(rw, ld), ld
    if ld != rd:
        if lw is not None and rw is not None:
            common = next((d for d in ("float64", "int64") if d in (ld, rd)), ld)
            return retype_literal(lw, common), retype_literal(rw, common), common
        raise TypingError(
            f"operands have different dtypes, {ld} and {rd}; stencilkit never converts implicitly",
            hint=f"convert one side explicitly, e.g. astype(x, {ld})",
        )
    return left, right, ld


def binop_type(op: str, left: ir.Expr, right: ir.Expr) -> tuple[ir.Expr, ir.Expr, TypeSpec]:
    if isinstance(left.type, TupleType) or isinstance(right.type, TupleType):
        raise TypingError(f"operator {op} cannot be applied to tuples; index the tuple first")
    if op == "**":
        right = integer_exponent(left, right)
    left, right, dtype = unify_operands(left, right)
    try:
        dims = promote_dims(dims_of(left.type), dims_of(right.type), within_kinds=True)
    except ValueError as err:
        raise TypingError(str(err)) from None
    check_not_staggered_pair(dims)
    if op in COMPARISONS:
        return left, right, make_type(dims, "bool")
    if op in LOGICAL:
        if dims:
            raise TypingError(
                f"'{op}' works on scalar booleans only",
                hint="for boolean fields use & (and), | (or), ~ (not)",
            )
        if not is_bool(dtype):
            raise TypingError(f"'{op}' needs booleans, got {dtype}")
        return left, right, make_type(dims, "bool")
    if op in BITWISE:
        if is_float(dtype):
            raise TypingError(f"operator {op} needs integers or booleans, got {dtype}")
        return left, right, make_type(dims, dtype)
    if is_bool(dtype):
        raise TypingError(f"arithmetic operator {op} cannot be applied to booleans")
    if op == "/" and is_integral(dtype):
        raise TypingError(
            f"true division '/' of integers ({dtype}) is not defined in the DSL",
            hint="use // for integer division, or astype(x, float64) first",
        )
    if op == "**" and is_integral(dtype) and isinstance(right, ir.Literal) and right.value < 0:
        raise TypingError(
            f"integers to negative integer powers are not allowed ({dtype} ** {right.value})",
            hint=f"convert to floating point first, e.g. astype(x, float64) ** {right.value}.0",
        )
    if op in ("//", "%") and not (is_integral(dtype) or is_float(dtype)):
        raise TypingError(f"operator {op} needs numbers, got {dtype}")
    return left, right, make_type(dims, dtype)


def integer_exponent(base: ir.Expr, exponent: ir.Expr) -> ir.Expr:
    """``x ** n`` with an integer ``n`` of another dtype than ``x`` (``a ** int32(2)``,
    ``a ** n`` for an int32 parameter): gt4py types the power as its base, so the exponent is
    converted to the base's dtype (exact for the integers a float represents)."""
    if isinstance(exponent, ir.Literal) and exponent.weak:
        return exponent
    if not (
        isinstance(base.type, FieldType | ScalarType)
        and isinstance(exponent.type, FieldType | ScalarType)
    ):
        return exponent
    dtype, have = base.type.dtype, exponent.type.dtype
    if dtype == have or not is_integral(have) or is_bool(dtype):
        return exponent
    if isinstance(exponent, ir.Literal):
        return ir.Literal(np.dtype(dtype).type(exponent.value).item(), ScalarType(dtype))
    return ir.Call("astype", (exponent,), make_type(dims_of(exponent.type), dtype))


def check_not_staggered_pair(dims: tuple[Dimension, ...]) -> None:
    """A dimension and its staggered counterpart never index one value (gt4py ADR 0026)."""
    for d in dims:
        if is_staggered(d) and flip_staggered(d) in dims:
            raise TypingError(
                f"dimensions {flip_staggered(d)} and {d} cannot be combined: a dimension and its staggered"
                " counterpart must not appear together in one field",
                hint=f"shift one of the operands onto the other's grid, e.g. f({flip_staggered(d)} + 0.5)",
            )


def unary_type(op: str, operand: ir.Expr) -> TypeSpec:
    t = operand.type
    if isinstance(t, TupleType):
        raise TypingError(
            f"unary {op} cannot be applied to a tuple ({t})", hint="apply it to each element"
        )
    dtype = dtype_of(t)
    if op in ("-", "+") and is_bool(dtype):
        raise TypingError(f"unary {op} cannot be applied to booleans", hint="use ~ to negate")
    if op == "~" and is_float(dtype):
        raise TypingError(f"~ needs integers or booleans, got {dtype}")
    if op == "not" and (dims_of(t) or not is_bool(dtype)):
        raise TypingError("'not' works on scalar booleans only", hint="for boolean fields use ~")
    return t
