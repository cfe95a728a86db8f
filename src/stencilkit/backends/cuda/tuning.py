"""Block shapes: a short timed search on first use of a kernel, remembered per kernel and size
in this process and, beside the kernel's binary, in the build cache (so a new process reuses it).

The search is cheap (about 20 launches on slices of the domain, at most ``TUNING_BUDGET_S``;
the whole search, confirmation included, at most ``TUNING_LIMIT_S``):
block shapes are chosen from the kernel's shape (``block_candidates``: whole columns per block
row where the unit-stride extent is short, as for K-contiguous fields), timed with the plain
variant first (and, for a kernel that gathers through a scattered table, the same visiting its
points in a locality order: order.py); then the chunk and store variants with the best block;
then the runners-up with the best variant. Each timing launch runs on its own slice of the slowest grid dimension
(``SLICE_POINTS`` points or more), so the search costs the same on 1M x 80 as on 64k x 80, and
consecutive launches never find their data in L2. Last, where a launch over the whole domain is
short (``CONFIRM_MAX_MS``), the best few choices (as many as fit in the time left) are timed over
it, and the fastest there wins.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ...core.log import begin, get_logger
from ...ir import nodes as ir
from ...ir.visit import walk
from ...storage.namespaces import to_host
from .codegen import PLAIN, Variant
from .runtime import cupy

#: The block shapes timed for a kernel with one grid dimension.
_CANDIDATES_1D = [(64, 1, 1), (128, 1, 1), (256, 1, 1), (512, 1, 1)]
_log = get_logger("cuda.tuning")
_CHOSEN: dict[tuple[str, tuple[int, ...], str], tuple[Variant, tuple[int, int, int]]] = {}
#: Where the last search's time went, in any thread (diagnostics: the first-call benchmark
#: reports it, the INFO log line of each search says the same of its own): seconds computing
#: locality orders (``prepare_s``), timing slices (``slices_s``) and the whole domain
#: (``confirm_s``), the number of timings of each kind, and whether the slices' budget cut the
#: search short. Each search fills a dict of its own and then publishes it here.
LAST_SEARCH: dict[str, Any] = {}
_THIS_THREAD = threading.local()  # .stats: this thread's last search's dict


def _idempotent(k: ir.Kernel) -> bool:
    """A kernel can be run repeatedly for timing only if it reads none of its outputs."""
    outs = set(k.outs)
    return not any(isinstance(x, ir.Access) and x.field in outs for v in k.values for x in walk(v))


TUNING_FILE = "tuning.json"
SEARCH_MIN_POINTS = 1 << 18  # smaller launches are dominated by launch latency: no search
#: Points per timing launch (at least): enough to fill an H200 for ~15 waves, a small part of a large field.
SLICE_POINTS = 1 << 22
#: Seconds the timed search on slices may take; it stops at the next candidate once over
#: (keeping the best so far).
TUNING_BUDGET_S = 0.2
#: Seconds the whole search may take, the whole-domain confirmation included: the
#: confirmation times only as many of the best choices as fit (estimated from their slices).
TUNING_LIMIT_S = 0.27
#: Timed launches per candidate (after one warm-up launch).
REPEATS = 3
#: The best few choices of a search on slices are timed again on the whole domain, where one
#: launch of it is estimated (from the slices) to take at most ``CONFIRM_MAX_MS``: the whole
#: launch's grid (folded where the slices' is not), waves and tail decide between close
#: candidates, and a slice cannot show them.
CONFIRM_TOP = 4
CONFIRM_MAX_MS = 2.5
CONFIRM_ROUNDS = 2


def worth_searching(k: ir.Kernel, extents: list[int]) -> bool:
    """Whether the first launch of ``k`` over ``extents`` times block shapes and variants."""
    total = 1
    for e in extents:
        total *= e
    return total >= SEARCH_MIN_POINTS and _idempotent(k)


def _load(cache_dir: Path | None, name: str) -> tuple[Variant, tuple[int, int, int]] | None:
    if cache_dir is None:
        return None
    try:
        entry = json.loads((cache_dir / TUNING_FILE).read_text())[name]
        variant = Variant(
            int(entry["chunk"]),
            bool(entry.get("streaming", False)),
            bool(entry.get("ordered", False)),
            int(entry.get("regs", 0)),
        )
        return variant, (int(entry["block"][0]), int(entry["block"][1]), int(entry["block"][2]))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _store(cache_dir: Path | None, name: str, choice: tuple[Variant, tuple[int, int, int]]) -> None:
    """Merge one choice into the entry's tuning file, atomically (readers never see half a file)."""
    if cache_dir is None:
        return
    try:
        path = cache_dir / TUNING_FILE
        data = json.loads(path.read_text()) if path.exists() else {}
        data[name] = {
            "chunk": choice[0].chunk,
            "streaming": choice[0].streaming,
            "ordered": choice[0].ordered,
            "regs": choice[0].regs,
            "block": list(choice[1]),
        }
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".tuning-")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass  # a read-only cache only costs a new search next time


