"""CUDA C++ source for a stencil program: one ``__global__`` kernel per stencil kernel.

Threads map to output points: x to the unit-stride dimension (coalesced), y to the next, z to
the rest. A scan kernel gives each thread one column and loops over the levels inside.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.dims import Dimension
from ...ir import nodes as ir
from ...ir.visit import deep
from ...stages.abi import ArgLayout
from ..cfamily import CTarget, ExprEmitter, emit_scan_loop, emit_stores, loop_order, unpack_args
from ..cprelude import PRELUDE, index_typedef

CUDA_TARGET = CTarget()
CUDA_TARGET.calls.update({"arcsin": "asin({0})", "arccos": "acos({0})", "arctan": "atan({0})"})

CUDA_PRELUDE = "#define SK_FN static __device__ __forceinline__\n" + PRELUDE


def grid_dims(k: ir.Kernel, layout: ArgLayout) -> list[Dimension]:
    """The parallel dimensions, fastest-varying first: [x, y, z...]."""
    order = loop_order(k, layout)
    par = [d for d in order if k.scan is None or d != k.scan.axis]
    return list(reversed(par))


@dataclass(frozen=True, slots=True)
class Variant:
    """How a kernel's threads cover the grid: ``chunk`` consecutive points per thread along z.
    Walking a short column, a thread reuses in registers what its neighbours along z read (the
    compiler keeps the overlapping loads of the unrolled loop), so fewer cache requests."""

    chunk: int = 1
    streaming: bool = False  # outputs written with cache-streaming stores (keep inputs in L2)

    @property
    def suffix(self) -> str:
        return ("" if self.chunk == 1 else f"_z{self.chunk}") + ("s" if self.streaming else "")

    @property
    def store(self) -> str:
        return "__stcs(&{ref}, {val});" if self.streaming else "{ref} = {val};"


PLAIN = Variant()

#: Unroll factor of a scan's loop over levels. On the H200 the tridiagonal pair, best blocks each, gave 0.923 of
#: a 256 MiB copy at 2 against 0.904 not unrolled, 0.910 at 4, 0.908 at 8 (benchmarks/explore_kernels.py --only scan).
SCAN_UNROLL = 2

#: Alignment, in bytes, that the first thread of a row starts at along the unit-stride dimension
#: (a whole cache line), so that a warp's loads and stores cover whole sectors.
X_ALIGN_BYTES = 128


def chunk_variants(k: ir.Kernel, layout: ArgLayout) -> tuple[Variant, ...]:
    """The variants a kernel is compiled in; the block search picks one on first use. Chunks run
    along the last grid dimension (z of three, y of two: e.g. the levels of a [Cell, K] field,
    where the neighbour indices and weights read at a cell serve every level of the chunk)."""
    if k.scan is not None or len(grid_dims(k, layout)) not in (2, 3):
        return (PLAIN,)
    return tuple(Variant(c, s) for s in (False, True) for c in (1, 2, 4, 8, 16))


def kernel_name(prog: ir.StencilProgram, ki: int, variant: Variant = PLAIN) -> str:
    return f"sk_{prog.name}_k{ki}{variant.suffix}"


def x_align(k: ir.Kernel, layout: ArgLayout) -> int:
    """Elements by which the grid's x start is rounded down (1: no rounding)."""
    out = layout.field(k.outs[0])
    gx = grid_dims(k, layout)
    if not gx or out.unit_dim is None or out.dims[out.unit_dim] != gx[0]:
        return 1
    return max(1, X_ALIGN_BYTES // np.dtype(out.dtype).itemsize)


def _kernel(prog: ir.StencilProgram, k: ir.Kernel, ki: int, layout: ArgLayout, written: set[str],
            variant: Variant = PLAIN) -> list[str]:
    bounds = layout.bounds[ki]
    chunk = variant.chunk
    lines = [f'extern "C" __global__ void {kernel_name(prog, ki, variant)}(const SkArgs args) {{',
             "  const int64_t* a = args.v;"]
    # only the fields this kernel touches are unpacked; the compiler drops the rest anyway
    lines += ["  " + s for s in unpack_args(layout, written)]
    for i, d in enumerate(k.dims):
        lines.append(f"  const sk_idx {d.value}_lo{ki} = a[{bounds[2 * i]}], {d.value}_hi{ki} = a[{bounds[2 * i + 1]}];")
    gdims = grid_dims(k, layout)
    axes = ["x", "y"]
    align = x_align(k, layout)
    cdim = gdims[-1] if chunk > 1 else None  # the dimension threads walk in chunks
    for j, d in enumerate(gdims[:2]):
        if d == cdim:
            continue
        ax = axes[j]
        start = f"{d.value}_lo{ki}"
        if j == 0 and align > 1:
            # start rows on a cache line (origins are aligned); threads before lo idle
            start = f"({start} - ((({start} - a[{layout.field(k.outs[0]).origins[layout.field(k.outs[0]).unit_dim]}]) % {align} + {align}) % {align}))"  # type: ignore[index]
        lines.append(f"  const sk_idx i_{d.value} = {start} + (sk_idx)(blockIdx.{ax} * blockDim.{ax} + threadIdx.{ax});")
    if align > 1 and gdims:
        lines.append(f"  if (i_{gdims[0].value} < {gdims[0].value}_lo{ki}) return;")
    emit = ExprEmitter(CUDA_TARGET, layout, {d.value: f"i_{d.value}" for d in k.dims})
    if cdim is not None:
        z, cax = cdim.value, "xyz"[len(gdims) - 1]
        lines.append(f"  const sk_idx z0 = {z}_lo{ki} + (sk_idx)(blockIdx.{cax} * blockDim.{cax} + threadIdx.{cax}) * {chunk};")
        for d in gdims[:-1]:
            lines.append(f"  if (i_{d.value} >= {d.value}_hi{ki}) return;")
        lines.append(f"  if (z0 + {chunk} <= {z}_hi{ki}) {{")
        lines.append("    #pragma unroll")
        lines.append(f"    for (int c = 0; c < {chunk}; ++c) {{")
        lines.append(f"      const sk_idx i_{z} = z0 + c;")
        lines += emit_stores(k, emit, layout, "      ", variant.store)
        lines.append("    }")
        lines.append("  } else {")
        lines.append(f"    for (sk_idx i_{z} = z0; i_{z} < {z}_hi{ki}; ++i_{z}) {{")
        lines += emit_stores(k, emit, layout, "      ", variant.store)
        lines.append("    }")
        lines.append("  }")
        lines.append("}")
        return lines
    if len(gdims) == 3:
        d = gdims[2]
        lines.append(f"  const sk_idx i_{d.value} = {d.value}_lo{ki} + (sk_idx)(blockIdx.z * blockDim.z + threadIdx.z);")
    elif len(gdims) > 3:
        lines.append("  sk_idx z = (sk_idx)(blockIdx.z * blockDim.z + threadIdx.z);")
        for d in gdims[2:]:
            n = f"({d.value}_hi{ki} - {d.value}_lo{ki})"
            lines.append(f"  const sk_idx i_{d.value} = {d.value}_lo{ki} + z % {n}; z /= {n};")
        lines.append("  if (z > 0) return;")
    for d in gdims:
        lines.append(f"  if (i_{d.value} >= {d.value}_hi{ki}) return;")
    if k.scan is None:
        lines += emit_stores(k, emit, layout, "  ", variant.store)
    else:
        lines += emit_scan_loop(k, ki, emit, layout, "  ", SCAN_UNROLL)
    lines.append("}")
    return lines


@deep
def generate_cuda(prog: ir.StencilProgram, layout: ArgLayout, variants: bool = False,
                  narrow_index: bool = False) -> str:
    """CUDA source of ``prog``: one kernel per stencil kernel, plus (``variants``) its z-chunked
    variants for the block search. ``narrow_index``: 32-bit index arithmetic (the caller has
    checked that every index of the call fits, see ``abi.fits_narrow_index``)."""
    written = {o for k in prog.kernels for o in k.outs}
    lines = ["// generated by stencilkit: CUDA C++", CUDA_PRELUDE, index_typedef(narrow_index),
             f"struct SkArgs {{ int64_t v[{max(layout.size, 1)}]; }};", ""]
    for ki, k in enumerate(prog.kernels):
        for variant in chunk_variants(k, layout) if variants else (PLAIN,):
            lines += _kernel(prog, k, ki, layout, written, variant)
            lines.append("")
    return "\n".join(lines)
