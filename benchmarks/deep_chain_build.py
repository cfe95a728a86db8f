"""Build time and run time of a deep chain of shifted operators on the cpu backend: the case
where GCC's jump threading made ``-O3`` builds take minutes (``toolchain/cxx.py``,
``JUMP_THREADING_LINES``).

    PYTHONPATH=src python benchmarks/deep_chain_build.py [--depth 100]
    STENCILKIT_CXXFLAGS="-O1" PYTHONPATH=src python benchmarks/deep_chain_build.py   # compare

The program nests ``depth`` operators ``x(I + 1) * 0.5 + x`` (``stencilkit_benchmarks.frontend``);
its kernel holds about depth²/2 values per point, over 64 x 8 output points. Each run uses a fresh build cache, so the first
call includes the C++ build; the result is checked against NumPy. Set ``STENCILKIT_NUM_THREADS=1``
for per-call times that do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--calls", type=int, default=15)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STENCILKIT_CACHE_DIR"] = str(Path(tmp) / "cache")
        import numpy as np

        import stencilkit as gtx
        from stencilkit_benchmarks.frontend import SIZE, chain_source

        n = args.depth
        path = Path(tmp) / f"sk_deep_chain_{n}.py"
        path.write_text(chain_source(n, shifted=True))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = mod
        spec.loader.exec_module(mod)
        rng = np.random.default_rng(0)
        x = rng.random((SIZE[0] + n, SIZE[1])) * 0.5
        out = gtx.as_field([mod.I, mod.K], rng.random(SIZE))
        xf = gtx.as_field([mod.I, mod.K], x)
        prog = mod.run.with_backend(gtx.cpu)
        t0 = time.perf_counter()
        prog(xf, out, offset_provider={})
        first = time.perf_counter() - t0
        y = x
        for _ in range(n):
            y = y[1:] * 0.5 + y[:-1]
        err = float(np.max(np.abs(out.asnumpy() - y) / np.abs(y)))
        times = []
        for _ in range(args.calls):
            t0 = time.perf_counter()
            prog(xf, out, offset_provider={})
            times.append(time.perf_counter() - t0)
        lines = prog.inspect(xf, out, offset_provider={}).source.as_text().count("\n")
    flags = os.environ.get("STENCILKIT_CXXFLAGS", "")
    print(
        f"depth {n}: {lines} lines of C++, STENCILKIT_CXXFLAGS={flags!r}: first call (build) "
        f"{first:.1f} s, per call median {statistics.median(times) * 1e3:.2f} ms "
        f"(min {min(times) * 1e3:.2f}), max rel err vs NumPy {err:.1e}"
    )
    return 0 if err <= 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
