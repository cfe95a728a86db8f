"""Exploration on a GPU: kernel shapes for the 7-point Laplacian and the E2C gather, side by side.

Not part of the suite (``stencilkit bench``): it times hand-written candidate kernels against the
device copy and against what ``gtx.gpu`` generates today, so that codegen changes are chosen by
measurement. Every candidate is checked against a reference kernel before it is timed.

    PYTHONPATH=src python3 benchmarks/explore_kernels.py [--only lap|e2c] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from typing import Any

import cupy as cp
import numpy as np

LAP = r"""
#define IDX(i, j, k) ((i) + (j) * sj + (k) * sk)
// int64 indices, one thread per point (what gtx.gpu generated before)
extern "C" __global__ void pt64(const double* __restrict__ a, double* __restrict__ o, int n, long long sj, long long sk) {
  long long i = 1 + blockIdx.x * (long long)blockDim.x + threadIdx.x, j = 1 + blockIdx.y * (long long)blockDim.y + threadIdx.y,
            k = 1 + blockIdx.z;
  if (i >= n - 1 || j >= n - 1) return;
  long long p = IDX(i, j, k);
  o[p] = -6.0 * a[p] + a[p + 1] + a[p - 1] + a[p + sj] + a[p - sj] + a[p + sk] + a[p - sk];
}
// int32 indices, one thread per point
extern "C" __global__ void pt32(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) {
  int i = 1 + blockIdx.x * blockDim.x + threadIdx.x, j = 1 + blockIdx.y * blockDim.y + threadIdx.y, k = 1 + blockIdx.z;
  if (i >= n - 1 || j >= n - 1) return;
  int p = IDX(i, j, k);
  o[p] = -6.0 * a[p] + a[p + 1] + a[p - 1] + a[p + sj] + a[p - sj] + a[p + sk] + a[p - sk];
}
// int32, C levels per thread with a register queue along k
template <int C>
__device__ void zc(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) {
  int i = 1 + blockIdx.x * blockDim.x + threadIdx.x, j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  int k0 = 1 + blockIdx.z * C;
  if (i >= n - 1 || j >= n - 1) return;
  int p = IDX(i, j, k0);
  double below = a[p - sk], mid = a[p];
  #pragma unroll
  for (int c = 0; c < C; ++c) {
    if (k0 + c >= n - 1) return;
    double above = a[p + sk];
    o[p] = -6.0 * mid + a[p + 1] + a[p - 1] + a[p + sj] + a[p - sj] + above + below;
    below = mid; mid = above; p += sk;
  }
}
extern "C" __global__ void zc2(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) { zc<2>(a, o, n, sj, sk); }
extern "C" __global__ void zc4(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) { zc<4>(a, o, n, sj, sk); }
extern "C" __global__ void zc8(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) { zc<8>(a, o, n, sj, sk); }
extern "C" __global__ void zc16(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) { zc<16>(a, o, n, sj, sk); }
// int32, C levels per thread, the plane k in shared memory with a one-point halo in i and j
template <int C, int BX, int BY>
__device__ void sm(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) {
  __shared__ double t[BY + 2][BX + 2];
  int tx = threadIdx.x, ty = threadIdx.y;
  int i = 1 + blockIdx.x * BX + tx, j = 1 + blockIdx.y * BY + ty;
  int k0 = 1 + blockIdx.z * C;
  bool in = i < n - 1 && j < n - 1;
  int ic = min(i, n - 1), jc = min(j, n - 1);
  int p = IDX(ic, jc, k0);
  double below = a[p - sk], mid = a[p];
  for (int c = 0; c < C && k0 + c < n - 1; ++c) {
    double above = a[p + sk];
    __syncthreads();
    t[ty + 1][tx + 1] = mid;
    if (tx == 0) t[ty + 1][0] = a[p - 1];
    if (tx == BX - 1) t[ty + 1][tx + 2] = a[p + 1];
    if (ty == 0) t[0][tx + 1] = a[p - sj];
    if (ty == BY - 1) t[ty + 2][tx + 1] = a[p + sj];
    __syncthreads();
    if (in) o[p] = -6.0 * mid + t[ty + 1][tx] + t[ty + 1][tx + 2] + t[ty][tx + 1] + t[ty + 2][tx + 1] + above + below;
    below = mid; mid = above; p += sk;
  }
}
extern "C" __global__ void __launch_bounds__(256) sm8_32x8(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) { sm<8, 32, 8>(a, o, n, sj, sk); }
extern "C" __global__ void __launch_bounds__(256) sm16_32x8(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) { sm<16, 32, 8>(a, o, n, sj, sk); }
extern "C" __global__ void __launch_bounds__(256) sm32_32x8(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) { sm<32, 32, 8>(a, o, n, sj, sk); }
extern "C" __global__ void __launch_bounds__(256) sm16_64x4(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) { sm<16, 64, 4>(a, o, n, sj, sk); }
extern "C" __global__ void __launch_bounds__(512) sm16_32x16(const double* __restrict__ a, double* __restrict__ o, int n, int sj, int sk) { sm<16, 32, 16>(a, o, n, sj, sk); }
"""

E2C = r"""
// out[e, k] = c[e2c[e, 1], k] - c[e2c[e, 0], k]; horizontal-first (e or cell unit stride)
template <int C>
__device__ void hf(const double* __restrict__ c, const int* __restrict__ t, double* __restrict__ o,
                   int ne, int nk, int sc, int st, int so) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  int k0 = (blockIdx.y * blockDim.y + threadIdx.y) * C;
  if (e >= ne) return;
  int c0 = __ldg(t + e), c1 = __ldg(t + e + st);
  #pragma unroll
  for (int q = 0; q < C; ++q) {
    int k = k0 + q;
    if (k < nk) o[e + k * so] = c[c1 + k * sc] - c[c0 + k * sc];
  }
}
extern "C" __global__ void hf1(const double* c, const int* t, double* o, int ne, int nk, int sc, int st, int so) { hf<1>(c, t, o, ne, nk, sc, st, so); }
extern "C" __global__ void hf2(const double* c, const int* t, double* o, int ne, int nk, int sc, int st, int so) { hf<2>(c, t, o, ne, nk, sc, st, so); }
extern "C" __global__ void hf4(const double* c, const int* t, double* o, int ne, int nk, int sc, int st, int so) { hf<4>(c, t, o, ne, nk, sc, st, so); }
extern "C" __global__ void hf8(const double* c, const int* t, double* o, int ne, int nk, int sc, int st, int so) { hf<8>(c, t, o, ne, nk, sc, st, so); }
extern "C" __global__ void hf16(const double* c, const int* t, double* o, int ne, int nk, int sc, int st, int so) { hf<16>(c, t, o, ne, nk, sc, st, so); }
// K-contiguous: thread (e, k) flattened with k fastest; c[cell * nk + k], o[e * nk + k]
extern "C" __global__ void kc(const double* __restrict__ c, const int* __restrict__ t, double* __restrict__ o, int ne, int nk, int st) {
  long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (g >= (long long)ne * nk) return;
  int e = (int)(g / nk), k = (int)(g - (long long)e * nk);
  int c0 = __ldg(t + e), c1 = __ldg(t + e + st);
  o[g] = c[(long long)c1 * nk + k] - c[(long long)c0 * nk + k];
}
"""

OPTS = ("-std=c++17", "--use_fast_math")


def event_time(fn: Any, reps: int) -> float:
    """Median over 3 rounds of the mean ms per call of ``reps`` calls."""
    s, e = cp.cuda.Event(), cp.cuda.Event()
    fn()
    out = []
    for _ in range(3):
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        e.synchronize()
        out.append(cp.cuda.get_elapsed_time(s, e) / reps)
    return statistics.median(out)


def copy_ms(nbytes: int) -> float:
    a, b = cp.empty(nbytes // 8), cp.empty(nbytes // 8)
    a.fill(1.0)
    return event_time(lambda: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, nbytes, 3, 0), 20)


def row(rows: list[dict[str, Any]], name: str, ms: float, nbytes: int, copy_gbs: float, note: str = "") -> None:
    gbs = nbytes / ms / 1e6
    rows.append({"name": name, "ms": ms, "GBs": gbs, "fraction": gbs / copy_gbs, "note": note})
    print(f"  {name:44s} {ms:8.4f} ms {gbs:7.0f} GB/s  {gbs / copy_gbs:5.3f}  {note}", flush=True)


def explore_lap(n: int, out: dict[str, Any]) -> None:
    import stencilkit as gtx
    from stencilkit.bench.programs import import_programs

    print(f"=== lap {n}^3 fp64", flush=True)
    x = cp.asfortranarray(cp.random.standard_normal((n, n, n)))
    sj, sk = n, n * n
    nbytes = 2 * 8 * (n - 2) ** 3
    ref = cp.full((n, n, n), cp.nan, order="F")
    mod = cp.RawModule(code=LAP, options=OPTS, name_expressions=None)
    f = mod.get_function("pt64")
    f(((n - 2 + 31) // 32, (n - 2 + 7) // 8, n - 2), (32, 8, 1), (x, ref, np.int32(n), np.int64(sj), np.int64(sk)))
    host = cp.asnumpy(x[:8, :8, :8])
    want = -6 * host[1:-1, 1:-1, 1:-1] + host[2:, 1:-1, 1:-1] + host[:-2, 1:-1, 1:-1] + host[1:-1, 2:, 1:-1] \
        + host[1:-1, :-2, 1:-1] + host[1:-1, 1:-1, 2:] + host[1:-1, 1:-1, :-2]
    assert np.allclose(cp.asnumpy(ref[1:7, 1:7, 1:7]), want, rtol=1e-12, atol=1e-12), "reference kernel wrong"
    rows: list[dict[str, Any]] = []
    copies = [copy_ms(8 * n ** 3)]
    copy_gbs = 2 * 8 * n ** 3 / copies[0] / 1e6
    print(f"  copy {copies[0]:.4f} ms {copy_gbs:.0f} GB/s", flush=True)

    def check(o: Any, name: str) -> bool:
        inner = o[1:-1, 1:-1, 1:-1]
        ok = bool(cp.allclose(inner, ref[1:-1, 1:-1, 1:-1], rtol=1e-12, atol=1e-12))
        edge = bool(cp.isnan(o[0]).all() & cp.isnan(o[-1]).all() & cp.isnan(o[:, 0]).all() & cp.isnan(o[:, -1]).all()
                    & cp.isnan(o[:, :, 0]).all() & cp.isnan(o[:, :, -1]).all())
        if not (ok and edge):
            print(f"  !! {name}: interior ok={ok} boundary untouched={edge}", flush=True)
        return ok and edge

    o = cp.full((n, n, n), cp.nan, order="F")
    # the library, as the suite runs it
    P = import_programs(tempfile.mkdtemp())
    I, J, K = P.I, P.J, P.K
    a_f = gtx.as_field([I, J, K], x)
    o_f = gtx.as_field([I, J, K], o)
    prog = P.run_lap.with_backend(gtx.gpu)
    prog(a_f, o_f, n, offset_provider={})
    cp.cuda.runtime.deviceSynchronize()
    if check(o, "gtx.gpu"):
        (plan,) = prog._runner.plans.values()
        kl = plan.extra["launches"][0]
        row(rows, "gtx.gpu", event_time(lambda: prog(a_f, o_f, n, offset_provider={}), 20), nbytes, copy_gbs,
            f"{kl.name} {kl.block}")
    blocks = [(32, 4), (32, 8), (64, 2), (64, 4), (128, 1), (128, 2), (32, 16), (256, 1)]
    for name, kind in [("pt64", "pt"), ("pt32", "pt"), ("zc2", 2), ("zc4", 4), ("zc8", 8), ("zc16", 16)]:
        fn = mod.get_function(name)
        best = None
        for bx, by in blocks:
            o.fill(cp.nan)
            c = 1 if kind == "pt" else int(kind)
            grid = ((n - 2 + bx - 1) // bx, (n - 2 + by - 1) // by, (n - 2 + c - 1) // c)
            st = (np.int64 if name == "pt64" else np.int32)
            args = (x, o, np.int32(n), st(sj), st(sk))
            fn(grid, (bx, by, 1), args)
            if not check(o, f"{name} {bx}x{by}"):
                continue
            t = event_time(lambda fn=fn, grid=grid, bx=bx, by=by, args=args: fn(grid, (bx, by, 1), args), 10)
            if best is None or t < best[0]:
                best = (t, (bx, by))
        if best:
            row(rows, f"hand {name}", best[0], nbytes, copy_gbs, f"best block {best[1]}")
    for name in ("sm8_32x8", "sm16_32x8", "sm32_32x8", "sm16_64x4", "sm16_32x16"):
        c = int(name[2:].split("_")[0])
        bx, by = (int(v) for v in name.split("_")[1].split("x"))
        fn = mod.get_function(name)
        grid = ((n - 2 + bx - 1) // bx, (n - 2 + by - 1) // by, (n - 2 + c - 1) // c)
        o.fill(cp.nan)
        args = (x, o, np.int32(n), np.int32(sj), np.int32(sk))
        fn(grid, (bx, by, 1), args)
        if check(o, name):
            row(rows, f"hand {name}", event_time(lambda fn=fn, grid=grid, bx=bx, by=by, args=args:
                                                 fn(grid, (bx, by, 1), args), 10), nbytes, copy_gbs)
    copies.append(copy_ms(8 * n ** 3))
    print(f"  copy again {copies[1]:.4f} ms", flush=True)
    out["lap"] = {"n": n, "copy_ms": copies, "rows": rows}


def explore_e2c(nk: int, out: dict[str, Any]) -> None:
    import stencilkit as gtx
    from stencilkit.bench.programs import import_programs
    from stencilkit.meshes import periodic_triangular_mesh

    print(f"=== e2c 1024x512 quads x {nk}", flush=True)
    P = import_programs(tempfile.mkdtemp())
    res: dict[str, Any] = {}
    meshes = {"as generated": periodic_triangular_mesh(1024, 512)}
    try:
        from stencilkit.meshes import reorder_for_locality

        meshes["locality order"] = reorder_for_locality(meshes["as generated"])
    except ImportError as err:
        print("  no reorder_for_locality:", err)
    mod = cp.RawModule(code=E2C, options=OPTS)
    for label, mesh in meshes.items():
        ne, nc = mesh.n_edges, mesh.n_cells
        nbytes = 8 * ne * nk + 8 * nc * nk + 4 * ne * 2
        tab_h = np.asfortranarray(mesh.e2c)  # edge unit stride, as gtx.gpu allocates it
        tab = cp.asarray(tab_h, order="F")
        c = cp.asfortranarray(cp.random.standard_normal((nc, nk)))
        ch = cp.asnumpy(c)
        want = ch[mesh.e2c[:, 1]] - ch[mesh.e2c[:, 0]]
        copy_gbs = 2 * 8 * nc * nk / copy_ms(8 * nc * nk) / 1e6
        print(f"  [{label}] copy {copy_gbs:.0f} GB/s", flush=True)
        rows: list[dict[str, Any]] = []
        o = cp.full((ne, nk), cp.nan, order="F")

        def check(o: Any, name: str, want: Any = want) -> bool:
            ok = bool(np.array_equal(cp.asnumpy(o), want))
            if not ok:
                print(f"  !! {name} wrong", flush=True)
            return ok

        cf = gtx.as_field([P.Cell, P.K], c)
        of = gtx.as_field([P.Edge, P.K], o)
        prov = {"E2C": gtx.as_connectivity([P.Edge, P.E2CDim], P.Cell, tab)}
        prog = P.e2c_prog.with_backend(gtx.gpu)
        prog(cf, of, offset_provider=prov)
        cp.cuda.runtime.deviceSynchronize()
        if check(o, "gtx.gpu"):
            (plan,) = prog._runner.plans.values()
            kl = plan.extra["launches"][0]
            row(rows, f"[{label}] gtx.gpu", event_time(lambda prog=prog, cf=cf, of=of, prov=prov: prog(cf, of, offset_provider=prov), 20), nbytes,
                copy_gbs, f"{kl.name} {kl.block}")
        for name, ch_ in (("hf1", 1), ("hf2", 2), ("hf4", 4), ("hf8", 8), ("hf16", 16)):
            fn = mod.get_function(name)
            best = None
            for blk in ((128, 1), (256, 1), (64, 2), (128, 2), (32, 4), (512, 1)):
                o.fill(cp.nan)
                grid = ((ne + blk[0] - 1) // blk[0], (-(-nk // ch_) + blk[1] - 1) // blk[1], 1)
                args = (c, tab, o, np.int32(ne), np.int32(nk), np.int32(nc), np.int32(ne), np.int32(ne))
                fn(grid, (*blk, 1), args)
                if not check(o, f"{name} {blk}"):
                    continue
                t = event_time(lambda fn=fn, grid=grid, blk=blk, args=args: fn(grid, (*blk, 1), args), 10)
                if best is None or t < best[0]:
                    best = (t, blk)
            if best:
                row(rows, f"[{label}] hand {name}", best[0], nbytes, copy_gbs, f"block {best[1]}")
        # K-contiguous copies of the same data (another layout: not what gtx.gpu allocates)
        ck = cp.ascontiguousarray(c)
        ok_ = cp.full((ne, nk), cp.nan)
        fn = mod.get_function("kc")
        for bs in (128, 256):
            grid = ((ne * nk + bs - 1) // bs, 1, 1)
            args = (ck, tab, ok_, np.int32(ne), np.int32(nk), np.int32(ne))
            fn(grid, (bs, 1, 1), args)
            if check(ok_, "kc"):
                row(rows, f"[{label}] hand K-contiguous, block {bs}",
                    event_time(lambda fn=fn, grid=grid, bs=bs, args=args: fn(grid, (bs, 1, 1), args), 10),
                    nbytes, copy_gbs)
        res[label] = rows
        cp.get_default_memory_pool().free_all_blocks()
    out["e2c"] = res


def to_int32(src: str) -> str:
    """The generated source with 32-bit index arithmetic (pointers and the argument block stay 64-bit)."""
    out = []
    for line in src.splitlines():
        if "int64_t* a = args.v" not in line:
            line = line.replace("const int64_t ", "const int ").replace("(int64_t)(blockIdx", "(int)(blockIdx")
            line = line.replace("for (int64_t ", "for (int ")
        out.append(line)
    return "\n".join(out)


LD256 = r"""
static __device__ __forceinline__ double sk_ld256(const double* p) {
  double v; asm("ld.global.nc.L2::256B.f64 %0, [%1];" : "=d"(v) : "l"(p)); return v; }
