"""Static arguments: ``prog.compile(offset_provider=..., n=[2, 3])`` (gt4py.next's form).

Each value of a static scalar parameter gets its own variant of the program: the parameter's
uses are replaced by the value (a literal in the IR, so in the generated code and in the build
cache's key), and a call runs the variant of the values it passes. A value that was not listed
makes its variant at that call (gt4py's ``enable_jit``, its default). The parameter stays in the
variant's signature (the calls pass it); the variant does not read it.

>>> prog.compile(offset_provider={}, n=[2, 3])
>>> prog(a, 2, out, offset_provider={})      # the variant with n = 2
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.types import ScalarType, TupleType
from ..ir import nodes as ir
from ..ir.visit import substitute


def static_value(value: Any, t: Any) -> Any:
    """``value`` as a Python value of the parameter type ``t`` (a scalar or a tuple of them):
    the key of its variant."""
    if isinstance(t, TupleType):
        return tuple(static_value(v, s) for v, s in zip(value, t.types, strict=True))
    return np.dtype(t.dtype).type(value).item()


def _literal(value: Any, t: Any) -> ir.Expr:
    if isinstance(t, TupleType):
        return ir.MakeTuple(tuple(_literal(v, s) for v, s in zip(value, t.types)), t)
    assert isinstance(t, ScalarType)
    return ir.Literal(value, t)


def static_definition(definition: ir.Program, values: Mapping[str, Any]) -> ir.Program:
    """``definition`` with each parameter in ``values`` replaced by its value in the body."""
    types = {p.name: p.type for p in definition.params}
    mapping: dict[str, ir.Node] = {n: _literal(v, types[n]) for n, v in values.items()}
    body = tuple(substitute(s, mapping) for s in definition.body)
    return ir.Program(definition.name, definition.params, body, definition.temps)


def static_key(
    definition: ir.Program,
    names: Sequence[str],
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
) -> tuple[Any, ...]:
    """The values of the static parameters ``names`` in a call's arguments."""
    order = [p.name for p in definition.params]
    types = {p.name: p.type for p in definition.params}
    key = []
    for n in names:
        i = order.index(n)
        value = args[i] if i < len(args) else kwargs[n]
        key.append(static_value(value, types[n]))
    return tuple(key)
