"""Index ranges and domains: where a field is defined and where a stencil writes.

The API follows gt4py.next's ``common`` module: ``Domain`` is a sequence of ``NamedRange``
(``d[X]`` -> ``NamedRange(X, UnitRange(0, 10))``), ranges may be infinite on either side
(``X < 3`` is the domain ``{X: -inf..3}``), and ``d.slice_at[1:-1, :]`` slices by relative
positions.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .dims import Dimension, NamedIndex
from .records import record
from .staggered import flip_staggered, is_staggered


class Infinity(enum.Enum):
    """The unbounded ends of a ``UnitRange``: ``Infinity.NEGATIVE`` < every int < ``Infinity.POSITIVE``."""

    NEGATIVE = -1
    POSITIVE = 1

    @classmethod
    def positive(cls) -> Infinity:
        return cls.POSITIVE

    @classmethod
    def negative(cls) -> Infinity:
        return cls.NEGATIVE

    def _rank(self, other: Any) -> tuple[int, int] | None:
        if isinstance(other, Infinity):
            return self.value, other.value
        if isinstance(other, int):
            return self.value, 0
        return None

    def __lt__(self, other: Any) -> bool:
        r = self._rank(other)
        return NotImplemented if r is None else r[0] < r[1]

    def __le__(self, other: Any) -> bool:
        r = self._rank(other)
        return NotImplemented if r is None else r[0] <= r[1]

    def __gt__(self, other: Any) -> bool:
        r = self._rank(other)
        return NotImplemented if r is None else r[0] > r[1]

    def __ge__(self, other: Any) -> bool:
        r = self._rank(other)
        return NotImplemented if r is None else r[0] >= r[1]

    def __add__(self, other: int) -> Infinity:
        return self

    __radd__ = __add__

    def __sub__(self, other: int) -> Infinity:
        return self

    def __neg__(self) -> Infinity:
        return Infinity.NEGATIVE if self is Infinity.POSITIVE else Infinity.POSITIVE

    def __str__(self) -> str:
        return "inf" if self is Infinity.POSITIVE else "-inf"


Bound = int | Infinity


@record
class UnitRange:
    """The half-open integer range ``[start, stop)``; either end may be infinite. An empty range
    keeps its start (gt4py.next normalises it to ``UnitRange(0, 0)``)."""

    # Typed int: the rest of the package handles finite ranges only; the ends of an infinite
    # range (``unit_range(None)``, ``X < 3``) hold ``Infinity`` members, which compare with ints.
    start: int
    stop: int

    def __post_init__(self) -> None:
        if not isinstance(self.start, int | Infinity):
            object.__setattr__(self, "start", int(self.start))
        if not isinstance(self.stop, int | Infinity):
            object.__setattr__(self, "stop", int(self.stop))
        if self.start is Infinity.POSITIVE or self.stop is Infinity.NEGATIVE:  # type: ignore[comparison-overlap]  # start/stop are int for users; bounded() stores Infinity members
            raise ValueError(f"UnitRange({self.start}, {self.stop}) has no valid bounds")
        if self.stop < self.start:
            object.__setattr__(self, "stop", self.start)

    @classmethod
    def infinite(cls) -> UnitRange:
        """The range of every index, ``-inf .. +inf`` (gt4py.next's ``UnitRange.infinite()``)."""
        return cls.bounded(Infinity.NEGATIVE, Infinity.POSITIVE)

    @classmethod
    def bounded(cls, start: Bound, stop: Bound) -> UnitRange:
        """A range whose ends may be ``Infinity`` members."""
        return cls(start, stop)  # type: ignore[arg-type]  # the one constructor that may store Infinity (see __post_init__)

    def is_finite(self) -> bool:
        """Whether both ends are integers (not ``Infinity``)."""
        return isinstance(self.start, int) and isinstance(self.stop, int)

    def is_empty(self) -> bool:
        """Whether the range holds no index (``start == stop``)."""
        return self.start == self.stop

    def __len__(self) -> int:
        if not (isinstance(self.start, int) and isinstance(self.stop, int)):
            raise ValueError(f"the range {self} is infinite")
        return self.stop - self.start

    def __iter__(self) -> Iterator[int]:
        if not (isinstance(self.start, int) and isinstance(self.stop, int)):
            raise ValueError(f"cannot iterate over the infinite range {self}")
        return iter(range(self.start, self.stop))

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise ValueError("a UnitRange can only be sliced with step 1")
            start, stop, _ = index.indices(len(self))
            return UnitRange(self.start + start, self.start + stop)
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} out of the range {self}")
        return self.start + (index % n)

    def __contains__(self, other: object) -> bool:
        if isinstance(other, UnitRange):
            return other.is_empty() or (self.start <= other.start and other.stop <= self.stop)
        return isinstance(other, int) and self.start <= other < self.stop

    def __and__(self, other: UnitRange) -> UnitRange:
        return UnitRange(max(self.start, other.start), min(self.stop, other.stop))

    def __le__(self, other: UnitRange) -> bool:
        return self in other

    def __lt__(self, other: UnitRange) -> bool:
        return self in other and self != other

    def __ge__(self, other: UnitRange) -> bool:
        return other in self

    def __gt__(self, other: UnitRange) -> bool:
        return other in self and self != other

    def __add__(self, n: int) -> UnitRange:
        return self.shifted(n)

    def __sub__(self, n: int) -> UnitRange:
        return self.shifted(-n)

    def shifted(self, by: int) -> UnitRange:
        """The range moved by ``by`` indices: ``UnitRange(2, 5).shifted(-1) == UnitRange(1, 4)``."""
        return UnitRange(self.start + by, self.stop + by)

    def __str__(self) -> str:
        return f"{self.start}:{self.stop}"


