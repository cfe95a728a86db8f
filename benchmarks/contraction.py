"""Fused multiply-add contraction on and off, variant by variant, in one process (2026-12-01).

The gpu backend builds without contraction by default (``--fmad=false``: results independent
of the kernel variant the tune stage picks). This measures what that costs: the 7-point
Laplacian (512^3 fp64), each variant forced in turn, built with ``--fmad=false`` and with
``--fmad=true``, timed with CUDA events over the whole domain (median of 5 rounds of 10 calls),
beside a device copy of the same bytes. Run on a GPU: ``PYTHONPATH=src python3 benchmarks/contraction.py [C|F] [blocks]`` (the
fields' order: C, K-contiguous, the default; F, I-contiguous as in ``stencilkit bench``;
``blocks``: each variant also with a few other block shapes, not only the tune stage's).
``FLAG_SETS="|--maxrregcount=32"`` compares other build flags instead of contraction.
"""

from __future__ import annotations

import os
import statistics
import sys
from typing import Any

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
F3 = Field[Dims[I, J, K], float64]


@gtx.field_operator
def lap(a: F3) -> F3:
    return -6.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1) + a(K + 1) + a(K - 1)


@gtx.program
def run_lap(a: F3, out: F3, n: gtx.int32):
    lap(a, out=out, domain={I: (1, n - 1), J: (1, n - 1), K: (1, n - 1)})


def _time(cp: Any, fn: Any) -> float:
    start, end = cp.cuda.Event(), cp.cuda.Event()
    rounds = []
    for _ in range(5):
        start.record()
        for _ in range(10):
            fn()
        end.record()
        end.synchronize()
        rounds.append(cp.cuda.get_elapsed_time(start, end) / 10)
    return statistics.median(rounds)


def main() -> int:
    import cupy as cp

    from stencilkit.backends.cuda import backend as cuda_backend
    from stencilkit.toolchain.config import reset_config

    # every variant offered at the first call (the default builds them in the background and
    # searches the plain kernel first)
    os.environ["STENCILKIT_TUNE"] = "first-call"
    reset_config()
    n = 512
    layout = sys.argv[1] if len(sys.argv) > 1 else "C"  # "F": I-contiguous, as the bench's
    data = cp.random.default_rng(1).random((n, n, n))
    a = gtx.as_field([I, J, K], cp.asarray(data, order=layout), copy=None)
    out = gtx.as_field([I, J, K], cp.zeros((n, n, n), order=layout), copy=None)
    dst = cp.empty_like(a.ndarray)
    t_copy = _time(cp, lambda: cp.copyto(dst, a.ndarray))
    print(f"device copy 512^3 f64: {t_copy:.3f} ms; fields in {layout} order")
    chosen = cuda_backend.choose_blocks
    results: dict[str, Any] = {}
    # FLAG_SETS: the STENCILKIT_CUDAFLAGS values to compare, separated by "|" (e.g.
    # "|--maxrregcount=32": the default beside a register cap)
    for flags in os.environ.get("FLAG_SETS", "|--fmad=true").split("|"):
        os.environ["STENCILKIT_CUDAFLAGS"] = flags
        reset_config()
        offered: list[Any] = []
        picked: dict[str, Any] = {}

        def pick(
            k: Any,
            extents: Any,
            launchers: Any,
            *rest: Any,
            force: Any = None,
            offered: list[Any] = offered,
            picked: dict[str, Any] = picked,
        ) -> Any:
            best, block = chosen(k, extents, launchers, *rest)
            offered[:] = list(launchers)
            picked["best"] = (best, block)
            if force is not None:
                return force
            return best, block

        cuda_backend.choose_blocks = pick
        run = run_lap.with_backend(gtx.gpu)
        run(a, out, n, offset_provider={})
        best, block = picked["best"]
        label = flags or "--fmad=false (default)"
        print(f"\n{label}: tune stage chose {best} block {block}")
        shapes = [block]
        if "blocks" in sys.argv[2:]:
            shapes += [
                b
                for b in ((32, 8, 1), (64, 2, 1), (32, 4, 1), (64, 4, 1), (128, 2, 1))
                if b != block
            ]
        for variant in offered:
            for shape in shapes:

                def forced(
                    k: Any, e: Any, ls: Any, *r: Any, c: Any = (variant, shape), p: Any = pick
                ) -> Any:
                    return p(k, e, ls, *r, force=c)

                cuda_backend.choose_blocks = forced
                run = run_lap.with_backend(gtx.gpu)
                run(a, out, n, offset_provider={})
                t = _time(cp, lambda run=run: run(a, out, n, offset_provider={}))
                results[f"{label} {variant} {shape}"] = t
                mark = "  <- chosen" if (variant, shape) == (best, block) else ""
                print(f"  {variant!s:55s} {shape!s:13s} {t:.3f} ms  {t_copy / t:.2f} of copy{mark}")
        cuda_backend.choose_blocks = chosen
    reference = np.asarray(out.asnumpy())
    assert np.isfinite(reference).all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
