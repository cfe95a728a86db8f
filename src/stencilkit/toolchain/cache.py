"""Persistent, content-addressed build cache.

One directory per entry, named by a SHA-256 over a named list of parts; entries are written into
a temporary directory and renamed into place (atomic), under an inter-process file lock so that
many processes or MPI ranks compiling the same program build it once. Each entry carries a
manifest with the SHA-256 of its files; a corrupted entry is detected and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from .._version import __version__
from ..core.log import get_logger
from .config import require

_log = get_logger("cache")

MANIFEST = "manifest.json"


def cache_key(parts: Sequence[tuple[str, str]]) -> str:
    """SHA-256 over named parts; the stencilkit version is always one of them."""
    h = hashlib.sha256()
    for name, value in [("stencilkit", __version__), *parts]:
        h.update(name.encode())
        h.update(b"\0")
        h.update(value.encode())
        h.update(b"\0")
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class CacheEntry:
    key: str
    path: Path
    built: bool  # True if this call built it, False if it was found


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _valid(entry: Path) -> bool:
    manifest = entry / MANIFEST
    try:
        files = json.loads(manifest.read_text())["files"]
        return all(_digest(entry / name) == digest for name, digest in files.items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


def entry_dir(key: str) -> Path:
    return require("STENCILKIT_CACHE_DIR").cache_dir / key[:2] / key


def is_cached(key: str) -> bool:
    """Whether the entry ``key`` is built and whole (no lock taken, nothing built)."""
    return _valid(entry_dir(key))


def get_or_build(
    key: str, build: Callable[[Path], None], meta: dict[str, str] | None = None
) -> CacheEntry:
    """The cache entry ``key``; if absent or corrupted, ``build(tmpdir)`` writes its files first."""
    final = entry_dir(key)
    if _valid(final):
        _log.debug("cache hit %s (%s)", key[:16], meta or "")
        return CacheEntry(key, final, False)
    final.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(final) + ".lock"):
        if _valid(final):  # somebody else built it while we waited
            _log.debug("cache hit %s after waiting for another process's build", key[:16])
            return CacheEntry(key, final, False)
        _log.debug("cache miss %s (%s): building into %s", key[:16], meta or "", final)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=final.parent))
        try:
            build(tmp)
            files = {p.name: _digest(p) for p in sorted(tmp.iterdir()) if p.is_file()}
            (tmp / MANIFEST).write_text(json.dumps({"files": files, "meta": meta or {}}, indent=1))
            if final.exists():
                shutil.rmtree(final)  # corrupted: replace
            os.replace(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return CacheEntry(key, final, True)


def cache_info() -> dict[str, object]:
    root = require("STENCILKIT_CACHE_DIR").cache_dir
    entries = [p for p in root.glob("??/*") if p.is_dir()] if root.exists() else []
    size = sum(f.stat().st_size for e in entries for f in e.iterdir() if f.is_file())
    return {"path": str(root), "entries": len(entries), "bytes": size}


def clear_cache() -> int:
    root = require("STENCILKIT_CACHE_DIR").cache_dir
    n = 0
    if root.exists():
        for p in root.glob("??/*"):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
                n += 1
    return n
