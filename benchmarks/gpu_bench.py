"""GPU benchmarks of stencilkit, side by side in one process (see benchmarks/README.md).

    PYTHONPATH=src python benchmarks/gpu_bench.py [--json out.json] [--n 512] [--quick]

Sections:
  copy       device-to-device copy of an n^3 float64 buffer (cupy.copyto, dst[...] = src,
             cudaMemcpyAsync), bytes = read + write: the ceiling.
  laplacian  7-point fp64 Laplacian on the interior of n^3: stencilkit gtx.gpu, two plain
             hand-written CUDA kernels (cupy.RawKernel), the embedded backend on CuPy fields;
             checked against each other and against NumPy on small blocks, NaN-poisoned outputs.
  overhead   per-call wall time of a gtx.gpu program on 8^3 fields, 2 and 25 fields, with a
             breakdown, against bare cupy.RawKernel launches.
  compile    first call with a fresh STENCILKIT_CACHE_DIR (new process: NVRTC + load) and with
             the warm cache (another new process: load only).
All device times come from CUDA events (median of many reps after warm-up). Exits 0 if every
section ran and every check passed, 1 otherwise, 2 if there is no usable GPU/CuPy here.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C

DESIGN = {  # DESIGN.md section 4
    "laplacian_fraction_of_copy": 0.85,
    "plain_cuda_fraction_of_copy": 0.75,
    "overhead_2_us": 10.0,
    "overhead_25_us": 15.0,
    "gpu_first_compile_s": 0.5,
    "cached_new_process_s": 0.050,
}

LAP_SRC = r"""
// Plain 7-point Laplacian, one thread per point: x -> I (unit stride), y -> J, z -> K.
extern "C" __global__ void lap_plain(const double* __restrict__ a, double* __restrict__ out,
                                     int ni, int nj, int nk,
                                     long long asj, long long ask, long long osj, long long osk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int k = blockIdx.z + 1;
    if (i >= ni - 1 || j >= nj - 1 || k >= nk - 1) return;
    long long idx = i + j * asj + k * ask;
    out[i + j * osj + k * osk] = -6.0 * a[idx] + a[idx + 1] + a[idx - 1] + a[idx + asj] + a[idx - asj]
                                 + a[idx + ask] + a[idx - ask];
}

