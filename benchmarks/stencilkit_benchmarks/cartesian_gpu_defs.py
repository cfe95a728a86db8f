# mypy: disable-error-code="valid-type,index,operator,name-defined"
# (the GTScript definitions below are not Python to mypy: Field[...] annotations, field offsets)
"""The GTScript stencils of ``benchmarks/cartesian_gpu_vs_gt4py.py``, written once for two
libraries: the benchmark loads this file twice by path, each time as its own module with
``GTSCRIPT`` (stencilkit's ``stencilkit.cartesian.gtscript`` or a real gt4py's
``gt4py.cartesian.gtscript``) set in the module's namespace before it runs, so that both
libraries parse the same source in one process. Imported plainly, it takes whichever
``gt4py.cartesian.gtscript`` is importable.

Only NumPy and the given ``gtscript`` are used (never ``stencilkit``), so the file also runs in
a venv that holds a real gt4py.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

gtscript: Any = globals().get("GTSCRIPT") or importlib.import_module("gt4py.cartesian.gtscript")
Field = gtscript.Field
PARALLEL, FORWARD, BACKWARD = gtscript.PARALLEL, gtscript.FORWARD, gtscript.BACKWARD
computation, interval = gtscript.computation, gtscript.interval

F64 = Field[np.float64]


def copy2(a: F64, out: F64):  # type: ignore[no-untyped-def]
    """The per-call stencil: 2 fields."""
    with computation(PARALLEL), interval(...):
        out = a + 1.0  # noqa: F841


def lap7(a: F64, out: F64):  # type: ignore[no-untyped-def]
    """PARALLEL: the 7-point Laplacian on the interior levels (the top and bottom levels and
    the I/J halo of width 1 untouched)."""
    with computation(PARALLEL), interval(1, -1):
        out = (  # noqa: F841
            a[1, 0, 0] + a[-1, 0, 0] + a[0, 1, 0] + a[0, -1, 0] + a[0, 0, 1] + a[0, 0, -1]
            - 6.0 * a
        )  # fmt: skip


def tridiag(a: F64, b: F64, c: F64, d: F64, x: F64):  # type: ignore[no-untyped-def]
    """FORWARD then BACKWARD: the Thomas algorithm for a[k] x[k-1] + b[k] x[k] + c[k] x[k+1]
    = d[k] in each column (a[0] and c[-1] unused); ``cc``/``dd`` are temporaries."""
    with computation(FORWARD):
        with interval(0, 1):
            cc = c / b
            dd = d / b
        with interval(1, None):
            m = 1.0 / (b - a * cc[0, 0, -1])
            cc = c * m
            dd = (d - a * dd[0, 0, -1]) * m
    with computation(BACKWARD):
        with interval(-1, None):
            x = dd
        with interval(0, -1):
            x = dd - cc * x[0, 0, 1]


def cumsum(a: F64, out: F64):  # type: ignore[no-untyped-def]
    """FORWARD only: a column's running sum (one thread per column, K loop inside)."""
    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, None):
            out = out[0, 0, -1] + a


DEFINITIONS: dict[str, Callable[..., Any]] = {
    "copy2": copy2,
    "lap7": lap7,
    "tridiag": tridiag,
    "cumsum": cumsum,
}
#: the iteration order each stencil stands for in CARTESIAN.md 5.1
ORDER = {"copy2": "PARALLEL", "lap7": "PARALLEL", "tridiag": "FORWARD", "cumsum": "FORWARD"}
#: halo in I and J: the compute domain is the array shrunk by it on each side
HALO = {"copy2": 0, "lap7": 1, "tridiag": 0, "cumsum": 0}


def inputs(kind: str, shape: tuple[int, int, int], seed: int) -> list[np.ndarray]:
    """Fresh random inputs of ``kind`` (never zeros); the tridiagonal system diagonally
    dominant so that the solve is well conditioned."""
    rng = np.random.default_rng(seed)
    if kind == "tridiag":
        a, c, d = (rng.uniform(-1.0, 1.0, shape) for _ in range(3))
        b = 3.0 + rng.uniform(0.0, 1.0, shape)
        return [a, b, c, d]
    return [rng.standard_normal(shape)]


def reference(kind: str, ins: list[np.ndarray]) -> np.ndarray:
    """NumPy's result on the compute domain of ``kind`` (the output's interior; for ``lap7``
    levels 1..nk-2)."""
    if kind == "copy2":
        return ins[0] + 1.0
    if kind == "lap7":
        a = ins[0]
        core = a[1:-1, 1:-1, 1:-1]
        res: np.ndarray = (
            a[2:, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1] + a[1:-1, 2:, 1:-1] + a[1:-1, :-2, 1:-1]
            + a[1:-1, 1:-1, 2:] + a[1:-1, 1:-1, :-2] - 6.0 * core
        )  # fmt: skip
        return res
    if kind == "cumsum":
        return np.cumsum(ins[0], axis=2)
    # K first, so that each level is contiguous (a 512^3 solve in seconds, not minutes)
    a, b, c, d = (np.ascontiguousarray(np.moveaxis(v, 2, 0)) for v in ins)
    nk = a.shape[0]
    cc, dd = np.empty_like(a), np.empty_like(a)
    cc[0], dd[0] = c[0] / b[0], d[0] / b[0]
    for k in range(1, nk):
        m = 1.0 / (b[k] - a[k] * cc[k - 1])
        cc[k] = c[k] * m
        dd[k] = (d[k] - a[k] * dd[k - 1]) * m
    x = np.empty_like(a)
    x[-1] = dd[-1]
    for k in range(nk - 2, -1, -1):
        x[k] = dd[k] - cc[k] * x[k + 1]
    return np.moveaxis(x, 0, 2)


def written(kind: str, shape: tuple[int, int, int]) -> tuple[slice, slice, slice]:
    """The part of the output ``kind`` writes (the rest must stay untouched)."""
    h = HALO[kind]
    k = slice(1, shape[2] - 1) if kind == "lap7" else slice(0, shape[2])
    return (slice(h, shape[0] - h), slice(h, shape[1] - h), k)


def build(kind: str, backend: str, **options: Any) -> Any:
    return gtscript.stencil(
        backend=backend, definition=DEFINITIONS[kind], name=f"skcartgpu.{kind}", **options
    )
