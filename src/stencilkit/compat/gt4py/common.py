"""gt4py.next's ``common`` module: dimensions, domains, fields, connectivities and offset providers.

>>> from stencilkit.common import Dimension, Domain, NamedRange, UnitRange, unit_range
>>> d = Domain(NamedRange(Dimension("X"), unit_range((0, 10))))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias, TypeVar

import numpy as np

from ...core.dims import Dimension, DimensionKind, Dims, FieldOffset, NamedIndex
from ...core.domain import (
    Domain,
    DomainLike,
    Infinity,
    NamedRange,
    RangeLike,
    UnitRange,
    domain,
    named_range,
    unit_range,
)
from ...core.domain import domain as make_domain
from ...core.grid import CartesianConnectivity, GridType
from ...core.records import record
from ...core.staggered import as_non_staggered, flip_staggered, is_staggered
from ...core.types import promote_dims
from ...fields import Connectivity, Field
from ...fields.constructors import DEFAULT_SKIP_VALUE

#: gt4py's name of the default skip value of neighbour tables (-1), which its tests use.
_DEFAULT_SKIP_VALUE = DEFAULT_SKIP_VALUE

#: Fields are mutable buffers in stencilkit; gt4py's read-only/mutable split is one class here.
MutableField = Field
#: A neighbour table (gt4py's ``NeighborTable``/``GatherConnectivity``).
NeighborTable = Connectivity
GatherConnectivity = Connectivity
#: ``offset_provider=``: offset names to dimensions (Cartesian) or neighbour tables.
OffsetProvider: TypeAlias = Mapping[str, Any]
OffsetProviderElem: TypeAlias = Dimension | Connectivity
FiniteDomain = Domain
FiniteUnitRange = UnitRange
FiniteNamedRange = NamedRange
AnyIndexSpec: TypeAlias = Any
#: Type variables of gt4py's generic annotations (``Field[Dims[DimsT], ScalarT]``, icon4py).
DimT = TypeVar("DimT", bound=Dimension)
DimsT = TypeVar("DimsT", bound=Sequence[Dimension], covariant=True)


def is_neighbor_table(obj: Any) -> bool:
    """Whether ``obj`` is a neighbour table (``.ndarray``, ``.codomain``, ``.skip_value``)."""
    return isinstance(obj, Connectivity)


def is_connectivity(obj: Any) -> bool:
    return isinstance(obj, Connectivity | CartesianConnectivity)


def is_offset_provider(obj: Any) -> bool:
    """Whether ``obj`` is a valid ``offset_provider`` mapping."""
    return isinstance(obj, Mapping) and all(
        isinstance(v, Dimension | Connectivity | CartesianConnectivity) for v in obj.values()
    )


def has_offset(offset_provider: Mapping[str, Any], offset: str) -> bool:
    return offset in offset_provider


def get_offset(offset_provider: Mapping[str, Any], offset: str) -> Any:
    if offset not in offset_provider:
        raise KeyError(f"offset_provider has no entry for '{offset}'")
    return offset_provider[offset]


@record
class NeighborConnectivityType:
    """What ahead-of-time compilation needs to know of a neighbour table (not its values)."""

    domain: tuple[Dimension, ...]
    codomain: Dimension
    skip_value: int | None
    dtype: np.dtype[Any]
    max_neighbors: int

    @property
    def source_dim(self) -> Dimension:
        return self.domain[0]

    @property
    def neighbor_dim(self) -> Dimension:
        return self.domain[-1]

    @property
    def has_skip_values(self) -> bool:
        return self.skip_value is not None


ConnectivityType = NeighborConnectivityType
OffsetProviderType: TypeAlias = Mapping[str, Dimension | NeighborConnectivityType]


def offset_provider_to_type(offset_provider: Mapping[str, Any]) -> dict[str, Any]:
    """The offset-provider *type*: dimensions stay, tables become :class:`NeighborConnectivityType`."""
    result: dict[str, Any] = {}
    for k, v in offset_provider.items():
        if isinstance(v, Connectivity):
            result[k] = NeighborConnectivityType(
                tuple(v.domain.dims), v.codomain, v.skip_value, v.dtype, v.max_neighbors
            )
        else:
            result[k] = v
    return result


def is_offset_provider_type(obj: Any) -> bool:
    return isinstance(obj, Mapping) and all(
        isinstance(v, Dimension | NeighborConnectivityType) for v in obj.values()
    )


def connectivity_for_cartesian_shift(dim: Dimension, offset: int) -> CartesianConnectivity:
    return CartesianConnectivity(dim, offset)


def order_dimensions(dims: Sequence[Dimension]) -> list[Dimension]:
    """gt4py's canonical order: horizontal, local, vertical; each by (base) name."""
    rank = {DimensionKind.HORIZONTAL: 0, DimensionKind.LOCAL: 1, DimensionKind.VERTICAL: 2}
    return sorted(dims, key=lambda d: (rank[d.kind], as_non_staggered(d).value))


def _field(definition: Any, /, *, domain: Any = None, dtype: Any = None) -> Field:
    """gt4py's internal ``common._field``: a field over ``definition``'s memory (an array, never
    copied; a view such as ``a.ndarray[:, 0]`` stays a view of ``a``), which icon4py uses for a
    1-d view of a 2-d field. ``domain`` is required for arrays, as in gt4py."""
    if isinstance(definition, Field):
        if domain is not None and make_domain(domain) != definition.domain:
            raise ValueError(f"_field(): the field's domain {definition.domain} is not {domain}")
        if dtype is None or np.dtype(dtype) == definition.dtype:
            return definition
        domain, definition = definition.domain, definition.ndarray
    if domain is None:
        raise ValueError("_field(array): give domain=, the domain of the array's points")
    if dtype is not None and np.dtype(dtype) != definition.dtype:
        definition = definition.astype(dtype)
    return Field(make_domain(domain), definition)


def _connectivity(
    definition: Any,
    /,
    codomain: Dimension,
    *,
    domain: Any = None,
    dtype: Any = None,
    skip_value: int | None = None,
) -> Connectivity:
    """gt4py's internal ``common._connectivity``: a neighbour table over ``definition``'s memory."""
    from ...fields.constructors import as_connectivity

    if domain is None:
        raise ValueError("_connectivity(array, codomain): give domain=, the table's domain")
    return as_connectivity(domain, codomain, definition, dtype, skip_value=skip_value, copy=None)


__all__ = [
    "AnyIndexSpec",
    "CartesianConnectivity",
    "Connectivity",
    "ConnectivityType",
    "DimT",
    "DimsT",
    "Dimension",
    "DimensionKind",
    "Dims",
    "Domain",
    "DomainLike",
    "Field",
    "FieldOffset",
    "FiniteDomain",
    "FiniteNamedRange",
    "FiniteUnitRange",
    "GatherConnectivity",
    "GridType",
    "Infinity",
    "MutableField",
    "NamedIndex",
    "NamedRange",
    "NeighborConnectivityType",
    "NeighborTable",
    "OffsetProvider",
    "OffsetProviderElem",
    "OffsetProviderType",
    "RangeLike",
    "UnitRange",
    "_connectivity",
    "_field",
    "as_non_staggered",
    "connectivity_for_cartesian_shift",
    "domain",
    "flip_staggered",
    "get_offset",
    "has_offset",
    "is_connectivity",
    "is_neighbor_table",
    "is_offset_provider",
    "is_offset_provider_type",
    "is_staggered",
    "named_range",
    "offset_provider_to_type",
    "order_dimensions",
    "promote_dims",
    "unit_range",
]
