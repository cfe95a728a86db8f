"""Block shapes: a short timed search on first use of a kernel, remembered per kernel and size
in this process and, beside the kernel's binary, in the build cache (so a new process reuses it)."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ...core.log import begin, get_logger
from ...ir import nodes as ir
from ...ir.visit import walk
from .codegen import PLAIN, Variant
from .runtime import cupy

_CANDIDATES_2D = [(32, 2, 1), (32, 4, 1), (32, 8, 1), (64, 4, 1), (64, 2, 1), (128, 2, 1), (128, 1, 1),
                  (256, 1, 1), (64, 8, 1), (32, 16, 1), (32, 4, 2), (128, 4, 1), (256, 2, 1), (16, 16, 1)]
_CANDIDATES_1D = [(64, 1, 1), (128, 1, 1), (256, 1, 1), (512, 1, 1)]
_log = get_logger("cuda.tuning")
_CHOSEN: dict[tuple[str, tuple[int, ...], str], tuple[Variant, tuple[int, int, int]]] = {}


def _idempotent(k: ir.Kernel) -> bool:
    """A kernel can be run repeatedly for timing only if it reads none of its outputs."""
    outs = set(k.outs)
    return not any(isinstance(x, ir.Access) and x.field in outs for v in k.values for x in walk(v))


TUNING_FILE = "tuning.json"
SEARCH_MIN_POINTS = 1 << 18  # smaller launches are dominated by launch latency: no search


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
        variant = Variant(int(entry["chunk"]), bool(entry.get("streaming", False)))
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
        data[name] = {"chunk": choice[0].chunk, "streaming": choice[0].streaming, "block": list(choice[1])}
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".tuning-")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass  # a read-only cache only costs a new search next time


def table_fingerprint(buf: Any, slots: list[tuple[int, tuple[Any, ...]]]) -> str:
    """A short digest of the first rows of each neighbour table (``slots``: the table's pointer
    slot in ``buf`` and its field signature). How a gather performs depends on the table's
    numbering, so block choices are kept per numbering, not only per size."""
    if not slots:
        return ""
    cp = cupy()
    digest = hashlib.sha256()
    for ptr_slot, sig in slots:
        shape, strides, dtype = tuple(sig[2]), tuple(sig[3]), np.dtype(sig[1])
        if 0 in shape:
            continue
        span = (sum((n - 1) * abs(s) for n, s in zip(shape, strides)) + 1) * dtype.itemsize
        mem = cp.cuda.UnownedMemory(int(buf[ptr_slot]), span, None)
        view = cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(mem, 0),
                          strides=tuple(s * dtype.itemsize for s in strides))
        digest.update(cp.asnumpy(view[tuple(slice(0, 256) for _ in shape)]).tobytes())
    return digest.hexdigest()[:16]


def choose_blocks(k: ir.Kernel, extents: list[int], launchers: dict[Variant, Any],
                  stream: int, cache_dir: Path | None = None, device: str = "",
                  tables: str = "") -> tuple[Variant, tuple[int, int, int]]:
    """(z-chunk, block shape) for kernel ``k`` over ``extents``: timed on first use when the
    kernel is large and safe to re-run, else a default that is good for most stencils.
    ``tables``: ``table_fingerprint`` of the neighbour tables the kernel reads."""
    key = (str(k), tuple(extents), tables)
    if key in _CHOSEN:
        return _CHOSEN[key]
    disk_name = f"{k.name}|{'x'.join(map(str, extents))}|{device}" + (f"|{tables}" if tables else "")
    stored = _load(cache_dir, disk_name)
    if stored is not None and stored[0] in launchers:
        _CHOSEN[key] = stored
        return stored
    from .backend import grid_for

    candidates = _CANDIDATES_2D if len(extents) >= 2 and extents[1] > 1 else _CANDIDATES_1D
    if not worth_searching(k, extents):
        best = (PLAIN, (64, 4, 1) if candidates is _CANDIDATES_2D else candidates[1])
        _CHOSEN[key] = best
        return best
    work = begin(_log, f"GPU block-shape tuning of {k.name} over {'x'.join(map(str, extents))}")
    cp = cupy()
    s = cp.cuda.ExternalStream(stream) if stream else cp.cuda.Stream.null
    start, end = cp.cuda.Event(), cp.cuda.Event()
    timings = []
    for variant, launcher in launchers.items():
        for block in candidates:
            grid = grid_for(extents, block, variant.chunk)
            launcher.launch(grid, block, stream)  # warm-up
            start.record(s)
            for _ in range(5):
                launcher.launch(grid, block, stream)
            end.record(s)
            end.synchronize()
            timings.append((cp.cuda.get_elapsed_time(start, end), variant.chunk, variant.streaming, block))
    _, chunk, streaming, block = min(timings)
    work.end(f"{len(timings)} candidates; block {block}, z-chunk {chunk}, streaming stores {streaming}")
    _CHOSEN[key] = (Variant(chunk, streaming), block)
    _store(cache_dir, disk_name, _CHOSEN[key])
    return _CHOSEN[key]
