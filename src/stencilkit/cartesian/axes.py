"""GTScript's axes ``I``, ``J``, ``K`` and the ``AxisIndex`` values of horizontal regions.

``I[0]`` is the first point of the compute domain along I and ``I[-1]`` the last; ``I[0] + 2``
and ``I[-1] - 1`` are offsets from them. They are build-time values (externals such as NDSL's
``i_start``/``i_end``); the lowering turns them into index expressions relative to the
compute domain of the call.
"""

from __future__ import annotations

from ..core.dims import Dimension, DimensionKind
from ..core.records import record

#: The stencilkit dimensions GTScript fields live on (index 0 is the compute domain's origin).
DIM_I = Dimension("I")
DIM_J = Dimension("J")
DIM_K = Dimension("K", DimensionKind.VERTICAL)
DIMS = {"I": DIM_I, "J": DIM_J, "K": DIM_K}


def table_dims(name: str, ndim: int) -> tuple[Dimension, ...]:
    """The dimensions of ``GlobalTable`` parameter ``name``: local ones, its own."""
    return tuple(Dimension(f"{name}_T{k}", DimensionKind.LOCAL) for k in range(ndim))


@record
class AxisIndex:
    """``I[0] + offset`` (``index`` 0: from the first compute point) or ``I[-1] + offset``
    (``index`` -1: from the last)."""

    axis: str
    index: int
    offset: int = 0

    def __add__(self, other: object) -> AxisIndex:
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented
        return AxisIndex(self.axis, self.index, self.offset + other)

    __radd__ = __add__

    def __sub__(self, other: object) -> AxisIndex:
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented
        return AxisIndex(self.axis, self.index, self.offset - other)

    def __rsub__(self, other: object) -> AxisIndex:
        return NotImplemented

    def __repr__(self) -> str:
        sign = "+" if self.offset >= 0 else "-"
        tail = f" {sign} {abs(self.offset)}" if self.offset else ""
        return f"{self.axis}[{self.index}]{tail}"

    __str__ = __repr__


@record
class AxisOffset:
    """``I + 1``: an offset along one axis, the newer offset syntax ``f[I + 1, K - 1]``."""

    axis: str
    offset: int


class Axis:
    """One of ``I``, ``J``, ``K``: subscripted (``I[0]``, ``I[-1]``) it gives an
    :class:`AxisIndex`; plus or minus an int it gives an :class:`AxisOffset`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __getitem__(self, index: int) -> AxisIndex:
        if index not in (0, -1) or isinstance(index, bool):
            raise IndexError(
                f"{self.name}[{index!r}]: only {self.name}[0] (the first compute point) and"
                f" {self.name}[-1] (the last) exist; write {self.name}[0] + n or {self.name}[-1] - n"
            )
        return AxisIndex(self.name, index)

    def __add__(self, other: int) -> AxisOffset:
        return AxisOffset(self.name, int(other))

    def __sub__(self, other: int) -> AxisOffset:
        return AxisOffset(self.name, -int(other))

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Axis) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("gtscript-axis", self.name))


I = Axis("I")
J = Axis("J")
K = Axis("K")
IJ = (I, J)
IK = (I, K)
JK = (J, K)
IJK = (I, J, K)


def axes_names(spec: object) -> tuple[str, ...] | None:
    """The axis names of a ``Field[...]`` axes spec (``IJ``, ``(I, J)``, ``"IJ"``, ``I``), or
    None when ``spec`` is not one."""
    if isinstance(spec, Axis):
        return (spec.name,)
    if isinstance(spec, str) and spec and set(spec) <= set("IJK") and len(set(spec)) == len(spec):
        return tuple(spec)
    if isinstance(spec, (tuple, list)) and spec and all(isinstance(a, Axis) for a in spec):
        names = tuple(a.name for a in spec)
        if len(set(names)) == len(names):
            return names
    return None
