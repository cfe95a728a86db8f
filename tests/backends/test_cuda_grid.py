"""Launch grids within the device's limits, for every layout and size (issue 13).

On the CPU: the grid-mapping function directly, the generated kernels run through a CPU emulation
of their launches (small grid limits force folded grids), and the generated CUDA compiled
with nvcc. On a GPU (``@pytest.mark.gpu``): each layout at extents 65,535 / 65,536 / 2^24+ along
every dimension, with small cross-sections, against NumPy; untouched points stay untouched.
"""

from __future__ import annotations

import shutil
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from helpers.cuda_emulation import EmulatedCudaTarget
from stencilkit import Dims, Field, float64
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda import grid as cuda_grid
from stencilkit.backends.cuda.codegen import PLAIN, Variant
from stencilkit.backends.cuda.grid import (
    DEFAULT_LIMITS,
    GridLimits,
    GridTooLarge,
    grid_for,
    needed_blocks,
    unfold,
)
from stencilkit.meshes import C2E, C2EDim, Cell, Edge, periodic_triangular_mesh
from stencilkit.stages.interface import interface_of

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
BIG = (65535, 65536, 2**24 + 3)
BLOCKS = [(32, 4, 1), (128, 1, 1), (256, 1, 1), (16, 8, 1), (32, 2, 2), (1, 1, 1)]


