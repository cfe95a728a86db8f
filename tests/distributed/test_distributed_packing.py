"""Several fields in one exchange: one MPI message per neighbour, the values of separate exchanges.

The CPU transport ("direct") describes each side of a message as one MPI derived datatype over
the fields' memory, packing the regions of short contiguous runs into a buffer that is a block
of the same datatype. ``MIN_RUN`` decides which regions are described in place; the tests run
with the default, with everything described in place (1), with everything packed (10**9), and
with ranks that decide differently (the two ends of a message must still fit together).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import distributed as dist
from stencilkit.distributed import datatypes
from stencilkit.meshes import Cell, Edge, Vertex, periodic_triangular_mesh

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
MPI = pytest.importorskip("mpi4py.MPI")

RUNS = {"default": None, "in-place": 1, "packed": 10**9, "mixed": -1}


@pytest.fixture(params=list(RUNS))
def min_run(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    value = RUNS[request.param]
    if value == -1:  # even ranks describe everything in place, odd ranks pack everything
        value = 1 if MPI.COMM_WORLD.Get_rank() % 2 == 0 else 10**9
    if value is not None:
        monkeypatch.setattr(datatypes, "MIN_RUN", value)
    return str(request.param)


class _Counting:
    """A communicator that counts the messages a plan posts (and forwards everything)."""

    def __init__(self, comm: Any) -> None:
        self.comm = comm
        self.sent: list[int] = []

    def Sendrecv(self, out: Any, dest: int, *args: Any) -> Any:
        if out is not None and dest != MPI.PROC_NULL:
            self.sent.append(dest)
        return self.comm.Sendrecv(out, dest, *args)

    def Isend(self, buf: Any, dest: int, tag: int) -> Any:
        self.sent.append(dest)
        return self.comm.Isend(buf, dest, tag)

    def Send_init(self, buf: Any, dest: int, tag: int) -> Any:  # started by every exchange
        self.sent.append(dest)
        return self.comm.Send_init(buf, dest, tag)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.comm, name)


def _count(d: Any, fields: list[Any], blocking: bool) -> list[int]:
    """Destinations of the MPI messages of one exchange of ``fields`` (a send posted, or a
    persistent send made, which the blocking exchange then starts)."""
    plan = d._plan(fields, None, phased=blocking)
    plans = plan.phases if blocking else [plan]
    if blocking:
        plan.requests = None  # the phases' requests, remade below
    counters = [_Counting(p.comm) for p in plans]
    for p, c in zip(plans, counters):
        p.comm = c
        for r in (p.persistent or []) + (p.posted or []):  # the persistent requests: remade
            r.Free()  # through the counter by the exchange below
        p.persistent = p.posted = None
    try:
        if blocking:
            d.exchange(*fields)
        else:
            d.exchange_start(*fields).wait()
    finally:
        for p, c in zip(plans, counters):
            p.comm = c.comm
    return [r for c in counters for r in c.sent]


def _cartesian_fields(d: Any, rng: Any) -> tuple[list[Any], list[np.ndarray]]:
    """float32 [I, J, K] halo 1, float64 [I, J] halo 2, int32 [K, I, J] halo (I 2, J 1): an
    odd number of float32 before a float64 leaves the packed float64 unaligned."""
    ni, nj = (len(d.ranges[x]) for x in (I, J))
    g = [
        rng.random((ni, nj, 5)).astype(np.float32),
        rng.random((ni, nj)),
        rng.integers(-(2**30), 2**30, (3, ni, nj)).astype(np.int32),
    ]
    fields = [
        dist.scatter(d, [I, J, K], g[0], halo=1, extra={K: 5}, name="u"),
        dist.scatter(d, [I, J], g[1], halo=2, name="h"),
        dist.scatter(d, [K, I, J], g[2], halo={I: 2, J: 1}, extra={K: 3}, name="n"),
    ]
    return fields, g


def _poison(fields: list[Any], owned: list[np.ndarray]) -> None:
    for f, own in zip(fields, owned):
        f.ndarray[...] = -7
        f.owned.ndarray[...] = own
        f.mark_written()


@pytest.mark.parametrize("periodic", [True, False], ids=["periodic", "bounded"])
@pytest.mark.parametrize("blocking", [True, False], ids=["blocking", "nonblocking"])
def test_three_fields_in_one_exchange_equal_three_exchanges(
    periodic: bool, blocking: bool, min_run: str, rng: Any
) -> None:
    d = dist.decompose({I: 13, J: (2, 12)}, periodic=periodic)
    fields, _ = _cartesian_fields(d, rng)
    owned = [f.owned.ndarray.copy() for f in fields]
    _poison(fields, owned)
    for f in fields:  # the reference: one exchange per field
        d.exchange(f) if blocking else d.exchange_start(f).wait()
    separate = [f.ndarray.copy() for f in fields]
    assert all((s != -7).any() for s in separate)
    _poison(fields, owned)
    sent = _count(d, fields, blocking)
    for f, s in zip(fields, separate):
        assert f.ndarray.dtype == s.dtype
        np.testing.assert_array_equal(f.ndarray, s)
        assert f.halo_fresh
    # one MPI message per neighbour message, however many fields it carries
    sizes = d.message_sizes(fields, blocking=blocking)
    assert sorted(sent) == sorted(r for r, _ in sizes)
    assert d.message_counts(fields, blocking=blocking) == [(r, 1) for r, _ in sizes]
    plan = d._plan(fields, None, phased=blocking)
    sides = [x for p in (plan.phases if blocking else [plan]) for x in p.datatypes]
    if min_run == "in-place" and sizes:  # MPI reads and writes the fields: nothing packed
        assert all(not x.packed for x in sides) and any(x.datatype for x in sides)
    if min_run == "packed":
        assert all(x.datatype is None for x in sides)


def test_mesh_fields_in_one_exchange_equal_separate_exchanges(min_run: str, rng: Any) -> None:
    mesh = periodic_triangular_mesh(12, 10)
    md = dist.decompose_mesh(mesh, layers=2)
    g = [  # 3 float32 per edge first: the packed float64 after them may be unaligned
        rng.random((mesh.n_edges, 3)).astype(np.float32),
        rng.random(mesh.n_cells),
        rng.integers(-(2**30), 2**30, (3, mesh.n_vertices)).astype(np.int32),
    ]
    fields = [
        dist.scatter(md, [Edge, K], g[0], extra={K: 3}, name="e"),
        dist.scatter(md, [Cell], g[1], name="c"),
        dist.scatter(md, [K, Vertex], g[2], extra={K: 3}, name="v"),
    ]
    want = [
        g[0][md.global_ids(Edge)],
        g[1][md.global_ids(Cell)],
        g[2][:, md.global_ids(Vertex)],
    ]
    owned = [f.owned.ndarray.copy() for f in fields]
    for blocking in (True, False):
        _poison(fields, owned)
        for f in fields:
            md.exchange(f) if blocking else md.exchange_start(f).wait()
        for f, w in zip(fields, want):
            np.testing.assert_array_equal(f.ndarray, w)
        _poison(fields, owned)
        sent = _count(md, fields, blocking)
        for f, w in zip(fields, want):
            np.testing.assert_array_equal(f.ndarray, w)
        sizes = md.message_sizes(fields, blocking=blocking)
        assert sorted(sent) == sorted(r for r, _ in sizes)  # one per neighbour rank
        assert len({r for r, _ in sizes}) == len(sizes)
        assert md.message_counts(fields, blocking=blocking) == [(r, 1) for r, _ in sizes]


def test_evicted_and_freed_plans_are_rebuilt(rng: Any) -> None:
    d = dist.decompose({I: 10, J: 9}, periodic=True)
    d._cache.size = 1  # every other plan evicts (and frees) the one before
    g = [rng.random((10, 9)), rng.random((10, 9))]
    a = dist.scatter(d, [I, J], g[0], halo=1, name="a")
    b = dist.scatter(d, [I, J], g[1], halo=2, name="b")
    own = [a.owned.ndarray.copy(), b.owned.ndarray.copy()]
    for _ in range(3):
        for group in ([a, b], [b], [a]):
            _poison([a, b], own)
            d.exchange(*group)
            d.exchange_start(*group).wait()
            for f in group:
                assert (f.ndarray != -7).all()  # periodic: every halo point filled
    _poison([a, b], own)
    pending = d.exchange_start(a)
    d.exchange(b)  # evicts (frees) the plan of the exchange in flight: it still completes
    assert pending._plan.freed and pending._plan.posted is not None  # kept till it is done
    pending.wait()
    assert pending._plan.posted is None
    assert (a.ndarray != -7).all() and (b.ndarray != -7).all()
    d.free()
    _poison([a, b], own)
    d.exchange(a, b)  # a fresh plan after free()
    c = dist.scatter(d, [I, J], g[0], halo=1, name="a")
    np.testing.assert_array_equal(a.ndarray, c.ndarray)


def test_ranks_with_transports_that_do_not_fit_fail_together(comm: Any) -> None:
    if comm.Get_size() < 2:
        pytest.skip("needs 2 or more ranks")
    d = dist.decompose({I: 8, J: 8}, periodic=True)
    f = d.zeros([I, J], halo=1, name="f")
    with pytest.raises(dist.DistributedError, match="transports that do not fit together"):
        d.exchange(f, method="direct" if d.rank == 0 else "packed")


# ----------------------------------------------------------------------------- the datatypes
def _through_self(arr: np.ndarray, parts: list[tuple[int, Any]], monkeypatch: Any) -> bytes:
    """The bytes MPI sends for ``parts`` of ``arr``, every region described in place."""
    monkeypatch.setattr(datatypes, "MIN_RUN", 1)
    nbytes = lambda i, r: int(np.prod(r.shape)) * arr.itemsize  # noqa: E731
    side = datatypes.describe([arr] * len(parts), parts, nbytes)
    for _, r, view in side.packed:
        r.take(np, arr, view)
    total = sum(nbytes(i, r) for i, r in parts)
    out = np.zeros(total, np.uint8)
    MPI.COMM_SELF.Sendrecv(side.spec, 0, 0, out, 0, 0)
    side.free()
    return out.tobytes()


@pytest.mark.parametrize("order", ["C", "F"])
def test_datatypes_describe_strided_and_indexed_regions(order: str, monkeypatch: Any) -> None:
    from stencilkit.distributed.halo import Region

    arr = np.asarray(np.arange(7 * 6 * 5, dtype=np.float64).reshape(7, 6, 5), order=order)
    slices = (slice(1, 3), slice(0, 6), slice(2, 5))
    idx = np.array([4, 0, 1, 2, 5], np.int64)
    parts = [
        (0, Region(slices, (2, 6, 3))),
        (0, Region((1, idx), (7, 5, 5))),
        (0, Region((0, idx[:3]), (3, 6, 5))),
        (0, Region((2, idx[:2]), (7, 6, 2))),
    ]
    want = b"".join(
        [
            arr[slices].tobytes(),
            np.take(arr, idx, axis=1).tobytes(),
            np.take(arr, idx[:3], axis=0).tobytes(),
            np.take(arr, idx[:2], axis=2).tobytes(),
        ]
    )
    assert _through_self(arr, parts, monkeypatch) == want
    view = arr[::-1]  # negative strides: packed, still one message
    got = _through_self(view, [(0, Region(slices, (2, 6, 3)))], monkeypatch)
    assert got == view[slices].tobytes()


def test_large_contiguous_faces_go_in_place_in_one_message(comm: Any, rng: Any) -> None:
    """Faces along the slowest axis of 16 KiB or more are described where they lie (MPICH's
    single-copy path): the default exchange copies nothing through a pack buffer there."""
    n = comm.Get_size()
    d = dist.decompose({I: 4 * n, J: 1100}, periodic={I: True, J: False}, grid=(n, 1))
    g = [rng.random((4 * n, 1100)) for _ in range(3)]
    fields = [dist.scatter(d, [I, J], x, halo=2, name=f"q{k}") for k, x in enumerate(g)]
    owned = [f.owned.ndarray.copy() for f in fields]
    _poison(fields, owned)
    d.exchange(*fields)
    for f, x in zip(fields, g):
        c = dist.scatter(d, [I, J], x, halo=2, name=f.name)  # exchanged field by field
        np.testing.assert_array_equal(f.ndarray[:, 2:-2], c.ndarray[:, 2:-2])  # J is bounded
    phase_i = d._plan(fields, None, phased=True).phases[-1]
    if n > 1:
        assert [x.packed for x in phase_i.datatypes] == [[], [], [], []]
        assert all(x.datatype is not None for x in phase_i.datatypes)
        assert d.message_counts(fields) == [(r, 1) for r, _ in d.message_sizes(fields)]


def test_exchanges_in_flight_together(min_run: str, rng: Any) -> None:
    """Two non-blocking exchanges of other fields in flight, a blocking one in between, the
    same fields started twice (the second start cannot reuse the persistent requests in
    flight), completed in another order: every halo gets its own field's values."""
    d = dist.decompose({I: 12, J: 10}, periodic=True)
    g = [rng.random((12, 10)) for _ in range(4)]
    a, b, c, e = (dist.scatter(d, [I, J], x, halo=1, name=n) for x, n in zip(g, "abce"))
    want = [f.ndarray.copy() for f in (a, b, c, e)]
    for _ in range(2):
        _poison([a, b, c, e], [f.owned.ndarray.copy() for f in (a, b, c, e)])
        first = d.exchange_start(a, b)
        second = d.exchange_start(c)
        again = d.exchange_start(c)
        d.exchange(e)
        again.wait()
        second.wait()
        first.wait()
        for f, w in zip((a, b, c, e), want):
            np.testing.assert_array_equal(f.ndarray, w)
