"""GPU launch configurations: every compiled variant and block shape gives the NumPy result."""

from __future__ import annotations

import json

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.meshes import E2C, Cell, Edge, periodic_triangular_mesh, reorder_for_locality

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


@gtx.field_operator
def lap7(a: Field[Dims[I, J, K], float64]) -> Field[Dims[I, J, K], float64]:
    return -6.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1) + a(K + 1) + a(K - 1)


@gtx.program(backend=gtx.gpu)
def run_lap7(
    a: Field[Dims[I, J, K], float64],
    out: Field[Dims[I, J, K], float64],
    ni: gtx.int32,
    nj: gtx.int32,
    nk: gtx.int32,
):
    lap7(a, out=out, domain={I: (1, ni - 1), J: (1, nj - 1), K: (1, nk - 1)})


@gtx.program(backend=gtx.gpu)
def run_off(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64]):
    lap7(a, out=out, domain={I: (3, 35), J: (1, 8), K: (1, 19)})


def _reference(x: np.ndarray) -> np.ndarray:
    c = x[1:-1, 1:-1, 1:-1]
    return (
        -6.0 * c
        + x[2:, 1:-1, 1:-1]
        + x[:-2, 1:-1, 1:-1]
        + x[1:-1, 2:, 1:-1]
        + x[1:-1, :-2, 1:-1]
        + x[1:-1, 1:-1, 2:]
        + x[1:-1, 1:-1, :-2]
    )


def _check(shape: tuple[int, int, int], rng: np.random.Generator) -> None:
    data = rng.standard_normal(shape)
    a = gtx.as_field([I, J, K], data, allocator=gtx.gpu)
    out = gtx.full({I: shape[0], J: shape[1], K: shape[2]}, np.nan, allocator=gtx.gpu)
    run_lap7(a, out, *shape, offset_provider={})
    result = out.asnumpy()
    np.testing.assert_allclose(result[1:-1, 1:-1, 1:-1], _reference(data), rtol=1e-13, atol=1e-12)
    inner = np.zeros(shape, bool)
    inner[1:-1, 1:-1, 1:-1] = True
    assert np.isnan(result[~inner]).all()


@pytest.mark.gpu
def test_tuned_launch_is_correct_on_a_large_uneven_domain(rng) -> None:
    _check((97, 71, 61), rng)  # > 2**18 points: the block search runs; 59 levels: a partial z-chunk


