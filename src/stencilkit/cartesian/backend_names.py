"""gt4py.cartesian's backend names: which stencilkit backend runs each and which memory layout
its storages get.

One table serves the GTScript frontend (``gtscript.stencil(backend="gt:cpu_ifirst")``), the
``gt4py.storage`` allocators and ``gt4py.cartesian.backend.from_name``, so a storage allocated
for a backend name is laid out the way that backend name promises, whichever frontend reads it.

Layouts follow gt4py 1.2.3's layout registry: ``layout_map`` gives each of I, J, K a rank, and
the axis of the highest rank is unit-stride. Data dimensions (digit names such as ``"0"``) are
always slower than the spatial axes, the first data dimension slowest. ``alignment`` is in
elements, as gt4py counts it: the element at ``aligned_index`` starts on an
``alignment * itemsize`` byte boundary and, where it is above 1, the unit-stride axis is padded
to a multiple of ``alignment`` elements.

>>> lookup("gt:gpu").target, lookup("gt:gpu").layout_map(("I", "J", "K"))
('gpu', (2, 1, 0))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

from ..core.device import DeviceType
from ..core.errors import StencilValueError
from ..core.records import record
from ..storage.layout import Layout

__all__ = [
    "BACKENDS",
    "BackendName",
    "UnknownBackendError",
    "canonical_dimensions",
    "lookup",
    "storage_layout",
]

#: the byte alignment stencilkit gives an aligned CPU element at least (one cache line); costs no
#: memory beyond one line per buffer and changes no strides.
_CPU_MIN_ALIGNMENT_BYTES: Final = 64

_SPATIAL: Final = ("I", "J", "K")


class UnknownBackendError(StencilValueError, RuntimeError):
    """A backend name gt4py.cartesian does not know. A ``ValueError`` (as ``from_name`` raises)
    and a ``RuntimeError`` (as gt4py's storage allocators raise for an unknown preset)."""


@record
class BackendName:
    """One gt4py.cartesian backend name and what stencilkit makes of it.

    ``target`` is the stencilkit backend that runs it (``"embedded"``, ``"cpu"``, ``"gpu"``);
    ``base_layout`` the ranks of I, J and K (highest: unit-stride); ``alignment`` in elements;
    ``debug`` marks gt4py's plain-loop ``debug`` backend; ``language`` is what gt4py generates
    for it (its ``languages["computation"]``).
    """

    name: str
    target: Literal["embedded", "cpu", "gpu"]
    base_layout: tuple[int, int, int]
    alignment: int
    language: str
    debug: bool = False

    @property
    def device(self) -> Literal["cpu", "gpu"]:
        """gt4py's ``storage_info["device"]``."""
        return "gpu" if self.target == "gpu" else "cpu"

    @property
    def device_type(self) -> DeviceType:
        return DeviceType.CUDA if self.target == "gpu" else DeviceType.CPU

    @property
    def backend(self) -> Any:
        """The stencilkit backend object that runs it (``None``: the embedded backend), as
        ``backend=`` of a gt4py.next program takes it."""
        if self.target == "embedded":
            return None
        from .. import backends

        return backends.cpu if self.target == "cpu" else backends.gpu

    def layout_map(self, dimensions: Sequence[str]) -> tuple[int, ...]:
        """The rank of each axis of a storage with these dimension names (highest: unit-stride).

        >>> lookup("gt:cpu_kfirst").layout_map(("I", "J", "K", "0"))
        (1, 2, 3, 0)
        """
        dims = canonical_dimensions(dimensions, len(dimensions))
        n_data = sum(d not in _SPATIAL for d in dims)
        spatial = {d: n_data + r for d, r in zip(_SPATIAL, self.base_layout, strict=True)}
        # data dimensions by position (NDSL names them by their size, so names may repeat)
        data_rank = iter(range(n_data))
        ranks = [spatial[d] if d in spatial else next(data_rank) for d in dims]
        order = sorted(range(len(dims)), key=lambda axis: ranks[axis])  # slowest first
        return tuple(order.index(axis) for axis in range(len(dims)))

    def stride_order(self, dimensions: Sequence[str]) -> tuple[int, ...]:
        """Axis indices from the slowest to the fastest varying one (stencilkit's order)."""
        ranks = self.layout_map(dimensions)
        return tuple(sorted(range(len(ranks)), key=lambda axis: ranks[axis]))

    def layout(self, dimensions: Sequence[str], itemsize: int) -> Layout:
        """The stencilkit :class:`Layout` of a storage of these dimensions and item size."""
        return storage_layout(self.layout_map(dimensions), self.alignment, itemsize, self.device)

    def is_optimal_layout(self, array: Any, dimensions: Sequence[str]) -> bool:
        """Whether ``array``'s strides fall in this backend's order (gt4py's check: no padding
        or alignment is looked at, axes of extent 1 included)."""
        ranks = self.layout_map(dimensions)
        strides = tuple(array.strides)
        if len(strides) != len(ranks):
            return False
        previous = 0
        for axis in sorted(range(len(ranks)), key=lambda a: -ranks[a]):  # fastest first
            if strides[axis] < previous:
                return False
            previous = strides[axis]
        return True


def storage_layout(layout_map: Sequence[int], alignment: int, itemsize: int, device: str) -> Layout:
    """The stencilkit :class:`Layout` for a gt4py layout map (highest rank: unit-stride) and an
    alignment in elements: the aligned element on ``alignment * itemsize`` bytes (at least a
    cache line on the CPU), the unit-stride axis padded to ``alignment`` elements where it is
    above 1.

    >>> storage_layout((2, 1, 0), 32, 8, "gpu")
    Layout(stride_order=(2, 1, 0), alignment=256, padding=True, pad_bytes=256)
    """
    element_bytes = max(int(alignment), 1) * itemsize
    padded = alignment > 1
    if padded and element_bytes & (element_bytes - 1):
        raise StencilValueError(
            f"an alignment of {alignment} elements of {itemsize} bytes is not a power of two"
            " of bytes",
            hint="use a dtype whose item size is a power of two (1, 2, 4, 8 or 16 bytes)",
        )
    byte_alignment = element_bytes if padded else 1
    if device == "cpu":
        byte_alignment = max(byte_alignment, _CPU_MIN_ALIGNMENT_BYTES)
    order = tuple(sorted(range(len(layout_map)), key=lambda axis: layout_map[axis]))
    return Layout(
        order, alignment=byte_alignment, padding=padded, pad_bytes=element_bytes if padded else 0
    )


def canonical_dimensions(dimensions: Sequence[Any] | None, ndim: int) -> tuple[str, ...]:
    """Dimension names as strings: ``None`` gives ``"IJK"[:ndim]`` (more than 3 axes: I, J, K,
    then ``"0"``, ``"1"``, ...); ``Axis`` objects give their name; ints their digits. A ``None``
    entry is a data dimension (``"0"``): NDSL's ``Quantity`` names an axis past the third that
    way (dims ``("tile", x, y, z)`` give ``("6", "J", "K", None)``), and gt4py's layout maker
    counts every name that is not I, J or K as one.

    >>> canonical_dimensions(None, 4)
    ('I', 'J', 'K', '0')
    >>> canonical_dimensions(("6", "J", "K", None), 4)
    ('6', 'J', 'K', '0')
    """
    if dimensions is None:
        if ndim <= 3:
            return _SPATIAL[:ndim]
        return (*_SPATIAL, *(str(d) for d in range(ndim - 3)))
    names = tuple(
        "0"
        if d is None
        else d
        if isinstance(d, str)
        else str(getattr(d, "__gt_axis_name__", getattr(d, "name", d)))
        for d in dimensions
    )
    bad = [n for n in names if not (n in _SPATIAL or n.isdigit())]
    spatial = [n for n in names if n in _SPATIAL]
    if bad or len(set(spatial)) != len(spatial):
        raise StencilValueError(
            f"invalid dimensions {names!r}: "
            + (f"{bad[0]!r} is not a dimension name" if bad else "an axis I, J or K is repeated"),
            hint="use 'I', 'J', 'K' (each at most once) and digit strings ('0', '1', ...) for"
            " data dimensions",
        )
    return names


def _entries() -> tuple[BackendName, ...]:
    kfirst, ifirst = (0, 1, 2), (2, 1, 0)
    return (
        BackendName("numpy", "embedded", kfirst, 1, "python"),
        BackendName("debug", "embedded", kfirst, 1, "python", debug=True),
        BackendName("gt:cpu_kfirst", "cpu", kfirst, 1, "c++"),
        BackendName("gt:cpu_ifirst", "cpu", ifirst, 1, "c++"),
        BackendName("gt:gpu", "gpu", ifirst, 32, "cuda"),
        BackendName("dace:cpu", "cpu", (1, 2, 0), 1, "c++"),
        BackendName("dace:cpu_kfirst", "cpu", kfirst, 1, "c++"),
        BackendName("dace:cpu_KJI", "cpu", ifirst, 1, "c++"),
        # gt4py 1.2.3's registry aligns both DaCe GPU layouts to 32 elements, as gt:gpu
        BackendName("dace:gpu", "gpu", ifirst, 32, "cuda"),
        BackendName("dace:gpu_IJK", "gpu", kfirst, 32, "cuda"),
        # gt4py's former CUDA backend (removed in 1.x); older NDSL configurations name it
        BackendName("cuda", "gpu", ifirst, 32, "cuda"),
    )


#: every gt4py.cartesian backend name stencilkit accepts, by name
BACKENDS: Final[dict[str, BackendName]] = {b.name: b for b in _entries()}


def lookup(name: str) -> BackendName:
    """The record of a gt4py.cartesian backend name.

    >>> lookup("numpy").target
    'embedded'
    """
    try:
        return BACKENDS[name]
    except (KeyError, TypeError):
        raise UnknownBackendError(
            f"unknown gt4py.cartesian backend {name!r}",
            hint="use one of " + ", ".join(repr(n) for n in BACKENDS),
        ) from None
