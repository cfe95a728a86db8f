"""Register-capped copies of a small Cartesian kernel's chunk variants (``codegen.CAPPED_REGS``):
offered to the block search for the kernels they suit, not for gathers, scans or large kernels;
compiled to at most the cap; results computed by the emulated kernels equal to the plain one's;
a stored choice keeps its cap. The GPU side (every variant, capped ones too, gives the same bits
on the device) is ``tests/backends/test_gpu_variants.py``."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import stencilkit as gtx
from helpers.cuda_emulation import EmulatedCudaTarget
from stencilkit import Dims, Field, float64
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda import CudaTarget, tuning
from stencilkit.backends.cuda.codegen import (
    CAPPED_MAX_READS,
    CAPPED_REGS,
    PLAIN,
    Variant,
    chunk_variants,
    generate_cuda,
    kernel_name,
)
from stencilkit.stages.interface import interface_of

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
F3 = Field[Dims[I, J, K], float64]


@pytest.fixture(scope="module")
def run_lap(tmp_path_factory):
    """The bench's 7-point Laplacian (``stencilkit_benchmarks.programs``) over ``I, J, K``."""
    from stencilkit_benchmarks.programs import import_programs

    return import_programs(tmp_path_factory.mktemp("programs")).run_lap


@gtx.field_operator
def wide(a: F3) -> F3:
    """27 distinct reads, more than ``CAPPED_MAX_READS``: too large for the cap."""
    return (
        a
        + a(I + 1) * a(J + 1)
        + a(I + 2) * a(J + 2)
        + a(I + 3) * a(J + 3)
        + a(I + 4) * a(J + 4)
        + a(I + 5) * a(J + 5)
        + a(I + 6) * a(J + 6)
        + a(I + 7) * a(J + 7)
        + a(I + 8) * a(J + 8)
        + a(I + 9) * a(J + 9)
        + a(I + 10) * a(J + 10)
        + a(I + 11) * a(J + 11)
        + a(I + 12) * a(J + 12)
        + a(I + 13) * a(J + 13)
    )


@gtx.program
def run_wide(a: F3, out: F3):
    wide(a, out=out, domain={I: (0, 4), J: (0, 4), K: (0, 4)})


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def _cumsum(carry: float, x: float) -> float:
    return carry + x


@gtx.program
def run_cumsum(a: F3, out: F3):
    _cumsum(a, out=out)


def _kernel_and_layout(program, args, provider=None):
    """The gpu plan of ``program`` for ``args`` (no GPU needed) and its one kernel."""
    runner = CompiledRunner(interface_of(program.definition), CudaTarget(arch="90"))
    planned = runner.stages(args, provider or {}, check_device=False, until="plan").planned
    (k,) = planned.sprog.kernels
    return planned, k


def test_a_small_cartesian_kernel_gets_capped_chunk_variants(run_lap) -> None:
    n = 24
    a, out = (gtx.as_field([I, J, K], np.ones((n, n, n))) for _ in range(2))
    planned, k = _kernel_and_layout(run_lap, [a, out, n])
    variants = chunk_variants(k, planned.layout)
    capped = [v for v in variants if v.regs]
    assert capped and all(v.regs == CAPPED_REGS and v.chunk > 1 for v in capped)
    assert {(v.chunk, v.streaming) for v in capped} == {
        (v.chunk, v.streaming) for v in variants if not v.regs and v.chunk > 1
    }
    assert Variant(8, False, regs=CAPPED_REGS).suffix == "_z8_r32"
    text = generate_cuda(planned.sprog, planned.layout, variants=True)
    for v in capped:
        name = kernel_name(planned.sprog, 0, v)
        assert f"void SK_MAXNREG({CAPPED_REGS}) {name}(" in text
    assert f"void {kernel_name(planned.sprog, 0, PLAIN)}(" in text


@pytest.mark.parametrize(
    "program, make",
    [
        (run_wide, lambda: [gtx.as_field([I, J, K], np.ones((40, 40, 4))) for _ in range(2)]),
        (run_cumsum, lambda: [gtx.as_field([I, J, K], np.ones((6, 6, 8))) for _ in range(2)]),
    ],
    ids=["too-many-reads", "scan"],
)
def test_large_kernels_and_scans_get_no_capped_variants(program, make) -> None:
    assert CAPPED_MAX_READS < 27
    planned, k = _kernel_and_layout(program, make())
    assert not any(v.regs for v in chunk_variants(k, planned.layout))