RangeLike = UnitRange | range | tuple[int | None, int | None] | int | None


def unit_range(r: Any) -> UnitRange:
    """A UnitRange from ``UnitRange``, ``range``, ``(start, stop)`` (``None`` = infinite), a
    size, or ``None`` (infinite both ways)."""
    if isinstance(r, UnitRange):
        return r
    if r is None:
        return UnitRange.infinite()
    if isinstance(r, range):
        if r.step != 1:
            raise ValueError(f"range {r} must have step 1")
        return UnitRange(r.start, r.stop)
    if isinstance(r, tuple) and len(r) == 2:
        lo = (
            Infinity.NEGATIVE if r[0] is None else r[0] if isinstance(r[0], Infinity) else int(r[0])
        )
        hi = (
            Infinity.POSITIVE if r[1] is None else r[1] if isinstance(r[1], Infinity) else int(r[1])
        )
        return UnitRange.bounded(lo, hi)
    if _is_int(r):
        if r < 0:
            raise ValueError(
                f"a size must not be negative, got {int(r)}; give (start, stop) for a range"
                " that does not start at 0"
            )
        return UnitRange(0, int(r))
    raise TypeError(f"cannot make an index range of {r!r}; use (start, stop), range or a size")


def _is_int(x: Any) -> bool:
    import numpy as np

    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


class NamedRange(NamedTuple):
    """A dimension with a range: ``NamedRange(X, UnitRange(0, 10))``; ``dim, rng = d[0]``."""

    dim: Dimension
    unit_range: UnitRange

    # Conveniences for code that treated ``domain[dim]`` as a range.
    @property
    def start(self) -> int:
        """The first index of the range."""
        return self.unit_range.start

    @property
    def stop(self) -> int:
        """The index past the last one of the range."""
        return self.unit_range.stop

    def __contains__(self, other: object) -> bool:
        return other in self.unit_range

    def __str__(self) -> str:
        return f"{self.dim}: {self.unit_range}"


def named_range(v: Any) -> NamedRange:
    """A NamedRange from ``NamedRange`` or ``(dim, range-like)``."""
    if isinstance(v, NamedRange):
        return v
    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], Dimension):
        return NamedRange(v[0], unit_range(v[1]))
    raise TypeError(f"cannot make a NamedRange of {v!r}; use (Dimension, (start, stop))")


