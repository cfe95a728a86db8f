# DSL code is not plain typed Python for mypy (see models/shallow_water.py).
# mypy: disable-error-code="valid-type, type-arg, operator, no-untyped-def, untyped-decorator, no-any-return"
"""The cpu backend's threads on the machine at hand (``stencilkit bench --cpu --only threads``).

Two parts, each timed in this one process with the thread settings switched between variants
(``stencilkit.threads``), every variant checked against the serial one first:

* **demo**: one step of ``stencilkit demo``'s shallow-water model (128x128 and 256x256) on one
  thread, on all threads for every kernel (no size threshold), on all threads with the
  threshold (the default), and NumPy's step of the same scheme. The default must never be
  clearly slower than serial (check: at most 15% + 20 us slower, room for timer noise).
* **crossover**: for four kernel shapes (a cheap 2-D update, the demo's heavy 2-D flux kernel,
  a 3-D Laplacian, a vertical scan) and growing sizes, serial vs always-parallel per call: the
  smallest work (points x operations per point, the unit of ``STENCILKIT_PARALLEL_MIN_WORK``)
  at which threads won by 10% or more. The default threshold comes from these rows.
"""

from __future__ import annotations

import re
import time
from typing import Any

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.toolchain import threads as T

from .options import Options
from .report import Runner

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
F2 = Field[Dims[I, J], float64]
F3 = Field[Dims[I, J, K], float64]


@gtx.field_operator
def _cheap(a: F2) -> F2:
    return a * 0.5 + 1.0


@gtx.program(backend=gtx.cpu)
def cheap_2d(a: F2, out: F2):
    _cheap(a, out=out)


@gtx.field_operator
def _heavy(h: F2, hu: F2, hv: F2) -> tuple[F2, F2, F2]:
    u = hu / h
    fu = hu * u + 4.905 * h * h
    fv = hv * u
    return (
        0.5 * (h(I + 1) + h) - 0.1 * (hu(I + 1) - hu),
        0.5 * (hu(I + 1) + hu) - 0.1 * (fu(I + 1) - fu),
        0.5 * (hv(I + 1) + hv) - 0.1 * (fv(I + 1) - fv),
    )


@gtx.program(backend=gtx.cpu)
def heavy_2d(h: F2, hu: F2, hv: F2, o1: F2, o2: F2, o3: F2, n: gtx.int32):
    _heavy(h, hu, hv, out=(o1, o2, o3), domain={I: (0, n), J: (0, n)})


@gtx.field_operator
def _lap(a: F3) -> F3:
    return -6.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1) + a(K + 1) + a(K - 1)


@gtx.program(backend=gtx.cpu)
def laplacian_3d(a: F3, out: F3, n: gtx.int32, nk: gtx.int32):
    _lap(a, out=out, domain={I: (1, n - 1), J: (1, n - 1), K: (1, nk - 1)})


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def _cumsum(carry: float, x: float) -> float:
    return 0.9 * carry + x


@gtx.program(backend=gtx.cpu)
def scan_3d(a: F3, out: F3):
    _cumsum(a, out=out)


