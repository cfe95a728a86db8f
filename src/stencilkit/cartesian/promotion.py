"""GTScript's type promotion (not gt4py.next's strict typing): operands are upcast to the
smallest type NumPy's ufunc tables accept for all of them, literals have the literal precision
(they are not weak), integer true division gives float32, and every assignment casts to the
target's type. The result is fully typed stencilkit IR, with explicit ``astype`` casts."""

from __future__ import annotations

import numpy as np

from ..core.types import FieldType, ScalarType, TypeSpec
from ..ir import nodes as ir
from .axes import DIMS

_ORDER = ("I", "J", "K")


def dtype_of(e: ir.Expr) -> str:
    t = e.type
    assert isinstance(t, FieldType | ScalarType), t
    return t.dtype


def dims_of(e: ir.Expr) -> tuple[str, ...]:
    return tuple(d.value for d in ir.field_dims(e.type))


def typed(dtype: str, *operands: ir.Expr) -> TypeSpec:
    """A field type over the union of the operands' dimensions (in I, J, K order), or a scalar."""
    names = {n for o in operands for n in dims_of(o)}
    if not names:
        return ScalarType(dtype)
    return FieldType(tuple(DIMS[n] for n in _ORDER if n in names), dtype)


def common(*dtypes: str) -> str:
    return np.result_type(*(np.dtype(d) for d in dtypes)).name


def cast(e: ir.Expr, dtype: str) -> ir.Expr:
    if dtype_of(e) == dtype:
        return e
    if isinstance(e, ir.Literal):
        v = np.dtype(dtype).type(e.value).item()
        return ir.Literal(v, ScalarType(dtype))
    return ir.Call("astype", (e,), typed(dtype, e))


def is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def is_int(dtype: str) -> bool:
    return dtype.startswith("int") or dtype.startswith("uint")


def arithmetic(op: str, a: ir.Expr, b: ir.Expr) -> tuple[ir.Expr, ir.Expr, str]:
    """The operands of ``a op b`` cast to their common type, and the result dtype."""
    da, db = dtype_of(a), dtype_of(b)
    if op == "/" and not is_float(da) and not is_float(db):
        return cast(a, "float32"), cast(b, "float32"), "float32"  # gt4py 1.2.3's rule
    if op == "**":
        t = common(da, db) if not is_float(da) else da
        return cast(a, t), cast(b, t), t
    t = common(da, db)
    return cast(a, t), cast(b, t), t
