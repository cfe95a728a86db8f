"""Cartesian decomposition: exchange, non-blocking exchange, gather/scatter, reductions, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import distributed as dist

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
METHODS = ["direct", "packed", "staged"]


def _expected(
    g: np.ndarray, f: dist.DecomposedField, d: dist.CartesianDecomposition, sentinel: float
) -> np.ndarray:
    """What ``f`` holds after an exchange: global values at wrapped indices, the sentinel past
    a bounded edge."""
    axes = []
    valid = np.ones(f.ndarray.shape, bool)
    for ax, (dim, r) in enumerate(f.domain.items()):
        idx = np.arange(r.start, r.stop)
        if dim in d.ranges:
            gr = d.ranges[dim]
            local = idx - gr.start
            n = len(gr)
            if d.periodic[d.dims.index(dim)]:
                local = local % n
            else:
                inside = (local >= 0) & (local < n)
                shape = [1] * f.ndarray.ndim
                shape[ax] = len(idx)
                valid &= inside.reshape(shape)
                local = np.clip(local, 0, n - 1)
            axes.append(local)
        else:
            axes.append(idx - r.start)
    out = g[np.ix_(*axes)].copy()
    out[~valid] = sentinel
    return out


def _poison_halo(f: dist.DecomposedField, value: float) -> None:
    own = f.owned.ndarray.copy()
    f.ndarray[...] = value
    f.owned.ndarray[...] = own


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("periodic", [True, False], ids=["periodic", "bounded"])
@pytest.mark.parametrize("halo", [1, 2])
@pytest.mark.parametrize("blocking", [True, False], ids=["blocking", "nonblocking"])
def test_exchange_fills_halos_with_neighbour_values(
    method: str, periodic: bool, halo: int, blocking: bool, rng: Any
) -> None:
    d = dist.decompose({I: 11, J: (3, 12)}, periodic=periodic)
    g2 = rng.random((11, 9))
    g3 = rng.random((11, 9, 4)).astype(np.float32)
    a = dist.scatter(d, [I, J], g2, halo=halo, name="a")
    b = dist.scatter(d, [I, J, K], g3 if d.rank == 0 else None, halo=halo, extra={K: 4}, name="b")
    assert b.dtype == np.float32  # from rank 0's array
    for f in (a, b):
        _poison_halo(f, -7.0)
    if blocking:  # phases along one dimension after the other, one message per neighbour
        d.exchange(a, b, method=method)
    else:  # every direction at once, corners included, one message per neighbour
        d.exchange_start(a, b, method=method).wait()
    np.testing.assert_array_equal(a.asnumpy(), _expected(g2, a, d, -7.0))
    np.testing.assert_array_equal(b.asnumpy(), _expected(g3, b, d, -7.0))
    assert a.halo_fresh and b.halo_fresh


def test_global_indices_and_owned_views() -> None:
    d = dist.decompose({I: (1, 17), J: (1, 9)}, periodic=True)
    f = d.zeros([I, J], halo=1, name="f")
    owned = d.owned()
    assert f.owned.domain == owned
    assert f.domain[I][1].start == owned[I][1].start - 1
    all_owned = d.comm.allgather(
        (owned[I][1].start, owned[I][1].stop, owned[J][1].start, owned[J][1].stop)
    )
    covered = np.zeros((16, 8), int)
    for i0, i1, j0, j1 in all_owned:
        covered[i0 - 1 : i1 - 1, j0 - 1 : j1 - 1] += 1
    assert (covered == 1).all()  # every point owned exactly once


def test_nonblocking_exchange_overlaps_other_work(rng: Any) -> None:
    d = dist.decompose({I: 12, J: 10}, periodic=True)
    g = rng.random((12, 10))
    f = dist.scatter(d, [I, J], g, halo=1, name="f")
    _poison_halo(f, np.nan)
    f.mark_written()
    pending = dist.exchange_start(f)
    assert not pending.done
    interior = float(f.owned.ndarray.sum())  # work on owned points while messages fly
    pending.wait()
    pending.wait()  # idempotent
    assert pending.done and f.halo_fresh
    np.testing.assert_array_equal(f.asnumpy(), _expected(g, f, d, np.nan))
    assert np.isfinite(interior)


def test_gather_scatter_and_reductions(rng: Any) -> None:
    d = dist.decompose({I: 9, J: 7}, periodic=False)
    g = rng.random((9, 7, 3))
    f = dist.scatter(d, [I, J, K], g, halo=1, extra={K: 3}, name="f")
    back = dist.gather(f)
    if d.rank == 0:
        np.testing.assert_array_equal(back, g)
    else:
        assert back is None
    assert dist.global_min(f) == g.min()
    assert dist.global_max(f) == g.max()
    assert dist.global_sum(f) == pytest.approx(g.sum(), rel=1e-14)


def test_repeated_exchanges_reuse_the_plan(rng: Any) -> None:
    d = dist.decompose({I: 8, J: 8}, periodic=True)
    f = dist.scatter(d, [I, J], rng.random((8, 8)), halo=1, name="f")
    plan = d.plan([f])
    for _ in range(3):
        d.exchange_start(f).wait()
    assert d.plan([f]) is plan
    sizes = d.message_sizes([f])  # blocking: faces only, spanning the J halo along I
    assert all(b > 0 for _, b in sizes) and len(sizes) <= 4


# ----------------------------------------------------------------------------- bad input
def test_grid_that_does_not_fit_the_ranks(comm: Any) -> None:
    with pytest.raises(
        dist.DistributedError,
        match=rf"a process grid 3x{comm.Get_size()} needs"
        rf" {3 * comm.Get_size()} ranks, the communicator has {comm.Get_size()}",
    ):
        dist.decompose({I: 8, J: 8}, grid=(3, comm.Get_size()))


def test_too_many_ranks_for_the_grid(comm: Any) -> None:
    if comm.Get_size() < 2:
        pytest.skip("needs 2 or more ranks")
    with pytest.raises(dist.DistributedError, match=r"cannot decompose I \(1 points\) over"):
        dist.decompose({I: 1, J: 1}, grid=(comm.Get_size(), 1))


def test_halo_wider_than_a_block(comm: Any) -> None:
    if comm.Get_size() < 2:
        pytest.skip("needs 2 or more ranks")
    d = dist.decompose({I: 2 * comm.Get_size(), J: 4}, grid=(comm.Get_size(), 1))
    with pytest.raises(
        dist.DistributedError, match="halo of 3 along I is wider than the smallest block"
    ):
        d.zeros([I, J], halo=3, name="h")


def test_mismatched_decompositions_in_one_exchange() -> None:
    d1 = dist.decompose({I: 8, J: 8}, periodic=True)
    d2 = dist.decompose({I: 10, J: 8}, periodic=True)
    a, b = d1.zeros([I, J], name="a"), d2.zeros([I, J], name="b")
    with pytest.raises(dist.DistributedError, match=r"field 'b' is decomposed as I\[0:10\]"):
        d1.exchange(a, b)


def test_ranks_exchanging_different_fields_fail_together(comm: Any) -> None:
    if comm.Get_size() < 2:
        pytest.skip("needs 2 or more ranks")
    d = dist.decompose({I: 8, J: 8}, periodic=True)
    a = d.zeros([I, J], halo=1, name="a" if d.rank == 0 else "other")
    with pytest.raises(dist.DistributedError, match="exchange other fields than rank 0"):
        d.exchange(a)


def test_an_error_on_one_rank_reaches_every_rank(comm: Any) -> None:
    with pytest.raises(dist.DistributedError, match=r"on rank 0 of \d+:\n  rank 0: only rank 0"):
        dist.agree(comm, "only rank 0 failed" if comm.Get_rank() == 0 else None)


def test_unknown_exchange_method() -> None:
    d = dist.decompose({I: 8, J: 8})
    f = d.zeros([I, J], name="f")
    with pytest.raises(dist.DistributedError, match="unknown exchange method 'mail'"):
        d.exchange(f, method="mail")


def test_a_plain_field_is_refused() -> None:
    with pytest.raises(dist.DistributedError, match="takes decomposed fields, got Field"):
        dist.exchange(gtx.zeros({I: 4, J: 4}))


@pytest.mark.gpu
@pytest.mark.parametrize("method", ["packed", "staged"])
def test_gpu_exchange(method: str, rng: Any, gpu_buffers_for: Any) -> None:
    gpu_buffers_for(method)
    d = dist.decompose({I: 11, J: 9}, periodic=True, gpu=True)
    g = rng.random((11, 9, 3))
    f = dist.scatter(d, [I, J, K], g, halo=2, extra={K: 3}, name="f", allocator=gtx.gpu)
    _poison_halo(f, -1.0)
    d.exchange(f, method=method)
    np.testing.assert_array_equal(f.asnumpy(), _expected(g, f, d, -1.0))


@pytest.mark.gpu
def test_field_on_the_wrong_gpu() -> None:
    import cupy

    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    d = dist.decompose({I: 8, J: 8}, gpu=True)
    other = (d.device_id + 1) % cupy.cuda.runtime.getDeviceCount()
    with cupy.cuda.Device(other):
        raw = gtx.zeros(d.local_domain([I, J], {I: 1, J: 1}), allocator=gtx.gpu)
    f = dist.DecomposedField(raw, d, {I: 1, J: 1}, "h")
    with pytest.raises(
        dist.DistributedError,
        match=rf"field 'h' is on GPU {other}, but rank {d.rank} uses GPU {d.device_id}",
    ):
        d.exchange(f)
