"""The 7-point fp64 Laplacian sections, GPU and CPU."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .cuda_sources import CUDA_OPTIONS, LAP_SRC
from .devices import Dev, finite, kernel_names, launches, maxdiff
from .options import Options
from .report import DESIGN, Runner
from .timing import adaptive_reps, gb, time_variants

LAP_BYTES_RULE = "one read and one write of each interior point (2 x 8 B x (n-2)^3)"


def gpu_laplacian_section(
    R: Runner, dev: Dev, P: Any, opts: Options, state: dict[str, Any]
) -> dict[str, Any]:
    """gtx.gpu beside two plain CUDA kernels and embedded CuPy, on an I-contiguous n^3 field."""
    import cupy as cp
    import numpy as np

    gtx, sync = dev.gtx, dev.sync
    I, J, K = P.I, P.J, P.K
    n = opts.n
    interior = (n - 2) ** 3
    lap_bytes = 2 * 8 * interior
    res: dict[str, Any] = {
        "n": n,
        "interior_points": interior,
        "bytes": lap_bytes,
        "bytes_rule": LAP_BYTES_RULE,
    }
    x = cp.asfortranarray(cp.random.standard_normal((n, n, n), dtype=cp.float64))  # I unit-stride
    a = gtx.as_field([I, J, K], x, copy=None)
    res["input_zero_copy"] = a.ndarray.data.ptr == x.data.ptr
    R.check(
        "as_field(copy=None) on an I-contiguous CuPy array is zero-copy", res["input_zero_copy"]
    )
    xa = a.ndarray

    def new_out() -> Any:
        f = gtx.empty({I: n, J: n, K: n}, dtype=gtx.float64, allocator=gtx.gpu)
        f.ndarray.fill(cp.nan)  # poison: unwritten points stay NaN
        return f

    o_sk, o_plain, o_kloop, o_emb = new_out(), new_out(), new_out(), new_out()
    res["input_strides_bytes"] = list(xa.strides)
    res["output_strides_bytes"] = list(o_sk.ndarray.strides)
    R.check(
        "gtx.gpu allocation is I-contiguous",
        o_sk.ndarray.strides[0] == 8,
        str(o_sk.ndarray.strides),
    )
    sync()

    sk = P.run_lap.with_backend(gtx.gpu)
    t0 = time.perf_counter()
    sk(a, o_sk, n, offset_provider={})
    sync()
    res["stencilkit_first_call_s"] = time.perf_counter() - t0
    try:  # which block shape the library's tuner picked (internals; informative only)
        (plan,) = sk._runner.plans.values()
        kls = launches(plan)
        res["stencilkit_launch"] = [
            {"grid": kl.grid, "block": kl.block, "kernel": nm}
            for kl, nm in zip(kls, kernel_names(plan, kls))
        ]
        res["stencilkit_source"] = plan.stages.built.source.text
        from cuda.bindings import driver as drv

        fn = plan.block.run.launches[0][0].function  # the first kernel's Launcher
        _, regs = drv.cuFuncGetAttribute(drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, fn)
        res["stencilkit_regs"] = int(regs)
    except Exception as err:
        res["stencilkit_internals_error"] = repr(err)

    k_plain = cp.RawKernel(LAP_SRC, "lap_plain", options=CUDA_OPTIONS)
    k_kloop = cp.RawKernel(LAP_SRC, "lap_kloop", options=CUDA_OPTIONS)
    isz = 8
    asj, ask = xa.strides[1] // isz, xa.strides[2] // isz
    assert xa.strides[0] == isz, f"input is not I-contiguous: strides {xa.strides}"

    def kargs(o: Any) -> tuple[Any, ...]:
        oa = o.ndarray
        assert oa.strides[0] == isz, f"output is not I-contiguous: strides {oa.strides}"
        return (
            xa,
            oa,
            np.int32(n),
            np.int32(n),
            np.int32(n),
            np.int64(asj),
            np.int64(ask),
            np.int64(oa.strides[1] // isz),
            np.int64(oa.strides[2] // isz),
        )

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

    emb = P.run_lap.with_backend(None)
    t0 = time.perf_counter()
    emb(a, o_emb, n, offset_provider={})
    sync()
    res["embedded_first_call_s"] = time.perf_counter() - t0

    outs = {
        "stencilkit gtx.gpu": o_sk,
        "plain CUDA (thread/point)": o_plain,
        "plain CUDA (K loop)": o_kloop,
        "embedded CuPy": o_emb,
    }

    def check_outputs(when: str) -> None:
        for name, f in outs.items():
            o = f.ndarray
            R.check(
                f"lap {name}: interior written (finite) [{when}]", finite(cp, o[1:-1, 1:-1, 1:-1])
            )
            faces = (o[0], o[-1], o[:, 0], o[:, -1], o[:, :, 0], o[:, :, -1])
            R.check(
                f"lap {name}: boundary untouched (NaN) [{when}]",
                all(bool(cp.isnan(fc).all()) for fc in faces),
            )
        ref_o = o_plain.ndarray[1:-1, 1:-1, 1:-1]
        for name, f in outs.items():
            if f is o_plain:
                continue
            dd = maxdiff(cp, f.ndarray[1:-1, 1:-1, 1:-1], ref_o)
            R.check(f"lap {name} vs plain CUDA [{when}]", dd <= 1e-12, f"max abs diff {dd:.2e}")
        m = n // 2
        blocks = [(1, 1, 1), (n - 6, n - 6, n - 6), (1, n - 6, m), (m, m, m), (n - 6, 1, 1)]
        worst = dict.fromkeys(outs, 0.0)
        for i0, j0, k0 in blocks:
            s = cp.asnumpy(xa[i0 - 1 : i0 + 6, j0 - 1 : j0 + 6, k0 - 1 : k0 + 6])
            r = (
                -6.0 * s[1:-1, 1:-1, 1:-1]
                + s[2:, 1:-1, 1:-1]
                + s[:-2, 1:-1, 1:-1]
                + s[1:-1, 2:, 1:-1]
                + s[1:-1, :-2, 1:-1]
                + s[1:-1, 1:-1, 2:]
                + s[1:-1, 1:-1, :-2]
            )
            for name, f in outs.items():
                g = cp.asnumpy(f.ndarray[i0 : i0 + 5, j0 : j0 + 5, k0 : k0 + 5])
                err = float(np.max(np.abs(g - r))) if np.isfinite(g).all() else float("inf")
                worst[name] = max(worst[name], err)
        for name, wv in worst.items():
            R.check(
                f"lap {name} vs NumPy on 5 blocks of 5^3 [{when}]",
                wv <= 1e-12,
                f"max abs err {wv:.2e}",
            )

    check_outputs("first run")
    scratch = cp.empty_like(xa)
    variants: dict[str, tuple[Callable[[], Any], int]] = {
        "copy cudaMemcpyAsync (same array)": (dev.copier(scratch, xa), opts.reps),
        "stencilkit gtx.gpu": (lambda: sk(a, o_sk, n, offset_provider={}), opts.reps),
        "plain CUDA (thread/point)": (lambda: k_plain(g_plain, blk, args_plain), opts.reps),
        "plain CUDA (K loop)": (lambda: k_kloop(g_kloop, blk, args_kloop), opts.reps),
        "embedded CuPy": (
            lambda: emb(a, o_emb, n, offset_provider={}),
            adaptive_reps(res["embedded_first_call_s"], opts.emb_reps),
        ),
    }
    nb = {k: (2 * int(xa.nbytes) if k.startswith("copy") else lap_bytes) for k in variants}
    R.row(
        f"lap: 7-point fp64 Laplacian {n}^3",
        "",
        gb(lap_bytes),
        "",
        "bytes: each interior point read once and written once",
    )
    notes = {
        "stencilkit gtx.gpu": "",
        "plain CUDA (thread/point)": f"design says ~{DESIGN['plain_cuda_fraction_of_copy']:.2f}",
    }
    if "stencilkit_launch" in res:
        sl = res["stencilkit_launch"][0]
        notes["stencilkit gtx.gpu"] += f"{sl['kernel']} block {tuple(sl['block'])}; "
    notes["stencilkit gtx.gpu"] += (
        f"first call {res['stencilkit_first_call_s'] * 1e3:.0f} ms (build, variants, search)"
    )
    targets = {"stencilkit gtx.gpu": DESIGN["laplacian_fraction_of_copy"]}
    time_variants(R, dev, "lap", variants, nb, state.get("copy_gbs"), notes, res, targets)
    if "stencilkit gtx.gpu" in res and "plain CUDA (thread/point)" in res:
        res["stencilkit_vs_plain"] = (
            res["plain CUDA (thread/point)"]["ms"]["median"]
            / res["stencilkit gtx.gpu"]["ms"]["median"]
        )
        res["stencilkit_vs_embedded"] = (
            res["embedded CuPy"]["ms"]["median"] / res["stencilkit gtx.gpu"]["ms"]["median"]
        )
        R.row(
            "  speed gtx.gpu vs plain CUDA / vs embedded",
            f"{res['stencilkit_vs_plain']:.2f}x",
            f"{res['stencilkit_vs_embedded']:.1f}x",
        )
    check_outputs("after timing")
    return res


def cpu_laplacian_section(R: Runner, dev: Dev, P: Any, opts: Options) -> dict[str, Any]:
    """gtx.cpu beside embedded NumPy and hand-written NumPy slices."""
    import numpy as np

    gtx = dev.gtx
    I, J, K = P.I, P.J, P.K
    ni, nj, nk = opts.lap_shape
    interior = (ni - 2) * (nj - 2) * (nk - 2)
    lap_bytes = 2 * 8 * interior
    rng = np.random.default_rng(2)
    a_np = rng.standard_normal((ni, nj, nk))
    a = gtx.as_field([I, J, K], a_np, copy=None)
    R.check(
        "as_field(copy=None) is zero-copy on a C-order NumPy array",
        bool(np.shares_memory(a.ndarray, a_np)),
    )
    ref = (
        -6.0 * a_np[1:-1, 1:-1, 1:-1]
        + a_np[2:, 1:-1, 1:-1]
        + a_np[:-2, 1:-1, 1:-1]
        + a_np[1:-1, 2:, 1:-1]
        + a_np[1:-1, :-2, 1:-1]
        + a_np[1:-1, 1:-1, 2:]
        + a_np[1:-1, 1:-1, :-2]
    )

    def point(i: int, j: int, k: int) -> float:  # an independent check of the reference
        x = a_np
        return float(
            -6.0 * x[i, j, k]
            + x[i + 1, j, k]
            + x[i - 1, j, k]
            + x[i, j + 1, k]
            + x[i, j - 1, k]
            + x[i, j, k + 1]
            + x[i, j, k - 1]
        )

    pts = [
        (1, 1, 1),
        (ni - 2, nj - 2, nk - 2),
        (1, nj - 2, 1),
        (ni // 2, nj // 3, nk - 2),
        (2, 3, 4),
    ]
    R.check(
        "NumPy slicing reference vs point-wise loops",
        all(abs(ref[i - 1, j - 1, k - 1] - point(i, j, k)) <= 1e-12 for i, j, k in pts),
    )
    copy_dst = np.empty_like(a_np)
    copy = dev.copier(copy_dst, a_np)
    copy()
    R.check("copy result", bool(np.array_equal(copy_dst, a_np)))
    hand = np.full((ni, nj, nk), np.nan)

    def numpy_hand() -> None:
        x = a_np
        o = hand[1:-1, 1:-1, 1:-1]
        np.multiply(x[1:-1, 1:-1, 1:-1], -6.0, out=o)
        o += x[2:, 1:-1, 1:-1]
        o += x[:-2, 1:-1, 1:-1]
        o += x[1:-1, 2:, 1:-1]
        o += x[1:-1, :-2, 1:-1]
        o += x[1:-1, 1:-1, 2:]
        o += x[1:-1, 1:-1, :-2]

    numpy_hand()
    R.check(
        "hand NumPy: matches reference",
        float(np.max(np.abs(hand[1:-1, 1:-1, 1:-1] - ref))) <= 1e-12,
    )
    res: dict[str, Any] = {
        "interior_points": interior,
        "bytes": lap_bytes,
        "copy_bytes": 2 * a_np.nbytes,
        "bytes_rule": LAP_BYTES_RULE,
    }
    variants: dict[str, tuple[Callable[[], Any], int]] = {
        "copy np.copyto (same array)": (copy, opts.reps)
    }
    firsts = {}
    for name, prog in (
        ("gtx.cpu", P.run_lap_box.with_backend(gtx.cpu)),
        ("embedded NumPy", P.run_lap_box.with_backend(None)),
    ):
        out = gtx.empty({I: ni, J: nj, K: nk}, dtype=gtx.float64, allocator=gtx.cpu)
        out.ndarray[...] = np.nan
        t0 = time.perf_counter()
        prog(a, out, ni, nj, nk, offset_provider={})
        firsts[name] = time.perf_counter() - t0
        o = out.ndarray
        inner = o[1:-1, 1:-1, 1:-1]
        R.check(f"lap {name}: interior written (finite)", bool(np.isfinite(inner).all()))
        border = np.ones(o.shape, bool)
        border[1:-1, 1:-1, 1:-1] = False
        R.check(f"lap {name}: boundary untouched (NaN)", bool(np.isnan(o[border]).all()))
        err = float(np.max(np.abs(inner - ref)))
        R.check(f"lap {name}: matches NumPy reference", err <= 1e-12, f"max abs err {err:.2e}")
        # a lambda binding loop variables by default arguments: mypy cannot infer it
        variants[name] = (
            lambda prog=prog, out=out: prog(a, out, ni, nj, nk, offset_provider={}),  # type: ignore[misc]
            opts.reps,
        )
    variants["hand NumPy (in-place slices)"] = (numpy_hand, opts.reps)
    nb = {k: (2 * a_np.nbytes if k.startswith("copy") else lap_bytes) for k in variants}
    notes = {k: f"first call {v * 1e3:.0f} ms" for k, v in firsts.items()}
    time_variants(R, dev, "lap", variants, nb, None, notes, res)
    for k, v in firsts.items():
        res[k]["first_call_s"] = v
    sp = res["embedded NumPy"]["ms"]["median"] / res["gtx.cpu"]["ms"]["median"]
    res["speedup_cpu_vs_embedded"] = sp
    R.row(
        "  speedup gtx.cpu / embedded",
        f"{sp:.1f}x",
        "",
        "",
        target=(
            f"target >= {DESIGN['cpu_vs_embedded_speedup']:.0f}x",
            sp >= DESIGN["cpu_vs_embedded_speedup"],
        ),
    )
    return res