@dataclass(frozen=True, slots=True, init=False)
class Domain:
    """Dimensions with an index range each, a sequence of :class:`NamedRange`.

    ``Domain(NamedRange(I, UnitRange(0, 4)), ...)`` or ``Domain(dims=(I, J), ranges=(...))``.

    >>> d = domain({I: (0, 10), J: (5, 15)})
    >>> d[J].unit_range.start, d.slice_at[2:3, 2:5]
    (5, Domain(I: 2:3, J: 7:10))
    """

    dims: tuple[Dimension, ...]
    ranges: tuple[UnitRange, ...]

    def __init__(
        self,
        *args: Any,
        dims: Sequence[Dimension] | None = None,
        ranges: Sequence[UnitRange] | None = None,
    ) -> None:
        if dims is not None or ranges is not None:
            if args:
                raise TypeError("Domain() takes named ranges or dims=/ranges=, not both")
            dims_t, ranges_t = tuple(dims or ()), tuple(unit_range(r) for r in (ranges or ()))
        elif (
            len(args) == 2
            and isinstance(args[0], tuple | list)
            and isinstance(args[1], tuple | list)
            and all(isinstance(d, Dimension) for d in args[0])
            and all(isinstance(r, UnitRange) for r in args[1])
        ):
            dims_t, ranges_t = tuple(args[0]), tuple(args[1])  # Domain(dims, ranges)
        else:
            nrs = [named_range(a) for a in args]
            dims_t, ranges_t = tuple(n.dim for n in nrs), tuple(n.unit_range for n in nrs)
        object.__setattr__(self, "dims", dims_t)
        object.__setattr__(self, "ranges", ranges_t)
        if len(dims_t) != len(ranges_t):
            raise ValueError("a Domain needs one range per dimension")
        if len(set(dims_t)) != len(dims_t):
            raise ValueError(f"repeated dimension in domain {self}")
        # a dimension and its staggered counterpart may share a Domain (gt4py's rule: GT4Py's
        # test helpers hold one with every size); fields refuse them (check_staggered)

    def check_staggered(self) -> None:
        """``ValueError`` where the domain holds a dimension and its staggered counterpart (a
        field's domain must not)."""
        for d in self.dims:
            if is_staggered(d) and flip_staggered(d) in self.dims:
                raise ValueError(
                    f"dimensions {flip_staggered(d)} and {d} cannot be combined: a dimension and"
                    " its staggered counterpart must not appear together in one field"
                )

    @property
    def shape(self) -> tuple[int, ...]:
        """The number of indices along each dimension."""
        return tuple(len(r) for r in self.ranges)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.dims)

    @property
    def size(self) -> int | None:
        """The number of points, ``None`` if the domain is infinite."""
        if not self.is_finite():
            return None
        n = 1
        for r in self.ranges:
            n *= len(r)
        return n

    @property
    def origin(self) -> tuple[int, ...]:
        """The first index of each dimension's range (the domain origin)."""
        return tuple(r.start for r in self.ranges)

    def is_finite(self) -> bool:
        """Whether every range has integer ends (no ``Infinity``)."""
        return all(r.is_finite() for r in self.ranges)

    def is_empty(self) -> bool:
        """Whether any dimension's range is empty (the domain holds no point)."""
        return any(r.is_empty() for r in self.ranges)

    def __len__(self) -> int:
        return len(self.dims)

    def __iter__(self) -> Iterator[NamedRange]:
        return (NamedRange(d, r) for d, r in zip(self.dims, self.ranges))

    def dim_index(self, dim: Dimension, allow_missing: bool = False) -> int | None:
        """The position of ``dim`` among the domain's dimensions; None if absent and
        ``allow_missing``, else an error."""
        if dim in self.dims:
            return self.dims.index(dim)
        if allow_missing:
            return None
        raise ValueError(f"dimension {dim} not in domain {self}")

    def _index(self, index_or_dim: int | Dimension) -> int:
        if isinstance(index_or_dim, Dimension):
            if index_or_dim not in self.dims:
                raise KeyError(f"dimension {index_or_dim} not in domain {self}")
            return self.dims.index(index_or_dim)
        return range(len(self.dims))[index_or_dim]

    def __getitem__(self, index: int | slice | Dimension) -> Any:
        """``d[X]`` or ``d[0]``: a :class:`NamedRange`; ``d[1:]``: a :class:`Domain`."""
        if isinstance(index, slice):
            return Domain(dims=self.dims[index], ranges=self.ranges[index])
        i = self._index(index)
        return NamedRange(self.dims[i], self.ranges[i])

    def range_of(self, dim: Dimension) -> UnitRange:
        """The range along ``dim`` (``d[dim].unit_range``)."""
        return self.ranges[self._index(dim)]

    def __contains__(self, other: object) -> bool:
        if isinstance(other, Dimension):
            return other in self.dims
        if isinstance(other, Domain):
            return all(
                d in self.dims and r in self.range_of(d) for d, r in zip(other.dims, other.ranges)
            )
        return False

    def items(self) -> Iterator[tuple[Dimension, UnitRange]]:
        """The ``(dimension, range)`` pairs, in order."""
        return iter(zip(self.dims, self.ranges))

    def __str__(self) -> str:
        return "{" + ", ".join(f"{d}: {r}" for d, r in self.items()) + "}"

    def __repr__(self) -> str:
        return "Domain(" + ", ".join(f"{d}: {r}" for d, r in self.items()) + ")"

    @property
    def slice_at(self) -> _SliceAt:
        """``d.slice_at[2:3, 2:5]``: one relative slice (or index) per dimension -> a new domain."""
        return _SliceAt(self)

    def replace(self, index_or_dim: int | Dimension, *named_ranges: Any) -> Domain:
        """This domain with the range at ``index_or_dim`` replaced by ``named_ranges``
        (``d.replace(X, NamedRange(X, UnitRange(0, 4)))``; ``d.replace(X, UnitRange(0, 4))`` too)."""
        i = self._index(index_or_dim)
        if len(named_ranges) == 1 and isinstance(named_ranges[0], UnitRange):
            new = [NamedRange(self.dims[i], named_ranges[0])]
        else:
            new = [named_range(n) for n in named_ranges]
        parts = [*list(self)[:i], *new, *list(self)[i + 1 :]]
        return Domain(*parts)

    def insert(self, index_or_dim: int | Dimension, *named_ranges: Any) -> Domain:
        """This domain with ``named_ranges`` inserted before ``index_or_dim``."""
        i = (
            len(self.dims)
            if isinstance(index_or_dim, int) and index_or_dim == len(self.dims)
            else self._index(index_or_dim)
        )
        parts = [*list(self)[:i], *(named_range(n) for n in named_ranges), *list(self)[i:]]
        return Domain(*parts)

    def pop(self, index_or_dim: int | Dimension = -1) -> Domain:
        """This domain without the dimension at ``index_or_dim``."""
        i = self._index(index_or_dim)
        return Domain(*[n for j, n in enumerate(self) if j != i])

    def __and__(self, other: Domain) -> Domain:
        """The intersection; a dimension missing on one side counts as infinite there."""
        from .types import promote_dims

        dims = promote_dims(self.dims, other.dims)
        inf = UnitRange.infinite()
        return Domain(
            dims=dims,
            ranges=tuple(
                (self.range_of(d) if d in self.dims else inf)
                & (other.range_of(d) if d in other.dims else inf)
                for d in dims
            ),
        )

    def __or__(self, other: Domain) -> Domain:
        """The union of two 1-D domains that overlap or touch."""
        if not (self.ndim == other.ndim == 1 and self.dims == other.dims):
            raise NotImplementedError(
                "the union is only defined for 1-D domains over one dimension"
            )
        a, b = self.ranges[0], other.ranges[0]
        if a.is_empty():
            return other
        if b.is_empty():
            return self
        if a.stop < b.start or b.stop < a.start:
            raise NotImplementedError(f"the union of {self} and {other} is not contiguous")
        return Domain(
            dims=self.dims, ranges=(UnitRange(min(a.start, b.start), max(a.stop, b.stop)),)
        )