"""


def with_ld256(src: str, field: str) -> str:
    """Loads of ``field`` through ``ld.global.nc.L2::256B`` (an L2 prefetch-size hint)."""
    import re

    body = re.sub(field + r"_b\[([^\[\]]*)\]", field + r"_b_ld(\1)", src)
    return body.replace("struct SkArgs", LD256 + f"#define {field}_b_ld(x) sk_ld256({field}_b + (x))\nstruct SkArgs", 1)


def explore_generated(label: str, prog: Any, args: tuple[Any, ...], provider: dict[str, Any], out_arr: Any,
                      nbytes: int, copy_gbs: float, edits: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Every chunk variant x block shape of the kernel gtx.gpu generates for ``prog``, compiled
    as generated and with each of ``edits`` applied to its source; each best checked."""
    from pathlib import Path

    from stencilkit.backends.cuda.backend import grid_for
    from stencilkit.backends.cuda.codegen import (
        chunk_variants,
        generate_cuda,
        grid_dims,
        kernel_name,
        x_align,
    )
    from stencilkit.backends.cuda.runtime import Launcher, Module, device_arch
    from stencilkit.backends.cuda.tuning import _CANDIDATES_2D
    from stencilkit.toolchain.cuda import compile_cubin, find_cuda_compiler

    prog(*args, offset_provider=provider)
    cp.cuda.runtime.deviceSynchronize()
    want = out_arr.copy()
    (plan,) = prog._runner.plans.values()
    loaded = plan.loaded
    sprog, layout, buf = loaded.sprog, loaded.layout, plan.buf
    (k,) = sprog.kernels
    sizes = dict(zip(k.dims, (len(r) for r in plan.domains[0])))
    gdims = grid_dims(k, layout)
    extents = [sizes[d] for d in gdims]
    align = x_align(k, layout)
    if align > 1:
        f = layout.field(k.outs[0])
        extents[0] += (plan.domains[0][k.dims.index(gdims[0])].start - int(buf[f.origins[f.unit_dim]])) % align
    base = generate_cuda(sprog, layout, variants=True)
    compiler = find_cuda_compiler()
    arch = device_arch(0)
    variants = chunk_variants(k, layout)
    names = [kernel_name(sprog, 0, v) for v in variants]
    for edit_name, edit in {"as generated": lambda s: s, **edits}.items():
        d = Path(tempfile.mkdtemp())
        try:
            compile_cubin(edit(base), arch, d, "program", compiler)
        except Exception as err:
            print(f"  !! [{label}] {edit_name}: does not compile: {str(err)[:300]}", flush=True)
            continue
        mod = Module((d / "program.cubin").read_bytes(), names, 0)
        table = []
        for v, name in zip(variants, names):
            launcher = Launcher(mod.functions[name], buf)
            for block in _CANDIDATES_2D:
                grid = grid_for(extents, block, v.chunk)
                t = event_time(lambda launcher=launcher, grid=grid, block=block: launcher.launch(grid, block, 0), 10)
                table.append((t, v.suffix or "plain", block, launcher, grid))
        table.sort(key=lambda r: r[0])
        shown = 0
        for t, vs, block, launcher, grid in table:
            out_arr.fill(cp.nan)
            launcher.launch(grid, block, 0)
            cp.cuda.runtime.deviceSynchronize()
            ok = bool(cp.array_equal(out_arr, want, equal_nan=True))
            if not ok:
                print(f"  !! [{label}] {edit_name} {vs} {block}: wrong result", flush=True)
                continue
            row(rows, f"[{label}] {edit_name} {vs} {block}", t, nbytes, copy_gbs)
            shown += 1
            if shown == 3:
                break
        per_variant = {}
        for t, vs, block, *_ in table:
            per_variant.setdefault(vs, (t, block))
        print("    best per variant:", ", ".join(f"{vs} {copy_gbs and nbytes / t / 1e6 / copy_gbs:.3f}"
                                                for vs, (t, b) in sorted(per_variant.items(), key=lambda x: x[1][0])), flush=True)


