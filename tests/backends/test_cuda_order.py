"""Locality iteration orders for GPU gathers (issue 13): the ordering itself, the ordered kernels
run on the CPU emulation of the generated CUDA (bitwise equal to the natural order), nvcc builds
of them, and the real thing on a GPU."""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from helpers.cuda_emulation import EmulatedCudaTarget
from stencilkit import Dims, Field, float64
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda.codegen import PLAIN, Variant, chunk_variants, ordered_dim
from stencilkit.backends.cuda.order import is_scattered, locality_order, order_for, reuse_spread
from stencilkit.meshes import (
    C2E,
    E2C,
    V2E,
    C2EDim,
    Cell,
    E2CDim,
    Edge,
    Mesh,
    V2EDim,
    Vertex,
    periodic_triangular_mesh,
    reorder_for_locality,
)
from stencilkit.stages.interface import interface_of

K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


def random_tables(mesh: Mesh, seed: int = 5) -> dict[str, np.ndarray]:
    """C2E, E2C and V2E of ``mesh`` with cells, edges and vertices numbered in a random order
    (skip values stay skip values)."""
    rng = np.random.default_rng(seed)
    perm = {n: rng.permutation(k) for n, k in (("c", mesh.n_cells), ("e", mesh.n_edges))}
    perm["v"] = rng.permutation(mesh.n_vertices)
    new = {}
    for n, p in perm.items():
        new[n] = np.empty(len(p), np.int64)
        new[n][p] = np.arange(len(p))

    def renumber(table: np.ndarray, rows: str, values: str) -> np.ndarray:
        t = table[perm[rows]]
        return np.where(t < 0, -1, new[values][np.maximum(t, 0)]).astype(np.int32)

    return {
        "C2E": renumber(mesh.c2e, "c", "e"),
        "E2C": renumber(mesh.e2c, "e", "c"),
        "V2E": renumber(mesh.v2e, "v", "e"),
    }


