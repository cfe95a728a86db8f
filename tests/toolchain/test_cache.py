"""The persistent build cache: shared by processes, built once, corruption detected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stencilkit.toolchain import cache
from stencilkit.toolchain.config import reset_config

WORKER = Path(__file__).parents[1] / "helpers" / "compile_worker.py"
SRC = str(Path(__file__).parents[2] / "src")


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("STENCILKIT_CACHE_DIR", str(tmp_path / "cache"))
    reset_config()
    yield tmp_path / "cache"
    reset_config()


def _spawn(seed: int, cache_dir: Path) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "STENCILKIT_CACHE_DIR": str(cache_dir),
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    return subprocess.Popen(
        [sys.executable, str(WORKER), str(seed)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_eight_processes_build_once(fresh_cache) -> None:
    procs = [_spawn(seed, fresh_cache) for seed in range(8)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert all(r["ok"] for r in results)
    assert sum(r["built"] for r in results) == 1
    entries = [e for e in fresh_cache.glob("??/*") if e.is_dir()]
    assert len(entries) == 1
    assert {p.name for p in entries[0].iterdir()} >= {
        "program.cpp",
        "program.so",
        "program.ir",
        "manifest.json",
    }


def test_corrupted_entry_is_rebuilt(fresh_cache) -> None:
    first = _spawn(1, fresh_cache)
    out, err = first.communicate(timeout=300)
    assert json.loads(out.strip().splitlines()[-1]) == {"built": True, "ok": True}, err
    (entry,) = [e for e in fresh_cache.glob("??/*") if e.is_dir()]
    lib = entry / "program.so"
    lib.write_bytes(lib.read_bytes()[:100])  # truncated, as after a crash or a full disk
    second = _spawn(2, fresh_cache)
    out, err = second.communicate(timeout=300)
    assert json.loads(out.strip().splitlines()[-1]) == {"built": True, "ok": True}, err


def test_cache_key_covers_every_part() -> None:
    base = [("ir", "x"), ("source", "y")]
    assert cache.cache_key(base) == cache.cache_key(list(base))
    assert cache.cache_key(base) != cache.cache_key([("ir", "x"), ("source", "z")])
    assert cache.cache_key(base) != cache.cache_key([("ir", "xs"), ("source", "")])


def test_cache_info_and_clear(fresh_cache) -> None:
    proc = _spawn(3, fresh_cache)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    info = cache.cache_info()
    assert info["entries"] == 1 and info["bytes"] > 0 and info["path"] == str(fresh_cache)
    assert cache.clear_cache() == 1
    assert cache.cache_info()["entries"] == 0
