"""Halo exchange and weak scaling over MPI, each measured beside its baseline in the same run.

CPU (``--cpu``, run with ``mpiexec -n 2``): the exchange of a 2-D halo of 1 or 3 fields through
``stencilkit.distributed`` against a plain mpi4py ``Sendrecv`` of ONE contiguous buffer per
neighbour message carrying the same total bytes (all fields' halos) between the same ranks,
timed alternately in one run (best of 5 blocks of ``--repeats`` exchanges, each block's median);
a second baseline posts the same contiguous buffers all at once (``Irecv``/``Isend``), as the
exchange's persistent requests do.
The ``msgs`` column counts the MPI messages our exchange posts (one per neighbour message,
however many fields), and the last lines compare ways of sending 3 faces to one neighbour.

GPU (``--gpu``, ``mpiexec -n 2`` on a host with two GPUs, one per rank):

* weak scaling of a 3-D diffusion time loop (5-point horizontal Laplacian on ``nx x ny x nz``
  per rank, fp64, gpu backend): one rank alone (periodic onto itself) against two ranks with
  the same size each, the non-blocking exchange overlapping the interior update;
* halo-exchange bandwidth (bytes each rank sends per second) against a plain CuPy peer copy of
  the same bytes from GPU 0 to GPU 1 (rank 0, when it sees both GPUs), and against the copies
  the staged transport cannot avoid: the same bytes device -> pinned host -> device on one GPU.

On a host with fewer GPUs than ranks, the ranks share GPUs (``local rank % GPUs``): the run then
checks the GPU exchange across ranks and times its path, and the weak-scaling lines say that
they are no scaling figure (two ranks on one GPU halve each one's share of it).

Prints one table per section on rank 0 and, with ``--json PATH``, writes the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import numpy as np

import stencilkit as gtx
from stencilkit import distributed as dist

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
F3 = gtx.Field[gtx.Dims[I, J, K], gtx.float64]


@gtx.field_operator
def diffuse(a: F3, nu: gtx.float64) -> F3:
    return a + nu * (-4.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1))


@gtx.program
def diffuse_region(
    a: F3,
    out: F3,
    nu: gtx.float64,
    i0: gtx.int32,
    i1: gtx.int32,
    j0: gtx.int32,
    j1: gtx.int32,
    nz: gtx.int32,
):
    diffuse(a, nu, out=out, domain={I: (i0, i1), J: (j0, j1), K: (0, nz)})


def _seconds(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _timed(comm: Any, fn: Any, repeats: int) -> float:
    """Median over ``repeats`` of the slowest rank's time of one ``fn()``, in seconds."""
    times = []
    for _ in range(repeats):
        comm.Barrier()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    worst = comm.allreduce(statistics.median(times), op=dist.comm.mpi().MAX)
    return float(worst)


