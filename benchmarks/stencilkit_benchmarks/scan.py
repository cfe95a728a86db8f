"""The tridiagonal vertical solve (two scans) section."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .cuda_sources import SCAN_SRC
from .devices import Dev, elem_strides, finite, maxdiff
from .options import Options
from .report import DESIGN, Runner
from .timing import adaptive_reps, gb, time_variants

SCAN_BYTES_RULE = (
    "minimum traffic of the two-pass Thomas algorithm, all fp64: forward reads "
    "a, b, c, d and writes cp, dp; backward reads cp, dp and writes x = 9 x 8 B "
    "per grid point (the same bytes for every variant, fused included)"
)


def _thomas_reference(a: Any, b: Any, c: Any, d: Any) -> tuple[Any, Any, Any]:
    """NumPy Thomas algorithm on columns along the last axis: (cp, dp, x)."""
    import numpy as np

    cp, dp, x = np.empty_like(a), np.empty_like(a), np.empty_like(a)
    cpv = np.zeros(a.shape[:-1])
    dpv = np.zeros(a.shape[:-1])
    for k in range(a.shape[-1]):
        denom = b[..., k] - a[..., k] * cpv
        cpv = c[..., k] / denom
        dpv = (d[..., k] - a[..., k] * dpv) / denom
        cp[..., k], dp[..., k] = cpv, dpv
    xv = np.zeros(a.shape[:-1])
    for k in reversed(range(a.shape[-1])):
        xv = dp[..., k] - cp[..., k] * xv
        x[..., k] = xv
    return cp, dp, x


def scan_section(
    R: Runner, dev: Dev, P: Any, opts: Options, state: dict[str, Any]
) -> dict[str, Any]:
    import numpy as np

    gtx, xp = dev.gtx, dev.xp
    ni, nj, nk = opts.scan_shape
    dom = {P.I: ni, P.J: nj, P.K: nk}
    nbytes = 9 * 8 * ni * nj * nk
    res: dict[str, Any] = {"shape": [ni, nj, nk], "bytes": nbytes, "bytes_rule": SCAN_BYTES_RULE}
    R.say(f"  bytes counted: {SCAN_BYTES_RULE}")
    rs = xp.random.RandomState(11)

    def new(values: Any = None) -> Any:
        f = gtx.empty(dom, dtype=gtx.float64, allocator=dev.alloc)
        if values is None:
            f.ndarray.fill(float("nan"))  # poison: unwritten points stay NaN
        else:
            f.ndarray[...] = values
        return f

    shape = (ni, nj, nk)
    a = new(rs.random_sample(shape) - 1.0)  # sub-diagonal in [-1, 0)
    c = new(rs.random_sample(shape) - 1.0)  # super-diagonal in [-1, 0)
    b = new(4.0 + rs.random_sample(shape))  # diagonal in [4, 5): diagonally dominant
    d = new(rs.standard_normal(shape))
    a.ndarray[:, :, 0] = 0.0
    c.ndarray[:, :, nk - 1] = 0.0
    ins = [f.ndarray for f in (a, b, c, d)]
    s_in = elem_strides(ins[0])
    if any(elem_strides(x) != s_in for x in ins):
        raise RuntimeError(f"inputs have different strides: {[x.strides for x in ins]}")
    res["input_strides_elems"] = list(s_in)

    outs: dict[str, dict[str, Any]] = {}  # variant -> {"cp": array, "dp": ..., "x": ...}
    calls: dict[str, Callable[[], Any]] = {}
    firsts: dict[str, float] = {}

    for name, backend in ((dev.compiled_name, dev.compiled), (dev.embedded_name, None)):
        o = [new(), new(), new()]
        prog = P.tridiag.with_backend(backend)

        def call(prog: Any = prog, o: list[Any] = o) -> None:
            prog(a, b, c, d, *o, offset_provider={})

        t0 = time.perf_counter()
        call()
        dev.sync()
        firsts[name] = time.perf_counter() - t0
        outs[name] = {"cp": o[0].ndarray, "dp": o[1].ndarray, "x": o[2].ndarray}
        calls[name] = call
    res["output_strides_elems"] = list(elem_strides(outs[dev.compiled_name]["x"]))

    if dev.has_cuda_kernels:
        two = [new(), new(), new()]
        fused = [new(), new()]
        oarr = [f.ndarray for f in (*two, *fused)]
        s_out = elem_strides(oarr[0])
        if any(elem_strides(x) != s_out for x in oarr):
            raise RuntimeError(f"outputs have different strides: {[x.strides for x in oarr]}")
        k_fwd = dev.kernel(SCAN_SRC, "tridiag_forward")
        k_bwd = dev.kernel(SCAN_SRC, "tridiag_backward")
        k_fused = dev.kernel(SCAN_SRC, "tridiag_fused")
        dims = (np.int32(ni), np.int32(nj), np.int32(nk))
        sin = tuple(np.int64(s) for s in s_in)
        sout = tuple(np.int64(s) for s in s_out)
        blk = (128, 1, 1)
        grid = (-(-ni // blk[0]), nj, 1)
        res["hand_launch"] = {"grid": grid, "block": blk}
        cp2, dp2, x2 = two[0].ndarray, two[1].ndarray, two[2].ndarray
        fwd_args = (*ins, cp2, dp2, *dims, *sin, *sout)
        bwd_args = (cp2, dp2, x2, *dims, *sout, *sout)
        fused_args = (*ins, fused[0].ndarray, fused[1].ndarray, *dims, *sin, *sout)

        def two_kernels() -> None:
            k_fwd(grid, blk, fwd_args)
            k_bwd(grid, blk, bwd_args)

        def fused_kernel() -> None:
            k_fused(grid, blk, fused_args)

        hand_cuda: tuple[tuple[str, Callable[[], None], dict[str, Any]], ...] = (
            (dev.cuda_label("two kernels"), two_kernels, {"cp": cp2, "dp": dp2, "x": x2}),
            (
                dev.cuda_label("fused"),
                fused_kernel,
                {"cp": fused[0].ndarray, "x": fused[1].ndarray},
            ),
        )
        for name, fn, produced in hand_cuda:
            t0 = time.perf_counter()
            fn()
            dev.sync()
            firsts[name] = time.perf_counter() - t0
            outs[name] = produced
            calls[name] = fn
    if not dev.gpu:
        hand = [new(), new(), new()]
        ha = [f.ndarray for f in hand]

        def numpy_scan() -> None:
            av, bv, cv, dv = ins
            cpv = np.zeros((ni, nj))
            dpv = np.zeros((ni, nj))
            for k in range(nk):
                denom = bv[:, :, k] - av[:, :, k] * cpv
                cpv = cv[:, :, k] / denom
                dpv = (dv[:, :, k] - av[:, :, k] * dpv) / denom
                ha[0][:, :, k] = cpv
                ha[1][:, :, k] = dpv
            xv = np.zeros((ni, nj))
            for k in reversed(range(nk)):
                xv = ha[1][:, :, k] - ha[0][:, :, k] * xv
                ha[2][:, :, k] = xv

        name = "hand NumPy (loop over K)"
        t0 = time.perf_counter()
        numpy_scan()
        firsts[name] = time.perf_counter() - t0
        outs[name] = {"cp": ha[0], "dp": ha[1], "x": ha[2]}
        calls[name] = numpy_scan
    res["first_call_s"] = firsts

    # ---- checks: NumPy Thomas on a sample of columns, its residual, variants against each other
    rng = np.random.default_rng(5)
    ii = np.concatenate([[0, ni - 1, 0, ni - 1], rng.integers(0, ni, 60)])
    jj = np.concatenate([[0, nj - 1, nj - 1, 0], rng.integers(0, nj, 60)])
    xi, xj = xp.asarray(ii), xp.asarray(jj)

    def cols(arr: Any) -> Any:
        return dev.to_host(arr[xi, xj])  # [sample, K]

    ah, bh, ch, dh = (cols(x) for x in ins)
    ref = dict(zip(("cp", "dp", "x"), _thomas_reference(ah, bh, ch, dh)))
    xr = ref["x"]
    resid = bh * xr - dh
    resid[:, 1:] += ah[:, 1:] * xr[:, :-1]
    resid[:, :-1] += ch[:, :-1] * xr[:, 1:]
    R.check(
        "scan: NumPy reference solves the sampled systems",
        float(np.abs(resid).max()) <= 1e-10,
        f"max residual {float(np.abs(resid).max()):.1e}",
    )
    base = next(iter(outs))

    def check_outputs(when: str) -> None:
        for name, o in outs.items():
            R.check(
                f"scan {name}: every point written [{when}]", all(finite(xp, v) for v in o.values())
            )
            worst = max(float(np.max(np.abs(cols(v) - ref[key]))) for key, v in o.items())
            R.check(
                f"scan {name} vs NumPy on {len(ii)} columns [{when}]",
                worst <= 1e-10,
                f"max abs err {worst:.1e} ({', '.join(o)})",
            )
            if name != base:
                dd = maxdiff(xp, o["x"], outs[base]["x"])
                R.check(f"scan {name} vs {base}: x [{when}]", dd <= 1e-10, f"max abs diff {dd:.1e}")

    check_outputs("first run")

    scratch = xp.empty_like(ins[0])
    variants: dict[str, tuple[Callable[[], Any], int]] = {
        "copy of one field (same section)": (dev.copier(scratch, ins[0]), opts.reps)
    }
    nb = {"copy of one field (same section)": 2 * int(ins[0].nbytes)}
    notes = {}
    for name, fn in calls.items():
        slow = name.startswith(("embedded", "hand NumPy")) or "emulation" in name
        variants[name] = (fn, adaptive_reps(firsts[name], opts.emb_reps) if slow else opts.reps)
        nb[name] = nbytes
    R.row(
        f"scan: tridiagonal solve {ni}x{nj}x{nk}, 2 scans",
        "",
        gb(nbytes),
        "",
        "bytes: fwd reads a,b,c,d writes cp,dp; bwd reads cp,dp writes x; 9 x 8 B/point",
    )
    # DESIGN.md's bandwidth targets are the GPU's (H200): a cpu run shows the fraction, no target
    targets = {}
    if dev.gpu:
        notes[dev.compiled_name] = f"Triton ~{DESIGN['triton_scan_fraction_of_copy']:.2f}"
        targets[dev.compiled_name] = DESIGN["scan_fraction_of_copy"]
    time_variants(R, dev, "scan", variants, nb, state.get("copy_gbs"), notes, res, targets)
    fast = [k for k in calls if k.startswith("hand CUDA")]
    if fast and dev.compiled_name in res:
        best = min(res[k]["ms"]["median"] for k in fast)
        res["compiled_vs_best_hand_cuda"] = best / res[dev.compiled_name]["ms"]["median"]
        R.row(
            f"  speed {dev.compiled_name} vs best hand CUDA",
            f"{res['compiled_vs_best_hand_cuda']:.2f}x",
        )
    check_outputs("after timing")
    return res
