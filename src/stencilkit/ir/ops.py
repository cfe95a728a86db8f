"""The operator and builtin tables: names, arity and typing rules, shared by every stage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: Python binary operators and their IR spelling.
BINARY_OPS: Final[dict[str, str]] = {
    "Add": "+", "Sub": "-", "Mult": "*", "Div": "/", "FloorDiv": "//", "Mod": "%", "Pow": "**",
    "BitAnd": "&", "BitOr": "|", "BitXor": "^",
    "Lt": "<", "LtE": "<=", "Eq": "==", "NotEq": "!=", "Gt": ">", "GtE": ">=",
    "And": "and", "Or": "or",
}
COMPARISONS: Final = frozenset({"<", "<=", "==", "!=", ">", ">="})
LOGICAL: Final = frozenset({"and", "or"})
BITWISE: Final = frozenset({"&", "|", "^"})
UNARY_OPS: Final[dict[str, str]] = {"USub": "-", "UAdd": "+", "Invert": "~", "Not": "not"}


@dataclass(frozen=True, slots=True)
class BuiltinSpec:
    """A math builtin: ``arity`` and how the result type follows from the argument dtype:
    ``"same"`` (the argument's dtype), ``"float"`` (argument must be floating), ``"bool"``."""

    arity: int
    result: str
    needs_float: bool = False


MATH_BUILTINS: Final[dict[str, BuiltinSpec]] = {
    **{f: BuiltinSpec(1, "same", needs_float=True) for f in (
        "sqrt", "exp", "log", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
        "sinh", "cosh", "tanh", "floor", "ceil", "trunc", "cbrt",
    )},
    "abs": BuiltinSpec(1, "same"),
    "isfinite": BuiltinSpec(1, "bool", needs_float=True),
    "isnan": BuiltinSpec(1, "bool", needs_float=True),
    "isinf": BuiltinSpec(1, "bool", needs_float=True),
    "minimum": BuiltinSpec(2, "same"),
    "maximum": BuiltinSpec(2, "same"),
    "fmod": BuiltinSpec(2, "same", needs_float=True),
    "power": BuiltinSpec(2, "same"),
}

#: Builtins with special typing, handled one by one in the frontend.
SPECIAL_BUILTINS: Final = frozenset({
    "where", "concat_where", "broadcast", "astype", "neighbor_sum", "max_over", "min_over",
})

REDUCTIONS: Final[dict[str, str]] = {"neighbor_sum": "sum", "max_over": "max", "min_over": "min"}