# ----------------------------------------------------------------------------- CPU
def cpu_exchange(
    n: int,
    halo: int,
    nfields: int,
    periodic_j: bool,
    repeats: int,
    grid: tuple[int, int] | None = None,
    blocking: bool = True,
) -> dict[str, Any]:
    comm = dist.world()
    d = dist.decompose(
        {I: n, J: n}, periodic={I: grid is None or grid[0] > 1, J: periodic_j}, grid=grid
    )
    rng = np.random.default_rng(d.rank)
    fields = [d.zeros([I, J], halo=halo, name=f"q{k}") for k in range(nfields)]
    for f in fields:
        f.owned.ndarray[...] = rng.random(f.owned.ndarray.shape)
    messages = d.message_sizes(fields, blocking=blocking)  # one per neighbour message
    mpi_messages = sum(c for _, c in d.message_counts(fields, blocking=blocking))
    sizes = [b for _, b in messages]
    sbufs = [np.ones(s // 8) for s in sizes]  # ONE contiguous buffer per message: all fields
    rbufs = [np.empty(s // 8) for s in sizes]
    ranks = [r for r, _ in messages]

    def plain() -> None:
        for s, r, nb in zip(sbufs, rbufs, ranks):
            comm.Sendrecv(s, dest=nb, sendtag=7, recvbuf=r, source=nb, recvtag=7)

    MPI = dist.comm.mpi()

    def at_once() -> None:  # the same buffers, every message in flight together
        reqs = [comm.Irecv(r, nb, 8) for r, nb in zip(rbufs, ranks)]
        reqs += [comm.Isend(s, nb, 8) for s, nb in zip(sbufs, ranks)]
        MPI.Request.Waitall(reqs)

    def ours() -> None:
        if blocking:
            d.exchange(*fields)
        else:
            d.exchange_start(*fields).wait()

    t_ours, t_plain, t_once = [], [], []
    for _ in range(5):  # alternate, so that all see the same machine state
        t_ours.append(_timed(comm, ours, repeats))
        t_plain.append(_timed(comm, plain, repeats))
        t_once.append(_timed(comm, at_once, repeats))
    a, b, c = min(t_ours), min(t_plain), min(t_once)
    d.free()
    return {
        "n": n,
        "halo": halo,
        "fields": nfields,
        "periodic_j": periodic_j,
        "blocking": blocking,
        "messages": len(sizes),
        "mpi_messages": mpi_messages,
        "bytes": sum(sizes),
        "exchange_us": a * 1e6,
        "sendrecv_us": b * 1e6,
        "ratio": a / b,
        "at_once_us": c * 1e6,
        "ratio_at_once": a / c,
        "grid": d.grid,
        "ranks": d.size,
    }


def message_shapes(repeats: int, n: int = 4096, h: int = 2, nfields: int = 3) -> dict[str, float]:
    """Ways of sending ``nfields`` faces (contiguous in their fields) to one neighbour: the
    same bytes as one contiguous buffer, as ``nfields`` messages (zero copy), packed with NumPy
    into one message, as one MPI datatype (``hindexed`` of bytes) over the faces relative to the
    first face (what ``exchange`` does), and the same type from ``MPI_BOTTOM`` (absolute
    addresses)."""
    comm = dist.world()
    nb = (comm.Get_rank() + 1) % comm.Get_size()
    m = h * (n + 2 * h)
    arrs = [np.random.default_rng(k).random((2 * h + 8, n + 2 * h)) for k in range(nfields)]
    s, r = np.ones(nfields * m), np.empty(nfields * m)
    MPI = dist.comm.mpi()

    def hindexed(faces: list[Any], base: int) -> Any:  # bytes, as exchange makes it
        addrs = [MPI.Get_address(f) - base for f in faces]
        return MPI.BYTE.Create_hindexed([f.nbytes for f in faces], addrs)

    out_f, in_f = [a[h : 2 * h] for a in arrs], [a[0:h] for a in arrs]
    rel = [hindexed(out_f, MPI.Get_address(out_f[0])), hindexed(in_f, MPI.Get_address(in_f[0]))]
    bottom = [hindexed(out_f, 0), hindexed(in_f, 0)]
    for t in rel + bottom:
        t.Commit()

    def one() -> None:
        comm.Sendrecv(s, nb, 1, r, nb, 1)

    def separate() -> None:
        reqs = [comm.Irecv(a, nb, 1) for a in in_f] + [comm.Isend(a, nb, 1) for a in out_f]
        MPI.Request.Waitall(reqs)

    def packed() -> None:
        for k, a in enumerate(out_f):
            s[k * m : (k + 1) * m].reshape(h, -1)[...] = a
        comm.Sendrecv(s, nb, 1, r, nb, 1)
        for k, a in enumerate(in_f):
            a[...] = r[k * m : (k + 1) * m].reshape(h, -1)

    def datatype() -> None:
        comm.Sendrecv([out_f[0], 1, rel[0]], nb, 1, [in_f[0], 1, rel[1]], nb, 1)

    def from_bottom() -> None:
        comm.Sendrecv([MPI.BOTTOM, 1, bottom[0]], nb, 1, [MPI.BOTTOM, 1, bottom[1]], nb, 1)

    ways = (
        ("one_contiguous_us", one),
        ("separate_messages_us", separate),
        ("packed_us", packed),
        ("datatype_us", datatype),
        ("datatype_mpi_bottom_us", from_bottom),
    )
    best: dict[str, list[float]] = {name: [] for name, _ in ways}
    for _ in range(3):  # alternate
        for name, fn in ways:
            best[name].append(_timed(comm, fn, repeats))
    out = {name: min(v) * 1e6 for name, v in best.items()}
    for t in rel + bottom:
        t.Free()
    if comm.Get_rank() == 0:
        print(
            f"\n{nfields} faces of {m * 8} B to one neighbour (Sendrecv both ways):"
            f"\n  one contiguous buffer                 {out['one_contiguous_us']:7.1f} us"
            f"\n  {nfields} messages (zero copy)             {out['separate_messages_us']:7.1f} us"
            f"\n  packed into one with NumPy            {out['packed_us']:7.1f} us"
            f"\n  one hindexed datatype (exchange does) {out['datatype_us']:7.1f} us"
            f"\n  the same datatype from MPI_BOTTOM     {out['datatype_mpi_bottom_us']:7.1f} us"
        )
    return out


def run_cpu(repeats: int) -> list[dict[str, Any]]:
    rows = []
    for n, halo, nf, pj, grid, blocking in (
        (1024, 2, 1, False, None, True),
        (4096, 2, 1, False, None, True),
        (1024, 2, 3, False, None, True),
        (4096, 2, 3, False, None, True),
        (4096, 2, 3, False, None, False),
        (1024, 2, 3, True, None, True),
        (4096, 3, 3, True, None, True),
        (1024, 2, 3, True, (1, 2), True),
    ):
        if grid is not None and dist.world().Get_size() != 2:
            continue
        rows.append(cpu_exchange(n, halo, nf, pj, repeats, grid, blocking))
    if dist.world().Get_rank() == 0:
        print(
            f"\nhalo exchange on the CPU, {rows[0]['ranks']} ranks, fp64 fields [I, J], I periodic"
            " where it has several ranks; baseline: plain mpi4py Sendrecv of ONE contiguous"
            " buffer per neighbour message, same total bytes and partners (one after the other;"
            " 'at once': the same buffers all in flight together, Irecv/Isend)"
        )
        print(
            f"{'field':>10} {'grid':>5} {'halo':>4} {'fields':>6} {'J':>9} {'call':>9} {'msgs':>4}"
            f" {'bytes':>9} {'exchange':>11} {'Sendrecv':>11} {'ratio':>6} {'at once':>11}"
            f" {'ratio':>6}"
        )
        for r in rows:
            grid = "x".join(map(str, r["grid"]))
            print(
                f"{r['n']:>5}x{r['n']:<4} {grid:>5} {r['halo']:>4} {r['fields']:>6}"
                f" {'periodic' if r['periodic_j'] else 'bounded':>9}"
                f" {'blocking' if r['blocking'] else 'start':>9} {r['mpi_messages']:>4}"
                f" {r['bytes']:>9} {r['exchange_us']:>8.1f} us {r['sendrecv_us']:>8.1f} us"
                f" {r['ratio']:>6.2f} {r['at_once_us']:>8.1f} us {r['ratio_at_once']:>6.2f}"
            )
    return rows


# ----------------------------------------------------------------------------- GPU
def _loop(d: Any, nx: int, ny: int, nz: int, steps: int, overlap: bool) -> float:
    import cupy

    step = diffuse_region.with_backend(gtx.gpu)
    a = d.zeros([I, J, K], halo=1, extra={K: nz}, name="a", allocator=gtx.gpu)
    b = d.zeros([I, J, K], halo=1, extra={K: nz}, name="b", allocator=gtx.gpu)
    a.owned.ndarray[...] = cupy.random.default_rng(d.rank).random(a.owned.ndarray.shape)
    ri, rj = d.owned_range(I), d.owned_range(J)
    i0, i1, j0, j1 = ri.start, ri.stop, rj.start, rj.stop
    nu = 0.1

    def one(src: Any, dst: Any) -> None:
        if overlap:
            pending = d.exchange_start(src)
            step(src.field, dst.field, nu, i0 + 1, i1 - 1, j0 + 1, j1 - 1, nz, offset_provider={})
            pending.wait()
            step(src.field, dst.field, nu, i0, i0 + 1, j0, j1, nz, offset_provider={})
            step(src.field, dst.field, nu, i1 - 1, i1, j0, j1, nz, offset_provider={})
            step(src.field, dst.field, nu, i0 + 1, i1 - 1, j0, j0 + 1, nz, offset_provider={})
            step(src.field, dst.field, nu, i0 + 1, i1 - 1, j1 - 1, j1, nz, offset_provider={})
        else:
            d.exchange(src)
            step(src.field, dst.field, nu, i0, i1, j0, j1, nz, offset_provider={})

    for _ in range(3):  # compile, tune, warm
        one(a, b)
        one(b, a)
    cupy.cuda.get_current_stream().synchronize()
    d.comm.Barrier()
    t0 = time.perf_counter()
    for _ in range(steps // 2):
        one(a, b)
        one(b, a)
    cupy.cuda.get_current_stream().synchronize()
    t = time.perf_counter() - t0
    return float(d.comm.allreduce(t, op=dist.comm.mpi().MAX)) / (2 * (steps // 2))


def run_gpu(nx: int, ny: int, nz: int, steps: int) -> dict[str, Any]:
    import cupy

    world = dist.world()
    rank, size = world.Get_rank(), world.Get_size()
    out: dict[str, Any] = {"nx": nx, "ny": ny, "nz": nz, "ranks": size}
    node = world.Split_type(dist.comm.mpi().COMM_TYPE_SHARED)
    out["ranks_per_gpu"] = -(-node.Get_size() // cupy.cuda.runtime.getDeviceCount())
    node.Free()
    # weak scaling: one rank alone, then all ranks, the same points per rank
    solo = world.Split(0 if rank == 0 else 1, rank)
    if rank == 0:
        d1 = dist.decompose({I: nx, J: ny}, periodic=True, comm=solo, gpu=True)
        out["t1_blocking_ms"] = _loop(d1, nx, ny, nz, steps, overlap=False) * 1e3
        out["t1_overlap_ms"] = _loop(d1, nx, ny, nz, steps, overlap=True) * 1e3
    world.Barrier()
    dn = dist.decompose({I: nx * size, J: ny}, periodic=True, gpu=True, grid=(size, 1))
    tn_b = _loop(dn, nx, ny, nz, steps, overlap=False) * 1e3
    tn_o = _loop(dn, nx, ny, nz, steps, overlap=True) * 1e3
    out.update(
        tn_blocking_ms=tn_b,
        tn_overlap_ms=tn_o,
        method=dn._method([dn.zeros([I, J], allocator=gtx.gpu)], None),
    )
    # exchange bandwidth: a wide halo, bytes sent per rank per second
    h = 8
    f = dn.zeros([I, J, K], halo=h, extra={K: nz}, name="wide", allocator=gtx.gpu)
    nbytes = sum(b for _, b in dn.message_sizes([f]))

    def ex() -> None:
        dn.exchange(f)
        cupy.cuda.get_current_stream().synchronize()

    ex()
    t_ex = _timed(world, ex, 20)
    out.update(halo_bytes=nbytes, exchange_ms=t_ex * 1e3, exchange_gbs=nbytes / t_ex / 1e9)
    if rank == 0:  # the staged transport's own copies: device -> pinned host -> device
        import cupyx

        dev = cupy.ones(nbytes // 8)
        host = cupyx.empty_pinned((nbytes // 8,), np.float64)
        back = cupy.empty_like(dev)

        def round_trip() -> None:
            dev.get(out=host)
            back.set(host)
            cupy.cuda.get_current_stream().synchronize()

        round_trip()
        t_rt = statistics.median(_seconds(round_trip) for _ in range(20))
        out.update(staged_copies_ms=t_rt * 1e3, staged_copies_gbs=nbytes / t_rt / 1e9)
    if rank == 0 and cupy.cuda.runtime.getDeviceCount() >= 2:
        with cupy.cuda.Device(0):
            src = cupy.ones(nbytes // 8)
        with cupy.cuda.Device(1):
            dst = cupy.empty(nbytes // 8)
        try:
            cupy.cuda.runtime.deviceEnablePeerAccess(1)
        except Exception:
            pass
        for _ in range(3):
            dst.data.copy_from_device(src.data, nbytes)
        cupy.cuda.Device(1).synchronize()
        reps = 50
        t0 = time.perf_counter()
        for _ in range(reps):
            dst.data.copy_from_device(src.data, nbytes)
        cupy.cuda.Device(1).synchronize()
        cupy.cuda.Device(0).synchronize()
        t_copy = (time.perf_counter() - t0) / reps
        out.update(peer_copy_ms=t_copy * 1e3, peer_copy_gbs=nbytes / t_copy / 1e9)
    if rank == 0:
        o = out
        eff_b = o["t1_blocking_ms"] / o["tn_blocking_ms"]
        eff_o = o["t1_overlap_ms"] / o["tn_overlap_ms"]
        o.update(efficiency_blocking=eff_b, efficiency_overlap=eff_o)
        print(
            f"\nweak scaling, 3-D diffusion {nx}x{ny}x{nz} fp64 per GPU, gpu backend, exchange method {o['method']}"
        )
        print(
            f"  1 GPU   blocking {o['t1_blocking_ms']:.3f} ms/step   overlapped {o['t1_overlap_ms']:.3f} ms/step"
        )
        print(
            f"  {size} GPUs  blocking {o['tn_blocking_ms']:.3f} ms/step   overlapped {o['tn_overlap_ms']:.3f} ms/step"
        )
        if o["ranks_per_gpu"] > 1:
            print(
                f"  efficiency  blocking {eff_b:.1%}   overlapped {eff_o:.1%}   NOT a scaling figure:"
                f" {o['ranks_per_gpu']} ranks share each GPU on this host"
            )
        else:
            print(f"  efficiency  blocking {eff_b:.1%}   overlapped {eff_o:.1%}   (target >= 90%)")
        print(
            f"\nhalo exchange bandwidth, halo {h}, {nbytes / 1e6:.1f} MB sent per rank:"
            f" {o['exchange_ms']:.3f} ms = {o['exchange_gbs']:.1f} GB/s"
        )
        print(
            f"  the staged transport's own copies of the same bytes (device -> pinned host -> device,"
            f" one GPU): {o['staged_copies_ms']:.3f} ms = {o['staged_copies_gbs']:.1f} GB/s;"
            f" ratio {o['exchange_gbs'] / o['staged_copies_gbs']:.2f}"
        )
        if "peer_copy_gbs" in o:
            print(
                f"  plain CuPy peer copy GPU0->GPU1 of the same bytes: {o['peer_copy_ms']:.3f} ms ="
                f" {o['peer_copy_gbs']:.1f} GB/s; ratio {o['exchange_gbs'] / o['peer_copy_gbs']:.2f}"
            )
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cpu", action="store_true")
    p.add_argument("--gpu", action="store_true")
    p.add_argument("--repeats", type=int, default=200)
    p.add_argument(
        "--size", type=int, nargs=3, default=(1024, 1024, 128), metavar=("NX", "NY", "NZ")
    )
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    result: dict[str, Any] = {}
    with dist.abort_on_error():
        if args.cpu or not args.gpu:
            result["cpu"] = run_cpu(args.repeats)
            result["cpu_message_shapes"] = message_shapes(args.repeats)
        if args.gpu:
            result["gpu"] = run_gpu(*args.size, args.steps)
    if args.json and dist.world().Get_rank() == 0:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
