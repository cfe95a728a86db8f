"""Dimensions, dimension kinds, offsets and the ``Dims[...]`` annotation helper."""

from __future__ import annotations

import enum
import types
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard, TypeVar

import numpy as np

from .records import record

if TYPE_CHECKING:
    from .domain import Domain


class DimensionKind(enum.Enum):
    """How a dimension is used: horizontal (parallel), vertical (columns, scans), local (neighbours)."""

    HORIZONTAL = "horizontal"
    VERTICAL = "vertical"
    LOCAL = "local"

    def __str__(self) -> str:
        return self.value


@record
class Dimension:
    """A named axis of a field, e.g. ``I = Dimension("I")``, ``K = Dimension("K", kind=DimensionKind.VERTICAL)``."""

    value: str
    kind: DimensionKind = DimensionKind.HORIZONTAL

    def __post_init__(self) -> None:
        if not isinstance(self.value, str) or not self.value.isidentifier():
            raise ValueError(f"dimension name must be an identifier, got {self.value!r}")

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Dimension({self.value!r}, {self.kind.name})"

    def __eq__(self, other: object) -> Any:
        # Two dimensions compare by value; ``X == 3`` outside the DSL is the domain {X: 3..4}.
        if isinstance(other, Dimension):
            return self.value == other.value and self.kind == other.kind
        if _is_index(other):
            return self._domain(int(other), int(other) + 1)
        return NotImplemented

    def __ne__(self, other: object) -> Any:
        if isinstance(other, Dimension):
            return not self == other
        if _is_index(other):
            raise NotImplementedError("'Dimension != index' is not a domain; use two domains")
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.value, self.kind))

    def __lt__(self, other: int) -> Domain:
        return self._domain(None, other)

    def __le__(self, other: int) -> Domain:
        return self._domain(None, other + 1)

    def __gt__(self, other: int) -> Domain:
        return self._domain(other + 1, None)

    def __ge__(self, other: int) -> Domain:
        return self._domain(other, None)

    def _domain(self, start: int | None, stop: int | None) -> Domain:
        if not _is_index(start if start is not None else stop):
            raise TypeError(
                f"a dimension can be compared with an integer index, not {start or stop!r}"
            )
        from .domain import Domain, NamedRange, unit_range

        return Domain(NamedRange(self, unit_range((start, stop))))

    def __call__(self, index: int) -> NamedIndex:
        """``X(5)``: index 5 along ``X`` (a :class:`NamedIndex`)."""
        return NamedIndex(self, index)

    def __add__(self, offset: int) -> CartesianOffset:
        return CartesianOffset(self, int(offset))

    def __sub__(self, offset: int) -> CartesianOffset:
        return CartesianOffset(self, -int(offset))


def _is_index(value: object) -> TypeGuard[int | np.integer[Any]]:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


class NamedIndex(NamedTuple):
    """``X(5)``: one index along a dimension."""

    dim: Dimension
    value: int


@record
class CartesianOffset:
    """``I + 1``: a shift by a constant along one Cartesian dimension."""

    dim: Dimension
    offset: int


@record
class FieldOffset:
    """A named offset, Cartesian (``FieldOffset("Ioff", source=I, target=(I,))``) or through a
    neighbour table (``FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))``)."""

    value: str
    source: Dimension
    target: tuple[Dimension, ...]

    def __init__(
        self, value: str, source: Dimension, target: Dimension | tuple[Dimension, ...]
    ) -> None:
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "target", target if isinstance(target, tuple) else (target,))
        if not 1 <= len(self.target) <= 2:
            raise ValueError(f"FieldOffset {value!r}: target must be one or two dimensions")
        if len(self.target) == 2 and self.target[1].kind is not DimensionKind.LOCAL:
            raise ValueError(
                f"FieldOffset {value!r}: the second target dimension {self.target[1]} must be"
                " of kind DimensionKind.LOCAL"
            )

    def __getitem__(self, index: int) -> FieldOffsetElement:
        return FieldOffsetElement(self, int(index))

    def __str__(self) -> str:
        return self.value

    @property
    def is_cartesian(self) -> bool:
        """Whether the offset shifts along one dimension by a constant (``I + 1``), not through a
        neighbour table."""
        return len(self.target) == 1 and self.target[0] == self.source


@record
class FieldOffsetElement:
    """``E2C[0]``: one neighbour of a neighbour table."""

    offset: FieldOffset
    index: int


class Dims:
    """``Dims[I, J, K]``: the dimensions of a field in a ``Field[...]`` annotation.

    A typing generic alias, so that type variables work as in gt4py.next:
    ``Field[Dims[DimsT], T]`` is substituted later (``[Dims[I, K], float64]``). The class
    ``Dimension`` itself stands for "some dimension" in plain Python annotations
    (``Field[Dims[Dimension], float64]``, as icon4py writes); the frontend refuses it as the type
    of an operator or program parameter.
    """

    def __class_getitem__(cls, dims: Any) -> Any:
        dims = dims if isinstance(dims, tuple) else (dims,)
        for d in dims:
            if not (isinstance(d, Dimension | TypeVar) or is_dimension_class(d)):
                raise TypeError(f"Dims[...] takes Dimension objects, got {d!r}")
            if dims.count(d) > 1:
                raise TypeError(f"Dims[...] lists {d} twice; a field has each dimension once")
        return types.GenericAlias(cls, dims)


def is_dimension_class(d: Any) -> bool:
    """``Dimension`` (or a subclass) itself, as a placeholder for any dimension."""
    return isinstance(d, type) and issubclass(d, Dimension)


def dims_of_annotation(dims: Any) -> tuple[Any, ...]:
    """The dimensions (or type variables) named by ``Dims[...]``, a list/tuple, or one dimension."""
    import typing

    if typing.get_origin(dims) is Dims:
        items: tuple[Any, ...] = typing.get_args(dims)
    elif isinstance(dims, list | tuple):
        items = tuple(dims)
    else:
        return (dims,)
    # a type variable substituted by Dims[X, Y] (or a tuple of dimensions) stands for those
    return tuple(
        d
        for item in items
        for d in (
            dims_of_annotation(item)
            if typing.get_origin(item) is Dims or isinstance(item, list | tuple)
            else (item,)
        )
    )