# ----------------------------------------------------------------------------- the mapping itself
@pytest.mark.parametrize(
    "limits",
    [DEFAULT_LIMITS, GridLimits(2**31 - 1, 7, 5000), GridLimits(2**31 - 1, 5000, 3)],
    ids=["device", "small-y", "small-z"],
)
@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_grid_stays_within_limits_and_covers_every_point(rank: int, limits: GridLimits) -> None:
    """Every grid dimension (x: the unit-stride one, whichever layout put it there) at each large
    extent, with every block shape and chunk: the grid respects the limits and, unfolded as the
    kernel unfolds it, gives every block of one-thread-per-point exactly once; a grid that fits
    is not folded. Grids that cannot fit even folded are refused."""
    for pos in range(rank):
        for big in BIG:
            extents = [3] * rank
            extents[pos] = big
            for block in BLOCKS:
                for chunk in (1, 4) if rank in (2, 3) else (1,):
                    nx, ny, nz = needed_blocks(extents, block, chunk)
                    if ny * nz > limits.y * limits.z:
                        with pytest.raises(GridTooLarge):
                            grid_for(extents, block, chunk, limits)
                        continue
                    g = grid_for(extents, block, chunk, limits)
                    assert (
                        g[0] == nx <= limits.x and 1 <= g[1] <= limits.y and 1 <= g[2] <= limits.z
                    )
                    if ny <= limits.y and nz <= limits.z:
                        assert g == (nx, ny, nz)
                        continue
                    coords = unfold(g, block, extents, chunk)
                    if g[1] * g[2] <= 70000:  # every needed block exactly once, the rest idle
                        seen = [coords(by, bz) for by in range(g[1]) for bz in range(g[2])]
                        work = [c for c in seen if c is not None]
                        assert sorted(work) == [(y, z) for y in range(ny) for z in range(nz)]
                    else:  # the corners and the last needed block
                        assert coords(0, 0) == (0, 0) and coords(g[1] - 1, 0) == (
                            (g[1] - 1) % ny,
                            (g[1] - 1) // ny,
                        )
                        last = ny * nz - 1
                        assert coords(last % g[1], last // g[1]) == (ny - 1, nz - 1)


@pytest.mark.parametrize(
    "order", [(0, 1, 2), (2, 1, 0), (1, 0, 2), (0, 2, 1)], ids=["C", "F", "JIK", "IKJ"]
)
def test_every_layout_maps_its_unit_stride_dimension_to_x_within_limits(
    order: tuple[int, int, int],
) -> None:
    """For [I, J, K] fields in every stride order: grid x is the unit-stride dimension, and each
    dimension at 65,535 / 65,536 / 2^24+ points (the others 3) gets a grid within the limits."""
    from stencilkit.backends.cuda import CudaTarget
    from stencilkit.backends.cuda.codegen import grid_dims

    data = np.zeros((4, 5, 6)).transpose(np.argsort(order)).copy().transpose(order)
    a = gtx.as_field([I, J, K], data, copy=None)
    out = gtx.as_field([I, J, K], data.copy(order="K"), copy=None)
    runner = CompiledRunner(interface_of(run_shift3.definition), CudaTarget(arch="90"))
    planned = runner.stages([a, out, 4, 5, 6], {}, check_device=False, until="plan").planned
    sprog, layout = planned.sprog, planned.layout
    gdims = [d.value for d in grid_dims(sprog.kernels[0], layout)]
    unit = "IJK"[int(np.argmin(out.ndarray.strides))]
    assert gdims[0] == unit and sorted(gdims) == ["I", "J", "K"]
    for big in BIG:
        for d in "IJK":
            extents = [big if g == d else 3 for g in gdims]
            for block in tuning_blocks(extents):
                g = grid_for(extents, block)
                assert (
                    g[0] <= DEFAULT_LIMITS.x
                    and g[1] <= DEFAULT_LIMITS.y
                    and g[2] <= DEFAULT_LIMITS.z
                )


def tuning_blocks(extents: list[int]) -> list[tuple[int, int, int]]:
    from stencilkit.backends.cuda.tuning import block_candidates, default_block

    return [*block_candidates(extents), default_block(extents)]


def test_the_issue_case_fits_grid_y() -> None:
    """Regression: K-contiguous [Cell, K] with 1M cells put 1M/block_y blocks on grid y
    (CUDA_ERROR_INVALID_VALUE from cuLaunchKernel past 65,535)."""
    assert grid_for([80, 1_000_000], (128, 1, 1)) == (1, 65535, 16)
    assert grid_for([80, 65536], (32, 1, 1)) == (3, 65535, 2)
    assert grid_for([80, 65535], (32, 1, 1)) == (3, 65535, 1)  # fits: not folded


def test_grids_beyond_any_device_are_refused() -> None:
    with pytest.raises(GridTooLarge):
        grid_for([2**31 * 16], (1, 1, 1))
    with pytest.raises(GridTooLarge):
        grid_for([1, 2**33], (1, 1, 1))


def test_limits_are_read_from_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[int, int]] = []

    def attribute(attr: int, device: int) -> int:
        asked.append((attr, device))
        return {5: 1000, 6: 20, 7: 10}[attr]

    runtime = SimpleNamespace(
        deviceGetAttribute=attribute,
        cudaDevAttrMaxGridDimX=5,
        cudaDevAttrMaxGridDimY=6,
        cudaDevAttrMaxGridDimZ=7,
    )
    fake = SimpleNamespace(cuda=SimpleNamespace(runtime=runtime))
    from stencilkit.backends.cuda import runtime as cuda_runtime

    monkeypatch.setattr(cuda_runtime, "cupy", lambda: fake)
    cuda_grid.device_limits.cache_clear()
    try:
        assert cuda_grid.device_limits(3) == GridLimits(1000, 20, 10)
        assert sorted(asked) == [(5, 3), (6, 3), (7, 3)]
    finally:
        cuda_grid.device_limits.cache_clear()


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError):
        GridLimits(0, 1, 1)


# ----------------------------------------------------------------------------- programs
@gtx.field_operator
def shift_k(a: Field[Dims[Cell, K], float64]) -> Field[Dims[Cell, K], float64]:
    return 2.0 * a(K + 1) - a


@gtx.program
def run_shift_k(
    a: Field[Dims[Cell, K], float64],
    out: Field[Dims[Cell, K], float64],
    n: gtx.int32,
    nk: gtx.int32,
):
    shift_k(a, out=out, domain={Cell: (1, n), K: (0, nk - 1)})