def test_a_gather_gets_no_capped_variants() -> None:
    from test_cuda_order import Cell, Edge, periodic_triangular_mesh, run_c2e

    from stencilkit.backends.cuda.codegen import ordered_dim

    mesh = periodic_triangular_mesh(6, 6)
    e = gtx.as_field([Edge, K], np.ones((mesh.n_edges, 3)))
    out = gtx.as_field([Cell, K], np.ones((mesh.n_cells, 3)))
    planned, k = _kernel_and_layout(run_c2e, [e, out, 0, mesh.n_cells, 3], mesh.offset_provider())
    assert ordered_dim(k, planned.layout) is not None
    assert not any(v.regs for v in chunk_variants(k, planned.layout, ordered=True))


@pytest.mark.parametrize(
    "variant", [Variant(4, False, regs=CAPPED_REGS), Variant(8, True, regs=CAPPED_REGS)], ids=str
)
def test_capped_variants_compute_the_plain_kernels_values(run_lap, variant) -> None:
    """The emulated (C++) kernels of a capped variant: the same values, the rim untouched."""
    from test_cuda_order import _run

    n = 20
    x = np.random.default_rng(3).standard_normal((n, n, n))
    outs = {}
    for v in (PLAIN, variant):
        out = gtx.as_field([I, J, K], np.full((n, n, n), np.nan))
        loaded = _run(
            run_lap, [gtx.as_field([I, J, K], x), out, n], {}, EmulatedCudaTarget(variant=v)
        )
        assert loaded.variants == [v]
        outs[v] = out.asnumpy()
    c = (slice(1, -1),) * 3
    ref = (
        -6.0 * x[c] + x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] + x[1:-1, 2:, 1:-1]
        + x[1:-1, :-2, 1:-1] + x[1:-1, 1:-1, 2:] + x[1:-1, 1:-1, :-2]
    )  # fmt: skip
    assert np.array_equal(outs[PLAIN][c], ref)
    assert np.array_equal(outs[variant], outs[PLAIN], equal_nan=True)
    rim = np.ones((n, n, n), bool)
    rim[c] = False
    assert np.isnan(outs[variant][rim]).all()


def test_a_stored_choice_keeps_its_cap(tmp_path: Path) -> None:
    choice = (Variant(8, False, regs=CAPPED_REGS), (64, 4, 1))
    tuning._store(tmp_path, "k|512x510x510|sm_90", choice)
    assert tuning._load(tmp_path, "k|512x510x510|sm_90") == choice
    # a file written before caps existed reads as uncapped
    (tmp_path / tuning.TUNING_FILE).write_text(
        '{"old": {"chunk": 4, "streaming": true, "ordered": false, "block": [32, 4, 1]}}'
    )
    assert tuning._load(tmp_path, "old") == (Variant(4, True), (32, 4, 1))


_NVCC = shutil.which("nvcc") or (
    Path("/usr/local/cuda/bin/nvcc").exists() and "/usr/local/cuda/bin/nvcc"
)


@pytest.mark.skipif(not _NVCC, reason="nvcc not installed")
def test_capped_variants_compile_within_the_cap(run_lap, tmp_path: Path) -> None:
    n = 512
    dom = {I: n, J: n, K: n}
    ins = run_lap.with_backend(gtx.gpu).inspect(dom, dom, n, offset_provider={}, until="generate")
    planned = ins.source.planned
    src = tmp_path / "lap.cu"
    src.write_text(generate_cuda(planned.sprog, planned.layout, variants=True, narrow_index=True))
    r = subprocess.run(
        [str(_NVCC), "-arch=sm_90", "-cubin", "--fmad=false", "-std=c++17", "-Xptxas", "-v",
         "-o", str(tmp_path / "lap.cubin"), str(src)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    regs = dict(
        re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+) registers", r.stderr, re.S)
    )
    capped = {name: int(v) for name, v in regs.items() if name.endswith(f"_r{CAPPED_REGS}")}
    assert len(capped) == 8, regs
    assert all(v <= CAPPED_REGS for v in capped.values()), capped