@record
class _SliceAt:
    domain: Domain

    def __getitem__(self, index: Any) -> Domain:
        index = index if isinstance(index, tuple) else (index,)
        if len(index) > self.domain.ndim:
            raise IndexError(
                f"{len(index)} slices for the {self.domain.ndim}-D domain {self.domain}"
            )
        ranges = list(self.domain.ranges)
        for i, s in enumerate(index):
            r = ranges[i]
            if isinstance(s, slice):
                ranges[i] = r[s]
            elif _is_int(s):
                pos = r[int(s)]
                ranges[i] = UnitRange(pos, pos + 1)
            else:
                raise TypeError(f"slice_at takes slices or integers, got {s!r}")
        return Domain(dims=self.domain.dims, ranges=tuple(ranges))


DomainLike = Domain | Mapping[Dimension, RangeLike] | Sequence[tuple[Dimension, RangeLike]]


def domain(spec: Any) -> Domain:
    """A Domain from a Domain, a ``{dim: (start, stop) | size}`` mapping, ``(dim, range)``
    pairs, or a sequence of ``NamedRange``/``NamedIndex``.

    >>> domain({I: 10, J: (1, 5)})  # I: 0..10, J: 1..5
    """
    if isinstance(spec, Domain):
        return spec
    if isinstance(spec, Mapping):
        pairs: Sequence[tuple[Any, Any]] = list(spec.items())
    elif isinstance(spec, NamedRange):
        pairs = [spec]
    elif isinstance(spec, Sequence) and all(isinstance(p, tuple) and len(p) == 2 for p in spec):
        pairs = [(p.dim, (p.value, p.value + 1)) if isinstance(p, NamedIndex) else p for p in spec]
    else:
        raise TypeError(f"cannot make a Domain of {spec!r}; use a {{Dimension: range}} dict")
    for d, _ in pairs:
        if not isinstance(d, Dimension):
            raise TypeError(f"domain keys must be Dimensions, got {d!r}")
    return Domain(dims=tuple(d for d, _ in pairs), ranges=tuple(unit_range(r) for _, r in pairs))