@gtx.field_operator
def shift3(a: Field[Dims[I, J, K], float64]) -> Field[Dims[I, J, K], float64]:
    return a(I + 1) + 2.0 * a(J + 1) + 3.0 * a(K + 1) - a


@gtx.program
def run_shift3(
    a: Field[Dims[I, J, K], float64],
    out: Field[Dims[I, J, K], float64],
    ni: gtx.int32,
    nj: gtx.int32,
    nk: gtx.int32,
):
    shift3(a, out=out, domain={I: (0, ni - 1), J: (0, nj - 1), K: (0, nk - 1)})


@gtx.field_operator
def triple(a: Field[Dims[Cell], float64]) -> Field[Dims[Cell], float64]:
    return 3.0 * a


@gtx.program
def run_triple(a: Field[Dims[Cell], float64], out: Field[Dims[Cell], float64], n: gtx.int32):
    triple(a, out=out, domain={Cell: (1, n)})


@gtx.field_operator
def c2e_sum(e: Field[Dims[Edge, K], float64]) -> Field[Dims[Cell, K], float64]:
    return gtx.neighbor_sum(e(C2E), axis=C2EDim)


@gtx.program
def run_c2e_sum(e: Field[Dims[Edge, K], float64], out: Field[Dims[Cell, K], float64]):
    c2e_sum(e, out=out)


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def cumsum(carry: float, x: float) -> float:
    return carry + x


@gtx.program
def run_cumsum(a: Field[Dims[Cell, K], float64], out: Field[Dims[Cell, K], float64]):
    cumsum(a, out=out)


LAYOUTS = {"k-contiguous": np.ascontiguousarray, "horizontal-first": np.asfortranarray}


def _host(data: np.ndarray, layout: str) -> np.ndarray:
    return LAYOUTS[layout](data)


def _run_emulated(
    prog: Any, args: list[Any], provider: dict[str, Any], target: EmulatedCudaTarget
) -> None:
    runner = CompiledRunner(interface_of(prog.definition), target)
    runner(args, provider)


def _nan_field(dims: list[Any], shape: tuple[int, ...], layout: str) -> Any:
    return gtx.as_field(dims, _host(np.full(shape, np.nan), layout), copy=None)


def _check_shift_k(
    rng: np.random.Generator,
    shape: tuple[int, int],
    layouts: tuple[str, str],
    target: EmulatedCudaTarget,
) -> None:
    data = rng.standard_normal(shape)
    a = gtx.as_field([Cell, K], _host(data, layouts[0]), copy=None)
    out = _nan_field([Cell, K], shape, layouts[1])
    _run_emulated(run_shift_k, [a, out, shape[0], shape[1]], {}, target)
    result = out.asnumpy()
    np.testing.assert_array_equal(result[1:, :-1], 2.0 * data[1:, 1:] - data[1:, :-1])
    assert np.isnan(result[0]).all() and np.isnan(result[:, -1]).all()


# ----------------------------------------------------------------------------- emulated on the CPU
TINY = [GridLimits(2**31 - 1, 2, 200), GridLimits(2**31 - 1, 100, 4)]  # fold y into z / z into y