# ----------------------------------------------------------------------------- the ordering
def test_locality_order_is_a_permutation_with_better_locality() -> None:
    mesh = periodic_triangular_mesh(96, 64)
    tables = random_tables(mesh)
    for name, table in tables.items():
        n = len(table)
        for start, stop in ((0, n), (n // 5, n - n // 3)):
            order = locality_order(table, start, stop, region_points=1024)
            assert order.dtype == np.int32
            assert np.array_equal(np.sort(order), np.arange(start, stop)), name
            rows = table[start:stop]
            natural = reuse_spread(rows, np.arange(start, stop))
            ordered = reuse_spread(rows, order)
            if (start, stop) == (0, n):
                assert ordered < natural / 10, (name, natural, ordered)
            else:  # a part of a random numbering: many small pieces, still better
                assert ordered < natural / 2, (name, natural, ordered)
        assert np.array_equal(locality_order(table, 0, n), locality_order(table, 0, n))


def test_locality_order_with_skip_values_and_isolated_points() -> None:
    mesh = periodic_triangular_mesh(40, 30, bounded=True)
    table = random_tables(mesh)["V2E"]
    assert (table < 0).any()
    table[::17] = -1  # points without any neighbour
    order = locality_order(table, 0, len(table))
    assert np.array_equal(np.sort(order), np.arange(len(table)))
    assert locality_order(table, 3, 3).size == 0
    assert np.array_equal(locality_order(np.full((9, 2), -1), 2, 9), np.arange(2, 9))
    hub = np.stack([np.zeros(500, np.int64), np.arange(500)], axis=1)  # target 0 read by all
    assert np.array_equal(locality_order(hub, 0, 500), np.arange(500))  # not a mesh: natural
    big = np.random.default_rng(1).integers(0, 1 << 20, (3000, 2))  # 16-bit passes of the sort
    assert np.array_equal(np.sort(locality_order(big, 0, 3000)), np.arange(3000))


def test_first_occurrences_keep_the_first_position_of_each_value() -> None:
    from stencilkit.backends.cuda.order import _first_occurrences

    values = np.array([7, 3, 7, 0, 3, 9, 0, 7], np.int64)
    assert _first_occurrences(np, values).tolist() == [0, 1, 3, 5]
    rng = np.random.default_rng(2)
    values = rng.integers(0, 50, 400)
    expected = sorted(np.unique(values, return_index=True)[1].tolist())
    assert _first_occurrences(np, values).tolist() == expected


def test_the_host_gathers_candidates_as_the_fancy_index_does() -> None:
    """The host's takes of whole rows give ``readers[rows[frontier]]``; the first occurrences
    of int32 values need keys of int64 (no overflow)."""
    from stencilkit.backends.cuda.order import _candidates, _first_occurrences

    rng = np.random.default_rng(3)
    rows = rng.integers(0, 5000, (3000, 3))
    readers = rng.integers(0, 3001, (5001, 2))
    frontier = rng.permutation(3000)[:700]
    cand = _candidates(rows, readers, frontier)
    assert np.array_equal(cand, readers[rows[frontier]].ravel())
    expected = sorted(np.unique(cand, return_index=True)[1].tolist())
    assert _first_occurrences(np, cand).tolist() == expected
    narrow = (cand * 1000).astype(np.int32)  # keys of value * size overflow int32
    expected = sorted(np.unique(narrow, return_index=True)[1].tolist())
    assert _first_occurrences(np, narrow).tolist() == expected


def test_scattered_tables_are_told_apart() -> None:
    mesh = reorder_for_locality(periodic_triangular_mesh(64, 64))
    local = gtx.as_connectivity([Cell, C2EDim], Edge, mesh.c2e)
    scattered = gtx.as_connectivity([Cell, C2EDim], Edge, random_tables(mesh)["C2E"])
    assert not is_scattered(local, "Cell", 0, mesh.n_cells)
    assert is_scattered(scattered, "Cell", 0, mesh.n_cells)
    assert is_scattered(scattered, "Cell", 100, 3000)
    first = order_for(scattered, "Cell", 10, mesh.n_cells - 10)
    assert order_for(scattered, "Cell", 10, mesh.n_cells - 10) is first  # cached
    assert np.array_equal(np.sort(first.points), np.arange(10, mesh.n_cells - 10))
    assert first.pointer == first.points.ctypes.data - 40


def test_orders_are_stored_in_the_build_cache_entry(monkeypatch, tmp_path) -> None:
    """A new process reads the order instead of computing it; a damaged file (not a
    permutation of the range) is never used."""
    from stencilkit.backends.cuda import order as order_module

    mesh = periodic_triangular_mesh(32, 32)
    table = gtx.as_connectivity([Cell, C2EDim], Edge, random_tables(mesh)["C2E"])
    first = order_for(table, "Cell", 5, 2000, tmp_path)
    (stored,) = tmp_path.glob("order-*.npy")
    monkeypatch.setattr(order_module, "_CACHE", type(order_module._CACHE)())
    computed: list[Any] = []
    real = order_module.locality_order
    monkeypatch.setattr(order_module, "locality_order", lambda *a: computed.append(a) or real(*a))
    again = order_for(table, "Cell", 5, 2000, tmp_path)
    assert np.array_equal(again.points, first.points) and not computed
    damaged = np.load(stored)
    damaged[3] = damaged[4]
    np.save(stored, damaged)
    monkeypatch.setattr(order_module, "_CACHE", type(order_module._CACHE)())
    third = order_for(table, "Cell", 5, 2000, tmp_path)
    assert np.array_equal(third.points, first.points) and len(computed) == 1
    assert np.array_equal(np.load(stored), first.points)  # written again


def test_a_host_order_job_stores_the_order_order_for_reads(monkeypatch, tmp_path) -> None:
    """``host_order_job`` (run on the background thread under STENCILKIT_TUNE=background)
    stores the order ``order_for`` would compute, where ``order_for`` then reads it; none is
    made without a cache entry or above ``HOST_ORDER_MAX_POINTS``."""
    from stencilkit.backends.cuda import order as order_module

    mesh = periodic_triangular_mesh(40, 32)
    table = gtx.as_connectivity([Cell, C2EDim], Edge, random_tables(mesh)["C2E"])
    start, stop = 7, mesh.n_cells - 3
    job = order_module.host_order_job(table, "Cell", start, stop, tmp_path)
    assert job is not None
    job()
    (stored,) = tmp_path.glob("order-*.npy")
    computed: list[Any] = []
    real = order_module.locality_order
    monkeypatch.setattr(order_module, "locality_order", lambda *a: computed.append(a) or real(*a))
    monkeypatch.setattr(order_module, "_CACHE", type(order_module._CACHE)())
    found = order_for(table, "Cell", start, stop, tmp_path)
    assert not computed  # read, not computed
    want = locality_order(random_tables(mesh)["C2E"], start, stop)
    assert np.array_equal(found.points, want) and np.array_equal(np.load(stored), want)
    job()  # a second run finds it stored: nothing computed, nothing written
    assert not computed
    assert order_module.host_order_job(table, "Cell", start, stop, None) is None
    monkeypatch.setattr(order_module, "HOST_ORDER_MAX_POINTS", stop - start - 1)
    assert order_module.host_order_job(table, "Cell", start, stop, tmp_path) is None


# ----------------------------------------------------------------------------- programs
@gtx.field_operator
def c2e_sum(e: Field[Dims[Edge, K], float64]) -> Field[Dims[Cell, K], float64]:
    return gtx.neighbor_sum(e(C2E), axis=C2EDim)


@gtx.program
def run_c2e(
    e: Field[Dims[Edge, K], float64],
    out: Field[Dims[Cell, K], float64],
    lo: gtx.int32,
    hi: gtx.int32,
    nk: gtx.int32,
):
    c2e_sum(e, out=out, domain={Cell: (lo, hi), K: (0, nk)})


@gtx.field_operator
def e2c_diff(c: Field[Dims[Cell, K], float64]) -> Field[Dims[Edge, K], float64]:
    return 2.0 * c(E2C[0]) - c(E2C[1])


@gtx.program
def run_e2c(
    c: Field[Dims[Cell, K], float64],
    out: Field[Dims[Edge, K], float64],
    lo: gtx.int32,
    hi: gtx.int32,
    nk: gtx.int32,
):
    e2c_diff(c, out=out, domain={Edge: (lo, hi), K: (0, nk)})


@gtx.field_operator
def v2e_sum(e: Field[Dims[Edge, K], float64]) -> Field[Dims[Vertex, K], float64]:
    return gtx.neighbor_sum(e(V2E), axis=V2EDim)


@gtx.program
def run_v2e(
    e: Field[Dims[Edge, K], float64],
    out: Field[Dims[Vertex, K], float64],
    lo: gtx.int32,
    hi: gtx.int32,
    nk: gtx.int32,
):
    v2e_sum(e, out=out, domain={Vertex: (lo, hi), K: (0, nk)})


@gtx.field_operator
def e2c_mean(c: Field[Dims[Cell], float64]) -> Field[Dims[Edge], float64]:
    return 0.5 * gtx.neighbor_sum(c(E2C), axis=E2CDim)


@gtx.program
def run_e2c_flat(c: Field[Dims[Cell], float64], out: Field[Dims[Edge], float64]):
    e2c_mean(c, out=out)


LAYOUTS = {"k-contiguous": np.ascontiguousarray, "horizontal-first": np.asfortranarray}
CASES = {
    # name: program, output dim, input dim, table, reference
    "C2E": (run_c2e, Cell, Edge, "C2E", lambda x, t: np.where(t[..., None] >= 0, x[t], 0).sum(1)),
    "E2C": (run_e2c, Edge, Cell, "E2C", lambda x, t: 2.0 * x[t[:, 0]] - x[t[:, 1]]),
    "V2E": (run_v2e, Vertex, Edge, "V2E", lambda x, t: np.where(t[..., None] >= 0, x[t], 0).sum(1)),
}
OFFSETS = {
    "C2E": ([Cell, C2EDim], Edge),
    "E2C": ([Edge, E2CDim], Cell),
    "V2E": ([Vertex, V2EDim], Edge),
}


def _run(prog: Any, args: list[Any], provider: dict[str, Any], target: Any) -> Any:
    runner = CompiledRunner(interface_of(prog.definition), target)
    runner(args, provider)
    return target.loaded[-1]


@pytest.mark.parametrize(
    "variant", [Variant(1, False, True), Variant(4, False, True), Variant(2, True, True)], ids=str
)
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("case", list(CASES))
def test_ordered_kernels_are_bitwise_equal_to_the_natural_order(case, layout, variant) -> None:
    """A random numbering, a sub-range domain, skip values (V2E, E2C on a bounded mesh): the
    ordered kernel gives bit for bit what the natural one gives, the NumPy reference's values,
    and leaves the points outside the domain untouched."""
    rng = np.random.default_rng(11)
    mesh = periodic_triangular_mesh(14, 11, bounded=case != "C2E")
    prog, out_dim, in_dim, name, reference = CASES[case]
    table = random_tables(mesh)[name]
    if case == "E2C":
        table = np.where(table < 0, table[:, :1], table)  # E2C[1] of a boundary edge: its cell
    dims, codomain = OFFSETS[name]
    skip = -1 if (table < 0).any() else None
    provider = {name: gtx.as_connectivity(dims, codomain, table, skip_value=skip)}
    n_out, nk = len(table), 7
    lo, hi = 3, n_out - 5
    x = rng.standard_normal((int(table.max()) + 1, nk))
    results = []
    for v in (PLAIN, variant):
        out = gtx.as_field([out_dim, K], LAYOUTS[layout](np.full((n_out, nk), np.nan)), copy=None)
        inp = gtx.as_field([in_dim, K], LAYOUTS[layout](x), copy=None)
        target = EmulatedCudaTarget(block=(8, 4, 1), variant=v)
        loaded = _run(prog, [inp, out, lo, hi, nk], provider, target)
        assert all(u.ordered == v.ordered for u in loaded.variants)
        results.append(out.asnumpy())
    natural, ordered = results
    assert np.array_equal(natural, ordered, equal_nan=True)
    np.testing.assert_allclose(ordered[lo:hi], reference(x, table)[lo:hi], rtol=1e-14, atol=1e-14)
    assert np.isnan(ordered[:lo]).all() and np.isnan(ordered[hi:]).all()


def test_one_dimensional_gather_maps_x_through_the_order() -> None:
    mesh = periodic_triangular_mesh(20, 13)
    table = random_tables(mesh)["E2C"]
    provider = {"E2C": gtx.as_connectivity([Edge, E2CDim], Cell, table)}
    c = np.random.default_rng(2).standard_normal(mesh.n_cells)
    out = gtx.as_field([Edge], np.full(mesh.n_edges, np.nan), copy=None)
    target = EmulatedCudaTarget(block=(32, 1, 1), variant=Variant(1, False, True))
    loaded = _run(run_e2c_flat, [gtx.as_field([Cell], c, copy=None), out], provider, target)
    assert loaded.variants == [Variant(1, False, True)]
    assert np.array_equal(out.asnumpy(), 0.5 * (c[table[:, 0]] + c[table[:, 1]]))


def test_only_gathers_get_ordered_variants() -> None:
    mesh = periodic_triangular_mesh(6, 6)
    e = gtx.as_field([Edge, K], np.ones((mesh.n_edges, 3)))
    out = gtx.as_field([Cell, K], np.ones((mesh.n_cells, 3)))
    target = EmulatedCudaTarget(variant=Variant(1, False, True))
    runner = CompiledRunner(interface_of(run_c2e.definition), target)
    planned = runner.stages(
        [e, out, 0, mesh.n_cells, 3], mesh.offset_provider(), until="plan"
    ).planned
    assert planned.layout is not None
    (k,) = planned.sprog.kernels
    assert ordered_dim(k, planned.layout) == (Cell, "C2E")
    variants = chunk_variants(k, planned.layout, ordered=True)
    assert len(variants) == 20 and sum(v.ordered for v in variants) == 10
    assert chunk_variants(k, planned.layout) == tuple(v for v in variants if not v.ordered)
    assert Variant(4, True, True).suffix == "_z4s_ord"


# ----------------------------------------------------------------------------- nvcc
_NVCC = shutil.which("nvcc") or (
    shutil.os.path.exists("/usr/local/cuda/bin/nvcc") and "/usr/local/cuda/bin/nvcc"  # type: ignore[attr-defined]
)


@pytest.mark.skipif(not _NVCC, reason="nvcc not installed")
def test_ordered_variants_compile_with_nvcc(monkeypatch) -> None:
    from stencilkit.backends.cuda import CudaTarget
    from stencilkit.toolchain import cuda as cuda_toolchain
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv("STENCILKIT_CUDA_COMPILER", "nvcc")
    reset_config()
    cuda_toolchain.find_cuda_compiler.cache_clear()
    try:
        mesh = periodic_triangular_mesh(4, 4, bounded=True)
        e = gtx.as_field([Edge, K], np.ones((mesh.n_edges, 5)))
        out = gtx.as_field([Vertex, K], np.ones((mesh.n_vertices, 5)))
        target = CudaTarget(arch="90")
        runner = CompiledRunner(interface_of(run_v2e.definition), target)
        planned = runner.stages(
            [e, out, 1, mesh.n_vertices - 1, 5],
            mesh.offset_provider(),
            check_device=False,
            until="plan",
        ).planned
        src = target.generate(planned, variants=True, ordered=True)
        assert "const int32_t* __restrict__ sk_ord" in src.text
        cubin = (target.build(src).path / "program.cubin").read_bytes()
        assert b"sk_run_v2e_k0_z4_ord" in cubin and b"sk_run_v2e_k0_ord" in cubin
    finally:
        reset_config()
        cuda_toolchain.find_cuda_compiler.cache_clear()


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def _cumsum(carry: float, x: float) -> float:
    return carry + x


@gtx.field_operator
def c2e_cumsum(e: Field[Dims[Edge, K], float64]) -> Field[Dims[Cell, K], float64]:
    return _cumsum(gtx.neighbor_sum(e(C2E), axis=C2EDim))


@gtx.program
def run_c2e_cumsum(e: Field[Dims[Edge, K], float64], out: Field[Dims[Cell, K], float64]):
    c2e_cumsum(e, out=out)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_scan_that_gathers_visits_its_columns_in_the_order(layout) -> None:
    """A vertical scan over gathered values: one thread per column, the columns mapped through
    the order as the points of any other kernel."""
    mesh = periodic_triangular_mesh(10, 9)
    table = random_tables(mesh)["C2E"]
    provider = {"C2E": gtx.as_connectivity([Cell, C2EDim], Edge, table)}
    x = np.random.default_rng(1).standard_normal((mesh.n_edges, 6))
    results = []
    for v in (PLAIN, Variant(1, False, True)):
        out = gtx.as_field(
            [Cell, K], LAYOUTS[layout](np.full((mesh.n_cells, 6), np.nan)), copy=None
        )
        e = gtx.as_field([Edge, K], LAYOUTS[layout](x), copy=None)
        loaded = _run(run_c2e_cumsum, [e, out], provider, EmulatedCudaTarget(variant=v))
        assert [k.scan is not None for k in loaded.sprog.kernels] == [True]
        assert loaded.variants == [v]
        results.append(out.asnumpy())
    assert np.array_equal(results[0], results[1])
    np.testing.assert_allclose(results[1], np.cumsum(x[table].sum(1), axis=1), rtol=1e-13)


# ----------------------------------------------------------------------------- on the GPU
def _gpu(dims: list[Any], data: np.ndarray, layout: str) -> Any:
    import cupy as cp

    dev = cp.asarray(data) if layout == "k-contiguous" else cp.asfortranarray(cp.asarray(data))
    return gtx.as_field(dims, dev, copy=None)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("case", list(CASES))
def test_gpu_ordered_gathers_are_bitwise_equal(monkeypatch, case, layout) -> None:
    """On the GPU: the search is made to pick the natural, then the ordered form of the kernel
    (random numbering, a sub-range, skip values); the results are bit for bit the same."""
    from stencilkit.backends.cuda import backend as cuda_backend

    chosen = cuda_backend.choose_blocks
    mesh = periodic_triangular_mesh(192, 128, bounded=case != "C2E")  # 49k cells: searched
    prog, out_dim, in_dim, name, reference = CASES[case]
    table = random_tables(mesh)[name]
    if case == "E2C":
        table = np.where(table < 0, table[:, :1], table)
    dims, codomain = OFFSETS[name]
    skip = -1 if (table < 0).any() else None
    provider = {
        name: gtx.as_connectivity(dims, codomain, table, skip_value=skip, allocator=gtx.gpu)
    }
    n_out, nk = len(table), 16
    lo, hi = 3, n_out - 5
    x = np.random.default_rng(12).standard_normal((int(table.max()) + 1, nk))
    results, names = [], []
    for ordered in (False, True):

        def pick(k: Any, extents: Any, launchers: Any, *rest: Any, ordered: bool = ordered) -> Any:
            variant, block = chosen(k, extents, launchers, *rest)
            twin = Variant(variant.chunk, variant.streaming, ordered)
            return (twin if twin in launchers else variant), block

        monkeypatch.setattr(cuda_backend, "choose_blocks", pick)
        out = _gpu([out_dim, K], np.full((n_out, nk), np.nan), layout)
        run = prog.with_backend(gtx.gpu)
        run(_gpu([in_dim, K], x, layout), out, lo, hi, nk, offset_provider=provider)
        (plan,) = run._runner.plans.values()
        names.append(plan.launches.kernels[0].name)
        results.append(out.asnumpy())
    assert not names[0].endswith("_ord") and names[1].endswith("_ord"), names
    assert np.array_equal(results[0], results[1], equal_nan=True)
    np.testing.assert_allclose(
        results[1][lo:hi], reference(x, table)[lo:hi], rtol=1e-13, atol=1e-13
    )
    assert np.isnan(results[1][:lo]).all() and np.isnan(results[1][hi:]).all()


@pytest.mark.gpu
def test_gpu_order_is_the_host_order() -> None:
    """The order of a table on the GPU is computed there, and is the order NumPy gives for the
    same table: random numberings (sub-ranges, skip values, isolated points) and a local one."""
    import cupy as cp

    mesh = periodic_triangular_mesh(120, 90, bounded=True)
    tables = dict(random_tables(mesh))
    tables["C2E local"] = reorder_for_locality(mesh).c2e
    tables["V2E isolated"] = tables["V2E"].copy()
    tables["V2E isolated"][::13] = -1
    for name, table in tables.items():
        n = len(table)
        for start, stop, region in ((0, n, 1 << 14), (n // 7, n - n // 4, 512)):
            host = locality_order(table, start, stop, region_points=region)
            dev = locality_order(cp.asarray(table), start, stop, region_points=region)
            assert isinstance(dev, cp.ndarray) and dev.dtype == host.dtype, name
            assert np.array_equal(dev.get(), host), (name, start, stop)
    conn = gtx.as_connectivity([Cell, C2EDim], Edge, tables["C2E"], allocator=gtx.gpu)
    found = order_for(conn, "Cell", 5, mesh.n_cells - 5)
    assert isinstance(found.points, cp.ndarray)
    assert np.array_equal(found.points.get(), locality_order(tables["C2E"], 5, mesh.n_cells - 5))


@pytest.mark.gpu
def test_gpu_table_orders_on_the_host_below_the_limit(monkeypatch) -> None:
    """``order_for`` of a GPU table with at most ``HOST_ORDER_MAX_POINTS`` points computes the
    order in NumPy (no CuPy kernel: nothing to compile on a fresh machine), above it on the GPU;
    both give the same order, returned on the table's GPU."""
    import cupy as cp

    from stencilkit.backends.cuda import order as order_module

    mesh = periodic_triangular_mesh(96, 64)
    table = random_tables(mesh)["C2E"]
    conn = gtx.as_connectivity([Cell, C2EDim], Edge, table, allocator=gtx.gpu)
    seen: list[str] = []
    real = order_module.locality_order
    monkeypatch.setattr(
        order_module,
        "locality_order",
        lambda rows, *a, **k: (
            seen.append(type(rows).__module__.split(".")[0]) or real(rows, *a, **k)
        ),
    )
    found = {}
    for limit in (mesh.n_cells, 0):
        monkeypatch.setattr(order_module, "HOST_ORDER_MAX_POINTS", limit)
        monkeypatch.setattr(order_module, "_CACHE", type(order_module._CACHE)())
        found[limit] = order_for(conn, "Cell", 3, mesh.n_cells - 3)
        assert isinstance(found[limit].points, cp.ndarray)
    assert seen == ["numpy", "cupy"], seen
    assert np.array_equal(found[0].points.get(), found[mesh.n_cells].points.get())
    assert np.array_equal(
        found[0].points.get(), locality_order(table, 3, mesh.n_cells - 3).astype(np.int32)
    )


def _random_c2e_on_gpu(
    seed: int,
) -> tuple[Any, np.ndarray, dict[str, Any], int, np.ndarray, Any, Any]:
    """A randomly numbered 524k-cell mesh's C2E on the GPU, 32 levels: the mesh, its table,
    the offset provider, the levels, random edge values, a NaN output (K-contiguous), the
    program on the gpu backend."""
    mesh = periodic_triangular_mesh(512, 512)
    table = random_tables(mesh)["C2E"]
    provider = {"C2E": gtx.as_connectivity([Cell, C2EDim], Edge, table, allocator=gtx.gpu)}
    nk = 32
    x = np.random.default_rng(seed).standard_normal((mesh.n_edges, nk))
    out = _gpu([Cell, K], np.full((mesh.n_cells, nk), np.nan), "k-contiguous")
    return mesh, table, provider, nk, x, out, run_c2e.with_backend(gtx.gpu)


@pytest.mark.gpu
def test_background_tuning_computes_the_order_on_the_worker_thread(monkeypatch, tmp_path) -> None:
    """STENCILKIT_TUNE=background, a random-table C2E gather: the first call is provisional and
    its variants build on the worker thread, followed by the locality order (in NumPy); the
    call that searches once they are built reads the order instead of computing it. Every
    call's result is NumPy's."""
    from stencilkit.backends.cuda import order as order_module
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv("STENCILKIT_TUNE", "background")
    monkeypatch.setenv("STENCILKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(order_module, "_CACHE", type(order_module._CACHE)())
    reset_config()
    try:
        mesh, table, provider, nk, x, out, run = _random_c2e_on_gpu(6)
        e = _gpu([Edge, K], x, "k-contiguous")
        lo, hi = 3, mesh.n_cells - 5
        run(e, out, lo, hi, nk, offset_provider=provider)
        (plan,) = run._runner.plans.values()
        assert plan.provisional
        want = x[table].sum(1)
        got = out.asnumpy()
        np.testing.assert_allclose(got[lo:hi], want[lo:hi], rtol=1e-13)
        assert np.isnan(got[:lo]).all() and np.isnan(got[hi:]).all()
        assert gtx.wait_for_tuning(timeout=120)
        assert list(tmp_path.rglob("order-*.npy")), "no order stored by the worker thread"
        computed: list[Any] = []
        real = order_module.locality_order
        monkeypatch.setattr(
            order_module, "locality_order", lambda *a, **k: computed.append(a) or real(*a, **k)
        )
        out2 = _gpu([Cell, K], np.full((mesh.n_cells, nk), np.nan), "k-contiguous")
        run(e, out2, lo, hi, nk, offset_provider=provider)
        assert not plan.provisional
        assert not computed  # the search read the order the worker thread stored
        np.testing.assert_array_equal(out2.asnumpy(), got)
    finally:
        reset_config()


@pytest.mark.gpu
def test_gpu_search_measures_the_order_and_stores_the_choice(monkeypatch, tmp_path) -> None:
    """C2E over a randomly numbered 524k-cell mesh, K-contiguous: the tune stage times the
    ordered variants and records the choice (either) in tuning.json."""
    import json

    from stencilkit.backends.cuda import tuning
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv("STENCILKIT_CACHE_DIR", str(tmp_path))
    reset_config()
    try:
        mesh, table, provider, nk, x, out, run = _random_c2e_on_gpu(4)
        run(_gpu([Edge, K], x, "k-contiguous"), out, 0, mesh.n_cells, nk, offset_provider=provider)
        (plan,) = run._runner.plans.values()
        (kl,) = plan.launches.kernels
        stored = json.loads((plan.stages.built.path / tuning.TUNING_FILE).read_text())
        (entry,) = stored.values()
        assert entry["ordered"] == kl.name.endswith("_ord") == (kl.order is not None)
        sample = np.random.default_rng(5).integers(0, mesh.n_cells, 2000)
        np.testing.assert_allclose(out.asnumpy()[sample], x[table[sample]].sum(1), rtol=1e-13)
        print(f"chosen: {kl.name} block {kl.block}")  # shown with pytest -s
    finally:
        reset_config()


def test_benchmark_rows_name_the_order() -> None:
    from types import SimpleNamespace

    from stencilkit_benchmarks.gathers import iteration_order

    mesh = reorder_for_locality(periodic_triangular_mesh(96, 96))
    local = gtx.as_connectivity([Cell, C2EDim], Edge, mesh.c2e)
    scattered = gtx.as_connectivity([Cell, C2EDim], Edge, random_tables(mesh)["C2E"])
    n = mesh.n_cells
    ordered = [SimpleNamespace(order=object())]
    assert iteration_order(local, "Cell", n, []).startswith("order natural (table numbered locally")
    text = iteration_order(scattered, "Cell", n, ordered)
    assert text.startswith("order locality (locality order offered, computed in")
