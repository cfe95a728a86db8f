"""Halos derived from programs, the checks before a decomposed run, the models on N ranks."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import distributed as dist
from stencilkit.meshes import Cell, Edge, Vertex, periodic_triangular_mesh
from stencilkit.models import shallow_water_mpi
from stencilkit.models.shallow_water import I, J, lax_wendroff_step


@gtx.field_operator
def lap(a: gtx.Field[gtx.Dims[I, J], gtx.float64]) -> gtx.Field[gtx.Dims[I, J], gtx.float64]:
    return -4.0 * a + a(I + 1) + a(I - 2) + a(J + 1) + a(J - 1)


@gtx.program
def run_lap(a: gtx.Field[gtx.Dims[I, J], gtx.float64], out: gtx.Field[gtx.Dims[I, J], gtx.float64]):
    lap(a, out=out)


@gtx.field_operator
def double(a: gtx.Field[gtx.Dims[I, J], gtx.float64]) -> gtx.Field[gtx.Dims[I, J], gtx.float64]:
    return 2.0 * a


@gtx.program
def run_double(
    a: gtx.Field[gtx.Dims[I, J], gtx.float64], out: gtx.Field[gtx.Dims[I, J], gtx.float64]
):
    double(a, out=out)


def _load_example() -> Any:
    from stencilkit.models import mesh_diffusion_mpi

    return mesh_diffusion_mpi


def test_halo_requirements_compose_through_temporaries() -> None:
    needs = dist.halo_requirements(lax_wendroff_step)
    assert set(needs) == {"h", "hu", "hv"}  # the temporaries are written before they are read
    for need in needs.values():
        assert need.offsets == {I: (-1, 1), J: (-1, 1)}
    assert dist.halo_requirements(run_lap)["a"].offsets == {I: (-2, 1), J: (-1, 1)}


def test_halo_layers_on_a_mesh() -> None:
    ex = _load_example()
    needs = dist.halo_requirements(
        ex.diffusion_step, periodic_triangular_mesh(4, 4).offset_provider()
    )
    assert needs["u"].layers == 2  # u(E2C) read at edges that C2E reads


@pytest.mark.parametrize("backend", [None, gtx.cpu], ids=["embedded", "cpu"])
def test_program_on_decomposed_fields(backend: Any, rng: Any) -> None:
    d = dist.decompose({I: 12, J: 10}, periodic=True)
    g = rng.random((12, 10))
    a = dist.scatter(d, [I, J], g, halo=2, name="a")
    out = d.zeros([I, J], halo=2, name="out")
    out.ndarray[...] = -3.0
    step = dist.distribute(run_lap.with_backend(backend))
    step(a, out.owned, offset_provider={})  # writes the owned points only
    ref = -4.0 * g + np.roll(g, -1, 0) + np.roll(g, 2, 0) + np.roll(g, -1, 1) + np.roll(g, 1, 1)
    result = dist.gather(out)
    if d.rank == 0:
        np.testing.assert_allclose(result, ref, rtol=1e-14)
    inner = out.ndarray[2:-2, 2:-2]
    assert (out.ndarray != -3.0).sum() == inner.size  # the halo stays untouched


def test_program_refuses_a_narrow_halo(rng: Any) -> None:
    d = dist.decompose({I: 12, J: 10}, periodic=True)
    a = dist.scatter(d, [I, J], rng.random((12, 10)), halo=1, name="a")
    out = d.zeros([I, J], halo=1, name="out")
    with pytest.raises(
        dist.DistributedError,
        match=r"parameter 'a' \(field 'a'\) has a halo of 1 points along I,"
        r" the program reads 2",
    ):
        dist.distribute(run_lap)(a, out.owned, offset_provider={})


def test_program_refuses_a_stale_halo(rng: Any) -> None:
    d = dist.decompose({I: 12, J: 10}, periodic=True)
    a = dist.scatter(d, [I, J], rng.random((12, 10)), halo=2, name="a")
    out = d.zeros([I, J], halo=2, name="b")
    step = dist.distribute(run_lap)
    a.mark_written()
    with pytest.raises(
        dist.DistributedError,
        match=r"field 'a'\) is read in its halo along I, J, but the halo is"
        r" stale.*\n.*exchange\(a\)",
    ):
        step(a, out.owned, offset_provider={})
    d.exchange(a)
    step(a, out.owned, offset_provider={})


def test_program_refuses_fields_of_two_decompositions(rng: Any) -> None:
    d1 = dist.decompose({I: 12, J: 10}, periodic=True)
    d2 = dist.decompose({I: 12, J: 10}, periodic=False)
    a = dist.scatter(d1, [I, J], rng.random((12, 10)), halo=1, name="a")
    b = d2.zeros([I, J], halo=1, name="b")
    with pytest.raises(
        dist.DistributedError, match=r"parameter 'out' \(field 'b'\) is decomposed as I\[0:12\]"
    ):
        dist.distribute(run_double)(a, b, offset_provider={})


def test_a_written_field_becomes_stale(rng: Any) -> None:
    d = dist.decompose({I: 12, J: 10}, periodic=True)
    a = dist.scatter(d, [I, J], rng.random((12, 10)), halo=1, name="a")
    b = d.zeros([I, J], halo=1, name="b")
    step = dist.distribute(run_double)
    step(a, b, offset_provider={})
    assert a.halo_fresh and not b.halo_fresh
    d.exchange(b)
    assert b.halo_fresh
    np.testing.assert_array_equal(b.asnumpy(), 2.0 * a.asnumpy())


@pytest.mark.parametrize("backend", ["embedded", "cpu"])
def test_shallow_water_is_bitwise_equal_to_one_process(backend: str) -> None:
    r = shallow_water_mpi.run(backend, steps=6, size=20)
    if r.bitwise_equal is not None:
        assert r.bitwise_equal, r.max_abs_diff


def test_mesh_partition_and_exchange(comm: Any, rng: Any) -> None:
    mesh = periodic_triangular_mesh(12, 10)
    md = dist.decompose_mesh(mesh, layers=2)
    owners = dist.partition_cells(mesh, comm.Get_size())
    counts = np.bincount(owners, minlength=comm.Get_size())
    assert counts.max() - counts.min() <= 1
    fields = []
    for kind in (Cell, Edge, Vertex):
        g = np.arange(mesh.size(kind), dtype=np.float64) + 0.25
        f = dist.scatter(md, [kind], g, name=kind.value)
        f.ndarray[md.count(kind) :] = -1.0
        fields.append((kind, f))
    md.exchange(*(f for _, f in fields))  # three kinds in one message per neighbour
    for kind, f in fields:
        np.testing.assert_array_equal(f.asnumpy(), md.global_ids(kind) + 0.25)
    e2c = md.table("E2C")[: md.count(Edge, 1)]
    assert (md.global_ids(Cell)[e2c] == mesh.e2c[md.global_ids(Edge)[: md.count(Edge, 1)]]).all()


def test_mesh_diffusion_example_is_bitwise_equal_to_one_process() -> None:
    ex = _load_example()
    mesh = periodic_triangular_mesh(10, 8)
    result = ex.decomposed(mesh, 5, 0.02, gtx.cpu)
    if result is not None:
        np.testing.assert_array_equal(result, ex.one_process(mesh, 5, 0.02, gtx.cpu))


@pytest.mark.gpu
@pytest.mark.parametrize("size", [32, 512])
def test_shallow_water_on_gpus_is_bitwise_equal(size: int) -> None:
    """512 x 512: one process searches its kernels' variants (large enough), a rank's part of
    it may not, or choose others; the bits must not depend on it."""
    r = shallow_water_mpi.run("gpu", steps=6, size=size)
    if r.bitwise_equal is not None:
        assert r.bitwise_equal, r.max_abs_diff


# ----------------------------------------------------------------------------- whole runs
def _mpiexec() -> str:
    return str(Path(sys.executable).parent / "mpiexec")


def _single(comm: Any) -> None:
    if comm.Get_size() > 1 or not os.path.exists(_mpiexec()):
        pytest.skip("starts mpiexec itself: runs in the one-process test run")


def test_an_exception_on_one_rank_aborts_all(comm: Any, tmp_path: Path) -> None:
    _single(comm)
    script = tmp_path / "fail.py"
    script.write_text(
        "from stencilkit import distributed as dist\n"
        "comm = dist.world()\n"
        "dist.install_abort_hook()\n"
        "if comm.Get_rank() == 1:\n"
        "    raise RuntimeError('rank 1 broke')\n"
        "comm.Barrier()  # rank 0 would wait here forever\n"
    )
    t0 = time.perf_counter()
    proc = subprocess.run(
        [_mpiexec(), "-n", "2", sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "rank 1 broke" in proc.stderr and "aborting all ranks" in proc.stderr
    assert time.perf_counter() - t0 < 60


def test_cli_demo_on_two_ranks(comm: Any) -> None:
    _single(comm)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "stencilkit.cli",
            "demo",
            "--ranks",
            "2",
            "--steps",
            "4",
            "--size",
            "16",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 ranks (process grid 2x1)" in proc.stdout and "bitwise identical" in proc.stdout


@pytest.mark.gpu
@pytest.mark.parametrize("method", ["staged", "packed"])
def test_mesh_exchange_of_gpu_fields(method: str, gpu_buffers_for: Any) -> None:
    gpu_buffers_for(method)
    mesh = periodic_triangular_mesh(12, 10)
    md = dist.decompose_mesh(mesh, layers=1, gpu=True)
    g = np.arange(mesh.n_edges, dtype=np.float64)[:, None] * np.ones(3)
    f = dist.scatter(
        md,
        [Edge, gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)],
        g,
        extra={gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL): 3},
        name="vn",
        allocator=gtx.gpu,
    )
    f.ndarray[md.count(Edge) :] = -1.0
    md.exchange(f, method=method)
    np.testing.assert_array_equal(f.asnumpy(), g[md.global_ids(Edge)])
