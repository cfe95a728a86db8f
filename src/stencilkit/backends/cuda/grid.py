"""Launch grids that never exceed the device's limits, for any extents.

A kernel's parallel dimensions map to the grid fastest first: x is the unit-stride dimension of
its first output (consecutive threads, consecutive addresses), y the next one, z the product of
the rest (see ``codegen.grid_dims``). A grid of one thread per point fits the device's limits
(2^31-1 blocks along x, 65,535 along y and z on every GPU since compute capability 3.0) unless
a y or z extent is large: a K-contiguous ``[Cell, K]`` field puts its cells on grid y. Then
``grid_for`` *folds*: it numbers the y and z blocks linearly and spreads that number over grid
y and z, and the generated kernel, seeing fewer threads along y or z than steps, unfolds it
(one division, only in a folded launch). No loop is added to the kernels: a kernel over a grid
that fits runs exactly as before. The limits are read from the device (``device_limits``); the
defaults serve code-generation tests on machines without a GPU.

>>> grid_for([80, 1_000_000], (32, 4, 1), limits=GridLimits())   # K-contiguous [Cell, K]
(3, 65535, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Any

from ...core.records import record
from ...ir import nodes as ir
from ...stages.abi import ArgLayout
from .codegen import grid_dims, x_align


@record
class GridLimits:
    """The most blocks a launch may have along each grid axis (``cudaDevAttrMaxGridDim*``)."""

    x: int = 2**31 - 1
    y: int = 65535
    z: int = 65535

    def __post_init__(self) -> None:
        if min(self.x, self.y, self.z) < 1:
            raise ValueError(f"grid limits must be positive, got {self}")


#: CUDA's limits for every device of compute capability >= 3.0. Used only where no device is at
#: hand (code generation, tests); launches use ``device_limits``.
DEFAULT_LIMITS = GridLimits()

# cudaDeviceAttr values of the grid limits (stable since CUDA 2): used if CuPy lacks the names
_ATTRS = (
    ("cudaDevAttrMaxGridDimX", 5),
    ("cudaDevAttrMaxGridDimY", 6),
    ("cudaDevAttrMaxGridDimZ", 7),
)


@cache
def device_limits(device_id: int) -> GridLimits:
    """The grid limits of CUDA device ``device_id``, read from the device once per process."""
    from .runtime import cupy

    rt = cupy().cuda.runtime
    x, y, z = (
        int(rt.deviceGetAttribute(getattr(rt, name, number), device_id)) for name, number in _ATTRS
    )
    return GridLimits(x, y, z)


def axis_counts(extents: list[int], chunk: int = 1) -> tuple[int, int, int]:
    """Points (or chunks of ``chunk`` points) the kernel walks along grid x, y and z: x the first
    extent, y the second, z the product of the rest; chunks run along the last grid axis."""
    x = extents[0] if extents else 1
    y = extents[1] if len(extents) > 1 else 1
    z = math.prod(extents[2:]) if len(extents) > 2 else 1
    if chunk > 1 and len(extents) == 2:
        y = -(-y // chunk)
    elif chunk > 1 and len(extents) >= 3:
        z = -(-z // chunk)
    return x, y, z


class GridTooLarge(ValueError):
    """More blocks than a device can launch even folded (beyond any field that fits in memory)."""


def needed_blocks(
    extents: list[int], block: tuple[int, int, int], chunk: int = 1
) -> tuple[int, int, int]:
    """Blocks along x, y and z for one thread per point (per chunk along the last axis)."""
    return tuple(max(1, -(-n // b)) for n, b in zip(axis_counts(extents, chunk), block))  # type: ignore[return-value]


def grid_for(
    extents: list[int],
    block: tuple[int, int, int],
    chunk: int = 1,
    limits: GridLimits = DEFAULT_LIMITS,
) -> tuple[int, int, int]:
    """Blocks along x, y and z for a kernel over ``extents`` (grid dimensions, fastest first) with
    ``block`` threads per block: one thread per point (per chunk along the last axis), the y
    and z blocks folded over grid y and z where either exceeds ``limits``."""
    nx, ny, nz = needed_blocks(extents, block, chunk)
    if ny <= limits.y and nz <= limits.z:
        if nx > limits.x:
            raise GridTooLarge(f"{nx} blocks along grid x exceed the device's {limits.x}")
        return nx, ny, nz
    total = ny * nz
    gy = min(total, limits.y)
    gz = -(-total // gy)
    if nx > limits.x or gz > limits.z:
        raise GridTooLarge(
            f"extents {extents} need {nx} x {total} blocks; the device launches at most"
            f" {limits.x} x {limits.y * limits.z}"
        )
    return nx, gy, gz


def unfold(
    grid: tuple[int, int, int], block: tuple[int, int, int], extents: list[int], chunk: int = 1
) -> Any:
    """What the generated kernel computes from its grid: a function from (blockIdx.y, blockIdx.z)
    to the block's (y, z) coordinates, None for a block that returns at once (for tests and
    documentation)."""
    counts = axis_counts(extents, chunk)
    folded = grid[1] * block[1] < counts[1] or grid[2] * block[2] < counts[2]
    nby = -(-counts[1] // block[1])
    nbz = -(-counts[2] // block[2])

    def coords(by: int, bz: int) -> tuple[int, int] | None:
        if not folded:
            return by, bz
        lin = by + grid[1] * bz
        y, z = lin % nby, lin // nby
        return (y, z) if z < nbz else None

    return coords


def kernel_extents(k: ir.Kernel, layout: ArgLayout, domain: Sequence[Any], buf: Any) -> list[int]:
    """The points kernel ``k`` walks along its grid dimensions (fastest first) for the ranges
    ``domain`` (one per ``k.dims``); ``buf`` is the argument block. Where rows start on a cache
    line (``x_align``) the x extent includes the threads before the domain's start."""
    sizes = dict(zip(k.dims, (len(r) for r in domain)))
    gdims = grid_dims(k, layout)
    extents = [sizes[d] for d in gdims]
    align = x_align(k, layout)
    if align > 1 and extents:
        out = layout.field(k.outs[0])
        lo = domain[k.dims.index(gdims[0])].start
        origin = int(buf[out.origins[out.unit_dim]])  # type: ignore[index]
        extents[0] += (lo - origin) % align
    return extents


def slowest_bounds(k: ir.Kernel, layout: ArgLayout, ki: int) -> tuple[int, int] | None:
    """The argument-block slots of the lo and hi bounds of kernel ``ki``'s slowest grid dimension
    (where the block search cuts its timing slices); None for a kernel of fewer than two."""
    gdims = grid_dims(k, layout)
    if len(gdims) < 2:
        return None
    j = k.dims.index(gdims[-1])
    return layout.bounds[ki][2 * j], layout.bounds[ki][2 * j + 1]
