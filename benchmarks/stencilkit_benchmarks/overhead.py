"""Per-call overhead of a compiled program (2 and 25 fields), with a breakdown to the floor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .cuda_sources import TRIVIAL_SRC
from .devices import Dev, maxdiff
from .options import Options
from .programs import N_INPUTS_WIDE
from .report import DESIGN, Runner
from .timing import per_call_us

#: Calls per timed batch in the GPU overhead loop: well below the driver's launch queue depth.
BATCH = 100


def gpu_overhead_section(R: Runner, dev: Dev, P: Any, opts: Options) -> dict[str, Any]:
    """gtx.gpu programs, their internals down to a bare cuLaunchKernel, and cupy.RawKernel."""
    import cupy as cp
    import numpy as np

    gtx, sync = dev.gtx, dev.sync
    I, J, K = P.I, P.J, P.K
    m = 8
    rng = np.random.default_rng(3)

    def field() -> Any:
        f = gtx.empty({I: m, J: m, K: m}, dtype=gtx.float64, allocator=gtx.gpu)
        f.ndarray[...] = cp.asarray(rng.standard_normal((m, m, m)))
        return f

    res: dict[str, Any] = {"points": m**3}
    wide = N_INPUTS_WIDE + 1
    cases: dict[int, tuple[Any, list[Any], Callable[[list[Any]], Any]]] = {
        2: (P.prog2.with_backend(gtx.gpu), [field()], lambda ins: ins[0].ndarray + 1.0),
        wide: (
            getattr(P, f"prog{wide}").with_backend(gtx.gpu),
            [field() for _ in range(N_INPUTS_WIDE)],
            lambda ins: sum(x.ndarray for x in ins),
        ),
    }
    for nf, (prog, ins, ref) in cases.items():
        out = gtx.empty({I: m, J: m, K: m}, dtype=gtx.float64, allocator=gtx.gpu)
        out.ndarray.fill(cp.nan)
        prog(*ins, out, offset_provider={})
        sync()
        err = maxdiff(cp, out.ndarray, ref(ins))
        R.check(f"{nf}-field gpu program correct", err <= 1e-12, f"max abs err {err:.1e}")
        call = lambda prog=prog, ins=ins, out=out: prog(*ins, out, offset_provider={})  # noqa: E731
        # host cost per call: batches of BATCH calls, the GPU drained between batches (untimed)
        r = per_call_us(call, opts.calls, sync, batch=BATCH)
        sustained = per_call_us(call, opts.calls, sync)
        entry: dict[str, Any] = {"program_call": r, "program_call_sustained": sustained}
        target = DESIGN["overhead_2_us"] if nf == 2 else DESIGN["overhead_25_us"]
        R.row(
            f"per call, {nf} fields {m}^3, Program.__call__",
            f"{r['loop_us']:.2f} us",
            "",
            "",
            f"host time, batches of {BATCH}; incl. the driver's launch",
        )
        try:  # breakdown through internals (informative only)
            runner = prog._runner
            flat = [*ins, out]
            # a lambda binding loop variables by default arguments: mypy cannot infer it
            rr = per_call_us(
                lambda runner=runner, flat=flat: runner(flat, {}),  # type: ignore[misc]
                opts.calls,
                sync,
                batch=BATCH,
            )
            entry["runner_call"] = rr
            R.row("  .. CompiledRunner.__call__ (no flatten)", f"{rr['loop_us']:.2f} us")
            (plan,) = runner.plans.values()
            rl = per_call_us(plan.block.run, opts.calls, sync, batch=BATCH)
            entry["loaded_launch"] = rl
            R.row("  .. CudaCall (no arg handling)", f"{rl['loop_us']:.2f} us")
            kls = list(plan.block.run.launches)  # (launcher, grid, block) per kernel
            sptr = dev.stream_ptr()

            def bare(kls: list[Any] = kls, sptr: int = sptr) -> None:
                for launcher, grid, block in kls:
                    launcher.launch(grid, block, sptr)

            rb = per_call_us(bare, opts.calls, sync, batch=BATCH)
            entry["bare_cuLaunchKernel"] = rb
            R.row(
                "  .. bare cuLaunchKernel (cuda-bindings)",
                f"{rb['loop_us']:.2f} us",
                "",
                "",
                "the driver's part",
            )
            python_us = r["loop_us"] - rb["loop_us"]
            entry["python_us"] = python_us
            R.row(
                f"  Python part, {nf} fields (call - bare launch)",
                f"{python_us:.2f} us",
                "",
                "",
                target=(f"target <= {target:.0f} us", python_us <= target),
            )
        except Exception as err:
            entry["breakdown_error"] = repr(err)
            R.row("  .. breakdown unavailable", "", "", "", repr(err)[:80])
        R.row(
            f"  sustained, {opts.calls} calls back to back",
            f"{sustained['loop_us']:.2f} us",
            "",
            "",
            f"incl. drain {sustained['total_us']:.2f} us; bound by the GPU's launch rate once its queue fills",
        )
        res[f"{nf}_fields"] = entry

    t1, t25 = cp.RawKernel(TRIVIAL_SRC, "trivial1"), cp.RawKernel(TRIVIAL_SRC, "trivial25")
    bufs = [cp.zeros(m**3) for _ in range(25)]
    nn = np.int32(m**3)
    a1 = (bufs[0], nn)
    a25 = (*bufs, nn)
    grid = (-(-(m**3) // 128),)
    rk1 = per_call_us(lambda: t1(grid, (128,), a1), opts.calls, sync, batch=BATCH)
    rk25 = per_call_us(lambda: t25(grid, (128,), a25), opts.calls, sync, batch=BATCH)
    res["cupy_rawkernel_1ptr"] = rk1
    res["cupy_rawkernel_25ptr"] = rk25
    R.row(
        "per call, cupy.RawKernel trivial, 1 array",
        f"{rk1['loop_us']:.2f} us",
        "",
        "",
        f"host time, batches of {BATCH}",
    )
    R.row(
        "per call, cupy.RawKernel trivial, 25 arrays",
        f"{rk25['loop_us']:.2f} us",
        "",
        "",
        f"host time, batches of {BATCH}",
    )
    return res


def cpu_overhead_section(R: Runner, dev: Dev, P: Any, opts: Options) -> dict[str, Any]:
    """gtx.cpu programs and their internals down to a bare ctypes call."""
    import numpy as np

    gtx = dev.gtx
    I, J, K = P.I, P.J, P.K
    n = 8
    rng = np.random.default_rng(3)

    def field() -> Any:
        f = gtx.empty({I: n, J: n, K: n}, dtype=gtx.float64, allocator=gtx.cpu)
        f.ndarray[...] = rng.standard_normal((n, n, n))
        return f

    res: dict[str, Any] = {}
    wide = N_INPUTS_WIDE + 1
    cases: dict[int, tuple[Any, list[Any], Callable[[list[Any]], Any]]] = {
        2: (P.prog2.with_backend(gtx.cpu), [field()], lambda ins: ins[0].ndarray + 1.0),
        wide: (
            getattr(P, f"prog{wide}").with_backend(gtx.cpu),
            [field() for _ in range(N_INPUTS_WIDE)],
            lambda ins: sum(x.ndarray for x in ins),
        ),
    }
    for nf, (prog, ins, ref) in cases.items():
        out = gtx.empty({I: n, J: n, K: n}, dtype=gtx.float64, allocator=gtx.cpu)
        out.ndarray[...] = np.nan
        prog(*ins, out, offset_provider={})
        err = float(np.max(np.abs(out.ndarray - ref(ins))))
        R.check(f"{nf}-field program correct", err <= 1e-12, f"max abs err {err:.1e}")
        # a lambda binding loop variables by default arguments: mypy cannot infer it
        r = per_call_us(
            lambda prog=prog, ins=ins, out=out: prog(*ins, out, offset_provider={}),  # type: ignore[misc]
            opts.calls,
        )
        entry: dict[str, Any] = {"program_call": r}
        target = DESIGN["overhead_2_us"] if nf == 2 else DESIGN["overhead_25_us"]
        R.row(
            f"per call, {nf} fields {n}^3, Program.__call__",
            f"{r['loop_us']:.2f} us",
            "",
            "",
            "incl. running the kernel",
        )
        try:  # breakdown through internals (may change; failures are reported, not fatal)
            runner = prog._runner
            flat = [*ins, out]
            rr = per_call_us(lambda runner=runner, flat=flat: runner(flat, {}), opts.calls)  # type: ignore[misc]  # a lambda binding loop variables by default arguments: mypy cannot infer it
            entry["runner_call"] = rr
            R.row("  .. CompiledRunner.__call__ (no flatten)", f"{rr['loop_us']:.2f} us")
            (plan,) = runner.plans.values()
            fn, addr = plan.stages.loaded.fn, plan.block.buf.ctypes.data
            rb = per_call_us(lambda fn=fn, addr=addr: fn(addr), opts.calls)  # type: ignore[misc]  # a lambda binding loop variables by default arguments: mypy cannot infer it
            entry["bare_ctypes_call"] = rb
            R.row(
                "  .. bare ctypes call of the compiled function",
                f"{rb['loop_us']:.2f} us",
                "",
                "",
                "floor (includes the kernel)",
            )
            python_us = r["loop_us"] - rb["loop_us"]
            entry["python_us"] = python_us
            R.row(
                f"  Python part, {nf} fields (call - bare call)",
                f"{python_us:.2f} us",
                "",
                "",
                target=(f"target <= {target:.0f} us", python_us <= target),
            )
        except Exception as err:
            entry["breakdown_error"] = repr(err)
            R.row("  .. breakdown unavailable", "", "", "", repr(err)[:80])
        res[f"{nf}_fields"] = entry
    return res
