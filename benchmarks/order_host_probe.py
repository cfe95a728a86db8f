"""The host locality order (``backends/cuda/order.py``) timed on the bench's random-numbered
meshes (1M-cell C2E, 1.57M-edge E2C), with the NumPy primitives it is made of, and beside an
older ``order.py`` in the same process (``--against FILE``, e.g. ``git show REV:src/stencilkit/
backends/cuda/order.py > old_order.py``): best of three rounds each, the orders checked equal.

    PYTHONPATH=src:benchmarks python3 benchmarks/order_host_probe.py [--against old_order.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from stencilkit.backends.cuda import order as current
from stencilkit_benchmarks import gathers, meshes


def _best(label: str, f: Callable[[], Any], rounds: int = 3) -> None:
    best = min(_seconds(f) for _ in range(rounds))
    print(f"  {label:44s} {best * 1e3:8.2f} ms")


def _seconds(f: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def _older(path: str) -> Any:
    name = "stencilkit.backends.cuda._order_against"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", help="an older order.py to time beside the current one")
    opts = ap.parse_args()
    print("numpy", np.__version__)
    rng = np.random.default_rng(0)
    v = rng.integers(0, 1_572_864, 3_145_728)
    _best("np.sort of (value, position) keys, 3M", lambda: np.sort(v * len(v) + np.arange(len(v))))
    _best("stable argsort of uint16, 3M", lambda: np.argsort(v.astype(np.uint16), kind="stable"))
    shuffle = rng.permutation(len(v))
    _best("random gather int64, 3M", lambda: v[shuffle])
    readers = rng.integers(0, 1 << 20, (1_572_865, 2))
    rows = rng.integers(0, 1_572_864, (1 << 20, 3))
    frontier = rng.permutation(1 << 20)[:20000]
    _best("fancy index readers[rows[frontier]], 20k", lambda: readers[rows[frontier]].ravel())
    _best(
        "two takes of whole rows (order.py), 20k",
        lambda: current._candidates(rows, readers, frontier),
    )
    versions = {"current": current}
    if opts.against:
        versions = {"against": _older(opts.against), "current": current}
    mesh, _ = meshes.build_mesh(1024, 512, locality=True)
    c2e, _ = gathers.random_numbering(mesh.c2e, mesh.e2c)
    e2c = mesh.e2c[np.random.default_rng(0).permutation(len(mesh.e2c))]
    for name, table in (("C2E 1M cells", c2e), ("E2C 1.57M edges", e2c)):
        times: dict[str, list[float]] = {k: [] for k in versions}
        found: dict[str, Any] = {}
        for _ in range(3):  # interleaved rounds: both versions see the same machine state
            for label, module in versions.items():
                t0 = time.perf_counter()
                found[label] = module.locality_order(table, 0, len(table))
                times[label].append(time.perf_counter() - t0)
        same = all(np.array_equal(found["current"], o) for o in found.values())
        print(
            f"{name}: "
            + "; ".join(
                f"{k} {min(t) * 1e3:.0f} ms {[round(x * 1e3) for x in t]}" for k, t in times.items()
            )
            + f"; same order: {'yes' if same else 'NO'}"
        )
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
