"""Signatures and docstrings of the DSL builtins, for ``help()``, IDEs and the API reference.

One entry per builtin: its parameters (gt4py.next 1.2.3's, positional-only) and what it does,
with an example. ``next.builtins`` attaches them to the builtin objects.
"""

from __future__ import annotations

import inspect
from typing import Any

_P = inspect.Parameter


def _pos(*names: str) -> list[inspect.Parameter]:
    return [_P(n, _P.POSITIONAL_ONLY, annotation=a) for n, a in (n.split(":") for n in names)]


_KW_AXIS = _P("axis", _P.POSITIONAL_OR_KEYWORD, annotation="Dimension")

#: name -> (parameters, return annotation, docstring)
SPECIAL: dict[str, tuple[list[inspect.Parameter], str, str]] = {
    "neighbor_sum": (
        [*_pos("field:Field"), _KW_AXIS],
        "Field",
        """\
Sum over the neighbours along the local dimension ``axis``.

``field`` is on a local (neighbour) dimension, typically after a shift by a neighbour table
such as ``vn(C2E)``; missing neighbours (skip value -1) contribute nothing.

Example (divergence on a cell from its three edges)::

    @gtx.field_operator
    def div(vn: Field[Dims[Edge, K], float64],
            geofac: Field[Dims[Cell, C2EDim], float64]) -> Field[Dims[Cell, K], float64]:
        return neighbor_sum(vn(C2E) * geofac, axis=C2EDim)
""",
    ),
    "max_over": (
        [*_pos("field:Field"), _KW_AXIS],
        "Field",
        """\
The maximum over the neighbours along the local dimension ``axis``.

Missing neighbours (skip value -1) are left out (a point without any neighbour gets the
identity of the maximum, the dtype's lowest value).

Example::

    return max_over(theta(E2C), axis=E2CDim)    # the larger of the two cells of each edge
""",
    ),
    "min_over": (
        [*_pos("field:Field"), _KW_AXIS],
        "Field",
        """\
The minimum over the neighbours along the local dimension ``axis``.

Missing neighbours (skip value -1) are left out (a point without any neighbour gets the
identity of the minimum, the dtype's highest value).

Example::

    return min_over(theta(V2C), axis=V2CDim)    # the coldest cell around each vertex
""",
    ),
    "where": (
        _pos("mask:Field[..., bool]", "true_field:Field | scalar", "false_field:Field | scalar"),
        "Field",
        """\
Element-wise choice: ``true_field`` where ``mask`` is true, else ``false_field``.

Operands broadcast by dimension names; either branch may be a scalar or a tuple (chosen
element by element).

Example::

    return where(a > 0.0, a, 0.0)               # clip negative values
""",
    ),
    "concat_where": (
        _pos(
            "domain_condition:Domain condition",
            "true_field:Field | scalar",
            "false_field:Field | scalar",
        ),
        "Field",
        """\
Join two fields along a domain condition on indices: ``true_field`` where the condition holds.

The condition compares a dimension with an index (``I < 5``, ``K == 0``, ``(I < 2) | (I >= n)``);
each branch needs to be defined only where it is chosen, so boundary code can shift without
running off its field.

Example::

    return concat_where(K == 0, surface_value, a(K - 1))   # first level from the surface
""",
    ),
    "broadcast": (
        _pos("field:Field | scalar", "dims:tuple[Dimension, ...]"),
        "Field",
        """\
``field`` (or a scalar) extended to the dimensions ``dims`` without copying values.

Example::

    return broadcast(1.0, (Cell, K))            # a field of ones on Cell x K
""",
    ),
    "astype": (
        _pos("value:Field | scalar", "type_:dtype"),
        "Field",
        """\
``value`` converted element by element to the scalar type ``type_``.

Example::

    return astype(count, float64) / 3.0
""",
    ),
    "as_offset": (
        _pos("offset_:FieldOffset", "field:Field[..., int]"),
        "FieldOffset",
        """\
A shift by a per-point amount: shift ``offset_``'s dimension by the values of ``field``.

Example (``stencilkit.experimental.as_offset``)::

    return a(as_offset(Koff, k_shift))           # a[K + k_shift[K]] at every point
""",
    ),
}

_UNARY: dict[str, str] = {
    "sqrt": "square root",
    "exp": "exponential",
    "log": "natural logarithm",
    "sin": "sine",
    "cos": "cosine",
    "tan": "tangent",
    "arcsin": "inverse sine",
    "arccos": "inverse cosine",
    "arctan": "inverse tangent",
    "sinh": "hyperbolic sine",
    "cosh": "hyperbolic cosine",
    "tanh": "hyperbolic tangent",
    "arcsinh": "inverse hyperbolic sine",
    "arccosh": "inverse hyperbolic cosine",
    "arctanh": "inverse hyperbolic tangent",
    "floor": "floor (largest integer not above)",
    "ceil": "ceiling (smallest integer not below)",
    "trunc": "value rounded towards zero",
    "cbrt": "cube root",
    "gamma": "gamma function",
    "log10": "base-10 logarithm",
    "erf": "error function",
    "erfc": "complementary error function (1 - erf, accurate where erf is near 1)",
    "abs": "absolute value",
    "neg": "negation",
    "isfinite": "test for finite values",
    "isnan": "test for NaN",
    "isinf": "test for infinite values",
}
_BINARY: dict[str, str] = {
    "minimum": "smaller of ``x`` and ``y``",
    "maximum": "larger of ``x`` and ``y``",
    "fmod": "remainder of ``x / y`` with the sign of ``x`` (C's fmod)",
    "power": "``x`` raised to the power ``y``",
}
_EXAMPLE_ARG = {
    "arccosh": "1.0 + a * a",
    "log": "1.0 + a * a",
    "sqrt": "a * a",
    "gamma": "1.0 + a * a",
    "log10": "1.0 + a * a",
}


def signature_and_doc(name: str) -> tuple[inspect.Signature, str]:
    """The ``inspect.Signature`` and the docstring of builtin ``name``."""
    if name in SPECIAL:
        params, ret, doc = SPECIAL[name]
        return inspect.Signature(params, return_annotation=ret), doc
    if name in _BINARY:
        params = _pos("x:Field | scalar", "y:Field | scalar")
        doc = (
            f"Element-wise {_BINARY[name]}; fields broadcast by dimension names.\n\n"
            f"Example::\n\n    return {name}(a, 0.5 * b)\n"
        )
        return inspect.Signature(params, return_annotation="Field | scalar"), doc
    what = _UNARY[name]
    result = "a bool field" if name.startswith("is") else "the same type"
    arg = _EXAMPLE_ARG.get(name, "a")
    doc = (
        f"Element-wise {what} of a field or scalar (gives {result}).\n\n"
        "Inside a ``@field_operator`` it becomes part of the kernel; called on fields outside\n"
        "one it applies to their arrays directly.\n\n"
        f"Example::\n\n    return {name}({arg})\n"
    )
    return inspect.Signature(_pos("x:Field | scalar"), return_annotation="Field | scalar"), doc


def attach(obj: Any, name: str) -> None:
    """Give a builtin object its name, signature and docstring (``help()`` shows them)."""
    sig, doc = signature_and_doc(name)
    obj.__signature__ = sig
    obj.__doc__ = doc
    obj.__name__ = obj.__qualname__ = name
    obj.__module__ = "stencilkit"
