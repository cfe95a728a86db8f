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


# gt4py's order of data types (``gtc.common.DataType``); others (unsigned, float16, complex,
# long double, object) are never chosen
_RANK = {
    "bool": 10,
    "int8": 11,
    "int16": 12,
    "int32": 14,
    "int64": 18,
    "float32": 104,
    "float64": 108,
}
_UFUNC = {"abs": "absolute"}
#: builtins that are no NumPy ufunc (gt4py takes them from SciPy): their loops
_FLOAT_LOOPS = ("f", "d")
_NOT_NUMPY = {"gamma": _FLOAT_LOOPS, "erf": _FLOAT_LOOPS, "erfc": _FLOAT_LOOPS}


def _loops(fn: str) -> list[tuple[str, ...]] | None:
    if fn in _NOT_NUMPY:
        return [(c,) for c in _NOT_NUMPY[fn]]
    ufunc = getattr(np, _UFUNC.get(fn, fn), None)
    if not isinstance(ufunc, np.ufunc):
        return None
    return [tuple(t.split("->")[0]) for t in ufunc.types]


def ufunc_operands(fn: str, dtypes: list[str]) -> list[str] | None:
    """The types the arguments of the math builtin ``fn`` are cast to, by gt4py 1.2's rule
    (``gtir_upcaster._numpy_ufunc_upcasting_rule``): among the loops of NumPy's ufunc whose every
    input type ranks at or above its argument's (bool < int8 < ... < int64 < float32 < float64),
    the one of the lowest ranks. So ``sqrt`` of an int32 or int64 is computed in float32, ``abs``
    of an int32 in int32, ``min(int32, float32)`` in float32. None: not a ufunc (the caller
    decides)."""
    loops = _loops(fn)
    if loops is None or any(d not in _RANK for d in dtypes):
        return None
    best: tuple[int, list[str]] | None = None
    for inputs in loops:
        if len(inputs) != len(dtypes):
            continue
        names = [np.dtype(c).name for c in inputs]
        if any(n not in _RANK for n in names):
            continue
        if all(_RANK[d] <= _RANK[n] for d, n in zip(dtypes, names)):
            rank = sum(_RANK[n] for n in names)
            if best is None or rank < best[0]:
                best = (rank, names)
    return None if best is None else best[1]
