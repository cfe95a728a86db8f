"""The build cache's size limit: least recently used entries are evicted after a build, never an
entry in use or being built, and two processes evicting and reading at once see whole entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock

import stencilkit
from stencilkit.core.errors import ConfigurationError
from stencilkit.toolchain import cache
from stencilkit.toolchain.config import parse_size, reset_config

WORKER = Path(__file__).parent / "helpers" / "cache_evict_worker.py"
SRC = str(Path(__file__).parents[1] / "src")
KIB = 1024


@pytest.fixture
def small_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("STENCILKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("STENCILKIT_CACHE_MAX_SIZE", "100KiB")
    monkeypatch.setattr(cache, "EVICT_GRACE_S", 0.0)
    reset_config()
    yield tmp_path / "cache"
    reset_config()


def _put(name: str, nbytes: int = 30 * KIB) -> cache.CacheEntry:
    key = cache.cache_key([("test", name)])
    return cache.get_or_build(key, lambda tmp: (tmp / "lib.so").write_bytes(os.urandom(nbytes)))


def _age(entry: cache.CacheEntry, seconds_ago: float) -> None:
    t = time.time() - seconds_ago
    os.utime(entry.path / cache.MANIFEST, (t, t))


def _names() -> set[str]:
    return {e.key for e in cache.entries()}


def test_sizes_parse_and_bad_sizes_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_size("2GiB") == 2 * 1024**3 and parse_size("500 MB") == 500 * 1000**2
    assert parse_size("1000") == 1000 and parse_size("unlimited") == 0 and parse_size("0") == 0
    monkeypatch.setenv("STENCILKIT_CACHE_MAX_SIZE", "lots")
    reset_config()
    try:
        with pytest.raises(ConfigurationError, match="STENCILKIT_CACHE_MAX_SIZE='lots'"):
            cache.max_size()
    finally:
        reset_config()
    monkeypatch.setattr(stencilkit.config, "BUILD_CACHE_MAX_SIZE", -5)
    with pytest.raises(
        ConfigurationError, match=r"the setting stencilkit.config.BUILD_CACHE_MAX_SIZE"
    ):
        cache.max_size()


@pytest.mark.parametrize("cached", [False, True])
def test_a_bad_size_stops_a_hit_and_a_miss_before_any_build(
    small_cache: Path, monkeypatch: pytest.MonkeyPatch, cached: bool
) -> None:
    """Validated before anything is built: a cache miss does not build and then raise, and a
    hit does not run on quietly while the next miss would fail."""
    if cached:
        _put("there")
    monkeypatch.setenv("STENCILKIT_CACHE_MAX_SIZE", "lots")
    reset_config()
    built: list[Path] = []
    key = cache.cache_key([("test", "there" if cached else "new")])
    with pytest.raises(ConfigurationError, match="STENCILKIT_CACHE_MAX_SIZE='lots'"):
        cache.get_or_build(key, built.append)
    assert built == []  # nothing was built
    assert _names() == ({cache.cache_key([("test", "there")])} if cached else set())


def test_the_least_recently_used_entries_go_first(small_cache: Path) -> None:
    a, b, c = _put("a"), _put("b"), _put("c")  # 90 KiB + manifests: under 100 KiB
    _age(a, 300), _age(b, 100), _age(c, 200)
    assert _names() == {a.key, b.key, c.key}
    d = _put("d")  # over the limit: the oldest, a, goes
    assert _names() == {b.key, c.key, d.key}
    assert not a.path.exists() and not Path(str(a.path) + ".lock").exists()
    e = _put("e")  # then c, used 200 s ago (b: 100 s ago)
    assert _names() == {b.key, d.key, e.key}
    assert cache.cache_info()["bytes"] <= 100 * KIB


def test_a_hit_makes_an_entry_recent(small_cache: Path) -> None:
    a, b, c = _put("a"), _put("b"), _put("c")
    _age(a, 300), _age(b, 200), _age(c, 100)
    assert not _put("a").built  # a hit: a is now the most recent
    d = _put("d")
    assert _names() == {a.key, c.key, d.key}  # b, now the least recently used, went
    assert not b.path.exists()


def test_entries_in_use_or_being_built_stay(
    small_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _put("a"), _put("b")
    _age(a, 300), _age(b, 200)
    lock = FileLock(str(b.path) + ".lock")  # another process rebuilding b holds this
    with lock:
        monkeypatch.setattr(cache, "EVICT_GRACE_S", 250.0)  # a used 300 s ago, b 200 s ago
        _put("c"), _put("d")
    assert a.key not in _names()  # old enough and not locked: evicted
    assert b.key in _names()  # locked: kept although over the limit


def test_no_limit_keeps_everything(small_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stencilkit.config, "BUILD_CACHE_MAX_SIZE", 0)
    for name in "abcdef":
        _put(name)
    assert len(_names()) == 6
    monkeypatch.setattr(stencilkit.config, "BUILD_CACHE_MAX_SIZE", "70KiB")  # the setting wins
    assert cache.max_size() == 70 * KIB
    assert cache.evict() == 4 and len(_names()) == 2


def test_two_processes_evicting_at_once_see_whole_entries(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "STENCILKIT_CACHE_DIR": str(tmp_path / "cache"),
        "STENCILKIT_CACHE_MAX_SIZE": "200KiB",  # 3 of the 8 entries of 64 KiB
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(seed), "8"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (0, 1)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert sum(r["builds"] + r["hits"] for r in results) == 2 * 8 * 4
    assert sum(r["builds"] for r in results) >= 8 + 3, results  # 11 entries, each built
    root = tmp_path / "cache"
    leftovers = [p.name for p in root.glob("??/.*")]
    assert not leftovers, leftovers  # no half-built or half-evicted directories left behind
    left = [p for p in root.glob("??/*") if p.is_dir()]
    assert 3 <= len(left) <= 5, len(left)  # of 11: the old rounds' entries were evicted
    assert len(list(root.glob("??/*.lock"))) <= len(left) + 2  # and their lock files


def test_a_read_only_cache_is_still_read(
    small_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = _put("a")

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(os, "utime", refuse)
    again = cache.get_or_build(a.key, lambda tmp: pytest.fail("must not rebuild"))
    assert not again.built and again.path == a.path
