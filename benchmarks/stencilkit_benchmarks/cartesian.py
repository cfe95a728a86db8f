"""The ``cartesian`` section: GTScript stencils (``gt4py.cartesian`` through stencilkit's gt4py
alias) against the targets of CARTESIAN.md 5.1.

- per call, 2 and 25 fields of 8^3: ``run()``, a frozen stencil, ``__call__`` without and with
  validation, and the same program written in gt4py.next on the same arrays (``as_field``, no
  copy); embedded (``numpy``) and compiled (``gt:cpu_ifirst``, or ``gt:gpu`` on a GPU);
- first build (fresh cache, new process) and cached build (new process, warm cache) of a
  PARALLEL and a FORWARD/BACKWARD stencil;
- on a GPU, the bandwidth of a PARALLEL and a FORWARD stencil as a fraction of the copy.

Timings are compared with the targets through :meth:`Runner.target` (printed like checks, not
failing the run); correctness through :meth:`Runner.check`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .devices import Dev
from .options import Options
from .report import DESIGN, Runner, child_env

#: the compiled backend of each suite, and the embedded one
CPU_BACKENDS = ("numpy", "gt:cpu_ifirst")
GPU_BACKENDS = ("gt:gpu",)
BUILD_KINDS = {"lap": "PARALLEL", "fwdbwd": "FORWARD/BACKWARD"}
BANDWIDTH_KINDS = {"lap": "PARALLEL", "cumsum": "FORWARD"}


def calls_module() -> Any:
    """``cartesian_calls``, imported with ``gt4py`` served by stencilkit."""
    from stencilkit.compat import install_gt4py_alias

    install_gt4py_alias()
    from . import cartesian_calls

    return cartesian_calls


def call_targets(R: Runner, label: str, nfields: int, us: dict[str, float]) -> None:
    """The per-call targets of CARTESIAN.md 5.1 for one compiled backend and field count."""
    base = DESIGN["overhead_2_us"] if nfields == 2 else DESIGN["overhead_25_us"]
    limits = {
        "run()": base,
        "frozen": base,
        "__call__ validate_args=False": DESIGN["cartesian_call_factor"] * base,
        "__call__ validated": DESIGN["cartesian_validated_us"],
    }
    for name, limit in limits.items():
        R.target(
            f"cartesian {label} {nfields} fields {name} <= {limit:.0f} us",
            us[name] <= limit,
            f"{us[name]:.1f} us",
        )


def _next_program(P: Any, nfields: int, backend: str) -> Any:
    import stencilkit as gtx

    prog = getattr(P, f"prog{nfields}")
    compiled = {"numpy": None, "gt:cpu_ifirst": gtx.cpu, "gt:gpu": gtx.gpu}[backend]
    return prog.with_backend(compiled)


def _same_memory(a: Any, b: Any) -> bool:
    if hasattr(a, "data") and hasattr(a.data, "ptr"):  # CuPy
        return bool(a.data.ptr == b.data.ptr)
    import numpy as np

    return bool(np.shares_memory(a, b))


def per_call_part(
    R: Runner,
    C: Any,
    P: Any,
    backend: str,
    opts: Options,
    sync: Callable[[], Any] | None = None,
    batch: int | None = None,
) -> dict[str, Any]:
    """Every way of calling both per-call stencils on ``backend``, then gt4py.next's program on
    the same arrays; each checked against NumPy before it is timed."""
    import stencilkit as gtx

    res: dict[str, Any] = {}
    rounds = 3
    for kind in ("copy2", "sum25"):
        case = C.Case(kind, backend, n=8)
        nf = case.nfields
        entry: dict[str, Any] = {}
        variants = dict(case.variants())
        names = list(case.fields)
        arrays = [gtx.as_field([P.I, P.J, P.K], case.fields[k], copy=False) for k in names]
        R.check(
            f"cartesian {backend} {nf} fields: as_field shares the storages",
            all(_same_memory(f.ndarray, case.fields[k]) for f, k in zip(arrays, names)),
        )
        prog = _next_program(P, nf, backend)
        variants["gt4py.next program"] = lambda prog=prog, arrays=arrays: prog(  # type: ignore[misc]
            *arrays, offset_provider={}
        )
        for name, fn in variants.items():
            case.reset_output()
            fn()
            err = case.error(sync)
            R.check(f"cartesian {backend} {nf} fields {name} correct", err <= 1e-12, f"{err:.1e}")
            t = C.time_per_call(fn, opts.calls, rounds=rounds, sync=sync, batch=batch)
            entry[name] = {"error": err, **t}
            R.row(
                f"cartesian {backend} {nf} fields 8^3 {name}",
                f"{t['us']:.2f} us",
                "",
                "",
                "rounds " + " / ".join(f"{x:.1f}" for x in t["rounds_us"]),
            )
        if backend != "numpy":
            call_targets(R, backend, nf, {k: v["us"] for k, v in entry.items()})
        res[f"{nf}_fields"] = entry
    return res


def build_part(R: Runner, C: Any, backend: str) -> dict[str, Any]:
    """First and cached builds of each of ``BUILD_KINDS`` in new processes."""
    res: dict[str, Any] = {}
    gpu = backend == "gt:gpu"
    first_limit = DESIGN["gpu_first_compile_s"] if gpu else DESIGN["cpu_first_compile_s"]
    env = child_env()
    for kind, order in BUILD_KINDS.items():
        cache = tempfile.mkdtemp(prefix=f"sk-cart-bench-{kind}-")
        cold = C.run_build_child(kind, backend, cache, alias=True, env=env)
        warm = C.run_build_child(kind, backend, cache, alias=True, env=env)
        res[kind] = {"cold": cold, "warm": warm, "cache_dir": cache}
        for run, r in (("cold", cold), ("warm", warm)):
            R.check(
                f"cartesian {order} build ({run}) correct", r["error"] <= 1e-10, f"{r['error']:.1e}"
            )
        R.row(
            f"cartesian {order} {backend} first build (fresh cache)",
            f"{cold['build_s'] * 1e3:.0f} ms",
            "",
            "",
            f"decorate {cold['decorate_s'] * 1e3:.0f} ms + first call {cold['first_call_s'] * 1e3:.0f} ms; new process"
            + _device_init(cold),
        )
        R.row(
            f"cartesian {order} {backend} cached build (new process)",
            f"{warm['build_s'] * 1e3:.1f} ms",
            "",
            "",
            f"decorate {warm['decorate_s'] * 1e3:.1f} ms + first call {warm['first_call_s'] * 1e3:.1f} ms"
            + (
                f" (storages made between them, not counted: {warm['storages_s'] * 1e3:.1f} ms)"
                if "storages_s" in warm
                else ""
            )
            + _device_init(warm),
        )
        R.target(
            f"cartesian {order} first build <= {first_limit * 1e3:.0f} ms",
            cold["build_s"] <= first_limit,
            f"{cold['build_s'] * 1e3:.0f} ms",
        )
        R.target(
            f"cartesian {order} cached build <= {DESIGN['cached_new_process_s'] * 1e3:.0f} ms",
            warm["build_s"] <= DESIGN["cached_new_process_s"],
            f"{warm['build_s'] * 1e3:.1f} ms",
        )
    imp = min(r["warm"]["import_gtscript_s"] for r in res.values() if isinstance(r, dict))
    res["import_gtscript_s"] = imp
    R.row(
        "import gt4py.cartesian.gtscript via the alias",
        f"{imp * 1e3:.0f} ms",
        "",
        "",
        "new process, incl. importing stencilkit and NumPy",
    )
    R.target(
        f"import via the alias <= {DESIGN['import_s'] * 1e3:.0f} ms",
        imp <= DESIGN["import_s"],
        f"{imp * 1e3:.0f} ms",
    )
    return res


def bandwidth_case(C: Any, dev: Dev, kind: str, backend: str, n: int, reps: int) -> dict[str, Any]:
    """``kind`` on ``n^3`` storages of ``backend`` through ``run()``: checked, then timed with
    ``dev.time`` (CUDA events on a GPU, the host clock on the CPU); bytes = read + written."""
    case = C.Case(kind, backend, n=n)
    run = case.variants()["run()"]
    case.reset_output()
    run()
    err = case.error(dev.sync)
    h = C.HALO[kind]
    nbytes = 2 * 8 * (n - 2 * h) ** 2 * n
    ms = sorted(dev.time(run, reps, warmup=2))
    med = ms[len(ms) // 2]
    return {"n": n, "bytes": nbytes, "error": err, "ms": med, "GBps": nbytes / (med * 1e-3) / 1e9}


def bandwidth_rows(R: Runner, results: dict[str, dict[str, Any]], copy_gbs: float) -> None:
    """Rows, correctness checks and fraction-of-copy targets of :func:`bandwidth_case` results."""
    limits = {
        "lap": DESIGN["cartesian_parallel_fraction_of_copy"],
        "cumsum": DESIGN["cartesian_forward_fraction_of_copy"],
    }
    for kind, r in results.items():
        order = BANDWIDTH_KINDS[kind]
        frac = r["GBps"] / copy_gbs
        r["fraction_of_copy"] = frac
        R.check(
            f"cartesian {order} {kind} {r['n']}^3 correct", r["error"] <= 1e-9, f"{r['error']:.1e}"
        )
        R.row(
            f"cartesian {order} {kind} {r['n']}^3 run()",
            f"{r['ms']:.3f} ms",
            f"{r['GBps']:.0f} GB/s",
            f"{frac:.2f}",
            f"copy {copy_gbs:.0f} GB/s",
            target=(f"target >= {limits[kind]:.2f} of copy", frac >= limits[kind]),
        )


def cpu_cartesian_section(R: Runner, P: Any, opts: Options, builds: bool = True) -> dict[str, Any]:
    C = calls_module()
    res: dict[str, Any] = {"calls_module": str(Path(C.__file__).name)}
    for backend in CPU_BACKENDS:
        res[backend] = per_call_part(R, C, P, backend, opts)
    if builds:
        res["builds"] = build_part(R, C, "gt:cpu_ifirst")
    return res


def _device_init(r: dict[str, Any]) -> str:
    """The build child's CuPy import and CUDA context, made before its timed build."""
    t = r.get("device_init_s", 0.0)
    return f" (before it: CuPy and the CUDA context {t * 1e3:.0f} ms)" if t else ""


def gpu_cartesian_section(
    R: Runner, dev: Dev, P: Any, opts: Options, state: dict[str, Any]
) -> dict[str, Any]:
    """The GPU part: per call (host time, batches of 100 drained between), builds with NVRTC,
    and the bandwidth of ``BANDWIDTH_KINDS`` at ``opts.n``^3 as a fraction of the copy."""
    C = calls_module()
    res: dict[str, Any] = {
        "gt:gpu": per_call_part(R, C, P, "gt:gpu", opts, sync=dev.sync, batch=100)
    }
    R.row(
        "  (gpu per-call times are host time incl. the launch, not the Python part alone:"
        f" DESIGN's {DESIGN['cartesian_gpu_python_us']:.0f} us is not measured by this row)"
    )
    if not opts.skip_compile:
        res["builds"] = build_part(R, C, "gt:gpu")
    bw = {
        kind: bandwidth_case(C, dev, kind, "gt:gpu", opts.n, opts.reps) for kind in BANDWIDTH_KINDS
    }
    dev.free()
    bandwidth_rows(R, bw, state["copy_gbs"])
    res["bandwidth"] = bw
    return res
