"""Where a GTScript ``run()`` spends its time: the whole call, then each of its parts alone.

The bench (``stencilkit bench``, section ``cartesian``) reports the per-call cost of a GTScript
stencil; this script takes one ``run()`` of the 2- and 25-field stencils apart on one backend,
in one process, each part timed alone over many calls (best of 5 rounds):

* ``kwargs``: Python packing the keyword arguments (the caller's cost, in every ``run()``);
* ``for_run``: finding the bound arguments of the call (``Arguments.for_run``), made of
  ``arrays_of`` (the arrays in parameter order), the origins' comparison and ``same`` (the
  arrays unchanged: one C call for NumPy arrays, identity and shape for CuPy's);
* ``go``: the bound launch (the argument block written once; the kernel launch);
* ``launch``: the kernel launch alone (``CudaCall`` on gpu, the C++ call on cpu);
* for a GPU backend, ``device``/``stream``: CuPy's current device and stream, read per call.

It also says whether the call took the bound fast path (``go`` set) and, on gpu, whether the
plan is provisional (its variants still building) or final. Run from the repository::

    PYTHONPATH=src:benchmarks python benchmarks/cartesian_call_breakdown.py gt:gpu
    PYTHONPATH=src:benchmarks python benchmarks/cartesian_call_breakdown.py gt:cpu_ifirst --profile
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

from stencilkit.compat import install_gt4py_alias

install_gt4py_alias()

from stencilkit_benchmarks import cartesian_calls as cc  # noqa: E402


def best_us(fn: Callable[[], Any], n: int) -> float:
    for _ in range(200):
        fn()
    return min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6


def _wait_final(st: Any, run: Callable[[], Any], limit_s: float = 120.0) -> dict[str, Any]:
    """Call until the stencil's plan is no longer provisional (its variants built in the
    background and the search done), at most ``limit_s``: the steady state a long run reaches."""
    runner = st._runner
    t0 = time.perf_counter()
    calls = 0
    while time.perf_counter() - t0 < limit_s:
        plans = getattr(getattr(runner, "plans", None), "values", lambda: [])()
        if not any(getattr(p, "provisional", False) for p in plans):
            break
        run()
        calls += 1
        time.sleep(0.01)
    plans = getattr(getattr(runner, "plans", None), "values", lambda: [])()
    return {
        "waited_s": time.perf_counter() - t0,
        "calls_while_waiting": calls,
        "provisional": any(getattr(p, "provisional", False) for p in plans),
    }


def breakdown(kind: str, backend: str, n_calls: int) -> dict[str, Any]:
    case = cc.Case(kind, backend, n=8)
    st, f, dom, origins = case.stencil, case.fields, case.domain, case.origins
    gpu = "gpu" in backend or backend == "cuda"
    sync: Callable[[], Any] | None = None
    if gpu:
        import cupy

        sync = cupy.cuda.Device().synchronize

    def run() -> None:
        st.run(_domain_=dom, _origin_=origins, exec_info=None, **f)

    run()
    res: dict[str, Any] = {"kind": kind, "fields": case.nfields, "backend": backend}
    res["error"] = case.error(sync)
    res["array_type"] = (
        f"{type(next(iter(f.values()))).__module__}.{type(next(iter(f.values()))).__name__}"
    )
    res.update(_wait_final(st, run))
    args = st._args
    b = args.for_run(dom, origins, f)
    run()  # binds the launch if the plan became final
    b = args.for_run(dom, origins, f)
    arrays = args.arrays_of(f)
    res["bound_fast_path"] = b.go is not None
    res["snapshot"] = "C" if b.same.__self__.fn is not None else f"python ({b.same.__self__.key})"

    def kwargs_only(**k: Any) -> None:
        pass

    parts: dict[str, Callable[[], Any]] = {
        "run()": run,
        "kwargs": lambda: kwargs_only(**f),
        "for_run": lambda: args.for_run(dom, origins, f),
        "arrays_of": lambda: args.arrays_of(f),
        "origin ==": lambda: b.run_origin == origins,
        "same": lambda: b.same(arrays),
    }
    if b.go is not None:
        go, flat = b.go, b.flat
        parts["go"] = lambda: go(flat)
        runner = st._runner
        plan = next(iter(runner.plans.values()))
        if hasattr(plan, "block"):  # compiled backends (numpy's go is the bound kernel itself)
            parts["launch"] = plan.block.run
    if gpu:
        import cupy

        parts["device"] = cupy.cuda.runtime.getDevice
        parts["stream"] = lambda: cupy.cuda.get_current_stream().ptr
    times: dict[str, float] = {}
    for name, fn in parts.items():
        times[name] = best_us(fn, n_calls)
        if sync:
            sync()
    res["us"] = times
    res["error_after"] = case.error(sync)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("backend")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--profile", action="store_true", help="also cProfile the 25-field run()")
    ap.add_argument("--json")
    a = ap.parse_args()
    out = []
    for kind in ("copy2", "sum25"):
        r = breakdown(kind, a.backend, a.calls)
        out.append(r)
        print(
            f"{r['fields']:>2} fields on {a.backend} ({r['array_type']}; snapshot {r['snapshot']};"
            f" bound fast path {r['bound_fast_path']}; provisional {r['provisional']} after"
            f" {r['waited_s']:.1f} s; error {r['error']:.1e}/{r['error_after']:.1e})"
        )
        for name, us in r["us"].items():
            print(f"  {name:<10} {us:7.2f} us")
    if a.profile:
        case = cc.Case("sum25", a.backend, n=8)
        st, f, dom, origins = case.stencil, case.fields, case.domain, case.origins
        for _ in range(1000):
            st.run(_domain_=dom, _origin_=origins, exec_info=None, **f)
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(a.calls):
            st.run(_domain_=dom, _origin_=origins, exec_info=None, **f)
        pr.disable()
        pstats.Stats(pr, stream=sys.stdout).sort_stats("tottime").print_stats(20)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