@pytest.mark.parametrize("variant", [PLAIN, Variant(4), Variant(2, True)], ids=str)
@pytest.mark.parametrize("block", [(32, 4, 1), (16, 2, 2), (128, 1, 1), (7, 9, 1)])
@pytest.mark.parametrize(
    "layouts",
    [
        ("k-contiguous",) * 2,
        ("horizontal-first",) * 2,
        ("k-contiguous", "horizontal-first"),
        ("horizontal-first", "k-contiguous"),
    ],
)
def test_folded_grids_cover_every_layout(rng, layouts, block, variant) -> None:
    """Grids folded to fit tiny y and z limits: inputs and outputs in either layout, chunked
    variants included."""
    folded = 0
    for limits in TINY:
        target = EmulatedCudaTarget(limits, block, variant)
        _check_shift_k(rng, (301, 19), layouts, target)
        _check_shift_k(rng, (7, 203), layouts, target)
        data = rng.standard_normal((23, 9, 17))
        a = gtx.as_field([I, J, K], _host(data, layouts[0]), copy=None)
        out = _nan_field([I, J, K], data.shape, layouts[1])
        _run_emulated(run_shift3, [a, out, *data.shape], {}, target)
        expect = (
            data[1:, :-1, :-1]
            + 2.0 * data[:-1, 1:, :-1]
            + 3.0 * data[:-1, :-1, 1:]
            - data[:-1, :-1, :-1]
        )
        result = out.asnumpy()
        _assert_shift3(result, data, expect)
        assert (
            np.isnan(result[-1]).all()
            and np.isnan(result[:, -1]).all()
            and np.isnan(result[:, :, -1]).all()
        )
        grids = [g for t in target.loaded for g, _ in t.grids]
        assert all(g[1] <= limits.y and g[2] <= limits.z for g in grids)
        folded += sum(t.folded for t in target.loaded)
    assert folded > 0  # some launches were folded


@pytest.mark.parametrize(
    "layouts",
    [
        ("k-contiguous", "k-contiguous"),
        ("horizontal-first", "k-contiguous"),
        ("k-contiguous", "horizontal-first"),
    ],
)
def test_gathers_and_scans_with_folded_grids(rng, layouts) -> None:
    mesh = periodic_triangular_mesh(12, 10)
    provider = mesh.offset_provider()
    nk = 11
    target = EmulatedCudaTarget(TINY[0], (16, 4, 1), Variant(4))
    e = rng.standard_normal((mesh.n_edges, nk))
    out = _nan_field([Cell, K], (mesh.n_cells, nk), layouts[1])
    _run_emulated(
        run_c2e_sum,
        [gtx.as_field([Edge, K], _host(e, layouts[0]), copy=None), out],
        provider,
        target,
    )
    np.testing.assert_allclose(out.asnumpy(), e[mesh.c2e].sum(axis=1), rtol=1e-13)
    c = rng.standard_normal((mesh.n_cells, nk))
    out = _nan_field([Cell, K], c.shape, layouts[1])
    _run_emulated(
        run_cumsum, [gtx.as_field([Cell, K], _host(c, layouts[0]), copy=None), out], {}, target
    )
    np.testing.assert_allclose(out.asnumpy(), np.cumsum(c, axis=1), rtol=1e-13)


@gtx.field_operator
def accumulate(
    x: Field[Dims[Cell, K], float64], a: Field[Dims[Cell, K], float64]
) -> Field[Dims[Cell, K], float64]:
    return x + a


@gtx.program
def run_accumulate(
    x: Field[Dims[Cell, K], float64],
    a: Field[Dims[Cell, K], float64],
    out: Field[Dims[Cell, K], float64],
):
    accumulate(x, a, out=out)


@pytest.mark.parametrize("variant", [PLAIN, Variant(4)], ids=str)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_folded_grids_run_each_point_once(rng, layout, variant) -> None:
    """An in-place update (x += a) shows a point run twice: a folded grid is rounded up, and its
    surplus blocks must not repeat blocks of the first row."""
    for limits in TINY:
        target = EmulatedCudaTarget(limits, (16, 1, 1), variant)
        x0, a = rng.standard_normal((203, 37)), rng.standard_normal((203, 37))
        x = gtx.as_field([Cell, K], _host(x0.copy(), layout), copy=None)  # x0 stays as it was
        _run_emulated(
            run_accumulate, [x, gtx.as_field([Cell, K], _host(a, layout), copy=None), x], {}, target
        )
        np.testing.assert_array_equal(x.asnumpy(), x0 + a)
        assert sum(t.folded for t in target.loaded) > 0 or limits.y >= 100