def explore_codegen(out: dict[str, Any]) -> None:
    import stencilkit as gtx
    from stencilkit.bench.programs import import_programs
    from stencilkit.meshes import periodic_triangular_mesh, reorder_for_locality

    P = import_programs(tempfile.mkdtemp())
    rows: list[dict[str, Any]] = []
    n = 512
    print("=== generated lap kernels, edited", flush=True)
    x = cp.asfortranarray(cp.random.standard_normal((n, n, n)))
    o = cp.full((n, n, n), cp.nan, order="F")
    copy_gbs = 2 * 8 * n ** 3 / copy_ms(8 * n ** 3) / 1e6
    a_f, o_f = gtx.as_field([P.I, P.J, P.K], x), gtx.as_field([P.I, P.J, P.K], o)
    explore_generated("lap", P.run_lap.with_backend(gtx.gpu), (a_f, o_f, n), {}, o, 2 * 8 * (n - 2) ** 3,
                      copy_gbs, {"int32": to_int32, "int32 + L2::256B": lambda s: with_ld256(to_int32(s), "a"),
                                 "L2::256B": lambda s: with_ld256(s, "a")}, rows)
    del x, o, a_f, o_f
    cp.get_default_memory_pool().free_all_blocks()
    nk = 80
    for label, mesh in (("e2c as generated", periodic_triangular_mesh(1024, 512)),
                        ("e2c locality", reorder_for_locality(periodic_triangular_mesh(1024, 512)))):
        print(f"=== generated {label} kernels, edited", flush=True)
        ne, nc = mesh.n_edges, mesh.n_cells
        c = cp.asfortranarray(cp.random.standard_normal((nc, nk)))
        o = cp.full((ne, nk), cp.nan, order="F")
        copy_gbs = 2 * 8 * nc * nk / copy_ms(8 * nc * nk) / 1e6
        prov = {"E2C": gtx.as_connectivity([P.Edge, P.E2CDim], P.Cell, cp.asarray(np.asfortranarray(mesh.e2c)))}
        explore_generated(label, P.e2c_prog.with_backend(gtx.gpu),
                          (gtx.as_field([P.Cell, P.K], c), gtx.as_field([P.Edge, P.K], o)), prov, o,
                          8 * ne * nk + 8 * nc * nk + 8 * ne, copy_gbs, {"int32": to_int32}, rows)
        del c, o
        cp.get_default_memory_pool().free_all_blocks()
    out["codegen"] = rows


