"""Grid types and the Cartesian connectivity ``X + n`` stands for, as gt4py.next names them."""

from __future__ import annotations

import enum

from .dims import Dimension
from .records import record


class GridType(enum.StrEnum):
    """``@program(grid_type=GridType.UNSTRUCTURED)``: accepted for gt4py.next compatibility.

    stencilkit infers what it needs from the offsets a program uses, so the value only travels
    with the operator (``.grid_type``, ``.with_grid_type()``)."""

    CARTESIAN = "cartesian"
    UNSTRUCTURED = "unstructured"


@record
class CartesianConnectivity:
    """A shift by ``offset`` along ``domain_dim`` into ``codomain`` (default: the same dimension).

    >>> CartesianConnectivity(I, 1).codomain == I
    True
    """

    domain_dim: Dimension
    offset: int = 0
    codomain: Dimension | None = None

    def __post_init__(self) -> None:
        if self.codomain is None:
            object.__setattr__(self, "codomain", self.domain_dim)

    @classmethod
    def for_translation(cls, dimension: Dimension, offset: int) -> CartesianConnectivity:
        """The connectivity that shifts ``dimension`` by ``offset`` (``I + 1``), gt4py.next's name."""
        return cls(dimension, offset)

    @classmethod
    def for_relocation(cls, old: Dimension, new: Dimension) -> CartesianConnectivity:
        """The connectivity that renames dimension ``old`` to ``new`` (staggered grids),
        gt4py.next's name."""
        return cls(new, 0, old)
