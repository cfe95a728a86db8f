"""Memory layouts: which axis is unit-stride, where alignment falls, whether rows are padded.

A :class:`Layout` describes one buffer of a known rank. A :class:`LayoutScheme` is a named rule
that produces a layout for any list of dimension kinds; :func:`layout_for` picks the scheme from
the device only, never from the backend, so CPU and GPU backends share the same buffers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..core.device import DeviceType
from ..core.dims import DimensionKind
from ..core.errors import StencilValueError


@dataclass(frozen=True, slots=True)
class Layout:
    """How the axes of an n-dimensional buffer sit in memory.

    ``stride_order`` lists axis indices from the slowest to the fastest varying one, so
    ``(0, 1, 2)`` is C order and ``(2, 1, 0)`` is Fortran order. The element at the aligned
    index starts on an ``alignment``-byte boundary. With ``padding`` the fastest axis' extent is
    rounded up so that its byte length is a multiple of ``alignment``: every row then starts
    aligned too.

    >>> Layout((1, 0), alignment=128, padding=True)   # axis 0 unit-stride, rows padded
    """

    stride_order: tuple[int, ...]
    alignment: int = 64
    padding: bool = False

    def __post_init__(self) -> None:
        if sorted(self.stride_order) != list(range(len(self.stride_order))):
            raise StencilValueError(
                f"stride_order {self.stride_order} must be a permutation of the axis indices"
                f" 0..{len(self.stride_order) - 1}"
            )
        if self.alignment < 1 or self.alignment & (self.alignment - 1):
            raise StencilValueError(
                f"alignment must be a power of two in bytes, got {self.alignment}"
            )

    @property
    def ndim(self) -> int:
        return len(self.stride_order)

    @property
    def fastest_axis(self) -> int | None:
        """The unit-stride axis (None for a 0-d layout)."""
        return self.stride_order[-1] if self.stride_order else None


_KIND_RANK: Final[dict[DimensionKind, int]] = {
    DimensionKind.HORIZONTAL: 0,
    DimensionKind.VERTICAL: 1,
    DimensionKind.LOCAL: 2,
}


@dataclass(frozen=True, slots=True)
class LayoutScheme:
    """A named rule giving a :class:`Layout` for any rank, from the axes' dimension kinds.

    ``horizontal_fastest=False``: C order, the last axis is unit-stride.
    ``horizontal_fastest=True``: the first horizontal axis is unit-stride, then the other
    horizontal axes, then vertical, then local ones (for axes in canonical order this is
    Fortran order). On GPUs this makes neighbouring threads, which walk the horizontal index,
    read neighbouring addresses (coalesced access).
    """

    name: str
    horizontal_fastest: bool
    alignment: int
    padding: bool

    def layout(self, kinds: Sequence[DimensionKind]) -> Layout:
        n = len(kinds)
        if not self.horizontal_fastest:
            return Layout(tuple(range(n)), self.alignment, self.padding)
        fastest_first = sorted(range(n), key=lambda axis: (_KIND_RANK[kinds[axis]], axis))
        return Layout(tuple(reversed(fastest_first)), self.alignment, self.padding)


#: C order (last axis fastest), 64-byte (cache line, AVX-512) alignment: the CPU default.
C_ORDER: Final = LayoutScheme("c-contiguous", horizontal_fastest=False, alignment=64, padding=False)

#: Horizontal axis unit-stride, 128-byte alignment and padded rows: the CUDA default, so that
#: every vertical level of a field starts on a 128-byte boundary.
HORIZONTAL_FIRST: Final = LayoutScheme(
    "horizontal-contiguous", horizontal_fastest=True, alignment=128, padding=True
)

#: Every named scheme, by name.
SCHEMES: Final[dict[str, LayoutScheme]] = {s.name: s for s in (C_ORDER, HORIZONTAL_FIRST)}

#: The scheme used on each device type: the one table that decides layouts.
DEVICE_SCHEMES: Final[dict[DeviceType, LayoutScheme]] = {
    DeviceType.CPU: C_ORDER,
    DeviceType.CPU_PINNED: C_ORDER,
    DeviceType.CUDA: HORIZONTAL_FIRST,
}


def layout_for(kinds: Sequence[DimensionKind], device_type: DeviceType | int) -> Layout:
    """The default layout for axes of these kinds on this device type.

    >>> layout_for((DimensionKind.HORIZONTAL, DimensionKind.VERTICAL), DeviceType.CUDA)
    Layout(stride_order=(1, 0), alignment=128, padding=True)
    """
    try:
        scheme = DEVICE_SCHEMES[DeviceType(device_type)]
    except (KeyError, ValueError):
        raise StencilValueError(
            f"no memory layout is defined for device type {device_type!r}",
            hint="use DeviceType.CPU, DeviceType.CPU_PINNED or DeviceType.CUDA",
        ) from None
    return scheme.layout(tuple(kinds))