@pytest.mark.gpu
@pytest.mark.parametrize("streaming", [False, True], ids=["stores", "streaming-stores"])
@pytest.mark.parametrize("chunk", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("block", [(32, 4, 1), (128, 1, 1), (32, 16, 1)])
def test_every_variant_and_block_is_correct(monkeypatch, rng, chunk, block, streaming) -> None:
    from stencilkit.backends.cuda import backend as cuda_backend
    from stencilkit.backends.cuda.codegen import Variant

    monkeypatch.setattr(cuda_backend, "worth_searching", lambda k, ext: True)  # load every variant
    monkeypatch.setattr(
        cuda_backend,
        "choose_blocks",
        lambda k, ext, launchers, *rest: (Variant(chunk, streaming), block),
    )
    run_lap7._runner.plans.clear()  # new plans, configured with the forced choice
    _check((37, 29, 21), rng)
    # a domain that starts off a cache line along I, in a field whose origin is not 0
    data = rng.standard_normal((40, 9, 20))
    a = gtx.as_field([I, J, K], data, origin={I: 3}, allocator=gtx.gpu)
    out = gtx.as_field([I, J, K], np.full((40, 9, 20), np.nan), origin={I: 3}, allocator=gtx.gpu)
    run_off(a, out, offset_provider={})
    result = out.asnumpy()
    np.testing.assert_allclose(
        result[6:38, 1:-1, 1:-1], _reference(data)[5:37], rtol=1e-13, atol=1e-12
    )
    assert np.isnan(result[:6]).all() and np.isnan(result[38:]).all()


@pytest.mark.gpu
def test_nvcc_compiler_gives_the_same_result(monkeypatch, rng) -> None:
    from stencilkit.toolchain import cuda as cuda_toolchain
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv("STENCILKIT_CUDA_COMPILER", "nvcc")
    reset_config()
    cuda_toolchain.find_cuda_compiler.cache_clear()
    try:
        assert cuda_toolchain.find_cuda_compiler().kind == "nvcc"
        run_lap7._runner.plans.clear()
        _check((33, 20, 12), rng)
    finally:
        monkeypatch.delenv("STENCILKIT_CUDA_COMPILER")
        reset_config()
        cuda_toolchain.find_cuda_compiler.cache_clear()
        run_lap7._runner.plans.clear()


@pytest.mark.gpu
def test_gpu_backend_refuses_host_fields_before_running(rng) -> None:
    a = gtx.as_field([I, J, K], rng.standard_normal((6, 5, 4)))
    out = gtx.as_field([I, J, K], rng.standard_normal((6, 5, 4)))
    with pytest.raises(
        TypeError, match=r"argument 'a' lives on the host, but backend 'gpu' runs on the GPU"
    ):
        run_lap7(a, out, 6, 5, 4, offset_provider={})


def test_gpu_backend_without_cupy_says_so_first(rng, monkeypatch) -> None:
    """A machine without a usable GPU: the first error names what is missing and how to install
    it (issue 25: it said 'lives on the host ... allocate with allocator=<the backend>', and
    following that hint gave a second error about CuPy)."""
    import sys

    from stencilkit.core.errors import BackendUnavailableError

    monkeypatch.setitem(sys.modules, "cupy", None)  # as if CuPy were not installed
    a = gtx.as_field([I, J, K], rng.standard_normal((6, 5, 4)))
    out = gtx.as_field([I, J, K], rng.standard_normal((6, 5, 4)))
    with pytest.raises(
        BackendUnavailableError,
        match=r"backend 'gpu' of run_lap7\(\) needs CuPy[\s\S]*pip install [\s\S]*(?:stencilkit's cuda extra|\.\[cuda\])",
    ):
        run_lap7.with_backend(gtx.gpu)(a, out, 6, 5, 4, offset_provider={})


def test_missing_cupy_is_a_clear_error(monkeypatch) -> None:
    import sys

    from stencilkit.backends.cuda import runtime
    from stencilkit.core.errors import BackendUnavailableError

    monkeypatch.setitem(sys.modules, "cupy", None)  # as if CuPy were not installed
    runtime.cupy.cache_clear()
    try:
        with pytest.raises(
            BackendUnavailableError,
            match=r"needs CuPy[\s\S]*pip install [\s\S]*(?:stencilkit's cuda extra|\.\[cuda\])",
        ):
            runtime.cupy()
    finally:
        runtime.cupy.cache_clear()


@pytest.mark.gpu
def test_block_choice_is_kept_beside_the_binary(rng) -> None:
    import json

    from stencilkit.backends.cuda import tuning

    tuning._CHOSEN.clear()
    run_lap7._runner.plans.clear()
    _check((97, 71, 61), rng)  # large enough for the timed search
    plan = next(iter(run_lap7._runner.plans.values()))
    path = plan.stages.built.path / tuning.TUNING_FILE
    stored = json.loads(path.read_text())
    assert len(stored) == 1
    (choice,) = stored.values()
    launch = plan.launches.kernels[0]
    assert tuple(choice["block"]) == launch.block
    # a new process (simulated: the in-memory choices forgotten) reuses the stored choice
    tuning._CHOSEN.clear()
    run_lap7._runner.plans.clear()
    _check((97, 71, 61), rng)
    again = next(iter(run_lap7._runner.plans.values())).launches.kernels[0]
    assert again.block == launch.block and again.name == launch.name


@gtx.field_operator
def mix2d(a: Field[Dims[I, K], float64], w: Field[Dims[I], float64]) -> Field[Dims[I, K], float64]:
    return w * a(I + 1) - a(K - 1)


@gtx.program(backend=gtx.gpu)
def run_mix2d(
    a: Field[Dims[I, K], float64], w: Field[Dims[I], float64], out: Field[Dims[I, K], float64]
):
    mix2d(a, w, out=out, domain={I: (0, 44), K: (1, 23)})


@pytest.mark.gpu
@pytest.mark.parametrize("chunk", [1, 4, 8, 16])
def test_two_dimensional_chunks_along_the_levels(monkeypatch, rng, chunk) -> None:
    from stencilkit.backends.cuda import backend as cuda_backend
    from stencilkit.backends.cuda.codegen import Variant

    monkeypatch.setattr(cuda_backend, "worth_searching", lambda k, ext: True)
    monkeypatch.setattr(
        cuda_backend, "choose_blocks", lambda k, ext, launchers, *rest: (Variant(chunk), (32, 2, 1))
    )
    run_mix2d._runner.plans.clear()
    ad, wd = rng.standard_normal((45, 23)), rng.standard_normal(45)
    out = gtx.full({I: 45, K: 23}, np.nan, allocator=gtx.gpu)
    run_mix2d(
        gtx.as_field([I, K], ad, allocator=gtx.gpu),
        gtx.as_field([I], wd, allocator=gtx.gpu),
        out,
        offset_provider={},
    )
    result = out.asnumpy()
    # the GPU may fuse w * a - b into one FMA: a last-bit difference, relative to the operands
    np.testing.assert_allclose(
        result[:44, 1:], wd[:44, None] * ad[1:, 1:] - ad[:44, :-1], rtol=1e-13, atol=1e-14
    )
    assert np.isnan(result[44]).all() and np.isnan(result[:, 0]).all()
    run_mix2d._runner.plans.clear()


def test_fields_on_another_gpu_are_refused_before_launch(monkeypatch) -> None:
    """No illegal-address crash: memory of GPU 1 is never handed to kernels while GPU 0 is the
    current device (a program runs on the current device, as a CuPy kernel does)."""
    from stencilkit.backends.cuda import CudaTarget
    from stencilkit.core.device import DeviceType
    from stencilkit.fields.signature import FieldSignature
    from stencilkit.stages import check_device_of

    on_gpu1 = FieldSignature(
        ("I", "J", "K"), "float64", (4, 4, 4), (1, 4, 16), (0, 0, 0), DeviceType.CUDA, 1
    )
    target = CudaTarget()
    monkeypatch.setattr(target, "current_device", lambda: 0)
    with pytest.raises(
        ValueError, match=r"argument 'a' lives on GPU 1, but the current CUDA device is GPU 0"
    ) as info:
        check_device_of("run_lap7", target, "argument 'a'", on_gpu1)
    assert "cupy.cuda.Device(1)" in str(info.value)
    monkeypatch.setattr(target, "current_device", lambda: 1)
    check_device_of("run_lap7", target, "argument 'a'", on_gpu1)  # GPU 1 current: accepted


FAR = 2**31 - 8  # a domain starting here has indices past 32 bits


@gtx.program(backend=gtx.gpu)
def run_far(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64]):
    lap7(a, out=out, domain={I: (FAR + 1, FAR + 39), J: (1, 8), K: (1, 19)})