// Same, one thread per (I, J) column marching up K.
extern "C" __global__ void lap_kloop(const double* __restrict__ a, double* __restrict__ out,
                                     int ni, int nj, int nk,
                                     long long asj, long long ask, long long osj, long long osk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i >= ni - 1 || j >= nj - 1) return;
    for (int k = 1; k < nk - 1; ++k) {
        long long idx = i + j * asj + k * ask;
        out[i + j * osj + k * osk] = -6.0 * a[idx] + a[idx + 1] + a[idx - 1] + a[idx + asj] + a[idx - asj]
                                     + a[idx + ask] + a[idx - ask];
    }
}
"""

TRIVIAL_SRC = r"""
extern "C" __global__ void trivial1(double* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1.0;
}
extern "C" __global__ void trivial25(PARAMS, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p0[i] += 1.0;
}
""".replace("PARAMS", ", ".join(f"double* p{i}" for i in range(25)))


def _launches(plan: object) -> list:
    """The kernel launches the library configured for a plan (internals: may change)."""
    extra = getattr(plan, "extra", None)
    kls = extra.get("launches") if isinstance(extra, dict) else None
    if kls is None:
        kls = plan.loaded.launches[id(plan)]  # type: ignore[attr-defined]
    return list(kls)


def _kernel_names(plan: object, kls: list) -> list[str]:
    try:
        by_handle = {int(f): name for name, f in plan.loaded.module.functions.items()}  # type: ignore[attr-defined]
        return [by_handle.get(int(kl.launcher.function), "?") for kl in kls]
    except Exception:
        return ["?"] * len(kls)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="write all results as JSON here")
    ap.add_argument("--n", type=int, default=512, help="Laplacian / copy size n^3 float64 (default 512: 1 GiB)")
    ap.add_argument("--reps", type=int, default=50, help="timed reps per kernel variant and round")
    ap.add_argument("--emb-reps", type=int, default=10, help="timed reps of the embedded CuPy variant per round")
    ap.add_argument("--calls", type=int, default=20000, help="calls per round in the overhead loop")
    ap.add_argument("--quick", action="store_true", help="small and short (smoke test)")
    ap.add_argument("--skip-compile", action="store_true", help="skip the compile-time subprocesses")
    args = ap.parse_args()
    if args.quick:
        args.n, args.reps, args.emb_reps, args.calls = 128, 10, 3, 2000

    try:
        import cupy as cp
    except ImportError as err:
        print(f"gpu_bench: CuPy is not importable here ({err}); this benchmark needs an NVIDIA GPU"
              " with cupy-cuda13x and cuda-bindings installed. Nothing was measured.", file=sys.stderr)
        return 2
    try:
        ndev = cp.cuda.runtime.getDeviceCount()
        cp.arange(4).sum().item()
    except Exception as err:
        print(f"gpu_bench: CuPy cannot use a GPU here: {type(err).__name__}: {err}. Nothing was measured.",
              file=sys.stderr)
        return 2
    if ndev < 1:
        print("gpu_bench: CuPy sees no CUDA device. Nothing was measured.", file=sys.stderr)
        return 2

    import numpy as np

    import stencilkit as gtx

    env = C.base_env()
    env["design_targets"] = DESIGN
    try:
        props = cp.cuda.runtime.getDeviceProperties(0)
        env["gpu"] = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in props.items()
                      if k in ("name", "totalGlobalMem", "multiProcessorCount", "l2CacheSize", "major", "minor",
                               "clockRate", "memoryClockRate", "memoryBusWidth")}
        env["cupy"] = cp.__version__
        env["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
        env["cuda_driver"] = cp.cuda.runtime.driverGetVersion()
    except Exception as err:
        env["gpu_props_error"] = repr(err)
    print(f"GPU: {env.get('gpu', {}).get('name', '?')}  CuPy {cp.__version__}", flush=True)

    tmp = tempfile.mkdtemp(prefix="sk-gpu-bench-")
    P = C.import_programs(tmp)
    I, J, K = P.I, P.J, P.K
    R = C.Runner()
    n = args.n
    interior = (n - 2) ** 3
    lap_bytes = 2 * 8 * interior
    state: dict = {}

    def stream() -> object:
        return cp.cuda.get_current_stream()

    def sync() -> None:
        cp.cuda.get_current_stream().synchronize()

    def ev_time(fn, reps: int, warmup: int = 3) -> list[float]:
        """Device time per call in ms: a pair of CUDA events around each call, on the current
        stream, all calls queued back to back, one synchronize at the end."""
        for _ in range(warmup):
            fn()
        s = stream()
        s.synchronize()
        pairs = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
        for e0, e1 in pairs:
            e0.record(s)
            fn()
            e1.record(s)
        pairs[-1][1].synchronize()
        return [cp.cuda.get_elapsed_time(e0, e1) for e0, e1 in pairs]

    # ------------------------------------------------------------------ copy bandwidth
    def copy_bw() -> dict:
        src = cp.random.standard_normal((n, n, n), dtype=cp.float64)
        dst = cp.full((n, n, n), cp.nan, dtype=cp.float64)
        nbytes = 2 * src.nbytes
        res: dict = {"bytes": nbytes, "buffer_bytes": src.nbytes}
        rt = cp.cuda.runtime
        methods = {
            "cupy.copyto": lambda: cp.copyto(dst, src),
            "dst[...] = src": lambda: dst.__setitem__(Ellipsis, src),
            "cudaMemcpyAsync D2D": lambda: rt.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes,
                                                          rt.memcpyDeviceToDevice, stream().ptr),
        }
        samples: dict = {k: [] for k in methods}
        for _ in range(2):  # two interleaved rounds
            for name, fn in methods.items():
                dst.fill(cp.nan)
                samples[name] += ev_time(fn, max(args.reps // 2, 20))
                R.check(f"copy {name}: exact", bool(cp.array_equal(dst, src)))
        for name in methods:
            t = C.summary(samples[name])
            gbs = nbytes / (t["median"] * 1e-3) / 1e9
            res[name] = {"ms": t, "GBps": gbs}
        best = max(res[m]["GBps"] for m in methods)
        state["copy_gbs"] = best
        res["ceiling_GBps"] = best
        for name in methods:
            t = res[name]["ms"]
            R.row(f"copy {name} {n}^3 f64", f"{t['median']:.3f} ms", f"{res[name]['GBps']:.0f} GB/s",
                  f"{res[name]['GBps'] / best:.2f}", f"p10-p90 {t['p10']:.3f}-{t['p90']:.3f} ms")
        return res  # src, dst are freed with this frame; CuPy's pool reuses their memory

    # ------------------------------------------------------------------ Laplacian
    def laplacian() -> dict:
        res: dict = {"n": n, "interior_points": interior, "bytes": lap_bytes}
        x = cp.asfortranarray(cp.random.standard_normal((n, n, n), dtype=cp.float64))  # I unit-stride
        a = gtx.as_field([I, J, K], x)
        res["input_zero_copy"] = a.ndarray.data.ptr == x.data.ptr
        R.check("as_field on an I-contiguous CuPy array is zero-copy", res["input_zero_copy"])
        xa = a.ndarray

        def new_out() -> object:
            f = gtx.empty({I: n, J: n, K: n}, dtype=gtx.float64, allocator=gtx.gpu)
            f.ndarray.fill(cp.nan)  # poison: unwritten points stay NaN
            return f

        o_sk, o_plain, o_kloop, o_emb = new_out(), new_out(), new_out(), new_out()
        res["input_strides_bytes"] = list(xa.strides)
        res["output_strides_bytes"] = list(o_sk.ndarray.strides)
        R.check("gtx.gpu allocation is I-contiguous", o_sk.ndarray.strides[0] == 8, str(o_sk.ndarray.strides))
        sync()

        # stencilkit gtx.gpu
        sk = P.run_lap.with_backend(gtx.gpu)
        t0 = time.perf_counter()
        sk(a, o_sk, n, offset_provider={})
        sync()
        res["stencilkit_first_call_s"] = time.perf_counter() - t0
        try:  # which block shape the library's tuner picked (internals; informative only)
            (plan,) = sk._runner.plans.values()
            kls = _launches(plan)
            res["stencilkit_launch"] = [{"grid": kl.grid, "block": kl.block, "kernel": nm}
                                        for kl, nm in zip(kls, _kernel_names(plan, kls))]
            res["stencilkit_source"] = plan.loaded.source
            from cuda.bindings import driver as drv

            fn = kls[0].launcher.function
            err, regs = drv.cuFuncGetAttribute(drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, fn)
            res["stencilkit_regs"] = int(regs)
        except Exception as err:
            res["stencilkit_internals_error"] = repr(err)

        # plain hand-written CUDA
        k_plain = cp.RawKernel(LAP_SRC, "lap_plain", options=("-std=c++17",))
        k_kloop = cp.RawKernel(LAP_SRC, "lap_kloop", options=("-std=c++17",))
        isz = 8
        asj, ask = xa.strides[1] // isz, xa.strides[2] // isz
        assert xa.strides[0] == isz, f"input is not I-contiguous: strides {xa.strides}"

        def kargs(o: object) -> tuple:
            oa = o.ndarray
            assert oa.strides[0] == isz, f"output is not I-contiguous: strides {oa.strides}"
            return (xa, oa, np.int32(n), np.int32(n), np.int32(n), np.int64(asj), np.int64(ask),
                    np.int64(oa.strides[1] // isz), np.int64(oa.strides[2] // isz))

        blk = (32, 8, 1)
        g_plain = (-(-(n - 2) // blk[0]), -(-(n - 2) // blk[1]), n - 2)
        g_kloop = (g_plain[0], g_plain[1], 1)
        args_plain, args_kloop = kargs(o_plain), kargs(o_kloop)
        res["plain_launch"] = {"grid": g_plain, "block": blk}
        res["kloop_launch"] = {"grid": g_kloop, "block": blk}
        k_plain(g_plain, blk, args_plain)
        k_kloop(g_kloop, blk, args_kloop)
        for kern, nm in ((k_plain, "plain"), (k_kloop, "kloop")):
            try:
                res[f"{nm}_regs"] = int(kern.num_regs)
                res[f"{nm}_local_bytes"] = int(kern.local_size_bytes)
            except Exception as err:
                res[f"{nm}_attr_error"] = repr(err)

        # embedded backend on CuPy fields
        emb = P.run_lap.with_backend(None)
        t0 = time.perf_counter()
        emb(a, o_emb, n, offset_provider={})
        sync()
        res["embedded_first_call_s"] = time.perf_counter() - t0

        # ---- checks
        outs = {"stencilkit gtx.gpu": o_sk, "plain CUDA (thread/point)": o_plain,
                "plain CUDA (K loop)": o_kloop, "embedded CuPy": o_emb}

        def check_outputs(when: str) -> None:
            for name, f in outs.items():
                o = f.ndarray
                R.check(f"{name}: interior written (finite) [{when}]",
                        bool(cp.isfinite(o[1:-1, 1:-1, 1:-1]).all()))
                faces = (o[0], o[-1], o[:, 0], o[:, -1], o[:, :, 0], o[:, :, -1])
                R.check(f"{name}: boundary untouched (NaN) [{when}]", all(bool(cp.isnan(fc).all()) for fc in faces))
            ref_o = o_plain.ndarray[1:-1, 1:-1, 1:-1]
            for name, f in outs.items():
                if f is o_plain:
                    continue
                d = float(cp.abs(f.ndarray[1:-1, 1:-1, 1:-1] - ref_o).max())
                R.check(f"{name} vs plain CUDA [{when}]", d <= 1e-12, f"max abs diff {d:.2e}")
            # NumPy on small blocks: corners, an edge and the middle
            m = n // 2
            blocks = [(1, 1, 1), (n - 6, n - 6, n - 6), (1, n - 6, m), (m, m, m), (n - 6, 1, 1)]
            worst = {name: 0.0 for name in outs}
            for (i0, j0, k0) in blocks:
                s = cp.asnumpy(xa[i0 - 1:i0 + 6, j0 - 1:j0 + 6, k0 - 1:k0 + 6])
                r = (-6.0 * s[1:-1, 1:-1, 1:-1] + s[2:, 1:-1, 1:-1] + s[:-2, 1:-1, 1:-1] + s[1:-1, 2:, 1:-1]
                     + s[1:-1, :-2, 1:-1] + s[1:-1, 1:-1, 2:] + s[1:-1, 1:-1, :-2])
                for name, f in outs.items():
                    g = cp.asnumpy(f.ndarray[i0:i0 + 5, j0:j0 + 5, k0:k0 + 5])
                    worst[name] = max(worst[name], float(np.max(np.abs(g - r))) if np.isfinite(g).all() else np.inf)
            for name, w in worst.items():
                R.check(f"{name} vs NumPy on 5 blocks of 5^3 [{when}]", w <= 1e-12, f"max abs err {w:.2e}")

        check_outputs("first run")

        # ---- timing: interleaved rounds, CUDA events around each call
        scratch = cp.empty_like(xa)
        rt = cp.cuda.runtime
        variants = {
            "copy cudaMemcpyAsync (same array)": (lambda: rt.memcpyAsync(scratch.data.ptr, xa.data.ptr, xa.nbytes,
                                                                         rt.memcpyDeviceToDevice, stream().ptr), args.reps),
            "stencilkit gtx.gpu": (lambda: sk(a, o_sk, n, offset_provider={}), args.reps),
            "plain CUDA (thread/point)": (lambda: k_plain(g_plain, blk, args_plain), args.reps),
            "plain CUDA (K loop)": (lambda: k_kloop(g_kloop, blk, args_kloop), args.reps),
            "embedded CuPy": (lambda: emb(a, o_emb, n, offset_provider={}), args.emb_reps),
        }
        samples: dict = {k: [] for k in variants}
        rounds: dict = {k: [] for k in variants}
        for _ in range(2):
            for name, (fn, reps) in variants.items():
                s = ev_time(fn, reps, warmup=2)
                samples[name] += s
                rounds[name].append(C.summary(s)["median"])
        ceiling = state.get("copy_gbs")
        same_copy_ms = C.summary(samples["copy cudaMemcpyAsync (same array)"])["median"]
        same_copy_gbs = 2 * xa.nbytes / (same_copy_ms * 1e-3) / 1e9
        if ceiling is None:
            ceiling = same_copy_gbs
        res["ceiling_GBps"] = ceiling
        res["same_array_copy_GBps"] = same_copy_gbs
        for name in variants:
            t = C.summary(samples[name])
            nbytes = 2 * xa.nbytes if name.startswith("copy") else lap_bytes
            gbs = nbytes / (t["median"] * 1e-3) / 1e9
            res[name] = {"ms": t, "round_medians_ms": rounds[name], "GBps": gbs, "fraction_of_copy": gbs / ceiling}
            note = "rounds " + " / ".join(f"{v:.3f}" for v in rounds[name]) + " ms"
            if name == "stencilkit gtx.gpu":
                note += f"; target >= {DESIGN['laplacian_fraction_of_copy']:.2f}"
                if "stencilkit_launch" in res:
                    sl = res["stencilkit_launch"][0]
                    note += f"; {sl['kernel']} block {tuple(sl['block'])}"
            elif name.startswith("plain"):
                note += f"; design says ~{DESIGN['plain_cuda_fraction_of_copy']:.2f}"
            R.row(("" if name.startswith("copy") else "lap ") + name, f"{t['median']:.3f} ms", f"{gbs:.0f} GB/s",
                  f"{gbs / ceiling:.2f}", note)
        if "stencilkit gtx.gpu" in res and "plain CUDA (thread/point)" in res:
            res["stencilkit_vs_plain"] = res["plain CUDA (thread/point)"]["ms"]["median"] / res["stencilkit gtx.gpu"]["ms"]["median"]
            res["stencilkit_vs_embedded"] = res["embedded CuPy"]["ms"]["median"] / res["stencilkit gtx.gpu"]["ms"]["median"]
            R.row("  speed gtx.gpu vs plain CUDA / vs embedded", f"{res['stencilkit_vs_plain']:.2f}x",
                  f"{res['stencilkit_vs_embedded']:.1f}x")

        # the results must not have changed while timing (and no run wrote the boundary)
        check_outputs("after timing")
        return res

    # ------------------------------------------------------------------ per-call overhead
    def overhead() -> dict:
        m = 8
        rng = np.random.default_rng(3)

        def field() -> object:
            f = gtx.empty({I: m, J: m, K: m}, dtype=gtx.float64, allocator=gtx.gpu)
            f.ndarray[...] = cp.asarray(rng.standard_normal((m, m, m)))
            return f

        res: dict = {"points": m ** 3}
        wide = C.N_INPUTS_WIDE + 1
        cases = {
            2: (P.prog2.with_backend(gtx.gpu), [field()], lambda ins: ins[0].ndarray + 1.0),
            wide: (getattr(P, f"prog{wide}").with_backend(gtx.gpu), [field() for _ in range(C.N_INPUTS_WIDE)],
                   lambda ins: sum(x.ndarray for x in ins)),
        }
        for nf, (prog, ins, ref) in cases.items():
            out = gtx.empty({I: m, J: m, K: m}, dtype=gtx.float64, allocator=gtx.gpu)
            out.ndarray.fill(cp.nan)
            prog(*ins, out, offset_provider={})
            sync()
            err = float(cp.abs(out.ndarray - ref(ins)).max())
            R.check(f"{nf}-field gpu program correct", err <= 1e-12, f"max abs err {err:.1e}")
            r = C.per_call_us(lambda prog=prog, ins=ins, out=out: prog(*ins, out, offset_provider={}), args.calls, sync)
            entry = {"program_call": r}
            target = DESIGN["overhead_2_us"] if nf == 2 else DESIGN["overhead_25_us"]
            R.row(f"per call, {nf} fields {m}^3, Program.__call__", f"{r['loop_us']:.2f} us", "", "",
                  f"target <= {target:.0f} us; incl. drain {r['total_us']:.2f} us")
            try:  # breakdown through internals (informative only)
                runner = prog._runner
                flat = [*ins, out]
                rr = C.per_call_us(lambda runner=runner, flat=flat: runner(flat, {}), args.calls, sync)
                entry["runner_call"] = rr
                R.row("  .. CompiledRunner.__call__ (no flatten)", f"{rr['loop_us']:.2f} us")
                (plan,) = runner.plans.values()
                loaded, buf = plan.loaded, plan.buf
                rl = C.per_call_us(lambda loaded=loaded, plan=plan, buf=buf: loaded.launch(plan, buf), args.calls, sync)
                entry["loaded_launch"] = rl
                R.row("  .. LoadedCuda.launch (no arg handling)", f"{rl['loop_us']:.2f} us")
                kls = _launches(plan)
                sptr = stream().ptr

                def bare(kls: list = kls, sptr: int = sptr) -> None:
                    for kl in kls:
                        kl.launcher.launch(kl.grid, kl.block, sptr)

                rb = C.per_call_us(bare, args.calls, sync)
                entry["bare_cuLaunchKernel"] = rb
                R.row("  .. bare cuLaunchKernel (cuda-bindings)", f"{rb['loop_us']:.2f} us", "", "", "floor of this path")
            except Exception as err:
                entry["breakdown_error"] = repr(err)
                R.row("  .. breakdown unavailable", "", "", "", repr(err)[:80])
            res[f"{nf}_fields"] = entry

        # bare CuPy RawKernel launches of trivial kernels, measured the same way
        t1, t25 = cp.RawKernel(TRIVIAL_SRC, "trivial1"), cp.RawKernel(TRIVIAL_SRC, "trivial25")
        bufs = [cp.zeros(m ** 3) for _ in range(25)]
        nn = np.int32(m ** 3)
        a1 = (bufs[0], nn)
        a25 = (*bufs, nn)
        grid = (-(-(m ** 3) // 128),)
        rk1 = C.per_call_us(lambda: t1(grid, (128,), a1), args.calls, sync)
        rk25 = C.per_call_us(lambda: t25(grid, (128,), a25), args.calls, sync)
        res["cupy_rawkernel_1ptr"] = rk1
        res["cupy_rawkernel_25ptr"] = rk25
        R.row("per call, cupy.RawKernel trivial, 1 array", f"{rk1['loop_us']:.2f} us", "", "",
              f"incl. drain {rk1['total_us']:.2f} us")
        R.row("per call, cupy.RawKernel trivial, 25 arrays", f"{rk25['loop_us']:.2f} us", "", "",
              f"incl. drain {rk25['total_us']:.2f} us")
        return res

    # ------------------------------------------------------------------ compile time
    def compile_time() -> dict:
        r = C.compile_times("gpu")
        cold, warm = r["cold"], r["warm"]
        R.check("cold compile child: built a new cache entry", cold["cache_entries_after"] > cold["cache_entries_before"])
        R.check("warm child: found the cache entry (built nothing)", warm["cache_entries_after"] == warm["cache_entries_before"])
        R.row("first call, fresh cache (new process)", f"{cold['first_call_s'] * 1e3:.0f} ms", "", "",
              f"target <= {DESIGN['gpu_first_compile_s'] * 1e3:.0f} ms; 2nd call {cold['second_call_s'] * 1e3:.2f} ms")
        R.row("first call, cached (new process)", f"{warm['first_call_s'] * 1e3:.1f} ms", "", "",
              f"target <= {DESIGN['cached_new_process_s'] * 1e3:.0f} ms")
        R.row("  script start -> first result, cached", f"{warm['script_start_to_first_result_s'] * 1e3:.0f} ms",
              "", "", f"incl. CuPy init {warm['setup_s'] * 1e3:.0f} ms; process wall {warm['process_wall_s'] * 1e3:.0f} ms")
        R.row("import stencilkit (new process)", f"{warm['import_s'] * 1e3:.0f} ms", "", "",
              f"GPU libs loaded by it: {warm['gpu_libs_imported_by_import_stencilkit'] or 'none'}")
        return r

    R.section("copy", copy_bw)
    R.section("laplacian", laplacian)
    R.section("overhead", overhead)
    if not args.skip_compile:
        R.section("compile", compile_time)

    print()
    print(R.table(f"stencilkit GPU benchmarks ({env.get('gpu', {}).get('name', '?')}, n={n}, CUDA-event medians)"))
    R.dump(args.json, env)
    return 0 if R.ok else 1


if __name__ == "__main__":
    sys.exit(main())
