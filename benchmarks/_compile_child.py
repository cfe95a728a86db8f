"""Child process of the compile-time benchmark: ``python _compile_child.py cpu|gpu``.

The parent sets ``STENCILKIT_CACHE_DIR`` before starting it. Prints one line
``SKBENCH {json}`` with the times (seconds) of: importing stencilkit, decorating the program,
the first call (lowering, code generation, build or cache lookup, load, run, synchronize) and a
second call, and the time from the start of this script to the first result.
"""

import time

T_START = time.perf_counter()

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

backend_name = sys.argv[1] if len(sys.argv) > 1 else "cpu"

t0 = time.perf_counter()
import stencilkit as gtx  # noqa: E402
from stencilkit import Dims, Field, float64  # noqa: E402

T_IMPORT = time.perf_counter() - t0
GPU_LIBS_AFTER_IMPORT = sorted(m for m in ("cupy", "cuda.bindings.driver", "cuda.bindings.nvrtc") if m in sys.modules)

import numpy as np  # noqa: E402

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)

t0 = time.perf_counter()


@gtx.field_operator
def smooth(a: Field[Dims[I, J, K], float64], b: Field[Dims[I, J, K], float64]) -> Field[Dims[I, J, K], float64]:
    return 0.25 * (a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)) - 0.5 * b


@gtx.program
def run_smooth(a: Field[Dims[I, J, K], float64], b: Field[Dims[I, J, K], float64],
               out: Field[Dims[I, J, K], float64], n: gtx.int32):
    smooth(a, b, out=out, domain={I: (1, n - 1), J: (1, n - 1), K: (0, n)})


T_DECORATE = time.perf_counter() - t0


def main() -> None:
    n = 32
    rng = np.random.default_rng(1234)
    a_np = rng.standard_normal((n, n, n))
    b_np = rng.standard_normal((n, n, n))
    ref = np.full((n, n, n), np.nan)
    ref[1:-1, 1:-1, :] = 0.25 * (a_np[2:, 1:-1] + a_np[:-2, 1:-1] + a_np[1:-1, 2:] + a_np[1:-1, :-2]) - 0.5 * b_np[1:-1, 1:-1]

    t_setup0 = time.perf_counter()
    if backend_name == "gpu":
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
        cp.zeros(1).sum().item()  # context and CuPy's own kernels ready: not part of the compile
        backend = gtx.gpu

        def sync() -> None:
            cp.cuda.Device().synchronize()

        def new(x: np.ndarray) -> object:
            f = gtx.empty({I: n, J: n, K: n}, dtype=gtx.float64, allocator=gtx.gpu)
            f.ndarray[...] = cp.asarray(x)
            return f
    else:
        backend = gtx.cpu

        def sync() -> None:
            pass

        def new(x: np.ndarray) -> object:
            f = gtx.empty({I: n, J: n, K: n}, dtype=gtx.float64, allocator=gtx.cpu)
            f.ndarray[...] = x
            return f

    a, b = new(a_np), new(b_np)
    out = new(np.full((n, n, n), np.nan))
    sync()
    prog = run_smooth.with_backend(backend)
    cache = Path(os.environ.get("STENCILKIT_CACHE_DIR", "."))
    entries_before = sum(1 for _ in cache.rglob("manifest.json"))
    t_setup = time.perf_counter() - t_setup0

    t0 = time.perf_counter()
    prog(a, b, out, n, offset_provider={})
    sync()
    t_first = time.perf_counter() - t0
    t_to_first_result = time.perf_counter() - T_START
    got = out.asnumpy()
    entries_after = sum(1 for _ in cache.rglob("manifest.json"))

    t0 = time.perf_counter()
    prog(a, b, out, n, offset_provider={})
    sync()
    t_second = time.perf_counter() - t0

    interior_ok = bool(np.allclose(got[1:-1, 1:-1], ref[1:-1, 1:-1], rtol=1e-13, atol=1e-13))
    boundary_nan = bool(np.isnan(got[0]).all() and np.isnan(got[-1]).all()
                        and np.isnan(got[:, 0]).all() and np.isnan(got[:, -1]).all())
    print("SKBENCH " + json.dumps({
        "backend": backend_name,
        "import_s": T_IMPORT,
        "gpu_libs_imported_by_import_stencilkit": GPU_LIBS_AFTER_IMPORT,
        "decorate_s": T_DECORATE,
        "setup_s": t_setup,
        "first_call_s": t_first,
        "second_call_s": t_second,
        "script_start_to_first_result_s": t_to_first_result,
        "cache_entries_before": entries_before,
        "cache_entries_after": entries_after,
        "correct": interior_ok,
        "boundary_untouched": boundary_nan,
    }), flush=True)
    if not (interior_ok and boundary_nan):
        sys.exit(3)


if __name__ == "__main__":
    main()