@pytest.mark.gpu
def test_index_width_on_the_gpu(rng) -> None:
    """Small calls run 32-bit index arithmetic; a field whose indices pass 2**31 runs 64-bit,
    with the same result."""
    _check((37, 29, 21), rng)
    assert all(
        "typedef int32_t sk_idx;" in p.stages.built.source.text
        for p in run_lap7._runner.plans.values()
    )
    data = rng.standard_normal((40, 9, 20))
    dom = gtx.domain({I: (FAR, FAR + 40), J: (0, 9), K: (0, 20)})
    a = gtx.as_field(dom, data, allocator=gtx.gpu)
    out = gtx.as_field(dom, np.full((40, 9, 20), np.nan), allocator=gtx.gpu)
    run_far(a, out, offset_provider={})
    (plan,) = run_far._runner.plans.values()
    assert "typedef int64_t sk_idx;" in plan.stages.built.source.text
    result = out.asnumpy()
    np.testing.assert_allclose(result[1:-1, 1:-1, 1:-1], _reference(data), rtol=1e-13, atol=1e-12)
    inner = np.zeros(result.shape, bool)
    inner[1:-1, 1:-1, 1:-1] = True
    assert np.isnan(result[~inner]).all()


Kz = gtx.Dimension("Kz", kind=gtx.DimensionKind.VERTICAL)


@gtx.field_operator
def e2c_diff(c: Field[Dims[Cell, Kz], float64]) -> Field[Dims[Edge, Kz], float64]:
    return c(E2C[1]) - c(E2C[0])


@gtx.program(backend=gtx.gpu)
def run_e2c_diff(c: Field[Dims[Cell, Kz], float64], out: Field[Dims[Edge, Kz], float64]):
    e2c_diff(c, out=out)


