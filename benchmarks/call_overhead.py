"""Per-call costs of stencilkit programs on tiny fields.

* compiled (cpu) programs with 2 and 25 fields, the compiled function replaced by a no-op after
  the first call: exactly stencilkit's per-call work (argument signature, plan lookup, argument
  block, aliasing check);
* the embedded backend running a copy program on 8x8 fields, whole call (GT4Py's embedded
  backend: about 118 us for a copy program).

    PYTHONPATH=src python benchmarks/call_overhead.py
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import stencilkit as gtx


def _program(n_inputs: int, backend: str = "gtx.cpu") -> object:
    args = ", ".join(f"a{i}: Field[Dims[I], float64]" for i in range(n_inputs))
    names = ", ".join(f"a{i}" for i in range(n_inputs))
    source = "\n".join(
        [
            "import stencilkit as gtx",
            "from stencilkit import Dims, Field, float64",
            "I = gtx.Dimension('I')",
            "@gtx.field_operator",
            f"def total({args}) -> Field[Dims[I], float64]:",
            f"    return {' + '.join(f'a{i}' for i in range(n_inputs))}",
            f"@gtx.program(backend={backend})",
            f"def run({args}, out: Field[Dims[I], float64]):",
            f"    total({names}, out=out)",
        ]
    )
    path = Path(tempfile.mkdtemp()) / f"overhead_{n_inputs}_{backend.replace('.', '_')}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _no_launch() -> None:
    pass


def measure(n_fields: int, calls: int = 50000) -> float:
    module = _program(n_fields - 1)
    run = module.run
    fields = [
        gtx.as_field([module.I], np.random.default_rng(i).standard_normal(8))
        for i in range(n_fields)
    ]
    run(*fields, offset_provider={})
    for plan in run._runner.plans.values():
        plan.block.run = _no_launch  # the Python part only: the compiled call does nothing
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            run(*fields, offset_provider={})
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


def measure_embedded_copy(calls: int = 5000) -> float:
    module = _program(1, backend="None")  # total(a0) = a0: a copy program
    run = module.run
    dims = [module.I]
    src = gtx.as_field(dims, np.random.default_rng(0).standard_normal(64))
    dst = gtx.as_field(dims, np.zeros(64) + 1.0)
    run(src, dst, offset_provider={})
    assert np.array_equal(dst.asnumpy(), src.asnumpy())
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            run(src, dst, offset_provider={})
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


def main() -> int:
    for n in (2, 25):
        print(
            f"Python part of a compiled call, {n:2d} fields: {measure(n):6.2f} us (best of 3 x 50000 calls)"
        )
    print(
        f"embedded copy program, 64 points:       {measure_embedded_copy():6.2f} us (best of 3 x 5000 calls)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