def explore_scan(out: dict[str, Any]) -> None:
    """The two generated scan kernels of the tridiagonal solve, as generated and with the level
    loop unrolled (loads of later levels do not depend on the carry, so they can be issued early)."""
    from pathlib import Path

    import stencilkit as gtx
    from stencilkit.backends.cuda.backend import grid_for
    from stencilkit.backends.cuda.codegen import generate_cuda, grid_dims, kernel_name, x_align
    from stencilkit.backends.cuda.runtime import Launcher, Module, device_arch
    from stencilkit.backends.cuda.tuning import _CANDIDATES_2D
    from stencilkit.bench.programs import import_programs
    from stencilkit.toolchain.cuda import compile_cubin, find_cuda_compiler

    print("=== generated scan kernels (tridiagonal 512x512x128)", flush=True)
    P = import_programs(tempfile.mkdtemp())
    ni, nj, nk = 512, 512, 128
    arrs = [cp.asfortranarray(cp.random.uniform(0.1, 1.0, (ni, nj, nk))) for _ in range(4)]
    arrs[1] += 3.0  # diagonally dominant
    outs = [cp.full((ni, nj, nk), cp.nan, order="F") for _ in range(3)]
    fields = [gtx.as_field([P.I, P.J, P.K], x) for x in (*arrs, *outs)]
    prog = P.tridiag.with_backend(gtx.gpu)
    prog(*fields, offset_provider={})
    cp.cuda.runtime.deviceSynchronize()
    want = [o.copy() for o in outs]
    copy_gbs = 2 * 8 * ni * nj * nk / copy_ms(8 * ni * nj * nk) / 1e6
    nbytes = 9 * 8 * ni * nj * nk
    (plan,) = prog._runner.plans.values()
    loaded = plan.loaded
    sprog, layout, buf = loaded.sprog, loaded.layout, plan.buf
    base = generate_cuda(sprog, layout, variants=False, narrow_index="typedef int32_t sk_idx;" in loaded.source)
    extents_of = []
    for ki, k in enumerate(sprog.kernels):
        sizes = dict(zip(k.dims, (len(r) for r in plan.domains[ki])))
        gd = grid_dims(k, layout)
        ext = [sizes[d] for d in gd]
        if x_align(k, layout) > 1:
            f = layout.field(k.outs[0])
            ext[0] += (plan.domains[ki][k.dims.index(gd[0])].start - int(buf[f.origins[f.unit_dim]])) % x_align(k, layout)
        extents_of.append(ext)
    names = [kernel_name(sprog, ki) for ki in range(len(sprog.kernels))]
    rows: list[dict[str, Any]] = []
    row(rows, "library as called (tuned)", event_time(lambda: prog(*fields, offset_provider={}), 10), nbytes, copy_gbs,
        " + ".join(f"{kl.name} {kl.block}" for kl in plan.extra["launches"]))

    from cuda.bindings import driver as drv

    def edited(unroll: int, bounds: str = "") -> Any:
        def edit(src: str) -> str:
            src = src.replace("  #pragma unroll 2\n  for (sk_idx i_K", "  for (sk_idx i_K")
            if unroll > 1:
                src = src.replace("  for (sk_idx i_K", f"  #pragma unroll {unroll}\n  for (sk_idx i_K")
            if bounds:
                src = src.replace('extern "C" __global__ void', f'extern "C" __global__ void __launch_bounds__({bounds})')
            return src
        return edit

    edits = {"not unrolled": (edited(1), 1024), "unroll 2 (as generated)": (edited(2), 1024),
             "unroll 4": (edited(4), 1024),
             "not unrolled, launch_bounds(256, 8)": (edited(1, "256, 8"), 256),
             "unroll 2, launch_bounds(256, 8)": (edited(2, "256, 8"), 256),
             "unroll 4, launch_bounds(256, 8)": (edited(4, "256, 8"), 256),
             "unroll 2, launch_bounds(128, 12)": (edited(2, "128, 12"), 128)}
    for label, (edit, max_threads) in edits.items():
        d = Path(tempfile.mkdtemp())
        compile_cubin(edit(base), device_arch(0), d, "program", find_cuda_compiler())
        mod = Module((d / "program.cubin").read_bytes(), names, 0)
        total, picks, regs = 0.0, [], []
        launchers = []
        for ki, name in enumerate(names):
            launcher = Launcher(mod.functions[name], buf)
            regs.append(int(drv.cuFuncGetAttribute(drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS,
                                                   launcher.function)[1]))
            timed = []
            for b in _CANDIDATES_2D:
                if b[0] * b[1] * b[2] > max_threads:
                    continue
                g = grid_for(extents_of[ki], b)
                timed.append((event_time(lambda launcher=launcher, g=g, b=b: launcher.launch(g, b, 0), 10), b))
            best = min(timed)
            total += best[0]
            picks.append(best[1])
            launchers.append((launcher, grid_for(extents_of[ki], best[1]), best[1]))
        for o in outs:
            o.fill(cp.nan)
        for launcher, g, b in launchers:
            launcher.launch(g, b, 0)
        cp.cuda.runtime.deviceSynchronize()
        ok = all(bool(cp.array_equal(o, w)) for o, w in zip(outs, want))
        row(rows, f"{label}{'' if ok else ' WRONG RESULT'}", total, nbytes, copy_gbs, f"blocks {picks} regs {regs}")
    out["scan"] = rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=("lap", "e2c", "codegen", "scan"))
    ap.add_argument("--json")
    ap.add_argument("--n", type=int, default=512)
    args = ap.parse_args()
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    out: dict[str, Any] = {"device": dev, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print("device:", dev, flush=True)
    failed = False
    for name, fn in (("lap", lambda: explore_lap(args.n, out)), ("e2c", lambda: explore_e2c(80, out)),
                     ("codegen", lambda: explore_codegen(out)), ("scan", lambda: explore_scan(out))):
        if args.only in (None, name):
            try:
                fn()
            except Exception as err:  # report and go on with the next section
                import traceback

                traceback.print_exc()
                print(f"!!! {name} failed: {err!r}", flush=True)
                failed = True
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
