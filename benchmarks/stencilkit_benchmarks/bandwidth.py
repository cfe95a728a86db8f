"""The GPU copy bandwidth section: the ceiling every GPU rate is a fraction of."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .devices import Dev
from .options import Options
from .report import Runner
from .timing import summary


def copy_section(R: Runner, dev: Dev, opts: Options, state: dict[str, Any]) -> dict[str, Any]:
    """Device-to-device copies of an n^3 fp64 array three ways; the best is ``state["copy_gbs"]``."""
    import cupy as cp

    n = opts.n
    src = cp.random.standard_normal((n, n, n), dtype=cp.float64)
    dst = cp.full((n, n, n), cp.nan, dtype=cp.float64)
    nbytes = 2 * src.nbytes
    res: dict[str, Any] = {"bytes": nbytes, "buffer_bytes": src.nbytes}
    methods: dict[str, Callable[[], Any]] = {
        "cupy.copyto": lambda: cp.copyto(dst, src),
        "dst[...] = src": lambda: dst.__setitem__(Ellipsis, src),
        "cudaMemcpyAsync D2D": dev.copier(dst, src),
    }
    samples: dict[str, list[float]] = {k: [] for k in methods}
    for _ in range(2):  # two interleaved rounds
        for name, fn in methods.items():
            dst.fill(cp.nan)
            samples[name] += dev.time(fn, max(opts.reps // 2, 20), warmup=3)
            R.check(f"copy {name}: exact", bool(cp.array_equal(dst, src)))
    for name in methods:
        t = summary(samples[name])
        res[name] = {"ms": t, "GBps": nbytes / (t["median"] * 1e-3) / 1e9}
    best = max(res[m]["GBps"] for m in methods)
    state["copy_gbs"] = best
    res["ceiling_GBps"] = best
    for name in methods:
        t = res[name]["ms"]
        R.row(
            f"copy {name} {n}^3 f64",
            f"{t['median']:.3f} ms",
            f"{res[name]['GBps']:.0f} GB/s",
            f"{res[name]['GBps'] / best:.2f}",
            f"p10-p90 {t['p10']:.3f}-{t['p90']:.3f} ms",
        )
    return res
