"""Clocks and statistics: per-call times, the overhead loop, interleaved rounds of variants."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .report import Runner

if TYPE_CHECKING:
    from .devices import Dev


def summary(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    n = len(s)
    return {
        "median": statistics.median(s),
        "min": s[0],
        "max": s[-1],
        "p10": s[max(0, int(0.1 * (n - 1)))],
        "p90": s[min(n - 1, round(0.9 * (n - 1)))],
        "n": n,
    }


def host_time(
    fn: Callable[[], Any], reps: int, warmup: int, sync: Callable[[], Any] | None = None
) -> list[float]:
    """Per-call wall times in ms (host clock); ``sync`` is called after each call if given."""
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def per_call_us(
    fn: Callable[[], Any],
    n_calls: int,
    sync: Callable[[], Any] | None = None,
    rounds: int = 3,
    warmup: int = 200,
    batch: int | None = None,
) -> dict[str, Any]:
    """Mean wall time per call of ``fn`` over ``n_calls`` back-to-back calls (no sync inside the
    loop), in microseconds; ``rounds`` rounds, the median round is the result. ``loop_us`` stops
    the clock when the loop ends; ``total_us`` after the final ``sync`` (device drained).

    ``batch``: the calls run in batches of this many, the device drained (untimed) between
    batches, so that the GPU's launch queue never fills: ``loop_us`` is then the host's cost of
    a call, not the rate at which the GPU retires tiny kernels."""
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    loops, totals = [], []
    if batch:
        for _ in range(rounds):
            spent = 0.0
            for _ in range(max(1, n_calls // batch)):
                t0 = time.perf_counter()
                for _ in range(batch):
                    fn()
                spent += time.perf_counter() - t0
                if sync:
                    sync()
            loops.append(spent / (max(1, n_calls // batch) * batch) * 1e6)
        return {
            "loop_us": statistics.median(loops),
            "total_us": None,
            "loop_us_rounds": loops,
            "n_calls": n_calls,
            "batch": batch,
        }
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n_calls):
            fn()
        t1 = time.perf_counter()
        if sync:
            sync()
        t2 = time.perf_counter()
        loops.append((t1 - t0) / n_calls * 1e6)
        totals.append((t2 - t0) / n_calls * 1e6)
    return {
        "loop_us": statistics.median(loops),
        "total_us": statistics.median(totals),
        "loop_us_rounds": loops,
        "total_us_rounds": totals,
        "n_calls": n_calls,
    }


def time_variants(
    R: Runner,
    dev: Dev,
    label: str,
    variants: dict[str, tuple[Callable[[], Any], int]],
    nbytes: dict[str, int],
    ceiling: float | None,
    notes: dict[str, str],
    res: dict[str, Any],
    targets: dict[str, float] | None = None,
) -> None:
    """Two interleaved rounds of every variant, then one table row each: median time, GB/s
    (``nbytes[name]`` / median), fraction of ``ceiling`` (or of the variant named 'copy ...');
    ``targets[name]``: the least fraction of the copy that variant is meant to reach (counted)."""
    samples: dict[str, list[float]] = {k: [] for k in variants}
    rounds: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(2):
        for name, (fn, reps) in variants.items():
            s = dev.time(fn, reps, warmup=2 if reps >= 5 else 1)  # slow variants: fewer calls
            samples[name] += s
            rounds[name].append(summary(s)["median"])
    copies = [k for k in variants if k.startswith("copy")]
    local = None
    if copies:
        tc = summary(samples[copies[0]])["median"]
        local = nbytes[copies[0]] / (tc * 1e-3) / 1e9
        res["same_section_copy_GBps"] = local
    ceil = ceiling or local or float("nan")
    res["ceiling_GBps"] = ceil
    for name in variants:
        t = summary(samples[name])
        gbs = nbytes[name] / (t["median"] * 1e-3) / 1e9
        res[name] = {
            "ms": t,
            "round_medians_ms": rounds[name],
            "GBps": gbs,
            "fraction_of_copy": gbs / ceil,
        }
        note = "rounds " + " / ".join(f"{v:.3f}" for v in rounds[name]) + " ms"
        if notes.get(name):
            note += "; " + notes[name]
        R.row(
            name if name.startswith("copy") else f"{label} {name}",
            f"{t['median']:.3f} ms",
            f"{gbs:.0f} GB/s" if gbs >= 10 else f"{gbs:.2f} GB/s",
            f"{gbs / ceil:.2f}",
            note,
            target=(
                (f"target >= {targets[name]:.2f} of copy", gbs / ceil >= targets[name])
                if targets and name in targets
                else None
            ),
        )


def gb(nbytes: int) -> str:
    return f"{nbytes / 1e9:.3f} GB" if nbytes >= 1e8 else f"{nbytes / 1e6:.2f} MB"


def adaptive_reps(first_call_s: float, cap: int, budget_s: float = 1.0) -> int:
    """Reps of a slow variant so that one round takes about ``budget_s``."""
    return max(2, min(cap, int(budget_s / max(first_call_s, 1e-6))))
