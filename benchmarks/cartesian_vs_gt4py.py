"""GTScript stencils on stencilkit (through its gt4py alias) and on a real gt4py.cartesian, side
by side: per-call times of ``run()``, a frozen stencil and ``__call__`` (2 and 25 fields of
8^3), first and cached builds in new processes (a PARALLEL and a FORWARD/BACKWARD stencil), and
the outputs of every stencil, saved to compare.

Two steps, each in its own process (real gt4py and stencilkit's alias cannot share one); the
stencils are those of ``stencilkit_benchmarks/cartesian_calls.py``, loaded by path (it imports
only NumPy and ``gt4py``)::

    PYTHONPATH=src python benchmarks/cartesian_vs_gt4py.py run --impl stencilkit --dir /tmp/cart
    /tmp/gt4py-cart-venv/bin/python benchmarks/cartesian_vs_gt4py.py run --impl gt4py --dir /tmp/cart
    python benchmarks/cartesian_vs_gt4py.py compare --dir /tmp/cart stencilkit gt4py

Real gt4py is an oracle installed in a scratch venv only, never a stencilkit dependency.
Per-call figures are medians of ``--rounds`` rounds of ``--calls`` calls; build figures are
medians of ``--builds`` pairs of child processes (each pair: a fresh cache, then the same).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

CALLS = Path(__file__).resolve().parent / "stencilkit_benchmarks" / "cartesian_calls.py"
BUILD_KINDS = ("lap", "fwdbwd")


def load_calls(impl: str) -> ModuleType:
    """``cartesian_calls`` with ``gt4py`` from ``impl`` (checked: the alias or a real one)."""
    # a real gt4py builds into .gt_cache/ of the working directory unless told otherwise
    os.environ.setdefault("GT_CACHE_ROOT", tempfile.mkdtemp(prefix="cart-vs-gt-cache-"))
    if impl == "stencilkit":
        from stencilkit.compat import install_gt4py_alias

        install_gt4py_alias()
    spec = importlib.util.spec_from_file_location("cartesian_calls", CALLS)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["cartesian_calls"] = mod
    spec.loader.exec_module(mod)
    import gt4py

    aliased = bool(getattr(gt4py, "__stencilkit_alias__", False))
    if aliased != (impl == "stencilkit"):
        raise SystemExit(f"--impl {impl}, but gt4py here is {_where(gt4py)} (alias: {aliased})")
    return mod


def _where(gt4py: ModuleType) -> str:
    return str(getattr(gt4py, "__file__", None) or "stencilkit's alias")


def run(opts: argparse.Namespace) -> None:
    C = load_calls(opts.impl)
    import gt4py

    out = Path(opts.dir) / opts.impl
    out.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {
        "impl": opts.impl,
        "gt4py": f"{getattr(gt4py, '__version__', '?')} ({_where(gt4py)})",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "loadavg_start": os.getloadavg(),
        "calls": opts.calls,
        "rounds": opts.rounds,
        "backends": {},
    }
    for backend in opts.backends.split(","):
        print(f"== {opts.impl} {backend}", flush=True)
        entry: dict[str, Any] = {"per_call": C.measure_calls(backend, 8, opts.calls, opts.rounds)}
        for kind in C.DEFINITIONS:  # outputs, for the comparison of the two libraries
            case = C.Case(kind, backend, n=12, seed=11)
            case.reset_output()
            case.variants()["__call__ validated"]()
            C.np.save(
                out / f"{backend.replace(':', '_')}-{kind}.npy",
                C.to_numpy(case.fields[case.out_name]),
            )
        builds: dict[str, Any] = {}
        for kind in BUILD_KINDS if opts.builds > 0 else ():  # --builds 0: per-call figures only
            pairs = []
            for _ in range(opts.builds):
                cache = tempfile.mkdtemp(prefix=f"cart-vs-{opts.impl}-{kind}-")
                cold = C.run_build_child(kind, backend, cache, alias=opts.impl == "stencilkit")
                warm = C.run_build_child(kind, backend, cache, alias=opts.impl == "stencilkit")
                pairs.append({"cold": cold, "warm": warm})
            builds[kind] = {
                "pairs": pairs,
                "cold_build_s": statistics.median(p["cold"]["build_s"] for p in pairs),
                "warm_build_s": statistics.median(p["warm"]["build_s"] for p in pairs),
                "import_gtscript_s": statistics.median(
                    p["warm"]["import_gtscript_s"] for p in pairs
                ),
                "max_error": max(max(p["cold"]["error"], p["warm"]["error"]) for p in pairs),
            }
        entry["builds"] = builds
        doc["backends"][backend] = entry
    doc["loadavg_end"] = os.getloadavg()
    (out / "result.json").write_text(json.dumps(doc, indent=1))
    print(f"wrote {out / 'result.json'}")


def _us(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def compare(opts: argparse.Namespace) -> None:
    import numpy as np

    a_name, b_name = opts.impls
    root = Path(opts.dir)
    a, b = (json.loads((root / n / "result.json").read_text()) for n in (a_name, b_name))
    print(f"{a_name}: gt4py {a['gt4py']}, {a['time']}, load {a['loadavg_start'][0]:.2f}")
    print(f"{b_name}: gt4py {b['gt4py']}, {b['time']}, load {b['loadavg_start'][0]:.2f}\n")
    print(f"| backend | what | {a_name} | {b_name} | {a_name} / {b_name} |")
    print("|---|---|---:|---:|---:|")
    for backend in a["backends"]:
        if backend not in b["backends"]:
            print(f"| {backend} | not run by {b_name} | | | |")
            continue
        pa, pb = a["backends"][backend], b["backends"][backend]
        for nf, ea in pa["per_call"].items():
            eb = pb["per_call"][nf]
            for variant in ea:
                if not isinstance(ea[variant], dict):
                    continue
                x, y = ea[variant]["us"], eb[variant]["us"]
                print(
                    f"| {backend} | {nf.replace('_', ' ')} {variant} (us) | {_us(x)} | {_us(y)} | {x / y:.2f} |"
                )
        for kind in BUILD_KINDS:
            if kind not in pa["builds"] or kind not in pb["builds"]:
                continue
            ba, bb = pa["builds"][kind], pb["builds"][kind]
            for key, what in (("cold_build_s", "first build"), ("warm_build_s", "cached build")):
                x, y = ba[key] * 1e3, bb[key] * 1e3
                print(f"| {backend} | {kind} {what} (ms) | {x:.0f} | {y:.0f} | {x / y:.2f} |")
        if all(BUILD_KINDS[0] in p["builds"] for p in (pa, pb)):
            x, y = (p["builds"][BUILD_KINDS[0]]["import_gtscript_s"] * 1e3 for p in (pa, pb))
            print(
                f"| {backend} | import gtscript, new process (ms) | {x:.0f} | {y:.0f} | {x / y:.2f} |"
            )
    print("\nagreement of the saved outputs (12^3, same seeds):")
    for path in sorted((root / a_name).glob("*.npy")):
        other = root / b_name / path.name
        if not other.exists():
            print(f"- {path.stem}: missing in {b_name}")
            continue
        x, y = np.load(path), np.load(other)
        same_nan = bool(np.array_equal(np.isnan(x), np.isnan(y)))
        diff = float(np.nanmax(np.abs(x - y))) if np.isfinite(x).any() else 0.0
        print(f"- {path.stem}: max abs diff {diff:.1e}, same unwritten points: {same_nan}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    r = sub.add_parser("run", help="time the stencils with one library")
    r.add_argument("--impl", choices=("stencilkit", "gt4py"), required=True)
    r.add_argument("--dir", required=True)
    r.add_argument("--backends", default="numpy,gt:cpu_ifirst")
    r.add_argument("--calls", type=int, default=2000)
    r.add_argument("--rounds", type=int, default=7)
    r.add_argument("--builds", type=int, default=3, help="0: no build measurements")
    c = sub.add_parser("compare", help="the side-by-side markdown table")
    c.add_argument("--dir", required=True)
    c.add_argument("impls", nargs=2)
    opts = ap.parse_args(argv)
    (run if opts.step == "run" else compare)(opts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
