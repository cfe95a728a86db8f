"""Dimensions, dimension kinds, offsets and the ``Dims[...]`` annotation helper."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class DimensionKind(enum.Enum):
    """How a dimension is used: horizontal (parallel), vertical (columns, scans), local (neighbours)."""

    HORIZONTAL = "horizontal"
    VERTICAL = "vertical"
    LOCAL = "local"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
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

    def __add__(self, offset: int) -> CartesianOffset:
        return CartesianOffset(self, int(offset))

    def __sub__(self, offset: int) -> CartesianOffset:
        return CartesianOffset(self, -int(offset))


@dataclass(frozen=True, slots=True)
class CartesianOffset:
    """``I + 1``: a shift by a constant along one Cartesian dimension."""

    dim: Dimension
    offset: int


@dataclass(frozen=True, slots=True)
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
        return len(self.target) == 1 and self.target[0] == self.source


@dataclass(frozen=True, slots=True)
class FieldOffsetElement:
    """``E2C[0]``: one neighbour of a neighbour table."""

    offset: FieldOffset
    index: int


class Dims:
    """``Dims[I, J, K]``: the dimensions of a field in a ``Field[...]`` annotation."""

    def __class_getitem__(cls, dims: Any) -> tuple[Dimension, ...]:
        dims = dims if isinstance(dims, tuple) else (dims,)
        for d in dims:
            if not isinstance(d, Dimension):
                raise TypeError(f"Dims[...] takes Dimension objects, got {d!r}")
            if dims.count(d) > 1:
                raise TypeError(f"Dims[...] lists {d.value} twice; a field has each dimension once")
        return tuple(dims)