def _per_call_us(fn: Any, budget_s: float = 0.2, most: int = 2000) -> float:
    """Per-call time in microseconds: the best of 5 rounds of back-to-back calls (about
    ``budget_s`` in all). The best round, not the median: on a shared machine the load of
    other processes only ever adds time, and the variants are compared, not the machine."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    reps = int(max(3, min(most, budget_s / 5 / one)))
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        rounds.append((time.perf_counter() - t0) / reps * 1e6)
    return min(rounds)


def _variants(fn: Any, quick: bool = False) -> dict[str, float]:
    """Per-call time of ``fn`` serial, always parallel, and with the default threshold,
    interleaved three times so that a change of the machine's load hits every variant; the best.
    ``quick``: once, briefly (a smoke test of the path, not a measurement)."""
    out: dict[str, list[float]] = {"serial": [], "parallel": [], "default": []}
    for _ in range(1 if quick else 3):
        for name, (n, work) in {
            "serial": (1, None),
            "parallel": (T.usable_cpus(), 0),
            "default": (None, None),
        }.items():
            with T.threads(n, work):
                out[name].append(_per_call_us(fn, budget_s=0.02 if quick else 0.2))
    return {k: min(v) for k, v in out.items()}


def _demo_rows(R: Runner, size: int, quick: bool) -> dict[str, Any]:
    from stencilkit.models.shallow_water import GRAVITY, ShallowWater, initial_state, numpy_step

    models = {name: ShallowWater(size, gtx.cpu) for name in ("serial", "parallel", "default")}
    settings = {"serial": (1, None), "parallel": (T.usable_cpus(), 0), "default": (None, None)}
    for name, m in models.items():  # the same steps on every variant: the states must agree
        with T.threads(*settings[name]):
            for _ in range(3):
                m.step()
    ref = models["serial"].interior()
    for name in ("parallel", "default"):
        diff = max(float(np.max(np.abs(a - b))) for a, b in zip(models[name].interior(), ref))
        R.check(f"threads demo {size}: {name} == serial", diff == 0.0, f"max abs diff {diff:.1e}")
    m = models["default"]
    times = _variants(m.step, quick)
    state = list(initial_state(size))
    np_us = _per_call_us(
        lambda: numpy_step(state, GRAVITY, m.dt, m.dx, m.dy), budget_s=0.1 if quick else 0.3
    )
    serial = times["serial"]
    for name in ("serial", "parallel", "default"):
        note = {
            "serial": "1 thread",
            "parallel": f"{T.usable_cpus()} threads, every kernel",
            "default": f"{T.get_num_threads()} threads above {T.get_parallel_min_work():,} op-points",
        }[name]
        R.row(
            f"demo step {size}x{size}: cpu {name}",
            f"{times[name] / 1e3:.3f} ms",
            "",
            f"{serial / times[name]:.2f}x",
            note + " (ratio: speed-up over serial)",
        )
    R.row(
        f"demo step {size}x{size}: numpy",
        f"{np_us / 1e3:.3f} ms",
        "",
        f"{serial / np_us:.2f}x",
        "the NumPy reference of the same scheme",
    )
    if not quick:  # --quick times too briefly to judge (a smoke test must not flake)
        R.check(
            f"threads demo {size}: default not slower than serial",
            times["default"] <= 1.15 * serial + 20.0,
            f"default {times['default']:.1f} us, serial {serial:.1f} us",
        )
    return {**times, "numpy": np_us}


def _shapes(quick: bool) -> dict[str, tuple[Any, list[int]]]:
    """name -> (make(n) -> (call, points, cost), sizes)."""
    rng = np.random.default_rng(7)

    def f2(n: int) -> Any:
        return gtx.as_field([I, J], rng.standard_normal((n, n)))

    def f3(n: int, nk: int) -> Any:
        return gtx.as_field([I, J, K], rng.standard_normal((n, n, nk)))

    def cheap(n: int) -> Any:
        a, out = f2(n), f2(n)
        return lambda: cheap_2d(a, out, offset_provider={}), n * n, _cost(cheap_2d, a, out)

    def heavy(n: int) -> Any:
        h = gtx.as_field([I, J], 1.0 + rng.random((n + 1, n)))
        hu, hv, o1, o2, o3 = (f2(n + 1) for _ in range(5))
        return (
            lambda: heavy_2d(h, hu, hv, o1, o2, o3, n, offset_provider={}),
            n * n,
            _cost(heavy_2d, h, hu, hv, o1, o2, o3, n),
        )

    def lap(n: int) -> Any:
        a, out = f3(n, 32), f3(n, 32)
        return (
            lambda: laplacian_3d(a, out, n, 32, offset_provider={}),
            (n - 2) ** 2 * 30,
            _cost(laplacian_3d, a, out, n, 32),
        )

    def scan(n: int) -> Any:
        a, out = f3(n, 64), f3(n, 64)
        return lambda: scan_3d(a, out, offset_provider={}), n * n * 64, _cost(scan_3d, a, out)

    if quick:  # the path only: two shapes, two sizes
        return {"2-D cheap (a*0.5+1)": (cheap, [32, 128]), "3-D Laplacian (K=32)": (lap, [8, 16])}
    sizes2 = [32, 64, 96, 128, 192, 256, 384, 512]
    sizes3 = [8, 12, 16, 24, 32, 48, 64, 96]
    return {
        "2-D cheap (a*0.5+1)": (cheap, sizes2),
        "2-D heavy (demo flux)": (heavy, sizes2),
        "3-D Laplacian (K=32)": (lap, sizes3),
        "vertical scan (K=64)": (scan, sizes3),
    }


def _cost(program: Any, *args: Any) -> int:
    """Operations per point of the program's heaviest kernel, as its generated source states."""
    source = program.inspect(*args, offset_provider={}).source.as_text()
    costs = [int(c) for c in re.findall(r"if\(sk_parallel\(.*?, (\d+)\)\)", source)]
    return max(costs) if costs else 1


def threads_section(R: Runner, opts: Options) -> dict[str, Any]:
    R.say(
        f"threads: {T.get_num_threads()}, parallel above {T.get_parallel_min_work():,} op-points, "
        f"OMP_WAIT_POLICY={T.wait_policy()}"
    )
    out: dict[str, Any] = {
        "threads": T.get_num_threads(),
        "min_work": T.get_parallel_min_work(),
        "wait_policy": T.wait_policy(),
        "demo": {},
        "crossover": {},
    }
    for size in (128,) if opts.quick else (128, 256):
        out["demo"][size] = _demo_rows(R, size, opts.quick)
    for shape, (make, sizes) in _shapes(opts.quick).items():
        rows = []
        won_at = None
        for n in sizes:
            call, points, cost = make(n)
            t = _variants(call, opts.quick)
            work = points * cost
            rows.append({"n": n, "points": points, "work": work, **t})
            if won_at is None and t["parallel"] * 1.1 <= t["serial"]:
                won_at = work
            R.say(
                f"    {shape:<24} n={n:<4} work={work:>12,}  serial {t['serial']:9.1f} us  parallel "
                f"{t['parallel']:9.1f} us  default {t['default']:9.1f} us"
            )
        least = T.get_parallel_min_work()
        above = [r["default"] / r["serial"] for r in rows if r["work"] >= least]
        below = [r for r in rows if r["work"] < least]
        lost = sum(r["parallel"] > r["serial"] for r in below)
        worst = max(above) if above else float("nan")
        won = (
            f"threads won by 10% from {won_at:,} op-points"
            if won_at
            else "threads never won by 10%"
        )
        R.row(
            f"threads crossover: {shape}",
            "",
            "",
            f"{worst:.2f}x" if above else "-",
            f"{won}; below the threshold parallel lost at {lost} of {len(below)} sizes; "
            f"ratio: worst default/serial at the {len(above)} sizes above it",
        )
        out["crossover"][shape] = {
            "rows": rows,
            "parallel_wins_from_work": won_at,
            "worst_default_over_serial": worst,
        }
    return out
