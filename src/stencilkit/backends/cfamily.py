"""Code generation shared by the C++ and CUDA backends: point-wise expressions as C++ text.

Emission is table-driven: ``CTarget`` holds the rules of plain C++; the CUDA target overrides
only the entries that differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.dtypes import C_TYPES
from ..core.errors import InternalError
from ..ir import nodes as ir
from .abi import ArgLayout, FieldSlots


def index_typedef(narrow: bool) -> str:
    """The C type of index arithmetic (``sk_idx``): 32-bit where every index of the call fits
    (cheaper address arithmetic on a GPU), else 64-bit. The argument block stays 64-bit."""
    return f"typedef {'int32_t' if narrow else 'int64_t'} sk_idx;"


PRELUDE = r"""
#if defined(__CUDACC_RTC__)
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <cstdint>
#include <cstring>
#include <cmath>
#endif
#ifndef SK_FN
#define SK_FN static inline
#endif
template <class T> struct sk_is_float { static constexpr bool value = false; };
template <> struct sk_is_float<float> { static constexpr bool value = true; };
template <> struct sk_is_float<double> { static constexpr bool value = true; };
template <class T> struct sk_limits;
#define SK_LIMITS(T, LO, HI) \
  template <> struct sk_limits<T> { static constexpr T lo = LO; static constexpr T hi = HI; };
