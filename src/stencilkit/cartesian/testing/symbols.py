"""The symbols of a :class:`~.suites.StencilTestSuite`: what each name of the stencil is
(a field with its halo, a run-time parameter, an external, ``None``) and how its values are
drawn.

>>> field(in_range=(-1, 1), extent=[(-1, 1), (0, 0), (0, 0)]).boundary
((1, 1), (0, 0), (0, 0))
"""

from __future__ import annotations

import enum
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import hypothesis.strategies as st
import numpy as np

__all__ = ["Symbol", "SymbolKind", "field", "global_name", "none", "parameter", "scalar_strategy"]


class SymbolKind(enum.Enum):
    NONE = 0
    GLOBAL_STRATEGY = 1  # an external drawn at random (``global_name(in_range=...)``)
    GLOBAL_SET = 2  # an external that takes each of a few values (one build per value)
    SINGLETON = 3  # an external with one value (a function, a constant)
    PARAMETER = 4
    FIELD = 5


@dataclass(frozen=True)
class Symbol:
    """One name of a suite: its kind, and for a field its halo, axes and data dimensions."""

    kind: SymbolKind
    values: tuple[Any, ...] = ()  # GLOBAL_SET / SINGLETON / PARAMETER(one_of)
    in_range: tuple[Any, Any] | None = None
    boundary: tuple[tuple[int, int], ...] | None = None
    axes: str | None = None
    data_dims: tuple[int, ...] = ()

    @property
    def field_axes(self) -> str:
        return self.axes or "IJK"


def _range(in_range: Any) -> tuple[Any, Any]:
    lo, hi = in_range
    if lo > hi:
        raise ValueError(f"in_range {in_range!r}: the lower end is above the upper one")
    return (lo, hi)


def global_name(
    *, singleton: Any = None, symbol: Any = None, one_of: Sequence[Any] | None = None,
    in_range: Any = None,
) -> Symbol:  # fmt: skip
    """An external of the stencil (``from __externals__ import NAME``), with one value
    (``singleton``, ``symbol``), each of ``one_of`` (a build per value) or a random value
    ``in_range``. Exactly one of the four is given."""
    given = [x is not None for x in (singleton, symbol, one_of, in_range)]
    if sum(given) != 1:
        raise TypeError("global_name() takes exactly one of singleton, symbol, one_of, in_range")
    if singleton is not None:
        return Symbol(SymbolKind.SINGLETON, values=(singleton,))
    if symbol is not None:
        return Symbol(SymbolKind.GLOBAL_SET, values=(symbol,))
    if one_of is not None:
        if isinstance(one_of, str) or not isinstance(one_of, Sequence):
            raise TypeError(f"global_name(one_of=...) takes a sequence, got {one_of!r}")
        return Symbol(SymbolKind.GLOBAL_SET, values=tuple(one_of))
    return Symbol(SymbolKind.GLOBAL_STRATEGY, in_range=_range(in_range))


def field(
    *, in_range: Any, boundary: Sequence[tuple[int, int]] | None = None, axes: str | None = None,
    data_dims: Sequence[int] | None = None, extent: Sequence[tuple[int, int]] | None = None,
) -> Symbol:  # fmt: skip
    """A field with values in ``in_range`` and the halo it is read in: ``boundary`` (cells on
    each side, ``[(i-, i+), (j-, j+), (k-, k+)]``) or ``extent`` (the same as offsets,
    ``[(-i-, i+), ...]``); ``axes`` (``"IJK"``, ``"IJ"``, ``"K"`` ...) and ``data_dims``."""
    if boundary is None and extent is None:
        raise TypeError("field() needs boundary=[(lo, hi)] * 3 or extent=[(-lo, hi)] * 3")
    from_extent = None if extent is None else tuple((-int(a), int(b)) for a, b in extent)
    bnd = None if boundary is None else tuple((int(a), int(b)) for a, b in boundary)
    if bnd is not None and from_extent is not None and bnd != from_extent:
        raise ValueError(f"field(): boundary {boundary} and extent {extent} disagree")
    bnd = bnd if bnd is not None else from_extent
    assert bnd is not None
    if len(bnd) != 3 or any(a < 0 or b < 0 for a, b in bnd):
        raise ValueError(f"field(): a boundary is 3 pairs of cells >= 0, got {bnd}")
    if axes is not None and (not axes or any(a not in "IJK" for a in axes)):
        raise ValueError(f"field(): axes are a string of I, J, K (e.g. 'IJ'), got {axes!r}")
    return Symbol(
        SymbolKind.FIELD, in_range=_range(in_range), boundary=bnd, axes=axes,
        data_dims=tuple(int(d) for d in data_dims or ()),
    )  # fmt: skip


def parameter(*, one_of: Sequence[Any] | None = None, in_range: Any = None) -> Symbol:
    """A scalar argument of the stencil: one of ``one_of`` or a value ``in_range``."""
    if (one_of is None) == (in_range is None):
        raise TypeError("parameter() takes exactly one of one_of, in_range")
    if one_of is not None:
        return Symbol(SymbolKind.PARAMETER, values=tuple(one_of))
    return Symbol(SymbolKind.PARAMETER, in_range=_range(in_range))


def none() -> Symbol:
    """An argument passed as ``None`` (an optional field the stencil does not use)."""
    return Symbol(SymbolKind.NONE)


def scalar_strategy(dtype: np.dtype[Any], lo: Any, hi: Any) -> st.SearchStrategy[Any]:
    """Hypothesis values of ``dtype`` in ``[lo, hi]`` (both ends included)."""
    kind = dtype.type
    if dtype == np.bool_:
        return st.booleans().map(np.bool_)
    if issubclass(kind, numbers.Integral):
        return st.integers(int(np.ceil(lo)), int(np.floor(hi))).map(kind)
    if dtype.itemsize <= 4:
        return st.floats(float(lo), float(hi), width=32, allow_nan=False).map(kind)
    return st.floats(float(lo), float(hi), allow_nan=False).map(kind)


def random_array(
    rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...], lo: Any, hi: Any
) -> np.ndarray[Any, Any]:
    """An array of ``shape`` with values of ``dtype`` drawn uniformly in ``[lo, hi]``."""
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, size=shape).astype(dtype)
    return rng.uniform(float(lo), float(hi), size=shape).astype(dtype)
