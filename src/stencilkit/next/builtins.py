"""The DSL's builtin functions as importable objects (``from stencilkit import neighbor_sum``).

Inside ``@field_operator`` code they are recognised by identity and turned into IR. Called on
fields outside the DSL, the element-wise math ones apply to the fields' arrays directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fields.field import Field
from ..ir.ops import MATH_BUILTINS, SPECIAL_BUILTINS, array_function
from .builtin_docs import attach

#: the scalars a builtin takes outside an operator (Python's and NumPy's)
_SCALARS = (bool, int, float, np.generic)


class Builtin:
    """A DSL builtin; ``name`` is its IR name.

    Each builtin carries its own signature and docstring (``help(gtx.neighbor_sum)``); the
    ``__get__`` below makes it a routine to ``inspect`` and ``pydoc`` (a method descriptor
    that never binds), so they document it as the function it stands for.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        attach(self, name)

    def __get__(self, obj: Any, objtype: Any = None) -> Builtin:
        return self  # as a class attribute it stays the builtin, like a staticmethod

    def __repr__(self) -> str:
        return f"<stencilkit builtin {self.name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Outside an operator a builtin runs on concrete values, as gt4py's embedded ones do:
        # on fields element-wise (by dimension names), on scalars as NumPy's scalar function.
        if self.name == "where" and not kwargs and len(args) == 3:
            return _where_on_values(*args)
        if self.name == "astype" and not kwargs and len(args) == 2:
            return _astype_on_values(*args)
        if self.name == "broadcast" and not kwargs and len(args) == 2:
            return _broadcast_on_values(*args)
        if self.name in MATH_BUILTINS and not kwargs:
            field = next((a for a in args if isinstance(a, Field)), None)
            if field is not None:
                return field._apply(array_function(field.xp, self.name), *args)
            arrays = [getattr(a, "ndarray", a) for a in args]
            xp: Any = next((a.xp for a in args if hasattr(a, "xp")), np)
            return array_function(xp, self.name)(*arrays)
        raise TypeError(
            f"{self.name}() works on fields only inside a @field_operator; call it there"
        )


def _astype_on_values(value: Any, type_: Any) -> Any:
    """``astype(value, dtype)`` on a field (a field of that dtype), a scalar (a NumPy scalar of
    that dtype, as gt4py gives) or a tuple of them (element by element)."""
    if isinstance(value, tuple):
        return tuple(_astype_on_values(v, type_) for v in value)
    target = np.dtype(type_)
    if isinstance(value, Field):
        return Field._wrap(value.domain, value.ndarray.astype(target), value.xp)
    if isinstance(value, _SCALARS):
        return target.type(value)
    raise TypeError(
        f"astype(value, {target.name}): value must be a field, a scalar or a tuple of them,"
        f" got {type(value).__name__}"
    )


def _broadcast_on_values(value: Any, dims: Any) -> Any:
    """``broadcast(scalar, dims)`` outside an operator is the scalar: it broadcasts by itself,
    as in gt4py. A field would need unbounded ranges on the new dimensions, which concrete
    fields do not have here: inside an operator ``broadcast`` works on fields."""
    if isinstance(value, _SCALARS):
        return value
    raise TypeError(
        "broadcast() of a field works only inside a @field_operator (outside one, combine the"
        " fields directly: they broadcast by dimension names)"
    )


def _where_on_values(mask: Any, a: Any, b: Any) -> Any:
    """``where(mask, a, b)`` on concrete fields (outside an operator), as gt4py's embedded
    backend runs it: operands broadcast by dimension names over the intersection of their
    domains; tuples of values give a tuple, element by element."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)):
            raise TypeError(
                "where(mask, a, b): a and b must both be tuples of the same length, or neither"
            )
        return tuple(_where_on_values(mask, x, y) for x, y in zip(a, b))
    field = next((v for v in (mask, a, b) if hasattr(v, "_apply") and hasattr(v, "domain")), None)
    if field is None:
        raise TypeError(
            "where() outside a @field_operator needs a field among its arguments; call it on"
            " fields, or inside an operator"
        )
    if not hasattr(mask, "domain") or str(getattr(mask.dtype, "name", mask.dtype)) != "bool":
        raise TypeError(
            f"where(mask, a, b): the mask must be a field of bool, got {mask!r}",
        )
    return field._apply(field.xp.where, mask, a, b)


BUILTINS: dict[str, Builtin] = {n: Builtin(n) for n in (*MATH_BUILTINS, *SPECIAL_BUILTINS)}

neighbor_sum = BUILTINS["neighbor_sum"]
max_over = BUILTINS["max_over"]
min_over = BUILTINS["min_over"]
where = BUILTINS["where"]
concat_where = BUILTINS["concat_where"]
broadcast = BUILTINS["broadcast"]
astype = BUILTINS["astype"]
minimum = BUILTINS["minimum"]
maximum = BUILTINS["maximum"]
abs = BUILTINS["abs"]
sqrt = BUILTINS["sqrt"]
exp = BUILTINS["exp"]
log = BUILTINS["log"]
sin = BUILTINS["sin"]
cos = BUILTINS["cos"]
tan = BUILTINS["tan"]
arcsin = BUILTINS["arcsin"]
arccos = BUILTINS["arccos"]
arctan = BUILTINS["arctan"]
sinh = BUILTINS["sinh"]
cosh = BUILTINS["cosh"]
tanh = BUILTINS["tanh"]
floor = BUILTINS["floor"]
ceil = BUILTINS["ceil"]
trunc = BUILTINS["trunc"]
cbrt = BUILTINS["cbrt"]
isfinite = BUILTINS["isfinite"]
isnan = BUILTINS["isnan"]
isinf = BUILTINS["isinf"]
fmod = BUILTINS["fmod"]
power = BUILTINS["power"]
gamma = BUILTINS["gamma"]
arcsinh = BUILTINS["arcsinh"]
arccosh = BUILTINS["arccosh"]
arctanh = BUILTINS["arctanh"]
neg = BUILTINS["neg"]
as_offset = BUILTINS["as_offset"]
