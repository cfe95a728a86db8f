"""CUDA C++ source for a stencil program: one ``__global__`` kernel per stencil kernel.

Threads map to output points: x to the unit-stride dimension of the first output (consecutive
threads, consecutive addresses: coalesced in horizontal-first and K-contiguous fields alike), y
to the next, z to the rest. Where the y or z blocks exceed the device's limits, grid.py folds
them into one linear numbering over grid y and z and the kernel unfolds it (no loop: a kernel
over a grid that fits runs as before). A scan kernel gives each thread one column and loops
over the levels inside.

A kernel that gathers through a neighbour table at its own points (``ordered_dim``) is also
compiled in *ordered* variants for the block search: their threads visit the points of that
dimension in a locality order (``order.py``), passed as a second kernel argument, instead of in
index order. Each point computes the same values either way.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numpy as np

from ...core.dims import Dimension
from ...core.records import record
from ...ir import nodes as ir
from ...ir.visit import deep, walk
from ...stages.abi import ArgLayout
from ..cfamily import (
    C_TARGET,
    CTarget,
    ExprEmitter,
    emit_output_stores,
    emit_scan_loop,
    emit_stores,
    emit_values,
    loop_order,
    unpack_args,
)
from ..cprelude import PRELUDE, index_typedef

CUDA_TARGET: CTarget = C_TARGET  # CUDA's device math library has C's names

CUDA_PRELUDE = (
    "#define SK_FN static __device__ __forceinline__\n"
    # a register cap per kernel (``Variant.regs``): CUDA 12.4 and later; none before (or off the GPU)
    "#if defined(__CUDACC__) && (__CUDACC_VER_MAJOR__ > 12 || "
    "(__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4))\n"
    "#define SK_MAXNREG(n) __maxnreg__(n)\n"
    "#else\n"
    "#define SK_MAXNREG(n)\n"
    "#endif\n" + PRELUDE
)


def grid_dims(k: ir.Kernel, layout: ArgLayout) -> list[Dimension]:
    """The parallel dimensions, fastest-varying first: [x, y, z...]."""
    order = loop_order(k, layout)
    par = [d for d in order if k.scan is None or d != k.scan.axis]
    return list(reversed(par))


@record
class Variant:
    """How a kernel's threads cover the grid: ``chunk`` consecutive points per thread along z.
    Walking a short column, a thread reuses in registers what its neighbours along z read (the
    compiler keeps the overlapping loads of the unrolled loop), so fewer cache requests."""

    chunk: int = 1
    #: outputs written with cache-streaming stores (keep inputs in L2). ``__stcs`` is an ``asm``
    #: statement with a memory clobber: a load after it is issued again and none is read-only
    #: (``ld.global.nc``), so a chunk that stores point by point loads 7 values per point of
    #: the 7-point Laplacian where the plain store's chunk loads 5 (``generate_cuda``'s
    #: ``loads_first`` computes the whole chunk before its first store instead)
    streaming: bool = False
    #: threads visit the points of ``ordered_dim`` in a locality order (a second kernel argument)
    ordered: bool = False
    #: registers per thread at most (``__maxnreg__``; 0: the compiler's choice), see
    #: ``CAPPED_REGS``
    regs: int = 0

    @property
    def suffix(self) -> str:
        return (
            ("" if self.chunk == 1 else f"_z{self.chunk}")
            + ("s" if self.streaming else "")
            + ("_ord" if self.ordered else "")
            + (f"_r{self.regs}" if self.regs else "")
        )

    @property
    def store(self) -> str:
        return "__stcs(&{ref}, {val});" if self.streaming else "{ref} = {val};"


PLAIN = Variant()

#: The register cap of the capped copies of a small Cartesian kernel's chunk variants: 32
#: registers per thread let 64 warps (2048 threads) run on a multiprocessor. The H200 profile of
#: the 512^3 Laplacian (ncu, 2026-12-03) showed every form of it bound by L2 requests, with the
#: generated chunk variants at 40-44 registers (75 % occupancy at most); capped at 32 the best
#: variant ran in 0.578 against 0.602 ms (0.88 against 0.85 of a copy of the same bytes), a cap
#: of 40 gained nothing. A cap changes no arithmetic (the same bits); a kernel it makes spill is
#: slower and the block search leaves it.
CAPPED_REGS = 32

#: The largest kernel given capped copies: at most this many field reads (counted with their
#: offsets) and expression nodes. Larger kernels (ICON's) need more registers than the cap.
CAPPED_MAX_READS = 24
CAPPED_MAX_NODES = 128

#: Unroll factor of a scan's loop over levels. On the H200 the tridiagonal pair, best blocks each, gave 0.923 of
#: a 256 MiB copy at 2 against 0.904 not unrolled, 0.910 at 4, 0.908 at 8 (measured with the since-removed benchmarks/explore_kernels.py --only scan; RESULTS.md).
SCAN_UNROLL = 2

#: Alignment, in bytes, that the first thread of a row starts at along the unit-stride dimension
#: (a whole cache line), so that a warp's loads and stores cover whole sectors.
X_ALIGN_BYTES = 128


def ordered_dim(k: ir.Kernel, layout: ArgLayout) -> tuple[Dimension, str] | None:
    """The parallel dimension whose points kernel ``k`` may visit in a locality order, and the
    neighbour table that order comes from: the first table the kernel reads at its own point
    (``table[p, j]`` with ``p`` the current index of a grid dimension); None for a kernel that
    gathers through no table."""
    gdims = set(grid_dims(k, layout))
    roots = [*k.values, *(k.scan.inits if k.scan is not None else ())]
    for root in roots:
        for x in walk(root):
            if (
                isinstance(x, ir.Lookup)
                and isinstance(x.source, ir.Pos)
                and x.source.offset == 0
                and x.source.dim in gdims
            ):
                return x.source.dim, x.table
    return None


@functools.cache
def codegen_digest() -> str:
    """A digest of the code that turns a plan into CUDA (this package and the C-family emitters
    beside it): part of the cache key of modules that are looked up without generating their
    source first (the z-chunked variants, ``CudaTarget.variant_key``)."""
    here = Path(__file__).resolve().parent
    files = sorted(here.glob("*.py")) + sorted(here.parent.glob("*.py"))
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def chunk_variants(k: ir.Kernel, layout: ArgLayout, ordered: bool = False) -> tuple[Variant, ...]:
    """The variants a kernel is compiled in; the block search picks one on first use. Chunks run
    along the last grid dimension (z of three, y of two: e.g. the levels of a [Cell, K] field,
    where the neighbour indices and weights read at a cell serve every level of the chunk).
    ``ordered``: each also in its locality-ordered form, for a kernel that has ``ordered_dim``."""
    if k.scan is not None or len(grid_dims(k, layout)) not in (2, 3):
        base: tuple[Variant, ...] = (PLAIN,)
    else:
        base = tuple(Variant(c, s) for s in (False, True) for c in (1, 2, 4, 8, 16))
        if _small_cartesian(k):
            base += tuple(
                Variant(v.chunk, v.streaming, regs=CAPPED_REGS) for v in base if v.chunk > 1
            )
    if not ordered or ordered_dim(k, layout) is None:
        return base
    return base + tuple(Variant(v.chunk, v.streaming, True) for v in base)


def _small_cartesian(k: ir.Kernel) -> bool:
    """A kernel that reads no neighbour table and is small enough (``CAPPED_MAX_READS``,
    ``CAPPED_MAX_NODES``) to run within ``CAPPED_REGS`` registers: its chunk variants are also
    compiled with that cap."""
    reads: set[ir.Access] = set()
    nodes = 0
    for root in k.values:
        for x in walk(root):
            nodes += 1
            if isinstance(x, (ir.Lookup, ir.Valid)) or nodes > CAPPED_MAX_NODES:
                return False
            if isinstance(x, ir.Access):
                reads.add(x)
    return len(reads) <= CAPPED_MAX_READS


def kernel_name(prog: ir.StencilProgram, ki: int, variant: Variant = PLAIN) -> str:
    return f"sk_{prog.name}_k{ki}{variant.suffix}"


def x_align(k: ir.Kernel, layout: ArgLayout) -> int:
    """Elements by which the grid's x start is rounded down (1: no rounding)."""
    out = layout.field(k.outs[0])
    gx = grid_dims(k, layout)
    if not gx or out.unit_dim is None or out.dims[out.unit_dim] != gx[0]:
        return 1
    return max(1, X_ALIGN_BYTES // np.dtype(out.dtype).itemsize)


def _block_coords(ext_y: str, ext_z: str, has_z: bool) -> list[str]:
    """The block's y and z coordinates. grid.py folds a grid whose y or z blocks exceed the
    device's limits: the y and z blocks are then numbered linearly over grid y and z. A kernel
    sees it from its grid (fewer threads along y or z than steps) and unfolds; a grid that fits
    costs one uniform comparison."""
    lines = [
        "  unsigned by_ = blockIdx.y, bz_ = blockIdx.z;",
        f"  if ((int64_t)gridDim.y * blockDim.y < (int64_t){ext_y}"
        + (f" || (int64_t)gridDim.z * blockDim.z < (int64_t){ext_z}" if has_z else "")
        + ") {",
        f"    const uint64_t nby = ((uint64_t){ext_y} + blockDim.y - 1) / blockDim.y;",
        "    const uint64_t lin = blockIdx.y + (uint64_t)gridDim.y * blockIdx.z;",
        "    by_ = (unsigned)(lin % nby); bz_ = (unsigned)(lin / nby);",
        # blocks past the last needed one (a folded grid is rounded up) would repeat blocks
        # of z = 0 in a kernel without z; with z, the bounds check of z stops them
        *([] if has_z else ["    if (bz_ != 0) return;"]),
        "  }",
    ]
    return lines


def _kernel(
    prog: ir.StencilProgram,
    k: ir.Kernel,
    ki: int,
    layout: ArgLayout,
    written: set[str],
    variant: Variant = PLAIN,
    loads_first: bool = False,
) -> list[str]:
    bounds = layout.bounds[ki]
    chunk = variant.chunk
    found = ordered_dim(k, layout) if variant.ordered else None
    odim = found[0] if found is not None else None
    # the locality order, indexed by the natural index (the pointer is offset by the domain's start)
    extra = ", const int32_t* __restrict__ sk_ord" if odim is not None else ""
    cap = f"SK_MAXNREG({variant.regs}) " if variant.regs else ""
    lines = [
        f'extern "C" __global__ void {cap}{kernel_name(prog, ki, variant)}(const SkArgs args{extra}) {{',
        "  const int64_t* a = args.v;",
    ]
    # only the fields this kernel touches are unpacked; the compiler drops the rest anyway
    lines += ["  " + s for s in unpack_args(layout, written)]
    for i, d in enumerate(k.dims):
        lines.append(
            f"  const sk_idx {d.value}_lo{ki} = a[{bounds[2 * i]}], {d.value}_hi{ki} = a[{bounds[2 * i + 1]}];"
        )
    gdims = grid_dims(k, layout)
    index = {d.value: ("o_" if d == odim else "i_") + d.value for d in k.dims}
    emit = ExprEmitter(CUDA_TARGET, layout, index)

    def visit(pad: str) -> list[str]:  # the point of the ordered dimension this thread visits
        return (
            []
            if odim is None
            else [f"{pad}const sk_idx o_{odim.value} = (sk_idx)sk_ord[i_{odim.value}];"]
        )

    if not gdims:  # nothing parallel (a 0-d output, a scan over one dimension): one thread works
        lines.append(
            "  if (threadIdx.x + threadIdx.y + threadIdx.z + blockIdx.x + blockIdx.y + blockIdx.z != 0) return;"
        )
        lines += _body(k, ki, emit, layout, "  ", variant)
        return [*lines, "}"]
    ext = {d: f"({d.value}_hi{ki} - {d.value}_lo{ki})" for d in gdims}
    cdim = gdims[-1] if chunk > 1 else None  # the dimension threads walk in chunks
    steps = {d: (f"(({ext[d]} + {chunk - 1}) / {chunk})" if d == cdim else ext[d]) for d in gdims}
    block = {"y": "by_", "z": "bz_"}
    if len(gdims) > 1:
        z_steps = " * ".join(steps[d] for d in gdims[2:]) if len(gdims) > 2 else "1"
        lines += _block_coords(steps[gdims[1]], z_steps, len(gdims) > 2)
    # x: the unit-stride dimension; rows start on a cache line (origins are aligned), threads
    # before lo idle
    x = gdims[0].value
    align = x_align(k, layout)
    start = f"{x}_lo{ki}"
    if align > 1:
        out = layout.field(k.outs[0])
        start = f"({start} - ((({start} - a[{out.origins[out.unit_dim]}]) % {align} + {align}) % {align}))"  # type: ignore[index]
    lines.append(
        f"  const sk_idx i_{x} = {start} + (sk_idx)((sk_idx)blockIdx.x * blockDim.x + threadIdx.x);"
    )
    lines.append(f"  if (i_{x} < {x}_lo{ki} || i_{x} >= {x}_hi{ki}) return;")
    if len(gdims) > 1 and gdims[1] != cdim:
        y = gdims[1].value
        lines.append(
            f"  const sk_idx i_{y} = {y}_lo{ki} + (sk_idx)((sk_idx)by_ * blockDim.y + threadIdx.y);"
        )
        lines.append(f"  if (i_{y} >= {y}_hi{ki}) return;")
    if len(gdims) == 3 and gdims[2] != cdim:
        z = gdims[2].value
        lines.append(
            f"  const sk_idx i_{z} = {z}_lo{ki} + (sk_idx)((sk_idx)bz_ * blockDim.z + threadIdx.z);"
        )
        lines.append(f"  if (i_{z} >= {z}_hi{ki}) return;")
    elif len(gdims) > 3:
        lines.append("  int64_t r_z = (int64_t)bz_ * blockDim.z + threadIdx.z;")
        for d in gdims[2:]:
            n = ext[d]
            lines.append(
                f"  const sk_idx i_{d.value} = {d.value}_lo{ki} + (sk_idx)(r_z % {n}); r_z /= {n};"
            )
        lines.append("  if (r_z > 0) return;")
    if cdim is None:
        lines += visit("  ")
        lines += _body(k, ki, emit, layout, "  ", variant)
        return [*lines, "}"]
    if cdim != odim:
        lines += visit("  ")
    inner = visit("      ") if cdim == odim else []
    c, cax = cdim.value, "yz"[len(gdims) - 2]
    lines.append(
        f"  const sk_idx z0 = {c}_lo{ki} + (sk_idx)((sk_idx){block[cax]} * blockDim.{cax} + threadIdx.{cax}) * {chunk};"
    )
    lines.append(f"  if (z0 + {chunk} <= {c}_hi{ki}) {{")
    if loads_first and variant.streaming:
        lines += _chunk_loads_first(k, emit, layout, variant, c, inner)
    else:
        lines.append("    #pragma unroll")
        lines.append(f"    for (int c = 0; c < {chunk}; ++c) {{")
        lines.append(f"      const sk_idx i_{c} = z0 + c;")
        lines += inner
        lines += emit_stores(k, emit, layout, "      ", variant.store)
        lines.append("    }")
    lines.append("  } else {")
    lines.append(f"    for (sk_idx i_{c} = z0; i_{c} < {c}_hi{ki}; ++i_{c}) {{")
    lines += inner
    lines += emit_stores(k, emit, layout, "      ", variant.store)
    lines.append("    }")
    lines.append("  }")
    return [*lines, "}"]


def _chunk_loads_first(
    k: ir.Kernel, emit: ExprEmitter, layout: ArgLayout, variant: Variant, c: str, inner: list[str]
) -> list[str]:
    """A whole chunk's values into registers (one array per output, indexed by unrolled
    constants), then its stores: no load follows a streaming store, so the compiler keeps the
    values that neighbouring points of the chunk share."""
    chunk = variant.chunk
    lines: list[str] = []
    values, types = emit_values(k, emit, layout, "      ")
    for j, t in enumerate(types):
        lines.append(f"    {t} sk_c{j}[{chunk}];")
    body = values + [f"      sk_c{j}[c] = r{j};" for j in range(len(types))]
    for part in (
        body,
        emit_output_stores(
            k, emit, layout, "      ", [f"sk_c{j}[c]" for j in range(len(types))], variant.store
        ),
    ):
        lines.append("    #pragma unroll")
        lines.append(f"    for (int c = 0; c < {chunk}; ++c) {{")
        lines.append(f"      const sk_idx i_{c} = z0 + c;")
        lines += inner
        lines += part
        lines.append("    }")
    return lines


def _body(
    k: ir.Kernel, ki: int, emit: ExprEmitter, layout: ArgLayout, pad: str, variant: Variant
) -> list[str]:
    if k.scan is None:
        return emit_stores(k, emit, layout, pad, variant.store)
    return emit_scan_loop(k, ki, emit, layout, pad, SCAN_UNROLL)


@deep
def generate_cuda(
    prog: ir.StencilProgram,
    layout: ArgLayout,
    variants: bool = False,
    narrow_index: bool = False,
    ordered: bool = False,
    loads_first: bool = False,
) -> str:
    """CUDA source of ``prog``: one kernel per stencil kernel, plus (``variants``) its z-chunked
    variants for the block search, and (``ordered`` too) the locality-ordered forms of those of
    the kernels that gather (``ordered_dim``). ``narrow_index``: 32-bit index arithmetic (the
    caller has checked that every index of the call fits, see ``abi.fits_narrow_index``).
    ``loads_first``: the streaming chunk variants compute a chunk before storing it (``Variant``)."""
    written = {o for k in prog.kernels for o in k.outs}
    lines = [
        "// generated by stencilkit: CUDA C++",
        CUDA_PRELUDE,
        index_typedef(narrow_index),
        f"struct SkArgs {{ int64_t v[{max(layout.size, 1)}]; }};",
        "",
    ]
    for ki, k in enumerate(prog.kernels):
        for variant in chunk_variants(k, layout, ordered) if variants else (PLAIN,):
            lines += _kernel(prog, k, ki, layout, written, variant, loads_first)
            lines.append("")
    return "\n".join(lines)
