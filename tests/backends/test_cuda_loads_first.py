"""``STENCILKIT_CUDA_LOADS_FIRST``: the streaming-store z-chunk variants compute the whole chunk
before their first store (``backends/cuda/codegen.py``, ``Variant``).

On the CPU: every streaming variant of a two-output kernel, with and without the setting, run
through the CPU emulation of its launch, gives bit for bit what the plain kernel gives (chunks
that do not divide the extent included; the points outside the domain stay untouched); nvcc's
PTX shows the loads the setting saves; the setting is part of the variant module's cache key.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from helpers.cuda_emulation import EmulatedCudaTarget
from stencilkit import Dims, Field, float32, float64
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda.codegen import PLAIN, Variant, generate_cuda
from stencilkit.stages.interface import interface_of

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
_F = Field[Dims[I, J, K], float64]


@gtx.field_operator
def lap_and_ratio(a: _F, b: _F) -> tuple[_F, Field[Dims[I, J, K], float32]]:
    lap = -6.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1) + a(K + 1) + a(K - 1)
    return lap, gtx.astype(a(K + 1) * b - a(K - 1), float32)


@gtx.program
def run_two(
    a: _F,
    b: _F,
    out: _F,
    out2: Field[Dims[I, J, K], float32],
    ni: gtx.int32,
    nj: gtx.int32,
    nk: gtx.int32,
):
    lap_and_ratio(a, b, out=(out, out2), domain={I: (1, ni - 1), J: (1, nj - 1), K: (1, nk - 1)})


def _run(target: EmulatedCudaTarget, data: np.ndarray, other: np.ndarray) -> list[np.ndarray]:
    shape = data.shape
    a = gtx.as_field([I, J, K], np.asfortranarray(data), copy=None)
    b = gtx.as_field([I, J, K], np.asfortranarray(other), copy=None)
    out = gtx.as_field([I, J, K], np.asfortranarray(np.full(shape, np.nan)), copy=None)
    out2 = gtx.as_field(
        [I, J, K], np.asfortranarray(np.full(shape, np.nan, dtype=np.float32)), copy=None
    )
    runner = CompiledRunner(interface_of(run_two.definition), target)
    runner([a, b, out, out2, *shape], {})
    return [out.asnumpy(), out2.asnumpy()]


@pytest.mark.parametrize("variant", [Variant(2, True), Variant(4, True), Variant(8, True)], ids=str)
@pytest.mark.parametrize("loads_first", [False, True])
def test_streaming_chunks_give_the_plain_kernels_result(rng, variant, loads_first) -> None:
    data = rng.standard_normal((21, 6, 19))  # 17 levels inside: no chunk divides them
    other = rng.standard_normal(data.shape)
    expect = _run(EmulatedCudaTarget(block=(8, 2, 1)), data, other)
    got = _run(
        EmulatedCudaTarget(block=(8, 2, 1), variant=variant, loads_first=loads_first), data, other
    )
    inner = (slice(1, -1),) * 3
    reference = (
        -6.0 * data
        + np.roll(data, -1, 0)
        + np.roll(data, 1, 0)
        + np.roll(data, -1, 1)
        + np.roll(data, 1, 1)
        + np.roll(data, -1, 2)
        + np.roll(data, 1, 2)
    )
    np.testing.assert_allclose(expect[0][inner], reference[inner], rtol=1e-13, atol=1e-13)
    for e, g in zip(expect, got):
        np.testing.assert_array_equal(g, e)  # NaN outside the domain in both: untouched
        rim = np.ones(data.shape, bool)
        rim[inner] = False
        assert np.isnan(g[rim]).all() and not np.isnan(g[inner]).any()


def _planned(n: int = 64) -> Any:
    dom = {I: n, J: n, K: n}
    stages = run_two.with_backend(gtx.gpu).inspect(
        dom, dom, dom, dom, n, n, n, offset_provider={}, until="plan"
    )
    return stages.planned


_NVCC = shutil.which("nvcc")


@pytest.mark.skipif(not _NVCC, reason="nvcc not installed")
def test_loads_first_keeps_the_values_points_of_a_chunk_share(tmp_path: Path) -> None:
    """nvcc's PTX: with the setting, a streaming chunk of 8 keeps values that its points share
    (the centre and lower values of the level below), as the plain-store chunk does."""
    planned = _planned()

    def loads(loads_first: bool) -> dict[str, int]:
        text = generate_cuda(planned.sprog, planned.layout, True, False, False, loads_first)
        cu, ptx = tmp_path / f"k{int(loads_first)}.cu", tmp_path / f"k{int(loads_first)}.ptx"
        cu.write_text(text)
        cmd = [_NVCC, "-arch=sm_90", "-ptx", "--fmad=false", "-std=c++17", "-o", str(ptx), str(cu)]
        subprocess.run(cmd, check=True, capture_output=True)
        body = ptx.read_text()
        return {
            m.group(1): m.group(2).count("ld.global")
            for m in re.finditer(r"\.entry (\w+)\((.*?)\n}", body, re.S)
        }

    before, after = loads(False), loads(True)
    z8, z8s = "sk_run_two_k0_z8", "sk_run_two_k0_z8s"
    assert before[z8] == after[z8]  # the plain-store variants do not change
    # at least one load per point of the chunk saved (the remainder loop still stores point by
    # point); 104 -> 90 with nvcc 13.0, the plain-store z8 84
    assert after[z8s] <= before[z8s] - 8, (before, after)


def test_the_setting_is_in_the_variant_modules_cache_key(monkeypatch) -> None:
    from stencilkit.backends.cuda import CudaTarget
    from stencilkit.stages.artefacts import Built, Source
    from stencilkit.toolchain.config import reset_config

    planned = _planned(16)
    built = Built(Source(planned, "cuda", "", False), "k" * 64, Path("."), False, "program.cubin")
    keys = []
    try:
        for value in ("0", "1"):
            monkeypatch.setenv("STENCILKIT_CUDA_LOADS_FIRST", value)
            reset_config()
            keys.append(CudaTarget(arch="90").variant_key(built, ordered=False))
    finally:
        monkeypatch.delenv("STENCILKIT_CUDA_LOADS_FIRST")
        reset_config()
    assert keys[0] != keys[1]
    assert PLAIN.suffix == ""  # the plain kernel's name (and module) is not a variant's
