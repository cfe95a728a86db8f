"""The operator and builtin tables: names, arity and typing rules, shared by every stage."""

from __future__ import annotations

from typing import Any, Final

from ..core.records import record

#: Python binary operators and their IR spelling.
BINARY_OPS: Final[dict[str, str]] = {
    "Add": "+",
    "Sub": "-",
    "Mult": "*",
    "Div": "/",
    "FloorDiv": "//",
    "Mod": "%",
    "Pow": "**",
    "BitAnd": "&",
    "BitOr": "|",
    "BitXor": "^",
    "Lt": "<",
    "LtE": "<=",
    "Eq": "==",
    "NotEq": "!=",
    "Gt": ">",
    "GtE": ">=",
    "And": "and",
    "Or": "or",
}
COMPARISONS: Final = frozenset({"<", "<=", "==", "!=", ">", ">="})
LOGICAL: Final = frozenset({"and", "or"})
BITWISE: Final = frozenset({"&", "|", "^"})
UNARY_OPS: Final[dict[str, str]] = {"USub": "-", "UAdd": "+", "Invert": "~", "Not": "not"}


@record
class BuiltinSpec:
    """A math builtin: ``arity`` and how the result type follows from the argument dtype:
    ``"same"`` (the argument's dtype), ``"float"`` (argument must be floating), ``"bool"``."""

    arity: int
    result: str
    needs_float: bool = False


MATH_BUILTINS: Final[dict[str, BuiltinSpec]] = {
    **{
        f: BuiltinSpec(1, "same", needs_float=True)
        for f in (
            "sqrt",
            "exp",
            "log",
            "sin",
            "cos",
            "tan",
            "arcsin",
            "arccos",
            "arctan",
            "sinh",
            "cosh",
            "tanh",
            "floor",
            "ceil",
            "trunc",
            "cbrt",
            "gamma",
            "arcsinh",
            "arccosh",
            "arctanh",
            "log10",
            "erf",
            "erfc",
        )
    },
    "abs": BuiltinSpec(1, "same"),
    "neg": BuiltinSpec(1, "same"),
    "isfinite": BuiltinSpec(1, "bool", needs_float=True),
    "isnan": BuiltinSpec(1, "bool", needs_float=True),
    "isinf": BuiltinSpec(1, "bool", needs_float=True),
    "minimum": BuiltinSpec(2, "same"),
    "maximum": BuiltinSpec(2, "same"),
    "fmod": BuiltinSpec(2, "same", needs_float=True),
    "power": BuiltinSpec(2, "same"),
}

#: Builtins with special typing, handled one by one in the frontend.
SPECIAL_BUILTINS: Final = frozenset(
    {
        "where",
        "concat_where",
        "broadcast",
        "astype",
        "neighbor_sum",
        "max_over",
        "min_over",
        "as_offset",
    }
)

REDUCTIONS: Final[dict[str, str]] = {"neighbor_sum": "sum", "max_over": "max", "min_over": "min"}


def _gamma(xp: Any) -> Any:
    """Element-wise Γ: NumPy has no ufunc and SciPy is not a dependency (``math.gamma`` per
    element, in the argument's dtype); CuPy's own kernel on the GPU."""
    if xp.__name__ == "cupy":
        from cupyx.scipy.special import gamma

        return gamma
    import math

    def gamma_np(x: Any) -> Any:
        x = xp.asarray(x)
        flat = [_safe_gamma(math, float(v)) for v in x.reshape(-1)]
        return xp.asarray(flat, dtype=x.dtype).reshape(x.shape)[()]

    return gamma_np


def _safe_gamma(math: Any, v: float) -> float:
    try:
        return float(math.gamma(v))
    except (ValueError, OverflowError):  # poles and overflow: what C's tgamma gives
        if v != v or v == float("-inf"):
            return float("nan")
        if v == 0:
            return float(math.copysign(float("inf"), v))
        if v < 0 and v == int(v):
            return float("nan")
        return float("inf")


def _libm(xp: Any, name: str) -> Any:
    """``erf``/``erfc`` element-wise: NumPy has neither and SciPy is not a dependency, so the
    C library's (``math.erf``, the function the cpu backend's ``std::erf`` calls: the same
    values, bit for bit) per element, about 0.1 us each, as fast as a vectorised port of
    fdlibm's polynomials measured here; CuPy's own kernels on the GPU."""
    if xp.__name__ == "cupy":
        import cupyx.scipy.special

        return getattr(cupyx.scipy.special, name)
    import math

    ufunc = xp.frompyfunc(getattr(math, name), 1, 1)

    def elementwise(x: Any) -> Any:
        x = xp.asarray(x)
        dtype = x.dtype if x.dtype.kind == "f" else xp.dtype("float64")
        return xp.asarray(ufunc(x.astype(xp.float64, copy=False)), dtype=dtype)[()]

    return elementwise


def array_function(xp: Any, name: str) -> Any:
    """The array function (NumPy or CuPy) computing builtin ``name`` element-wise."""
    if name == "gamma":
        return _gamma(xp)
    if name in ("erf", "erfc"):
        return _libm(xp, name)
    return getattr(xp, {"abs": "absolute", "neg": "negative"}.get(name, name))
