"""Locality iteration orders for kernels that gather through a neighbour table (issue 13).

A kernel over points ``[s, e)`` of a horizontal dimension H that reads ``field[T[p, j]]`` through
a table T (H -> S) fetches each S column from DRAM once per point that reads it, unless a point
that shares it ran shortly before (its column is then still in L2). With a randomly numbered mesh,
the points ``s, s+1, ...`` are scattered in space and nothing is reused. ``locality_order`` gives
a permutation of ``[s, e)`` in which points that share neighbours are close together; the
generated kernel maps thread ``t`` to the point ``order[t]`` instead of ``s + t`` (no user data is
renumbered, and every point computes exactly what it computed before: results are bitwise equal).

The order is a breadth-first search over the graph "two points are adjacent when they read a
common S", grown from a few seeds at once (one per ``REGION_POINTS`` points): every point joins
the region of the seed that reaches it first, and the order lists region after region, each
ring by ring (a Cuthill-McKee order per region). It runs level by level in NumPy (0.28-0.30 s
for 1-1.5M randomly numbered points on the H200's host, 0.54-0.65 s on the 2-core build machine:
random memory access) or on the GPU in three small kernels and one compaction per level (0.05-0.09 s on an H200, once CuPy
has compiled its kernels), with the same result; it is computed only when needed and stored
(``order_for``, on the host up to ``HOST_ORDER_MAX_POINTS``). Points that no search reaches
(another component of the graph, a row of skip values only) are seeded in later rounds.

>>> import numpy as np
>>> table = np.array([[0, 1], [5, 6], [1, 2], [6, 7], [2, 3]])   # points 0, 2, 4 share; 1, 3 too
>>> locality_order(table, 0, 5).tolist()
[0, 2, 4, 1, 3]
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ...core.log import begin, get_logger
from ...core.records import record
from ...storage.namespaces import to_host

_I64 = npt.NDArray[np.int64]
_log = get_logger("cuda.order")

#: Points per region grown from one seed: a region's rings are then a few hundred points, and the
#: search takes few levels (its cost is about a constant per level).
REGION_POINTS = 1 << 14

#: Readers per neighbour beyond which a table is no mesh table (a hub read by many points): the
#: natural order is kept.
MAX_READERS = 64


def _xp(a: Any) -> Any:
    """The array module of ``a``: CuPy for a CuPy array (the order is then computed on its GPU,
    where the gathers are cheap), else NumPy. Both give the same order (only sorts of distinct
    keys and order-free scatters are used)."""
    if type(a).__module__.startswith("cupy"):
        import cupy

        return cupy
    return np


def _sorted_pairs(xp: Any, values: Any, positions: Any, span: int) -> tuple[Any, Any]:
    """``values`` (all >= 0) sorted, equal ones in the order of their ``positions`` (distinct,
    all in ``[0, span)``), and those positions: one sort of the distinct keys (value, position),
    both read back from the keys in one sequential pass each (a permutation applied to the
    arrays would be two random gathers: 170 ms each for 3M values on the H200's host). NumPy's
    radix sort of 16-bit digits in two passes was 1.6x faster on the 2-core build machine and 3x
    slower on the H200's host, where ``np.sort`` is vectorized (2026-12-03)."""
    keys = xp.sort(values.astype(xp.int64, copy=False) * span + positions)
    return keys // span, keys % span


def _readers(xp: Any, rows: Any, n_targets: int) -> Any:
    """The table's inverse, padded: row ``s`` lists the points reading target ``s`` in increasing
    order, then -1 (row ``n_targets``: only -1, for skip values). One sort of distinct keys
    (target, then position in the table); None where a target has more than ``MAX_READERS``
    readers, or where the keys would not fit 63 bits."""
    n, m = rows.shape
    total = n * m
    if n_targets * total >= 1 << 62:
        return None
    flat = rows.ravel()
    valid = xp.flatnonzero(flat >= 0)
    sorted_keys, at = _sorted_pairs(xp, flat[valid], valid, total)
    point = at // m
    counts = xp.bincount(sorted_keys, minlength=n_targets)
    width = int(counts.max()) if counts.size else 0
    if width > MAX_READERS:
        return None
    starts = xp.zeros(n_targets, xp.int64)
    starts[1:] = xp.cumsum(counts[:-1])
    rank = xp.arange(len(sorted_keys), dtype=xp.int64) - starts[sorted_keys]
    readers = xp.full((n_targets + 1, max(width, 1)), -1, xp.int64)
    readers[sorted_keys, rank] = point
    return readers


def _first_occurrences(xp: Any, values: Any) -> Any:
    """The positions of the first occurrence of each distinct value of ``values`` (all >= 0),
    in increasing order: a sort of the distinct keys (value, position), the first of each run."""
    size = len(values)
    value, pos = _sorted_pairs(xp, values, xp.arange(size, dtype=xp.int64), size)
    first = xp.ones(size, bool)
    first[1:] = value[1:] != value[:-1]
    if xp is not np:
        return xp.sort(pos[first])
    mask = np.zeros(size, bool)  # distinct positions in increasing order: no second sort
    mask[pos[first]] = True
    return np.flatnonzero(mask)


_STEP_SOURCE = r"""
typedef long long i64;
typedef unsigned long long u64;

// candidate t of a level: reader t % w of neighbour (t / w) % m of frontier point t / fan
__device__ __forceinline__ i64 sk_candidate(const i64* frontier, const i64* rows,
                                            const i64* readers, i64 t, int m, int w,
                                            i64 n_targets) {
    const i64 fan = (i64)m * w;
    const i64 f = t / fan;
    const int r = (int)(t - f * fan);
    i64 target = rows[frontier[f] * m + r / w];
    if (target < 0) target = n_targets;  // a skip value: the padding row (no reader)
    return readers[target * w + r % w];
}

// each candidate not reached yet claims its point; the first candidate (least t) wins
extern "C" __global__ void sk_order_claim(const i64* frontier, i64 total, const i64* rows,
                                          const i64* readers, int m, int w, i64 n_targets,
                                          const bool* reached, u64* claim) {
    const i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    const i64 p = sk_candidate(frontier, rows, readers, t, m, w, n_targets);
    if (!reached[p]) atomicMin(claim + p, (u64)t);
}

extern "C" __global__ void sk_order_first(const i64* frontier, i64 total, const i64* rows,
                                          const i64* readers, int m, int w, i64 n_targets,
                                          const bool* reached, const u64* claim, bool* first) {
    const i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    const i64 p = sk_candidate(frontier, rows, readers, t, m, w, n_targets);
    first[t] = !reached[p] && claim[p] == (u64)t;
}

// the next frontier: the winning candidates in the order of t, each in its reacher's region
extern "C" __global__ void sk_order_next(const i64* at, i64 count, const i64* frontier,
                                         const i64* region, const i64* rows, const i64* readers,
                                         int m, int w, i64 n_targets, i64* next,
                                         i64* next_region, bool* reached) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    const i64 t = at[i];
    const i64 p = sk_candidate(frontier, rows, readers, t, m, w, n_targets);
    next[i] = p;
    next_region[i] = region[t / ((i64)m * w)];
    reached[p] = true;
}
"""
_STEP_MODULE: Any = None


class _Step:
    """One level of the search on the GPU in three small kernels and one compaction, instead of
    some twenty CuPy operations and a sort: each candidate not reached yet claims its point with
    ``atomicMin`` of its position, so the first candidate wins, as in the NumPy form (the same
    order; tested)."""

    def __init__(self, rows: Any, readers: Any, reached: Any, n_targets: int) -> None:
        import cupy

        global _STEP_MODULE
        if _STEP_MODULE is None:
            _STEP_MODULE = cupy.RawModule(code=_STEP_SOURCE)
        self.cp = cupy
        self.claim_k = _STEP_MODULE.get_function("sk_order_claim")
        self.first_k = _STEP_MODULE.get_function("sk_order_first")
        self.next_k = _STEP_MODULE.get_function("sk_order_next")
        self.rows, self.readers, self.reached = rows, readers, reached
        self.m, self.w = np.int32(rows.shape[1]), np.int32(readers.shape[1])
        self.n_targets = np.int64(n_targets)
        self.claim = cupy.full(len(reached), np.iinfo(np.uint64).max, np.uint64)

    def __call__(self, frontier: Any, region: Any) -> tuple[Any, Any]:
        cp = self.cp
        total = len(frontier) * int(self.m) * int(self.w)
        shape = (self.rows, self.readers, self.m, self.w, self.n_targets, self.reached)
        blocks = ((total + 255) // 256,)
        self.claim_k(blocks, (256,), (frontier, np.int64(total), *shape, self.claim))
        first = cp.empty(total, bool)
        self.first_k(blocks, (256,), (frontier, np.int64(total), *shape, self.claim, first))
        at = cp.flatnonzero(first)
        count = len(at)
        nxt, nxt_region = cp.empty(count, np.int64), cp.empty(count, np.int64)
        if count:
            self.next_k(
                ((count + 255) // 256,),
                (256,),
                (at, np.int64(count), frontier, region, *shape[:5], nxt, nxt_region, self.reached),
            )
        return nxt, nxt_region


def _candidates(rows: _I64, readers: _I64, frontier: Any) -> Any:
    """``readers[rows[frontier]].ravel()`` for NumPy arrays as two takes of whole rows: NumPy's
    multi-dimensional fancy index took 4-14 times longer (1.8-6.5 against 0.3-0.5 ms for a
    20k-point frontier of a 1M-cell C2E on the H200's host, two calls; 7.6 against 0.8 ms on
    the 2-core build machine)."""
    return readers.take(rows.take(frontier, axis=0).ravel(), axis=0).ravel()


def locality_order(table: Any, start: int, stop: int, region_points: int = REGION_POINTS) -> Any:
    """A permutation of ``[start, stop)`` (int32 where it fits, else int64) in which points that
    read common entries of ``table`` are close: breadth-first, region by region (see the module
    docstring). ``table``: rows indexed by the points (row ``p`` for point ``p``), entries the
    neighbours' indices, negative for a missing neighbour (a skip value). A CuPy ``table`` gives
    a CuPy result, computed on its GPU; the same order as for the same table in NumPy."""
    xp = _xp(table)
    n = stop - start
    dtype = np.int32 if stop <= np.iinfo(np.int32).max else np.int64
    if n <= 0:
        return xp.empty(0, dtype)
    rows = xp.ascontiguousarray(xp.asarray(table)[start:stop].reshape(n, -1).astype(xp.int64))
    n_targets = int(rows.max()) + 1 if rows.size else 0
    if n_targets <= 0:
        return xp.arange(start, stop, dtype=dtype)
    rows[rows < 0] = -1  # a skip value reads the padding row (the last): no reader
    readers = _readers(xp, rows, n_targets)
    if readers is None:
        return xp.arange(start, stop, dtype=dtype)
    # per point: reached yet; index n is the padding (a missing reader), always reached
    reached = xp.zeros(n + 1, bool)
    reached[n] = True
    readers[readers < 0] = n
    levels: list[Any] = []
    regions: list[Any] = []
    n_regions, seeds_wanted, done = 0, max(1, n // max(region_points, 1)), 0
    fan = rows.shape[1] * readers.shape[1]
    step = _Step(rows, readers, reached, n_targets) if xp is not np else None
    while done < n:
        left = xp.flatnonzero(~reached[:n])
        pick = np.linspace(0, len(left) - 1, min(seeds_wanted, len(left))).astype(np.int64)
        frontier = left[xp.asarray(np.unique(pick))]
        region = xp.arange(n_regions, n_regions + len(frontier), dtype=xp.int64)
        n_regions += len(frontier)
        seeds_wanted *= 4  # later rounds seed what is left (small components): many at once
        reached[frontier] = True
        while len(frontier):
            levels.append(frontier)
            regions.append(region)
            done += len(frontier)
            if step is not None:
                frontier, region = step(frontier, region)
                continue
            cand = _candidates(rows, readers, frontier)  # fan candidates per frontier point
            fresh = xp.flatnonzero(~reached[cand])
            if not len(fresh):
                break
            # each point reached joins the region of the first frontier point that reaches it
            firsts = _first_occurrences(xp, cand[fresh])
            frontier, region = cand[fresh[firsts]], region[fresh[firsts] // fan]
            reached[frontier] = True
    nodes = xp.concatenate(levels)
    owner = xp.concatenate(regions)
    # regions in order, each ring by ring: a sort of the distinct keys (region, position)
    _, at = _sorted_pairs(xp, owner, xp.arange(n, dtype=xp.int64), n)
    order = nodes[at] + start
    return order.astype(dtype)


# ----------------------------------------------------------------------------- for the tune stage
#: Rows sampled to tell a scattered numbering from a local one (``is_scattered``).
SAMPLE_ROWS = 1024
#: Points of the ordered dimension below which no ordering is offered (the whole gather then
#: fits in L2 whatever the order).
ORDER_MIN_POINTS = 1 << 14
#: Points up to which ``order_for`` computes an order on the host (NumPy) rather than on the
#: table's GPU: the same order either way. On the GPU it takes some twenty CuPy operations, each a
#: kernel CuPy compiles on its first use on a machine (into its kernel cache): 4.9 s for the
#: bench's 1M-cell C2E on a fresh H200 machine, 0.11 s once compiled (2026-12-03); NumPy takes
#: 0.05 s for 164k points, 0.28 s for the 1M-cell C2E and 0.30 s for the 1.57M-edge E2C on the
#: H200's host (0.54 / 0.65 s on the 2-core build machine; benchmarks/order_host_probe.py), every
#: time.
#: Orders are stored in the build cache, so either cost is paid once per table.
HOST_ORDER_MAX_POINTS = 1 << 21
#: Orders kept (per table, by identity and a sample of its contents, and domain): each holds
#: 4 bytes per point on the device; the plans that use one hold it themselves.
CACHE_SIZE = 16
_CACHE: OrderedDict[tuple[Any, ...], LocalityOrder] = OrderedDict()


@record
class LocalityOrder:
    """The points ``[start, stop)`` of a dimension in the order an ordered kernel visits them
    (``points``, int32, on the table's device), and the seconds computing it took."""

    points: Any
    start: int
    seconds: float

    @property
    def pointer(self) -> int:
        """The kernel argument: the address of ``points`` minus ``start`` elements, so that the
        kernel indexes it with the natural index of its thread (``sk_ord[i]``)."""
        data = self.points.data
        address = data.ptr if hasattr(data, "ptr") else self.points.ctypes.data
        return int(address) - 4 * self.start


def _rows(table: Any, dim: str) -> tuple[Any, int]:
    """The table's array with the rows of ``dim`` first (one per point, the neighbour slots
    flattened behind), and the buffer row of point 0: ``-start`` for a table whose domain
    along ``dim`` starts at ``start`` (point p is buffer row p - start)."""
    sig = table.signature
    axis = sig.axis(dim)
    data = table.ndarray
    if axis != 0:
        data = data.swapaxes(0, axis)
    return data, -int(sig.origin[axis])


def is_scattered(table: Any, dim: str, start: int, stop: int) -> bool:
    """Whether ``table`` (a Connectivity read at the points ``[start, stop)`` of ``dim``) numbers
    its neighbours in an order unrelated to its own: the median distance between the first
    neighbours of consecutive points, over a sample of rows, exceeds 1/64 of the neighbours'
    index range (a random numbering gives about 1/3 of it, a local one a few indices)."""
    if stop - start < 2:
        return False
    data, origin = _rows(table, dim)
    at = np.unique(
        np.linspace(start, stop - 2, min(SAMPLE_ROWS, stop - start - 1)).astype(np.int64)
    )
    idx = at + origin
    first = to_host(data.reshape(data.shape[0], -1)[:, 0])  # one column, copied whole
    a = first[idx].astype(np.int64)
    b = first[idx + 1].astype(np.int64)
    ok = (a >= 0) & (b >= 0)
    if not ok.any():
        return False
    span = int(max(a[ok].max(), b[ok].max())) + 1
    return float(np.median(np.abs(a[ok] - b[ok]))) > max(8.0, span / 64)


def order_for(
    table: Any, dim: str, start: int, stop: int, cache_dir: Path | None = None
) -> LocalityOrder:
    """The locality order of the points ``[start, stop)`` of ``dim`` for gathers through
    ``table``, on the table's device; cached per table (its identity, address and a sample of
    its contents), dimension and range, and in ``cache_dir`` (a build cache entry) by a digest
    of the table's rows, so a new process reads it instead of computing it again."""
    data = _rows(table, dim)[0]
    sample = data[:: max(1, data.shape[0] // 64)]
    digest = hashlib.sha256(np.ascontiguousarray(to_host(sample)).tobytes()).hexdigest()
    key = (id(table), table.address, table.signature, dim, start, stop, digest)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    work = begin(_log, f"locality order of {stop - start} points of {dim}")
    t0 = time.perf_counter()
    rows = _table_rows(table, dim, start, stop)
    on_host = stop - start <= HOST_ORDER_MAX_POINTS
    # one host copy serves the digest naming the stored order and the computation on the host
    host = np.ascontiguousarray(to_host(rows)) if cache_dir is not None or on_host else None
    path = _order_path(host, cache_dir) if host is not None and cache_dir is not None else None
    points = _read(path, start, stop)
    where = "stored"
    if points is None:
        # on the host: no CuPy kernel to compile (seconds on a machine that never ran them)
        where = "host" if on_host else "device"
        points = _points(host if on_host else rows, start, stop)
        _write(path, to_host(points))
    found = LocalityOrder(getattr(table, "xp", np).asarray(points), start, time.perf_counter() - t0)
    work.end(f"{found.seconds:.3f} s ({where})")
    _CACHE[key] = found
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return found


def _table_rows(table: Any, dim: str, start: int, stop: int) -> Any:
    """The rows of the points ``[start, stop)`` of ``dim`` (contiguous, one per point, on the
    table's device): what a locality order is computed from and stored by."""
    data, origin = _rows(table, dim)
    xp = getattr(table, "xp", np)
    return xp.ascontiguousarray(data[start + origin : stop + origin]).reshape(stop - start, -1)


def _points(rows: Any, start: int, stop: int) -> Any:
    """The order of ``rows`` (the points ``[start, stop)``) as int32 point indices, on the
    rows' device."""
    return (locality_order(rows, 0, stop - start) + start).astype(np.int32)


def _order_path(host_rows: np.ndarray, cache_dir: Any) -> Path:
    """Where the order of these rows is stored in a build cache entry: named by their digest."""
    name = hashlib.sha256(
        host_rows.tobytes() + f"{host_rows.dtype}{host_rows.shape}".encode()
    ).hexdigest()
    return Path(cache_dir) / f"order-{name[:32]}.npy"


def host_order_job(
    table: Any, dim: str, start: int, stop: int, cache_dir: Any
) -> Callable[[], None] | None:
    """For ``STENCILKIT_TUNE=background``: the rows of ``table`` copied to the host now (a few
    ms), and a job that computes their order in NumPy and stores it where ``order_for`` reads it,
    to run on the thread that builds the variants: the later call that searches then reads the
    order instead of computing it (0.28-0.41 s for a random 1M-cell C2E on the H200 host). None
    where ``order_for`` would compute it on the GPU (more than ``HOST_ORDER_MAX_POINTS``) or
    store it nowhere."""
    if cache_dir is None or stop - start > HOST_ORDER_MAX_POINTS or stop <= start:
        return None
    host = np.ascontiguousarray(to_host(_table_rows(table, dim, start, stop)))

    def job() -> None:
        path = _order_path(host, cache_dir)
        if _read(path, start, stop) is None:
            t0 = time.perf_counter()
            _write(path, _points(host, start, stop))
            _log.info(
                "locality order of %d points of %s in the background: %.3f s",
                stop - start,
                dim,
                time.perf_counter() - t0,
            )

    return job


def _read(path: Path | None, start: int, stop: int) -> Any:
    """A stored order, if it is a permutation of ``[start, stop)`` (checked: a damaged file
    would make kernels write out of bounds); None otherwise."""
    if path is None or not path.exists():
        return None
    try:
        points = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    n = stop - start
    if points.dtype != np.int32 or points.shape != (n,):
        return None
    if n and (int(points.min()) != start or int(points.max()) != stop - 1):
        return None
    if n and np.bincount(points - start, minlength=n).max() != 1:
        return None
    return points


def _write(path: Path | None, points: Any) -> None:
    """Store an order atomically (readers never see half a file); a read-only cache only costs
    computing it again next time."""
    if path is None:
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".order-", suffix=".npy")
        with os.fdopen(fd, "wb") as f:
            np.save(f, points, allow_pickle=False)
        os.replace(tmp, path)
    except OSError:
        pass


def reuse_spread(table: Any, order: Any) -> float:
    """The mean, over the neighbours read, of how far apart (in visiting positions) the first
    and the last point that read it are visited: the reuse distance that decides whether a
    neighbour is still in cache when read again. ``order``: the points in visiting order, as
    row indices of ``table``; ``table``: one row per point."""
    rows = np.asarray(table).reshape(len(order), -1)
    pos = np.empty(len(order), np.int64)
    pos[np.asarray(order) - int(np.min(order))] = np.arange(len(order))
    reader = np.repeat(pos, rows.shape[1])
    flat = rows.ravel()
    ok = flat >= 0
    flat, reader = flat[ok], reader[ok]
    if not flat.size:
        return 0.0
    hi = np.full(int(flat.max()) + 1, -1, np.int64)
    lo = np.full(len(hi), np.iinfo(np.int64).max, np.int64)
    np.maximum.at(hi, flat, reader)
    np.minimum.at(lo, flat, reader)
    used = hi >= 0
    return float(np.mean(hi[used] - lo[used]))
