"""Memory layouts: which axis is unit-stride, where alignment falls, whether rows are padded.

A :class:`Layout` describes one buffer of a known rank. A :class:`LayoutScheme` is a named rule
that produces a layout for any list of dimension kinds; :func:`layout_for` picks the scheme from
the device and the dimension kinds only, never from the backend, so CPU and GPU backends share
the same buffers. A user may pick another scheme per allocation (``layout=`` on the field
constructors); compiled code reads the strides at call time, so fields of different layouts mix
freely in one program.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..core.device import DeviceType
from ..core.dims import DimensionKind
from ..core.errors import StencilValueError
from ..core.records import record


@record
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
    pad_bytes: int = 0  # the byte multiple padded rows round up to; 0: ``alignment``

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
        if self.pad_bytes < 0 or self.pad_bytes & (self.pad_bytes - 1):
            raise StencilValueError(f"pad_bytes must be 0 or a power of two, got {self.pad_bytes}")

    @property
    def ndim(self) -> int:
        return len(self.stride_order)

    @property
    def row_bytes(self) -> int:
        """The byte multiple the fastest axis is padded to (with ``padding``)."""
        return self.pad_bytes or self.alignment

    @property
    def fastest_axis(self) -> int | None:
        """The unit-stride axis (None for a 0-d layout)."""
        return self.stride_order[-1] if self.stride_order else None


@record
class LayoutScheme:
    """A named rule giving a :class:`Layout` for any rank, from the axes' dimension kinds.

    ``fastest``: the dimension kinds from the fastest varying to the slowest (axes of one kind
    keep their order, the first one fastest); None: C order, the last axis is unit-stride.
    ``horizontal-contiguous`` (horizontal, vertical, local) is Fortran order for axes in
    canonical order: neighbouring GPU threads walking the horizontal index read neighbouring
    addresses. ``vertical-contiguous`` (vertical, local, horizontal) keeps each column (all
    levels of one cell or edge) in one contiguous run: a gather through a neighbour table reads
    whole runs of 32-byte sectors however the mesh is numbered.
    """

    name: str
    fastest: tuple[DimensionKind, ...] | None
    alignment: int
    padding: bool
    pad_bytes: int = 0

    def layout(self, kinds: Sequence[DimensionKind]) -> Layout:
        n = len(kinds)
        if self.fastest is None:
            return Layout(tuple(range(n)), self.alignment, self.padding, self.pad_bytes)
        rank = {kind: i for i, kind in enumerate(self.fastest)}
        fastest_first = sorted(range(n), key=lambda axis: (rank.get(kinds[axis], len(rank)), axis))
        return Layout(tuple(reversed(fastest_first)), self.alignment, self.padding, self.pad_bytes)


_H, _V, _L = DimensionKind.HORIZONTAL, DimensionKind.VERTICAL, DimensionKind.LOCAL

#: C order (last axis fastest), 64-byte (cache line, AVX-512) alignment: the CPU default.
C_ORDER: Final = LayoutScheme("c-contiguous", None, alignment=64, padding=False)

#: Horizontal axis unit-stride, 128-byte alignment and padded rows: the CUDA default for fields
#: with several horizontal axes (Cartesian [I, J, K]), so that every vertical level of a field
#: starts on a 128-byte boundary.
HORIZONTAL_FIRST: Final = LayoutScheme(
    "horizontal-contiguous", (_H, _V, _L), alignment=128, padding=True
)

#: Vertical axis unit-stride (K-contiguous columns), 128-byte alignment, columns padded to a
#: 32-byte sector (80 float64 levels: no padding; 65: 68).
VERTICAL_FIRST: Final = LayoutScheme(
    "vertical-contiguous", (_V, _L, _H), alignment=128, padding=True, pad_bytes=32
)

#: Every named scheme, by name (what ``layout=`` accepts as a string).
SCHEMES: Final[dict[str, LayoutScheme]] = {
    s.name: s for s in (C_ORDER, HORIZONTAL_FIRST, VERTICAL_FIRST)
}

#: The scheme used on each device type: the one table that decides layouts (see COLUMN_SCHEMES).
DEVICE_SCHEMES: Final[dict[DeviceType, LayoutScheme]] = {
    DeviceType.CPU: C_ORDER,
    DeviceType.CPU_PINNED: C_ORDER,
    DeviceType.CUDA: HORIZONTAL_FIRST,
}

#: The CUDA layout of *column fields*: one horizontal axis and at least one vertical axis
#: ([Cell, K], [Edge, K], [I, K]), the fields of unstructured (ICON-like) models. The one switch
#: for that choice: horizontal-first, GT4Py's GPU layout. icon4py's 14 heaviest dycore and
#: diffusion programs on the H200 (2x R2B5, 80 levels, benchmarks/icon4py_bench.py, RESULTS.md
#: 2026-12-02): 7.0 ms in sum horizontal-first against 18.8 ms K-contiguous, where a scan over
#: K (one thread per column) reads 32 columns 640 bytes apart per level (the tridiagonal forward
#: sweep 0.29 ms against 3.45 ms) and gathers on ICON's locality-numbered mesh run as fast. On a
#: *random* numbering K-contiguous gathers are up to 3.4x faster (issue 13: C2E 0.63 of copy
#: against 0.21): ``layout="vertical-contiguous"`` per allocation, docs/storage.md.
GPU_COLUMN_SCHEME: Final[LayoutScheme] = HORIZONTAL_FIRST


def scheme_for(kinds: Sequence[DimensionKind], device_type: DeviceType | int) -> LayoutScheme:
    """The default scheme for axes of these kinds on this device type."""
    try:
        kind = DeviceType(device_type)
        scheme = DEVICE_SCHEMES[kind]
    except (KeyError, ValueError):
        raise StencilValueError(
            f"no memory layout is defined for device type {device_type!r}",
            hint="use DeviceType.CPU, DeviceType.CPU_PINNED or DeviceType.CUDA",
        ) from None
    if kind is DeviceType.CUDA and is_column(kinds):
        return GPU_COLUMN_SCHEME
    return scheme


def is_column(kinds: Sequence[DimensionKind]) -> bool:
    """One horizontal axis and at least one vertical one: a field of columns."""
    return sum(k is _H for k in kinds) == 1 and any(k is _V for k in kinds)


def layout_for(kinds: Sequence[DimensionKind], device_type: DeviceType | int) -> Layout:
    """The default layout for axes of these kinds on this device type.

    >>> H, V = DimensionKind.HORIZONTAL, DimensionKind.VERTICAL
    >>> layout_for((H, H, V), DeviceType.CUDA)      # Cartesian: horizontal-contiguous
    Layout(stride_order=(2, 1, 0), alignment=128, padding=True, pad_bytes=0)
    >>> layout_for((H, V), DeviceType.CUDA)         # columns: GPU_COLUMN_SCHEME
    Layout(stride_order=(1, 0), alignment=128, padding=True, pad_bytes=0)
    """
    return scheme_for(kinds, device_type).layout(tuple(kinds))


def resolve_layout(layout: LayoutScheme | Layout | str, kinds: Sequence[DimensionKind]) -> Layout:
    """The layout a user asked for with ``layout=``: a scheme name (``SCHEMES``), a
    :class:`LayoutScheme` or a :class:`Layout` of the right rank."""
    if isinstance(layout, str):
        if layout not in SCHEMES:
            raise StencilValueError(
                f"unknown layout {layout!r}",
                hint="use one of " + ", ".join(repr(n) for n in SCHEMES),
            )
        layout = SCHEMES[layout]
    if isinstance(layout, LayoutScheme):
        return layout.layout(tuple(kinds))
    if isinstance(layout, Layout):
        if layout.ndim != len(kinds):
            raise StencilValueError(
                f"layout {layout} is for {layout.ndim} axes but the field has {len(kinds)}"
            )
        return layout
    raise StencilValueError(
        f"layout= must be a scheme name, a LayoutScheme or a Layout, got {layout!r}",
        hint="e.g. layout='vertical-contiguous'",
    )