@pytest.mark.gpu
def test_block_choice_is_kept_per_table_numbering(rng) -> None:
    """The same gather over two numberings of one mesh, each run by its own program object (as a
    new process would): each numbering gets its own block search (a gather's speed depends on the
    numbering) and its own entry beside the shared binary; both give the NumPy result. (Within
    one program object, the choice is made at a signature's first launch and kept.)"""
    plain = periodic_triangular_mesh(64, 64)  # 12288 edges x 32 levels: large enough to search
    nk = 32
    paths = set()
    for mesh in (plain, reorder_for_locality(plain)):
        data = rng.standard_normal((mesh.n_cells, nk))
        c = gtx.as_field([Cell, Kz], data, allocator=gtx.gpu)
        out = gtx.full({Edge: mesh.n_edges, Kz: nk}, np.nan, allocator=gtx.gpu)
        provider = mesh.offset_provider(allocator=gtx.gpu)
        prog = run_e2c_diff.with_backend(gtx.gpu)
        prog(c, out, offset_provider=provider)
        np.testing.assert_array_equal(out.asnumpy(), data[mesh.e2c[:, 1]] - data[mesh.e2c[:, 0]])
        paths.update(p.stages.built.path for p in prog._runner.plans.values())
    (path,) = paths  # one binary for both numberings
    names = list(json.loads((path / "tuning.json").read_text()))
    assert len(names) == 2 and names[0].split("|")[-1] != names[1].split("|")[-1], names


def _two_gpus() -> bool:
    try:
        import cupy as cp

        return int(cp.cuda.runtime.getDeviceCount()) >= 2
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _two_gpus(), reason="needs two GPUs")
def test_programs_run_on_the_current_device(rng) -> None:
    """Fields on GPU 1, called with GPU 1 current: the program is loaded and run there (also a
    program first used on GPU 0); the wrong current device is refused before launch."""
    import cupy as cp

    from stencilkit.core.errors import StencilValueError

    _check((37, 29, 21), rng)  # on GPU 0 first: the same program object then runs on GPU 1
    data = rng.standard_normal((37, 29, 21))
    with cp.cuda.Device(1):
        a = gtx.as_field([I, J, K], data, allocator=gtx.gpu)
        out = gtx.full({I: 37, J: 29, K: 21}, np.nan, allocator=gtx.gpu)
        assert out.ndarray.device.id == 1
        run_lap7(a, out, 37, 29, 21, offset_provider={})
        result = out.asnumpy()
    np.testing.assert_allclose(result[1:-1, 1:-1, 1:-1], _reference(data), rtol=1e-13, atol=1e-12)
    assert np.isnan(result[0]).all() and np.isnan(result[-1]).all()
    devices = {p.loaded.module.device_id for p in run_lap7._runner.plans.values()}
    assert devices == {0, 1}
    # GPU 1's fields while GPU 0 is current: refused, through the cached plan as well
    with cp.cuda.Device(0), pytest.raises(StencilValueError, match="current CUDA device is GPU 0"):
        run_lap7(a, out, 37, 29, 21, offset_provider={})
    b = gtx.as_field([I, J, K], data, allocator=gtx.gpu)  # GPU 0
    with (
        cp.cuda.Device(1),
        pytest.raises(
            StencilValueError, match="lives on GPU 0, but the current CUDA device is GPU 1"
        ),
    ):
        run_lap7(b, out, 37, 29, 21, offset_provider={})


@pytest.mark.gpu
def test_background_tuning_first_call_then_final_choice(monkeypatch, tmp_path, rng) -> None:
    """STENCILKIT_TUNE=background (the default outside this suite): the first call runs the plain
    kernel with a provisional block while the variants build on a worker thread; once built, the
    next call makes the final choice. Every call gives the same bits, and NumPy's result."""
    from stencilkit.backends.cuda import tuning
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv("STENCILKIT_TUNE", "background")
    monkeypatch.setenv("STENCILKIT_CACHE_DIR", str(tmp_path))  # no variant built yet
    monkeypatch.setattr(tuning, "_CHOSEN", {})
    reset_config()
    try:
        prog = run_lap7.with_backend(gtx.gpu)
        shape = (200, 160, 40)  # large enough to be searched
        data = rng.standard_normal(shape)
        a = gtx.as_field([I, J, K], data, allocator=gtx.gpu)
        out = gtx.full({I: shape[0], J: shape[1], K: shape[2]}, np.nan, allocator=gtx.gpu)
        prog(a, out, *shape, offset_provider={})
        (plan,) = prog._runner.plans.values()
        assert plan.provisional and plan.stages.launches.provisional
        first = out.asnumpy()
        np.testing.assert_allclose(
            first[1:-1, 1:-1, 1:-1], _reference(data), rtol=1e-13, atol=1e-12
        )
        assert gtx.wait_for_tuning(timeout=120)
        prog(a, out, *shape, offset_provider={})
        assert not plan.provisional and not plan.stages.launches.provisional
        np.testing.assert_array_equal(out.asnumpy(), first)
        stored = json.loads(next(tmp_path.rglob(tuning.TUNING_FILE)).read_text())
        assert any(name.startswith("lap7") or "lap7" in name for name in stored)
    finally:
        reset_config()