SK_LIMITS(double, -1.7976931348623157e308, 1.7976931348623157e308)
SK_LIMITS(float, -3.4028234663852886e38f, 3.4028234663852886e38f)
SK_LIMITS(int8_t, -128, 127) SK_LIMITS(int16_t, -32768, 32767)
SK_LIMITS(int32_t, -2147483647 - 1, 2147483647) SK_LIMITS(int64_t, -9223372036854775807LL - 1, 9223372036854775807LL)
SK_LIMITS(uint8_t, 0, 255) SK_LIMITS(uint16_t, 0, 65535) SK_LIMITS(uint32_t, 0, 4294967295u)
SK_LIMITS(uint64_t, 0, 18446744073709551615ull) SK_LIMITS(bool, false, true)
template <class T> SK_FN T sk_floordiv(T a, T b) {
  if constexpr (sk_is_float<T>::value) { return floor(a / b); }
  else {
    // Integer division by zero gives 0 (NumPy's result), and the one overflowing quotient
    // INT_MIN // -1 wraps to INT_MIN as in NumPy: never a SIGFPE.
    if (b == T(0)) return T(0);
    if (T(-1) < T(0) && b == T(-1)) return (T)(0ULL - (unsigned long long)a);
    T q = a / b; return (q * b != a && ((a < T(0)) != (b < T(0)))) ? q - 1 : q; }
}
template <class T> SK_FN T sk_mod(T a, T b) {
  if constexpr (sk_is_float<T>::value) { T r = fmod(a, b); return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r; }
  else {
    if (b == T(0) || (T(-1) < T(0) && b == T(-1))) return T(0);
    T r = a % b; return (r != 0 && ((r < T(0)) != (b < T(0)))) ? r + b : r; }
}
// NaN propagates through minimum/maximum/min_over/max_over, as in NumPy: a + b is NaN then.
template <class T> SK_FN T sk_min(T a, T b) {
  if constexpr (sk_is_float<T>::value) { if (a != a || b != b) return a + b; }
  return b < a ? b : a;
}
template <class T> SK_FN T sk_max(T a, T b) {
  if constexpr (sk_is_float<T>::value) { if (a != a || b != b) return a + b; }
  return a < b ? b : a;
}
template <class T> SK_FN T sk_abs(T a) { return a < T(0) ? -a : a; }
template <class T> SK_FN T sk_pow(T a, T b) {
  if constexpr (sk_is_float<T>::value) { return pow(a, b); }
  else { T r = 1; while (b > 0) { if (b & 1) r *= a; a *= a; b >>= 1; } return r; }
}
SK_FN double sk_slot_double(int64_t v) {
#if defined(__CUDACC__)
  return __longlong_as_double(v);
#else
  double d; memcpy(&d, &v, 8); return d;
#endif
}
template <class T> SK_FN T sk_from_slot(int64_t v) {
  if constexpr (sk_is_float<T>::value) { return (T)sk_slot_double(v); }
  else { return (T)v; }
}
"""

#: C spelling of the math builtins; ``{0}``, ``{1}`` are the arguments.
CALLS: dict[str, str] = {
    "sqrt": "sqrt({0})", "exp": "exp({0})", "log": "log({0})", "sin": "sin({0})", "cos": "cos({0})",
    "tan": "tan({0})", "arcsin": "asin({0})", "arccos": "acos({0})", "arctan": "atan({0})",
    "sinh": "sinh({0})", "cosh": "cosh({0})", "tanh": "tanh({0})", "floor": "floor({0})",
    "ceil": "ceil({0})", "trunc": "trunc({0})", "cbrt": "cbrt({0})", "abs": "sk_abs({0})",
    "isfinite": "isfinite({0})", "isnan": "isnan({0})", "isinf": "isinf({0})",
    "minimum": "sk_min({0}, {1})", "maximum": "sk_max({0}, {1})", "fmod": "fmod({0}, {1})",
    "power": "sk_pow({0}, {1})", "gamma": "tgamma({0})", "arcsinh": "asinh({0})", "arccosh": "acosh({0})",
    "arctanh": "atanh({0})", "neg": "(-{0})",
}
BINARY: dict[str, str] = {
    "+": "({0} + {1})", "-": "({0} - {1})", "*": "({0} * {1})", "/": "({0} / {1})",
    "//": "sk_floordiv<{t}>({0}, {1})", "%": "sk_mod<{t}>({0}, {1})", "**": "sk_pow<{t}>({0}, {1})",
    "&": "({0} & {1})", "|": "({0} | {1})", "^": "({0} ^ {1})",
    "<": "({0} < {1})", "<=": "({0} <= {1})", "==": "({0} == {1})", "!=": "({0} != {1})",
    ">": "({0} > {1})", ">=": "({0} >= {1})", "and": "({0} && {1})", "or": "({0} || {1})",
}
UNARY: dict[str, str] = {"-": "(-{0})", "+": "(+{0})", "~": "(~{0})", "not": "(!{0})"}


def ctype(dtype: str) -> str:
    return C_TYPES[dtype]


def c_literal(value: bool | int | float, dtype: str) -> str:
    if dtype == "bool":
        return "true" if value else "false"
    if dtype.startswith("float"):
        v = float(value)
        if np.isnan(v):
            return f"(({ctype(dtype)})sk_from_slot<double>(0x7ff8000000000000LL))"
        if np.isinf(v):
            return ("(-" if v < 0 else "(") + f"(({ctype(dtype)})sk_from_slot<double>(0x7ff0000000000000LL)))"
        text = repr(v) + ("f" if dtype == "float32" else "")
        # parenthesised when negative: after a unary minus, "--0.5f" would be a decrement
        return f"({text})" if text.startswith("-") else text
    suffix = "LL" if dtype in ("int64",) else ("ULL" if dtype == "uint64" else "")
    return f"(({ctype(dtype)}){int(value)}{suffix})"


@dataclass
class CTarget:
    """Emission rules for one C-family target."""

    calls: dict[str, str] = field(default_factory=lambda: dict(CALLS))
    binary: dict[str, str] = field(default_factory=lambda: dict(BINARY))
    unary: dict[str, str] = field(default_factory=lambda: dict(UNARY))


class ExprEmitter:
    """Emits a point-wise expression; ``index_var[dim]`` names the loop index of each dimension."""

    def __init__(self, target: CTarget, layout: ArgLayout, index_var: dict[str, str]) -> None:
        self.target = target
        self.layout = layout
        self.index_var = index_var
        self.local_var: dict[tuple[str, int], str] = {}

    def index(self, idx: ir.Index) -> str:
        if isinstance(idx, ir.Pos):
            v = self.index_var[idx.dim.value]
            return v if idx.offset == 0 else f"({v} + {idx.offset})"
        if isinstance(idx, ir.ConstIndex):
            return str(idx.value)
        if isinstance(idx, ir.LocalIndex):
            return self.local_var[(idx.dim.value, idx.var)]
        if isinstance(idx, ir.DynIndex):
            return f"({self.index(idx.base)} + (sk_idx)({self.emit(idx.amount)}))"
        if isinstance(idx, ir.Lookup):
            return f"((sk_idx){self.element(self.layout.field(idx.table), (idx.source, idx.neighbor))})"
        raise InternalError(f"unknown index {idx!r}")

    def element(self, f: FieldSlots, index: tuple[ir.Index, ...]) -> str:
        terms = []
        for axis, i in enumerate(index):
            ix = self.index(i)
            if isinstance(i, ir.Lookup) and isinstance(i.neighbor, ir.Pos) and not f.is_table:
                # a read through a skipped slot outside a reduction (the output has the local
                # dimension): read the field's first element instead of before its start
                ix = f"(({ix}) < 0 ? (sk_idx)a[{f.origins[axis]}] : ({ix}))"
            terms.append(ix if f.unit_dim == axis else f"{ix} * {f.name}_s{axis}")
        return f"{f.name}_b[{' + '.join(terms) or '0'}]"

    def emit(self, e: ir.Expr) -> str:
        method = getattr(self, f"_{type(e).__name__}", None)
        if method is None:
            raise InternalError(f"C code generation cannot handle {type(e).__name__}")
        return method(e)  # type: ignore[no-any-return]

    def _Literal(self, e: ir.Literal) -> str:
        return c_literal(e.value, e.type.dtype)

    def _Ref(self, e: ir.Ref) -> str:
        return f"{e.name}_v"

    def _Access(self, e: ir.Access) -> str:
        return self.element(self.layout.field(e.field), e.index)

    def _BinOp(self, e: ir.BinOp) -> str:
        t = ctype(e.left.type.dtype)  # type: ignore[union-attr]
        return self.target.binary[e.op].format(self.emit(e.left), self.emit(e.right), t=t)

    def _UnaryOp(self, e: ir.UnaryOp) -> str:
        op = e.op
        if op == "~" and getattr(e.type, "dtype", None) == "bool":
            op = "not"  # C's ~ on a bool promotes to int: ~true == -2, which is true again
        return self.target.unary[op].format(self.emit(e.operand))

    def _IfElse(self, e: ir.IfElse) -> str:
        return f"({self.emit(e.cond)} ? {self.emit(e.true)} : {self.emit(e.false)})"

    def _Call(self, e: ir.Call) -> str:
        t = ctype(e.type.dtype)  # type: ignore[union-attr]
        args = [self.emit(a) for a in e.args]
        if e.fn in ("where", "concat_where"):
            # C's ?: evaluates only the chosen branch: a concat_where branch is read only where
            # its condition selects it.
            return f"({args[0]} ? ({t})({args[1]}) : ({t})({args[2]}))"
        if e.fn == "astype":
            return f"(({t})({args[0]}))"
        if e.fn == "broadcast":
            return args[0]
        return "(" + self.target.calls[e.fn].format(*args) + ")"

    def _IndexValue(self, e: ir.IndexValue) -> str:
        return f"((int64_t){self.index(e.index)})"

    def _Valid(self, e: ir.Valid) -> str:
        table = self.layout.field(e.table)
        return f"({self.element(table, (e.source, e.neighbor))} >= 0)"

    def _LocalReduce(self, e: ir.LocalReduce) -> str:
        t = ctype(e.type.dtype)
        var = f"n_{e.dim.value}" + (f"_{e.var}" if e.var else "")
        self.local_var[(e.dim.value, e.var)] = var
        try:
            body = self.emit(e.body)
            mask = self.emit(e.mask) if e.mask is not None else "true"
        finally:
            del self.local_var[(e.dim.value, e.var)]
        init, update = {
            "sum": ("0", "acc += v;"),
            "max": (f"sk_limits<{t}>::lo", f"acc = sk_max<{t}>(acc, v);"),
            "min": (f"sk_limits<{t}>::hi", f"acc = sk_min<{t}>(acc, v);"),
        }[e.op]
        return (f"([&]() {{ {t} acc = {init}; for (int {var} = 0; {var} < {e.size}; ++{var}) "
                f"{{ if ({mask}) {{ const {t} v = {body}; {update} }} }} return acc; }}())")


def unpack_args(layout: ArgLayout, written: set[str], const_qual: str = "const") -> list[str]:
    """C statements that read the argument block ``a`` into typed locals."""
    lines = []
    for f in layout.fields:
        t = ctype(f.dtype)
        qual = "" if f.name in written else f"{const_qual} "
        for axis, s in enumerate(f.strides):
            if axis != f.unit_dim:
                lines.append(f"const sk_idx {f.name}_s{axis} = a[{s}];")
        offset = " + ".join(
            [f"a[{o}] * " + ("1" if axis == f.unit_dim else f"{f.name}_s{axis}") for axis, o in enumerate(f.origins)])
        lines.append(f"{qual}{t}* __restrict__ {f.name}_b = reinterpret_cast<{qual}{t}*>(a[{f.ptr}]) - ({offset or '0'});")
    for sc in layout.scalars:
        lines.append(f"const {ctype(sc.dtype)} {sc.name}_v = sk_from_slot<{ctype(sc.dtype)}>(a[{sc.slot}]);")
    return lines
