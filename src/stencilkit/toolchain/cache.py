"""Persistent, content-addressed build cache.

One directory per entry, named by a SHA-256 over a named list of parts; entries are written into
a temporary directory and renamed into place (atomic), under an inter-process file lock so that
many processes or MPI ranks compiling the same program build it once. Each entry carries a
manifest with the SHA-256 of its files; a corrupted entry is detected and rebuilt.

The cache has a size limit (``STENCILKIT_CACHE_MAX_SIZE``, or
``stencilkit.config.BUILD_CACHE_MAX_SIZE``; 2 GiB by default): after each build, where the
entries' total size is over it, the least recently used entries are removed until it is under.
"Used" is the modification time of the entry's manifest, which every cache hit touches. Removal
is safe with concurrent processes: one process evicts at a time (a lock, not waited for: a
process that finds it taken leaves the eviction to its holder); an entry is removed under its
own build lock (taken without waiting, so an entry being built is never touched), only if it
was not used in the last :data:`EVICT_GRACE_S` seconds, and by renaming it away first, so a
reader sees the whole entry or none; a hit touches the manifest *before* checking the files, so
an entry removed meanwhile is found missing and is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .._version import __version__
from ..core.errors import ConfigurationError
from ..core.log import get_logger
from ..core.records import record
from .config import require

_log = get_logger("cache")

MANIFEST = "manifest.json"
EVICT_LOCK = ".evict.lock"
#: An entry used (built or found) this recently is never evicted: the process that used it may
#: be loading its files right now.
EVICT_GRACE_S = 60.0


def cache_key(parts: Sequence[tuple[str, str]]) -> str:
    """SHA-256 over named parts; the stencilkit version is always one of them."""
    h = hashlib.sha256()
    for name, value in [("stencilkit", __version__), *parts]:
        h.update(name.encode())
        h.update(b"\0")
        h.update(value.encode())
        h.update(b"\0")
    return h.hexdigest()


@record
class CacheEntry:
    """A build cache entry: its key, directory, and whether this call built it."""

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


def _touch(entry: Path) -> bool:
    """Mark ``entry`` as used now (its manifest's mtime); False if it is gone. A cache that may
    not be written (a read-only shared cache) is still read: its entries just keep their age."""
    try:
        os.utime(entry / MANIFEST)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def _replace(tmp: Path, final: Path) -> None:
    """Move the built ``tmp`` into place. Where another process built the same entry meanwhile
    (possible only when an evicted entry's lock file was removed while it waited), its whole
    entry is kept and ``tmp`` dropped."""
    if final.exists() and not _valid(final):  # corrupted: move it away, then replace
        broken = final.with_name(f".broken-{final.name[:12]}-{os.getpid()}")
        os.replace(final, broken)
        shutil.rmtree(broken, ignore_errors=True)
    try:
        os.replace(tmp, final)
    except OSError:
        if not _valid(final):
            raise


def get_or_build(
    key: str, build: Callable[[Path], None], meta: dict[str, str] | None = None
) -> CacheEntry:
    """The cache entry ``key``; if absent or corrupted, ``build(tmpdir)`` writes its files first.
    A build is followed by an eviction of the least recently used entries, where the cache is
    over its size limit. The limit is read first, hit or miss: a bad STENCILKIT_CACHE_MAX_SIZE
    stops the first program before anything is built, never after a build."""
    limit = max_size()
    final = entry_dir(key)
    if _touch(final) and _valid(final):
        _log.debug("cache hit %s (%s)", key[:16], meta or "")
        return CacheEntry(key, final, False)
    final.parent.mkdir(parents=True, exist_ok=True)
    from filelock import FileLock  # here: a process whose builds are all cache hits never needs it

    with FileLock(str(final) + ".lock"):
        if _touch(final) and _valid(final):  # somebody else built it while we waited
            _log.debug("cache hit %s after waiting for another process's build", key[:16])
            return CacheEntry(key, final, False)
        _log.debug("cache miss %s (%s): building into %s", key[:16], meta or "", final)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=final.parent))
        try:
            build(tmp)
            files = {p.name: _digest(p) for p in sorted(tmp.iterdir()) if p.is_file()}
            (tmp / MANIFEST).write_text(json.dumps({"files": files, "meta": meta or {}}, indent=1))
            _replace(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    evict(limit, keep=final)
    return CacheEntry(key, final, True)


@record
class EntryInfo:
    """One cache entry as ``stencilkit cache`` lists it."""

    key: str
    path: Path
    bytes: int
    last_used: float  # seconds since the epoch
    meta: dict[str, str]


def _entry_info(path: Path, with_meta: bool) -> EntryInfo | None:
    try:
        size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
        manifest = path / MANIFEST
        used = manifest.stat().st_mtime
        meta = json.loads(manifest.read_text()).get("meta", {}) if with_meta else {}
    except (OSError, ValueError, AttributeError):
        return None  # being built, removed meanwhile, or corrupted: not an entry to count
    return EntryInfo(path.name, path, size, used, meta if isinstance(meta, dict) else {})


def _entry_dirs(root: Path) -> list[Path]:
    if not root.exists():
        return []
    return [p for p in root.glob("??/*") if p.is_dir() and not p.name.startswith(".")]


def entries(with_meta: bool = True) -> list[EntryInfo]:
    """Every whole entry of the cache, most recently used first (``with_meta``: with what its
    manifest says it holds: program, target)."""
    root = require("STENCILKIT_CACHE_DIR").cache_dir
    found = [i for p in _entry_dirs(root) if (i := _entry_info(p, with_meta)) is not None]
    return sorted(found, key=lambda e: e.last_used, reverse=True)


#: Where a size limit set in Python comes from: ``stencilkit.config`` registers a reader of its
#: ``BUILD_CACHE_MAX_SIZE`` (``register_limit_source``), so this floor never imports the one
#: above it and still sees an assignment made after import.
_LIMIT_SOURCE: list[Callable[[], object]] = []


def register_limit_source(read: Callable[[], object]) -> None:
    """Make ``read()`` (None: not set) the Python-side size limit that overrides
    ``STENCILKIT_CACHE_MAX_SIZE``; called by ``stencilkit.config`` at import."""
    _LIMIT_SOURCE[:] = [read]


def max_size() -> int:
    """The cache's size limit in bytes (0: none): ``stencilkit.config.BUILD_CACHE_MAX_SIZE`` where
    set, else ``STENCILKIT_CACHE_MAX_SIZE``, else 2 GiB."""
    chosen = _LIMIT_SOURCE[0]() if _LIMIT_SOURCE else None
    if chosen is not None:
        if isinstance(chosen, str):
            from .config import parse_size

            try:
                return parse_size(chosen)
            except ValueError as err:
                raise ConfigurationError(
                    "stencilkit.config.BUILD_CACHE_MAX_SIZE", chosen, str(err)
                ) from None
        if not isinstance(chosen, int) or isinstance(chosen, bool) or chosen < 0:
            raise ConfigurationError(
                "stencilkit.config.BUILD_CACHE_MAX_SIZE",
                repr(chosen),
                "expected bytes (an int >= 0) or a size such as '2GiB'",
            )
        return chosen
    return require("STENCILKIT_CACHE_DIR", "STENCILKIT_CACHE_MAX_SIZE").cache_max_size


def _remove(entry: Path) -> bool:
    """Remove ``entry`` if nobody builds it and nobody used it in the last EVICT_GRACE_S."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(entry) + ".lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return False  # being built (or rebuilt) right now
    try:
        try:
            if time.time() - (entry / MANIFEST).stat().st_mtime < EVICT_GRACE_S:
                return False
            gone = entry.with_name(f".evicted-{entry.name[:12]}-{os.getpid()}")
            os.replace(entry, gone)  # readers see the whole entry or none
        except OSError:
            return False
        shutil.rmtree(gone, ignore_errors=True)
        Path(lock.lock_file).unlink(missing_ok=True)  # no inode left per evicted entry
        return True
    finally:
        lock.release()


def evict(limit: int | None = None, keep: Path | None = None) -> int:
    """Remove least recently used entries until the cache is within ``limit`` bytes (default:
    :func:`max_size`); ``keep`` is never removed. Returns the number removed; 0 where another
    process is evicting already."""
    limit = max_size() if limit is None else limit
    if limit <= 0:
        return 0
    root = require("STENCILKIT_CACHE_DIR").cache_dir
    found = entries(with_meta=False)
    total = sum(e.bytes for e in found)
    if total <= limit:
        return 0
    from filelock import FileLock, Timeout

    lock = FileLock(str(root / EVICT_LOCK))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return 0
    removed = 0
    try:
        for e in reversed(found):  # least recently used first
            if total <= limit:
                break
            if e.path != keep and _remove(e.path):
                total -= e.bytes
                removed += 1
    finally:
        lock.release()
    if removed:
        _log.info("cache: evicted %d least recently used entries (limit %d bytes)", removed, limit)
    return removed


def cache_info() -> dict[str, object]:
    root = require("STENCILKIT_CACHE_DIR").cache_dir
    found = entries(with_meta=False)
    return {
        "path": str(root),
        "entries": len(found),
        "bytes": sum(e.bytes for e in found),
        "max_bytes": max_size(),
    }


def clear_cache() -> int:
    """Remove every entry, and the toolchain records (what compiler detection found), so that the
    next build detects the compilers again; the number of entries removed."""
    root = require("STENCILKIT_CACHE_DIR").cache_dir
    n = 0
    for p in _entry_dirs(root):
        shutil.rmtree(p, ignore_errors=True)
        Path(str(p) + ".lock").unlink(missing_ok=True)
        n += 1
    shutil.rmtree(root / TOOLCHAIN_RECORDS, ignore_errors=True)
    return n


#: The folder of the cache directory holding what compiler detection found (small JSON files).
TOOLCHAIN_RECORDS = "toolchain"


def record_path(kind: str, identity: str) -> Path:
    """Where detection of a compiler of ``kind`` keeps what it found for ``identity`` (a string
    naming every file and setting its answer depends on)."""
    digest = hashlib.sha256(identity.encode()).hexdigest()[:24]
    return require("STENCILKIT_CACHE_DIR").cache_dir / TOOLCHAIN_RECORDS / f"{kind}-{digest}.json"


def read_record(path: Path) -> dict[str, object] | None:
    """A record written by :func:`write_record`; None where missing or unreadable."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_record(path: Path, data: dict[str, object]) -> None:
    """Written atomically; a cache directory that cannot be written only costs the detection
    next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".record-")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        pass
