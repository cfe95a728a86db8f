"""Types of DSL values: fields, scalars, tuples of them."""

from __future__ import annotations

import types
import typing
from typing import Any

from .dims import Dimension, DimensionKind, dims_of_annotation
from .dtypes import dtype_name
from .records import record


@record
class ScalarType:
    """A scalar of ``dtype``."""

    dtype: str

    def __str__(self) -> str:
        return self.dtype


@record
class FieldType:
    """A field over ``dims`` of ``dtype``."""

    dims: tuple[Dimension, ...]
    dtype: str

    def __str__(self) -> str:
        return f"Field[[{', '.join(d.value for d in self.dims)}], {self.dtype}]"


@record
class TupleType:
    """A tuple of field or scalar types (a tuple-valued operator, a tuple argument)."""

    types: tuple[TypeSpec, ...]

    def __str__(self) -> str:
        return f"tuple[{', '.join(map(str, self.types))}]"


TypeSpec = ScalarType | FieldType | TupleType


def scalar_type_of_value(v: Any) -> ScalarType | None:
    """The DSL type of a Python or NumPy scalar value as gt4py sees it (``int`` is int32,
    ``float`` float64, a NumPy scalar its own dtype), or None for anything else."""
    import numpy as np

    if isinstance(v, np.generic):
        return ScalarType(v.dtype.name)
    if isinstance(v, bool):
        return ScalarType("bool")
    if isinstance(v, int):
        return ScalarType("int32")
    if isinstance(v, float):
        return ScalarType("float64")
    return None


def field_type_of(args: tuple[Any, ...]) -> FieldType:
    """The DSL type of ``Field[dims, dtype]`` given its two type arguments; ``TypeError`` when
    they are not concrete dimensions and a scalar type (e.g. a type variable left unbound)."""
    if len(args) != 2:
        raise TypeError(f"Field[{', '.join(map(repr, args))}] needs dimensions and a dtype")
    dims = dims_of_annotation(args[0])
    unbound = [a for a in (*dims, args[1]) if isinstance(a, typing.TypeVar)]
    if unbound:
        raise TypeError(
            f"the type variable {unbound[0]} of this field type is not bound;"
            f" subscript the alias, e.g. MyField[float64]"
        )
    for d in dims:
        if isinstance(d, type) and issubclass(d, Dimension):
            raise TypeError(
                "Field[Dims[Dimension], ...] stands for a field of any dimensions; an operator or"
                " program parameter needs its dimensions, e.g. Field[Dims[Cell, K], float64]"
            )
        if not isinstance(d, Dimension):
            raise TypeError(f"Field[...] dimensions must be Dimension objects, got {d!r}")
    if typing.get_origin(args[1]) in (typing.Union, types.UnionType):
        raise TypeError(
            f"Field[..., {args[1]!r}] allows several dtypes; an operator or program parameter"
            " needs one, e.g. Field[Dims[Cell, K], float64]"
        )
    return FieldType(tuple(dims), dtype_name(args[1]))


def canonical_dims(dims: tuple[Dimension, ...]) -> tuple[Dimension, ...]:
    """Order dimensions the way gt4py.next promotes them: horizontal, then vertical, then local,
    each group in order of first appearance."""
    order = {DimensionKind.HORIZONTAL: 0, DimensionKind.VERTICAL: 1, DimensionKind.LOCAL: 2}
    return tuple(sorted(dims, key=lambda d: order[d.kind]))


def promote_dims(
    *dim_lists: tuple[Dimension, ...], within_kinds: bool = False
) -> tuple[Dimension, ...]:
    """Union of dimension lists, keeping each list's relative order (gt4py.next's promotion).

    ``[K]`` with ``[I, K]`` gives ``(I, K)``; ``[I, J]`` with ``[J, I]`` is refused. Dimensions
    no input orders are placed horizontal, vertical, local, then by name (gt4py's canonical
    order): ``[J, K]`` with ``[I, K]`` gives ``(I, J, K)``.
    ``within_kinds``: only the order among dimensions of one kind counts (the result is sorted by
    kind anyway); operators use it, so that ``[Cell, C2EDim, K]`` (gt4py's order) combines with
    ``[Cell, K, C2EDim]`` (stencilkit's).
    """
    order = {DimensionKind.HORIZONTAL: 0, DimensionKind.VERTICAL: 1, DimensionKind.LOCAL: 2}
    remaining: list[Dimension] = []
    before: dict[Dimension, set[Dimension]] = {}
    for dims in dim_lists:
        for pos, d in enumerate(dims):
            if d not in before:
                remaining.append(d)
                before[d] = set()
            before[d].update(x for x in dims[:pos] if not within_kinds or x.kind == d.kind)
    result: list[Dimension] = []
    while remaining:
        ready = [d for d in remaining if before[d] <= set(result)]
        if not ready:
            raise ValueError(
                "cannot combine fields with dimensions "
                + " and ".join("[" + ", ".join(map(str, d)) + "]" for d in dim_lists)
                + ": their dimension orders differ"
            )
        # no input orders them: by name, as gt4py orders dimensions ([J, K] + [I, K] is
        # [I, J, K], so it combines with an [I, J, K] field and fits an [I, J, K] out=)
        first = min(ready, key=lambda d: (order[d.kind], d.value))
        result.append(first)
        remaining.remove(first)
    return canonical_dims(tuple(result))