def table_fingerprint(buf: Any, slots: list[tuple[int, Any]]) -> str:
    """A short digest of the first rows of each neighbour table (``slots``: the table's pointer
    slot in ``buf`` and its ``FieldSignature``). How a gather performs depends on the table's
    numbering, so block choices are kept per numbering, not only per size."""
    if not slots:
        return ""
    cp = cupy()
    digest = hashlib.sha256()
    for ptr_slot, sig in slots:
        shape, strides, dtype = sig.shape, sig.strides, np.dtype(sig.dtype)
        if 0 in shape:
            continue
        span = (sum((n - 1) * abs(s) for n, s in zip(shape, strides)) + 1) * dtype.itemsize
        mem = cp.cuda.UnownedMemory(int(buf[ptr_slot]), span, None)
        view = cp.ndarray(
            shape,
            dtype,
            cp.cuda.MemoryPointer(mem, 0),
            strides=tuple(s * dtype.itemsize for s in strides),
        )
        digest.update(to_host(view[tuple(slice(0, 256) for _ in shape)]).tobytes())
    return digest.hexdigest()[:16]


def block_candidates(extents: list[int]) -> list[tuple[int, int, int]]:
    """Block shapes worth timing for a kernel over ``extents`` (grid dimensions, fastest first).
    A short unit-stride extent (the levels of a K-contiguous field) gets blocks whose rows hold
    exactly one column (no idle thread: a warp runs on through the next columns, which follow
    in memory), the column rounded up to 16 threads, or 16-64 threads; a long one the shapes
    that won on the H200 for Cartesian stencils."""
    if len(extents) < 2 or all(e == 1 for e in extents[1:]):
        return list(_CANDIDATES_1D)
    nx = max(extents[0], 1)
    if nx < 256:
        column = -(-nx // 16) * 16
        widths = sorted({w for w in (nx, column, 16, 32, 64) if w <= max(column, 32)})
        out = []
        for w in widths:
            for threads in (128, 256):
                shape = (w, max(1, round(threads / w)), 1)
                if shape not in out and shape[0] * shape[1] <= 1024:
                    out.append(shape)
        return out
    out = [(32, 4, 1), (64, 4, 1), (128, 2, 1), (256, 1, 1), (32, 8, 1), (64, 2, 1)]
    if len(extents) >= 3 and extents[2] > 1:
        out.append((32, 4, 2))
    return out


def default_block(extents: list[int]) -> tuple[int, int, int]:
    """The block shape of launches too small to search (launch latency dominates them)."""
    if len(extents) < 2 or all(e == 1 for e in extents[1:]):
        return (128, 1, 1)
    if extents[0] < 32:  # short columns (K-contiguous, few levels): one column per block row
        width = max(extents[0], 1)  # an empty extent (a concat_where branch nobody takes) too
        return (width, max(1, round(128 / width)), 1)
    return (64, 4, 1) if extents[0] >= 64 else (32, 4, 1)


class _Timer:
    """Times launches on rotating slices of the slowest grid dimension (``bounds``: its lo and hi
    slots in the launchers' argument block), restoring the block afterwards."""

    def __init__(
        self,
        extents: list[int],
        launchers: dict[Variant, Any],
        stream: int,
        bounds: tuple[int, int] | None,
    ) -> None:
        cp = cupy()
        self.cp, self.stream = cp, stream
        self.s = cp.cuda.ExternalStream(stream) if stream else cp.cuda.Stream.null
        self.start, self.end = cp.cuda.Event(), cp.cuda.Event()
        self.extents = list(extents)  # of a timed slice (the last is cut below)
        self.whole = list(extents)
        self.buf = next(iter(launchers.values())).buf if bounds is not None else None
        self.bounds = bounds
        self.slices = [(0, 0)]
        self.turn = 0
        if self.buf is not None and len(extents) >= 2 and bounds is not None:
            lo, hi = int(self.buf[bounds[0]]), int(self.buf[bounds[1]])
            self.saved = (lo, hi)
            cross = max(1, math.prod(extents[:-1]))
            # a multiple of the longest chunk, two chunks at least: chunked variants are timed as they run
            rows = max(-(-SLICE_POINTS // cross), 32)
            rows = -(-rows // 16) * 16
            if rows < hi - lo:
                self.slices = [
                    (lo + i * rows, lo + (i + 1) * rows) for i in range((hi - lo) // rows)
                ]
                self.extents[-1] = rows

    @property
    def scale(self) -> float:
        """Points of the whole launch per point of a timed slice (1 when not sliced)."""
        if self.buf is None or self.slices == [(0, 0)]:
            return 1.0
        lo, hi = self.saved
        rows = self.slices[0][1] - self.slices[0][0]
        return (hi - lo) / rows

    def time_whole(
        self, launcher: Any, variant: Variant, block: tuple[int, int, int], limits: Any
    ) -> float:
        """Milliseconds of ``REPEATS`` launches over the whole domain."""
        from .grid import grid_for

        self.restore()
        g = grid_for(self.whole, block, variant.chunk, limits)
        return self._launches(launcher, g, block, lambda: None)

    def _next_slice(self) -> None:
        if self.buf is None or self.slices == [(0, 0)]:
            return
        lo, hi = self.slices[self.turn % len(self.slices)]
        self.turn += 1
        self.buf[self.bounds[0]], self.buf[self.bounds[1]] = lo, hi  # type: ignore[index]

    def time(
        self, launcher: Any, variant: Variant, block: tuple[int, int, int], limits: Any
    ) -> float:
        from .grid import grid_for

        g = grid_for(self.extents, block, variant.chunk, limits)
        # the argument block is copied at launch: the next slice can be written after each
        return self._launches(launcher, g, block, self._next_slice)

    def _launches(
        self, launcher: Any, grid: Any, block: tuple[int, int, int], before: Any
    ) -> float:
        """Milliseconds of ``REPEATS`` launches after one warm-up, ``before()`` ahead of each."""
        before()
        launcher.launch(grid, block, self.stream)  # warm-up
        self.start.record(self.s)
        for _ in range(REPEATS):
            before()
            launcher.launch(grid, block, self.stream)
        self.end.record(self.s)
        self.end.synchronize()
        return float(self.cp.cuda.get_elapsed_time(self.start, self.end))

    def restore(self) -> None:
        if self.buf is not None and self.slices != [(0, 0)]:
            self.buf[self.bounds[0]], self.buf[self.bounds[1]] = self.saved  # type: ignore[index]


def choose_blocks(
    k: ir.Kernel,
    extents: list[int],
    launchers: dict[Variant, Any],
    stream: int,
    cache_dir: Path | None = None,
    device: str = "",
    tables: str = "",
    bounds: tuple[int, int] | None = None,
    limits: Any = None,
) -> tuple[Variant, tuple[int, int, int]]:
    """(z-chunk, block shape) for kernel ``k`` over ``extents``: timed on first use when the
    kernel is large and safe to re-run, else a default that is good for most stencils.
    ``tables``: ``table_fingerprint`` of the neighbour tables the kernel reads. ``bounds``: the
    argument-block slots of the lo and hi of the kernel's slowest grid dimension (``grid.
    slowest_bounds``): timing launches then run on slices of it; None: on the whole domain.
    ``limits``: the device's grid limits (``grid.device_limits``; default CUDA's)."""
    from .grid import DEFAULT_LIMITS

    key, disk_name = _keys(k, extents, device, tables)
    stored = stored_choice(k, extents, cache_dir, device, tables)
    if stored is not None and stored[0] in launchers:
        return stored
    if not worth_searching(k, extents):
        best = (PLAIN, default_block(extents))
        _CHOSEN[key] = best
        return best
    work = begin(_log, f"GPU block-shape tuning of {k.name} over {'x'.join(map(str, extents))}")
    choice = _search(extents, launchers, stream, bounds, limits or DEFAULT_LIMITS)
    variant, block = choice
    st = _THIS_THREAD.stats
    work.end(
        f"block {block}, z-chunk {variant.chunk}, streaming stores {variant.streaming}"
        + (", locality order" if variant.ordered else "")
        + (f", at most {variant.regs} registers" if variant.regs else "")
        + f"; {st['slice_timings']} timings on slices in {st['slices_s'] * 1e3:.0f} ms"
        + (" (budget reached)" if st["budget_hit"] else "")
        + f", {st['whole_timings']} on the whole domain in {st['confirm_s'] * 1e3:.0f} ms"
        + (f", locality orders {st['prepare_s'] * 1e3:.0f} ms" if st["prepare_s"] else "")
    )
    _CHOSEN[key] = choice
    _store(cache_dir, disk_name, choice)
    return choice


def _keys(
    k: ir.Kernel, extents: list[int], device: str, tables: str
) -> tuple[tuple[str, tuple[int, ...], str], str]:
    """The in-process and the on-disk key of a kernel's choice."""
    disk_name = f"{k.name}|{'x'.join(map(str, extents))}|{device}" + (
        f"|{tables}" if tables else ""
    )
    return (str(k), tuple(extents), tables), disk_name


def stored_choice(
    k: ir.Kernel, extents: list[int], cache_dir: Path | None, device: str, tables: str
) -> tuple[Variant, tuple[int, int, int]] | None:
    """The choice made for this kernel and size earlier, in this process or (beside its binary)
    in another one; None if none was made."""
    key, disk_name = _keys(k, extents, device, tables)
    if key in _CHOSEN:
        return _CHOSEN[key]
    stored = _load(cache_dir, disk_name)
    if stored is not None:
        _CHOSEN[key] = stored
    return stored


def _search(
    extents: list[int],
    launchers: dict[Variant, Any],
    stream: int,
    bounds: tuple[int, int] | None,
    limits: Any,
) -> tuple[Variant, tuple[int, int, int]]:
    t_prepare = time.perf_counter()
    for launcher in launchers.values():  # e.g. compute a locality order: not on the budget
        prepare = getattr(launcher, "prepare", None)
        if prepare is not None:
            prepare()
    global LAST_SEARCH
    start = time.perf_counter()
    stats: dict[str, Any] = dict(
        prepare_s=start - t_prepare, slices_s=0.0, confirm_s=0.0, slice_timings=0,
        whole_timings=0, budget_hit=False,
    )  # fmt: skip
    _THIS_THREAD.stats = LAST_SEARCH = stats  # another thread's search has a dict of its own
    timer = _Timer(extents, launchers, stream, bounds)
    deadline = start + TUNING_BUDGET_S
    timings: dict[tuple[Variant, tuple[int, int, int]], float] = {}

    def run(variant: Variant, block: tuple[int, int, int], force: bool = False) -> None:
        if (variant, block) in timings:
            return
        if force or not timings or time.perf_counter() < deadline:
            timings[variant, block] = timer.time(launchers[variant], variant, block, limits)
        else:
            stats["budget_hit"] = True

    first = PLAIN if PLAIN in launchers else next(iter(launchers))
    # the same kernel visiting its points in a locality order (offered for gathers through a
    # scattered table): timed with the best blocks whatever the budget, so that the choice
    # between the orders is always measured
    ordered = Variant(first.chunk, first.streaming, True)
    blocks = block_candidates(extents)
    try:
        for block in blocks:  # 1: block shapes, plain variant
            run(first, block)
        ranked = sorted(blocks, key=lambda b: timings.get((first, b), float("inf")))
        if ordered in launchers:  # 1b: the locality order with the best of them
            for i, block in enumerate(ranked[:3]):
                run(ordered, block, force=i == 0)
            ranked = sorted(
                blocks,
                key=lambda b: min(timings.get((v, b), float("inf")) for v in (first, ordered)),
            )
        for variant in _interleaved(launchers):  # 2: every variant with the best block
            run(variant, ranked[0])
        best_variant = min(
            (v for v, b in timings if b == ranked[0]), key=lambda v: timings[v, ranked[0]]
        )
        for block in ranked[1:3]:  # 3: the best variant with the runners-up
            run(best_variant, block)
        best = min(timings, key=lambda c: timings[c])
        top = sorted(timings, key=lambda c: timings[c])[:CONFIRM_TOP]
        # and the best with its stores the other way: slices favour streaming stores (their
        # outputs never meet the next launch's reads in L2), the whole domain may not. (Twins of
        # all the best few were tried on 2026-12-02: the Laplacian's choice did not change, and
        # the random-table C2E gather's first-call search measured 356 ms with them, against
        # 47 ms without in the run before: up to twice as many whole-domain rounds.)
        twin = (replace(best[0], streaming=not best[0].streaming), best[1])
        if twin[0] in launchers and twin not in top:
            top.append(twin)
        whole_ms = timings[best] / REPEATS * timer.scale
        stats["slices_s"], stats["slice_timings"] = time.perf_counter() - start, len(timings)
        # the confirmation's cost, estimated from the slices (a twin not timed there: as the
        # best), keeps as many of the best few as fit in what is left of TUNING_LIMIT_S
        left_ms = (start + TUNING_LIMIT_S - time.perf_counter()) * 1e3
        fits = 0
        for c in top:
            launch_ms = timings.get(c, timings[best]) / REPEATS * timer.scale
            left_ms -= CONFIRM_ROUNDS * (REPEATS + 1) * launch_ms
            if left_ms < 0:
                break
            fits += 1
        top = top[:fits]
        if timer.scale > 1 and len(top) > 1 and whole_ms <= CONFIRM_MAX_MS:
            # 4: the best few again on the whole domain, in two interleaved rounds (a drift of
            # the clocks during the rounds touches every candidate); the choice is made there
            t_whole = time.perf_counter()
            whole: dict[tuple[Variant, tuple[int, int, int]], float] = {}
            for _ in range(CONFIRM_ROUNDS):
                for c in top:
                    t = timer.time_whole(launchers[c[0]], c[0], c[1], limits)
                    whole[c] = min(whole.get(c, t), t)
            stats["confirm_s"] = time.perf_counter() - t_whole
            stats["whole_timings"] = CONFIRM_ROUNDS * len(top)
            confirmed = min(whole, key=lambda c: whole[c])
            if confirmed != best:
                _log.info(
                    "whole-domain timing chose %s block %s (%.3f ms) over the slices' %s block"
                    " %s (%.3f ms)",
                    confirmed[0],
                    confirmed[1],
                    whole[confirmed] / REPEATS,
                    best[0],
                    best[1],
                    whole[best] / REPEATS,
                )
            best = confirmed
    finally:
        timer.restore()
    return best


def _interleaved(launchers: dict[Variant, Any]) -> list[Variant]:
    """The variants, each natural one followed by its locality-ordered form: a search cut short
    by its budget has timed both orders alike."""
    out = []
    for v in launchers:
        if not v.ordered:
            out.append(v)
            twin = Variant(v.chunk, v.streaming, True)
            if twin in launchers:
                out.append(twin)
    return out + [v for v in launchers if v not in out]
