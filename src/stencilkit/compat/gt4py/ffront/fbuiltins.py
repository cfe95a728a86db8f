"""gt4py.next's ``ffront.fbuiltins``: the builtins, scalar types and name lists of the DSL.

>>> from stencilkit.ffront.fbuiltins import neighbor_sum, float64, IndexType
"""

from __future__ import annotations

import builtins as _py
from typing import Any

from ....core.dims import Dimension, DimensionKind, FieldOffset
from ....core.dtypes import (
    DTYPES,
    bool_,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ....fields import Field
from ....next import builtins as _b
from ....next.builtins import Builtin as BuiltInFunction
from ....next.builtins import concat_where

bool = bool_
float = _py.float
int = _py.int
tuple = _py.tuple  # type: ignore[type-arg]  # gt4py.next's name for the builtin class itself, not an alias of one parametrization

#: The dtype of indices and neighbour tables.
IndexType = int32

WhereBuiltinFunction = BuiltInFunction

_UNARY_NUMBER = ("abs", "neg")
_UNARY_FP = (
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "sqrt",
    "exp",
    "log",
    "gamma",
    "cbrt",
    "floor",
    "ceil",
    "trunc",
)
_UNARY_FP_PREDICATE = ("isfinite", "isinf", "isnan")
_BINARY_NUMBER = ("minimum", "maximum", "fmod", "power")
_FUN = ("neighbor_sum", "max_over", "min_over", "broadcast", "where", "astype", "as_offset")


def _have(names: _py.tuple[str, ...]) -> list[str]:
    # Builtins added to the frontend later (gamma, neg, ...) appear here as soon as they exist.
    return [n for n in names if hasattr(_b, n)]


UNARY_MATH_NUMBER_BUILTIN_NAMES = _have(_UNARY_NUMBER)
UNARY_MATH_FP_BUILTIN_NAMES = _have(_UNARY_FP)
UNARY_MATH_FP_PREDICATE_BUILTIN_NAMES = _have(_UNARY_FP_PREDICATE)
BINARY_MATH_NUMBER_BUILTIN_NAMES = _have(_BINARY_NUMBER)
MATH_BUILTIN_NAMES = (
    UNARY_MATH_NUMBER_BUILTIN_NAMES
    + UNARY_MATH_FP_BUILTIN_NAMES
    + UNARY_MATH_FP_PREDICATE_BUILTIN_NAMES
    + BINARY_MATH_NUMBER_BUILTIN_NAMES
)
FUN_BUILTIN_NAMES = _have(_FUN)
TYPE_BUILTIN_NAMES = list(DTYPES)  # gt4py's list: the same names, in the same order

_g: dict[str, Any] = globals()
for _name in (*MATH_BUILTIN_NAMES, *FUN_BUILTIN_NAMES):
    _g[_name] = getattr(_b, _name)


def is_cartesian_offset(o: Any) -> _py.bool:
    """Whether ``o`` is a Cartesian ``FieldOffset`` (source and target the same dimension)."""
    return isinstance(o, FieldOffset) and o.is_cartesian


__all__ = [
    "BINARY_MATH_NUMBER_BUILTIN_NAMES",
    "FUN_BUILTIN_NAMES",
    "MATH_BUILTIN_NAMES",
    "TYPE_BUILTIN_NAMES",
    "UNARY_MATH_FP_BUILTIN_NAMES",
    "UNARY_MATH_FP_PREDICATE_BUILTIN_NAMES",
    "UNARY_MATH_NUMBER_BUILTIN_NAMES",
    "BuiltInFunction",
    "Dimension",
    "DimensionKind",
    "Field",
    "FieldOffset",
    "IndexType",
    "WhereBuiltinFunction",
    "bool",
    "float",
    "float32",
    "float64",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_cartesian_offset",
    "tuple",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    *MATH_BUILTIN_NAMES,
    *FUN_BUILTIN_NAMES,
    "concat_where",
]
