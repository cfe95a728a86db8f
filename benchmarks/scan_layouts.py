"""Time per call of a tridiagonal solve (two scans) on the cpu backend, by field layout: the
blocked scans of horizontal-contiguous fields against the per-column scans of
vertical-contiguous ones. Median of 5 rounds, 40x40x20 and 128x128x80 float64.

    PYTHONPATH=src python benchmarks/scan_layouts.py next horizontal-contiguous
    PYTHONPATH=src python benchmarks/scan_layouts.py gtscript F   # numpy order of the arrays
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
F3 = Field[Dims[I, J, K], float64]


@gtx.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def forward(
    state: tuple[float, float], a: float, b: float, c: float, d: float
) -> tuple[float, float]:
    cp_prev, dp_prev = state
    denom = b - a * cp_prev
    return c / denom, (d - a * dp_prev) / denom


@gtx.scan_operator(axis=K, forward=False, init=0.0)
def backward(x_next: float, cp: float, dp: float) -> float:
    return dp - cp * x_next


@gtx.program(backend=gtx.cpu)
def solve(a: F3, b: F3, c: F3, d: F3, cp: F3, dp: F3, x: F3):  # type: ignore[no-untyped-def]
    forward(a, b, c, d, out=(cp, dp))
    backward(cp, dp, out=x)


def _gtscript_tridiag():  # type: ignore[no-untyped-def]
    from stencilkit.cartesian import gtscript

    path = Path(__file__).parent / "stencilkit_benchmarks" / "cartesian_gpu_defs.py"
    spec = importlib.util.spec_from_file_location("defs", path)
    m = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    m.GTSCRIPT = gtscript  # type: ignore[attr-defined]
    spec.loader.exec_module(m)  # type: ignore[union-attr]
    return gtscript.stencil(backend="gt:cpu_ifirst", definition=m.tridiag)


def main(frontend: str, layout: str) -> None:
    st = _gtscript_tridiag() if frontend == "gtscript" else None
    for shape in [(40, 40, 20), (128, 128, 80)]:
        rng = np.random.default_rng(0)
        ins = [rng.random(shape) for _ in range(4)]
        ins[1] += 4.0
        if st is not None:
            args = [np.array(v, order=layout) for v in ins] + [np.zeros(shape, order=layout)]

            def call(args: list[Any] = args) -> None:
                st(*args)
        else:
            args = [gtx.as_field([I, J, K], v, layout=layout) for v in ins]
            args += [gtx.as_field([I, J, K], np.zeros(shape), layout=layout) for _ in range(3)]

            def call(args: list[Any] = args) -> None:
                solve(*args, offset_provider={})

        call()
        n = 200 if shape[0] < 100 else 20
        ts = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(n):
                call()
            ts.append((time.perf_counter() - t) / n)
        print(frontend, layout, shape, f"{float(np.median(ts)) * 1e3:.3f} ms per call")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
