"""``Connectivity``: a neighbour table, an integer field whose values index another dimension."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ..core.dims import Dimension, DimensionKind
from ..core.domain import Domain
from ..core.errors import StencilTypeError
from .field import Field


class Connectivity(Field):
    """A neighbour table such as E2C: for every ``Edge`` (and every neighbour slot on the local
    dimension ``E2CDim``) the index of a ``Cell``, the ``codomain``. Entries equal to
    ``skip_value`` (usually -1) mark missing neighbours.

    Make one with :func:`as_connectivity`:

    >>> e2c = as_connectivity([Edge, E2CDim], Cell, np.array([[0, 1], [1, 2]], np.int32))
    >>> e2c.codomain, e2c.max_neighbors, e2c.skip_value
    (Dimension('Cell', HORIZONTAL), 2, None)
    """

    __slots__ = ("_codomain", "_skip_value")

    _codomain: Dimension
    _skip_value: int | None

    def __init__(
        self, domain: Any, ndarray: Any, codomain: Dimension, skip_value: int | None = None
    ) -> None:
        super().__init__(domain, ndarray)
        if not isinstance(codomain, Dimension):
            raise StencilTypeError(
                f"the codomain of a connectivity must be a Dimension, got {codomain!r}",
                hint="e.g. as_connectivity([Edge, E2CDim], Cell, table)",
            )
        if self.dtype.kind not in "iu":
            raise StencilTypeError(
                f"a connectivity holds integer indices, got dtype {self.dtype.name}",
                hint="pass an int32 or int64 table, or dtype=np.int32",
            )
        self._codomain = codomain
        self._skip_value = None if skip_value is None else int(skip_value)

    @classmethod
    def _wrap_table(
        cls,
        domain: Domain,
        ndarray: Any,
        xp: ModuleType,
        codomain: Dimension,
        skip_value: int | None,
    ) -> Connectivity:
        table = object.__new__(Connectivity)
        table._domain = domain
        table._ndarray = ndarray
        table.xp = xp
        table._codomain = codomain
        table._skip_value = skip_value
        return table

    def _like(self, domain: Domain, ndarray: Any) -> Field:
        return Connectivity._wrap_table(domain, ndarray, self.xp, self._codomain, self._skip_value)

    @property
    def codomain(self) -> Dimension:
        """The dimension the table's values index into (e.g. ``Cell`` for E2C)."""
        return self._codomain

    @property
    def skip_value(self) -> int | None:
        """The value marking a missing neighbour, or None if every entry is valid."""
        return self._skip_value

    @property
    def max_neighbors(self) -> int:
        """Extent of the local (neighbour) dimension; 1 for a one-to-one table without one."""
        for dim, size in zip(self._domain.dims, self._ndarray.shape, strict=True):
            if dim.kind is DimensionKind.LOCAL:
                return int(size)
        return 1

    @property
    def source_dims(self) -> tuple[Dimension, ...]:
        """The table's non-local dimensions, e.g. ``(Edge,)`` for E2C."""
        return tuple(d for d in self._domain.dims if d.kind is not DimensionKind.LOCAL)

    def __repr__(self) -> str:
        return (
            f"Connectivity({self._domain} -> {self._codomain}, {self.dtype.name},"
            f" skip_value={self._skip_value}, {self.device})"
        )
