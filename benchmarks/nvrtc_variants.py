"""NVRTC time of the 7-point Laplacian's CUDA module, with and without the z-chunked variants
that the block search uses (no GPU needed: the code is built for sm_90).

    PYTHONPATH=src python benchmarks/nvrtc_variants.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda import CudaTarget
from stencilkit.backends.cuda.codegen import generate_cuda
from stencilkit.stages.interface import interface_of
from stencilkit.toolchain.cuda import compile_cubin, find_cuda_compiler

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


@gtx.field_operator
def lap(a: Field[Dims[I, J, K], float64]) -> Field[Dims[I, J, K], float64]:
    return -6.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1) + a(K + 1) + a(K - 1)


@gtx.program
def run_lap(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64], n: gtx.int32):
    lap(a, out=out, domain={I: (1, n - 1), J: (1, n - 1), K: (1, n - 1)})


def main() -> int:
    fields = [
        gtx.as_field([I, J, K], np.asfortranarray(np.random.default_rng(i).random((16, 16, 16))))
        for i in range(2)
    ]
    runner = CompiledRunner(interface_of(run_lap.definition), CudaTarget(arch="90"))
    planned = runner.stages([*fields, 16], {}, check_device=False, until="plan").planned
    sprog, layout = planned.sprog, planned.layout
    compiler = find_cuda_compiler("nvrtc")
    for variants in (False, True):
        source = generate_cuda(sprog, layout, variants)
        best = float("inf")
        for _ in range(3):
            out = Path(tempfile.mkdtemp())
            t0 = time.perf_counter()
            compile_cubin(source, "90", out, "lap", compiler)
            best = min(best, time.perf_counter() - t0)
        kernels = source.count("__global__")
        print(
            f"NVRTC, {'with' if variants else 'without'} variants ({kernels} kernels): {best * 1e3:6.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