@pytest.mark.parametrize("n", [65535, 65536])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_device_limits_at_the_y_boundary(rng, n, layout) -> None:
    """The issue's crash at the device's real limits: a K-contiguous [Cell, K] field puts the
    cells on grid y; with one thread row per block, 65,536 cells need 65,536 blocks along y."""
    target = EmulatedCudaTarget(DEFAULT_LIMITS, (32, 1, 1))
    _check_shift_k(rng, (n + 1, 3), (layout, layout), target)
    data = rng.standard_normal(n + 1)
    out = gtx.as_field([Cell], np.full(n + 1, np.nan), copy=None)
    _run_emulated(run_triple, [gtx.as_field([Cell], data, copy=None), out, n + 1], {}, target)
    result = out.asnumpy()
    assert np.isnan(result[0]) and np.array_equal(result[1:], 3.0 * data[1:])


# ----------------------------------------------------------------------------- nvcc
_NVCC = shutil.which("nvcc") or (
    shutil.os.path.exists("/usr/local/cuda/bin/nvcc") and "/usr/local/cuda/bin/nvcc"
)  # type: ignore[attr-defined]


@pytest.mark.skipif(not _NVCC, reason="nvcc not installed")
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_generated_kernels_compile_with_nvcc(monkeypatch, layout) -> None:
    """The generated kernels (every chunk variant, with their unfolding) of a gather in both layouts, built by nvcc."""
    from stencilkit.backends.cuda import CudaTarget
    from stencilkit.toolchain import cuda as cuda_toolchain
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv("STENCILKIT_CUDA_COMPILER", "nvcc")
    reset_config()
    cuda_toolchain.find_cuda_compiler.cache_clear()
    try:
        mesh = periodic_triangular_mesh(4, 4)
        e = gtx.as_field([Edge, K], _host(np.ones((mesh.n_edges, 5)), layout), copy=None)
        out = gtx.as_field([Cell, K], _host(np.ones((mesh.n_cells, 5)), layout), copy=None)
        runner = CompiledRunner(
            interface_of(run_c2e_sum.definition),
            CudaTarget(arch="90"),
        )
        planned = runner.stages(
            [e, out], mesh.offset_provider(), check_device=False, until="plan"
        ).planned
        src = runner.target.generate(planned, variants=True)
        source, entry = src.text, runner.target.build(src)
        assert "lin % nby" in source and "_z4" in source
        assert b"sk_run_c2e_sum_k0_z4" in (entry.path / "program.cubin").read_bytes()
    finally:
        reset_config()
        cuda_toolchain.find_cuda_compiler.cache_clear()


# ----------------------------------------------------------------------------- on the GPU
def _gpu_field(dims: list[Any], data: np.ndarray, layout: str) -> Any:
    import cupy as cp

    dev = cp.asarray(data) if layout == "k-contiguous" else cp.asfortranarray(cp.asarray(data))
    return gtx.as_field(dims, dev, copy=None)


def _assert_shift3(result: np.ndarray, data: np.ndarray, expect: np.ndarray) -> None:
    """``result`` is ``expect`` up to a few ulps of its terms: nvcc contracts ``2.0 * x + y`` into
    one fused multiply-add (one rounding instead of two), NumPy does not."""
    scale = (
        np.abs(data[1:, :-1, :-1]) + 2 * np.abs(data[:-1, 1:, :-1]) + 3 * np.abs(data[:-1, :-1, 1:])
    )
    error = np.abs(result[:-1, :-1, :-1] - expect)
    assert (error <= 8 * np.finfo(np.float64).eps * (scale + 1.0)).all(), error.max()


