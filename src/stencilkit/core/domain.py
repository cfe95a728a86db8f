"""Index ranges and domains: where a field is defined and where a stencil writes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .dims import Dimension


@dataclass(frozen=True, slots=True)
class UnitRange:
    """The half-open integer range ``[start, stop)``."""

    start: int
    stop: int

    def __post_init__(self) -> None:
        if self.stop < self.start:
            object.__setattr__(self, "stop", self.start)

    def __len__(self) -> int:
        return self.stop - self.start

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start, self.stop))

    def __contains__(self, other: object) -> bool:
        if isinstance(other, UnitRange):
            return len(other) == 0 or (self.start <= other.start and other.stop <= self.stop)
        return isinstance(other, int) and self.start <= other < self.stop

    def __and__(self, other: UnitRange) -> UnitRange:
        return UnitRange(max(self.start, other.start), min(self.stop, other.stop))

    def shifted(self, by: int) -> UnitRange:
        return UnitRange(self.start + by, self.stop + by)

    def __str__(self) -> str:
        return f"{self.start}:{self.stop}"


RangeLike = UnitRange | range | tuple[int, int] | int


def unit_range(r: Any) -> UnitRange:
    """A UnitRange from ``UnitRange``, ``range``, ``(start, stop)`` or a size."""
    if isinstance(r, UnitRange):
        return r
    if isinstance(r, range):
        if r.step != 1:
            raise ValueError(f"range {r} must have step 1")
        return UnitRange(r.start, r.stop)
    if isinstance(r, tuple) and len(r) == 2:
        return UnitRange(int(r[0]), int(r[1]))
    if isinstance(r, int) and not isinstance(r, bool):
        return UnitRange(0, r)
    raise TypeError(f"cannot make an index range of {r!r}; use (start, stop), range or a size")


@dataclass(frozen=True, slots=True)
class Domain:
    """Dimensions with an index range each: ``Domain(dims=(I, J), ranges=(UnitRange(0, 4), ...))``."""

    dims: tuple[Dimension, ...]
    ranges: tuple[UnitRange, ...]

    def __post_init__(self) -> None:
        if len(self.dims) != len(self.ranges):
            raise ValueError("a Domain needs one range per dimension")
        if len(set(self.dims)) != len(self.dims):
            raise ValueError(f"repeated dimension in domain {self}")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(r) for r in self.ranges)

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def origin(self) -> tuple[int, ...]:
        return tuple(r.start for r in self.ranges)

    def __len__(self) -> int:
        return len(self.dims)

    def __getitem__(self, dim: Dimension) -> UnitRange:
        try:
            return self.ranges[self.dims.index(dim)]
        except ValueError:
            raise KeyError(f"dimension {dim} not in domain {self}") from None

    def __contains__(self, other: object) -> bool:
        if isinstance(other, Dimension):
            return other in self.dims
        if isinstance(other, Domain):
            return all(d in self.dims and r in self[d] for d, r in zip(other.dims, other.ranges))
        return False

    def items(self) -> Iterator[tuple[Dimension, UnitRange]]:
        return iter(zip(self.dims, self.ranges))

    def __str__(self) -> str:
        return "{" + ", ".join(f"{d}: {r}" for d, r in self.items()) + "}"

    def replace(self, dim: Dimension, rng: UnitRange) -> Domain:
        return Domain(self.dims, tuple(rng if d == dim else r for d, r in self.items()))


def domain(spec: Any) -> Domain:
    """A Domain from a Domain, a ``{dim: (start, stop) | size}`` mapping, or ``(dim, range)`` pairs.

    >>> domain({I: 10, J: (1, 5)})  # I: 0..10, J: 1..5
    """
    if isinstance(spec, Domain):
        return spec
    if isinstance(spec, Mapping):
        pairs: Sequence[tuple[Any, Any]] = list(spec.items())
    elif isinstance(spec, Sequence) and all(isinstance(p, tuple) and len(p) == 2 for p in spec):
        pairs = list(spec)
    else:
        raise TypeError(f"cannot make a Domain of {spec!r}; use a {{Dimension: range}} dict")
    for d, _ in pairs:
        if not isinstance(d, Dimension):
            raise TypeError(f"domain keys must be Dimensions, got {d!r}")
    return Domain(tuple(d for d, _ in pairs), tuple(unit_range(r) for _, r in pairs))