@pytest.mark.gpu
@pytest.mark.parametrize("big", BIG)
@pytest.mark.parametrize("along", ["Cell", "K"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_gpu_cell_k_at_every_size(rng, layout, along, big) -> None:
    shape = (big, 2) if along == "Cell" else (3, big)
    data = rng.standard_normal(shape)
    a = _gpu_field([Cell, K], data, layout)
    out = _gpu_field([Cell, K], np.full(shape, np.nan), layout)
    run_shift_k.with_backend(gtx.gpu)(a, out, shape[0], shape[1], offset_provider={})
    result = out.asnumpy()
    np.testing.assert_array_equal(result[1:, :-1], 2.0 * data[1:, 1:] - data[1:, :-1])
    assert np.isnan(result[0]).all() and np.isnan(result[:, -1]).all()


@pytest.mark.gpu
@pytest.mark.parametrize("big", BIG)
@pytest.mark.parametrize("along", [0, 1, 2], ids=["I", "J", "K"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_gpu_ijk_at_every_size(rng, layout, along, big) -> None:
    shape = [2, 2, 2]
    shape[along] = big
    data = rng.standard_normal(tuple(shape))
    a = _gpu_field([I, J, K], data, layout)
    out = _gpu_field([I, J, K], np.full(data.shape, np.nan), layout)
    run_shift3.with_backend(gtx.gpu)(a, out, *shape, offset_provider={})
    result = out.asnumpy()
    expect = (
        data[1:, :-1, :-1]
        + 2.0 * data[:-1, 1:, :-1]
        + 3.0 * data[:-1, :-1, 1:]
        - data[:-1, :-1, :-1]
    )
    _assert_shift3(result, data, expect)
    assert (
        np.isnan(result[-1]).all()
        and np.isnan(result[:, -1]).all()
        and np.isnan(result[:, :, -1]).all()
    )


@pytest.mark.gpu
@pytest.mark.parametrize("big", BIG)
def test_gpu_one_dimension_at_every_size(rng, big) -> None:
    data = rng.standard_normal(big)
    out = _gpu_field([Cell], np.full(big, np.nan), "k-contiguous")
    run_triple.with_backend(gtx.gpu)(
        _gpu_field([Cell], data, "k-contiguous"), out, big, offset_provider={}
    )
    result = out.asnumpy()
    assert np.isnan(result[0]) and np.array_equal(result[1:], 3.0 * data[1:])


@pytest.mark.gpu
@pytest.mark.parametrize(
    "layouts",
    [
        ("k-contiguous",) * 2,
        ("horizontal-first",) * 2,
        ("k-contiguous", "horizontal-first"),
        ("horizontal-first", "k-contiguous"),
    ],
)
def test_gpu_gather_past_65536_cells(rng, layouts) -> None:
    """The issue's crash: C2E over 131,072 cells (K-contiguous puts them on grid y)."""
    mesh = periodic_triangular_mesh(256, 256)
    provider = mesh.offset_provider(allocator=gtx.gpu)
    e = rng.standard_normal((mesh.n_edges, 5))
    out = _gpu_field([Cell, K], np.full((mesh.n_cells, 5), np.nan), layouts[1])
    run_c2e_sum.with_backend(gtx.gpu)(
        _gpu_field([Edge, K], e, layouts[0]), out, offset_provider=provider
    )
    np.testing.assert_allclose(out.asnumpy(), e[mesh.c2e].sum(axis=1), rtol=1e-13)


@pytest.mark.gpu
@pytest.mark.parametrize("big", BIG)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_gpu_in_place_update_runs_each_point_once(rng, layout, big) -> None:
    """x += a over [Cell, K] with `big` cells: K-contiguous fields put the cells on grid y, whose
    grid is folded past 65,535 blocks; a point run twice would be added twice."""
    x0, a = rng.standard_normal((big, 2)), rng.standard_normal((big, 2))
    x = _gpu_field([Cell, K], x0, layout)
    run_accumulate.with_backend(gtx.gpu)(x, _gpu_field([Cell, K], a, layout), x, offset_provider={})
    np.testing.assert_array_equal(x.asnumpy(), x0 + a)
