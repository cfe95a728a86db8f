"""Logging: the ``stencilkit`` logger is silent by default, one switch turns it on, builds, cache
hits/misses, tuning and the OpenMP fallback are recorded, and a compiled call logs nothing."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit.core import log as sklog
from stencilkit.toolchain import cxx

ROOT = Path(__file__).parents[2]
PROGRAM = """
import stencilkit as gtx
from stencilkit import Dims, Field, float64
I = gtx.Dimension("I")
@gtx.field_operator
def f(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
    return a * {c} + 1.0
@gtx.program(backend=gtx.cpu)
def p(a: Field[Dims[I], float64], b: Field[Dims[I], float64]):
    f(a, out=b)
"""


def _unique_program(tmp_path: Path) -> Any:
    """A cpu program no cache has seen (its source holds a fresh constant)."""
    c = 1.0 + (uuid.uuid4().int % 10**6) / 10**7
    path = tmp_path / f"prog_{uuid.uuid4().hex}.py"
    path.write_text(PROGRAM.format(c=c))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.c = c
    return module


@pytest.fixture
def log_level():
    yield sklog.set_log_level
    sklog.set_log_level(None)


def test_off_by_default() -> None:
    root = logging.getLogger("stencilkit")
    assert any(isinstance(h, logging.NullHandler) for h in root.handlers)
    assert root.level == logging.NOTSET


def _child(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "STENCILKIT_LOG"}
    full.update(env, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=full,
        timeout=300,
        check=False,
    )


CHILD = f"""
import importlib.util, pathlib, tempfile, uuid, numpy as np, stencilkit as gtx
d = pathlib.Path(tempfile.mkdtemp()); path = d / "m.py"
path.write_text('''{PROGRAM.format(c="1.5")}''')
spec = importlib.util.spec_from_file_location("m", path); m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
I = m.I
a = gtx.as_field([I], np.arange(3.0)); b = gtx.zeros({{I: 3}})
m.p(a, b, offset_provider={{}})
print(b.asnumpy().tolist())
"""


def test_the_environment_switch_shows_builds_on_stderr(tmp_path) -> None:
    quiet = _child(CHILD, STENCILKIT_CACHE_DIR=str(tmp_path / "c1"))
    assert quiet.returncode == 0, quiet.stderr
    assert "stencilkit" not in quiet.stderr  # off by default: nothing at all
    loud = _child(CHILD, STENCILKIT_CACHE_DIR=str(tmp_path / "c2"), STENCILKIT_LOG="info")
    assert loud.returncode == 0, loud.stderr
    assert "[1.0, 2.5, 4.0]" in loud.stdout
    assert "stencilkit.build INFO: C++ build of program.so" in loud.stderr
    assert "started" in loud.stderr and "done in" in loud.stderr


def test_builds_and_cache_misses_then_hits_are_recorded(tmp_path, caplog, log_level) -> None:
    log_level("debug")
    caplog.set_level(logging.DEBUG, logger="stencilkit")
    m = _unique_program(tmp_path)
    a, b = gtx.as_field([m.I], np.arange(4.0)), gtx.zeros({m.I: 4})
    m.p(a, b, offset_provider={})
    np.testing.assert_allclose(b.asnumpy(), np.arange(4.0) * m.c + 1.0)
    messages = [(r.name, r.getMessage()) for r in caplog.records]
    assert any(n == "stencilkit.cache" and "cache miss" in t for n, t in messages), messages
    assert any(n == "stencilkit.build" and "done in" in t for n, t in messages), messages
    caplog.clear()
    from stencilkit.backends.cpp import backend as cpp_backend

    cpp_backend._LOADED.clear()  # forget the loaded library: the next call finds it on disk
    m.p.with_backend(gtx.cpu)(a, b, offset_provider={})
    assert any(
        r.name == "stencilkit.cache" and "cache hit" in r.getMessage() for r in caplog.records
    )
    assert not any(r.name == "stencilkit.build" for r in caplog.records)  # found, not built


def test_a_compiled_call_makes_no_logging_call(tmp_path, monkeypatch, log_level) -> None:
    """The per-call fast path is free of logging: not even a disabled ``log.debug``."""
    m = _unique_program(tmp_path)
    a, b = gtx.as_field([m.I], np.arange(4.0)), gtx.zeros({m.I: 4})
    m.p(a, b, offset_provider={})  # built and loaded
    log_level("debug")
    calls: list[str] = []
    original = logging.Logger.isEnabledFor
    monkeypatch.setattr(
        logging.Logger,
        "isEnabledFor",
        lambda self, level: calls.append(self.name) or original(self, level),
    )
    for _ in range(50):
        m.p(a, b, offset_provider={})
    assert not [c for c in calls if c.startswith("stencilkit")], calls[:5]


def test_the_openmp_fallback_is_a_warning(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="stencilkit")
    cxx._warn_if_serial(cxx.CxxCompiler("/usr/bin/c++", "c++ 1.0", ("-O3",), openmp=False))
    [record] = [r for r in caplog.records if r.name == "stencilkit.toolchain"]
    assert record.levelno == logging.WARNING and "runs on one thread" in record.getMessage()


def test_set_log_level_values(log_level) -> None:
    log_level("info")
    assert logging.getLogger("stencilkit").level == logging.INFO
    log_level("off")
    assert logging.getLogger("stencilkit").level == logging.NOTSET
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        gtx.set_log_level("loud")


def test_slow_work_shows_a_progress_line_on_a_terminal(monkeypatch) -> None:
    shown: list[str] = []

    class Status:
        def __init__(self, text: str) -> None:
            shown.append(text)

        def start(self) -> None:
            shown.append("start")

        def stop(self) -> None:
            shown.append("stop")

    class Console:
        def __init__(self, **kwargs: Any) -> None:
            pass

        def status(self, text: str) -> Status:
            return Status(text)

    import rich.console

    monkeypatch.setattr(rich.console, "Console", Console)
    monkeypatch.setattr(sklog, "_interactive", lambda: True)
    monkeypatch.setattr(sklog, "PROGRESS_AFTER_S", 0.02)
    with sklog.timed(logging.getLogger("stencilkit.test"), "a slow build"):
        time.sleep(0.3)
    assert shown == ["stencilkit: a slow build", "start", "stop"]
    shown.clear()
    with sklog.timed(logging.getLogger("stencilkit.test"), "a quick build"):
        pass
    assert shown == []  # quick work shows nothing
    work = sklog.begin(logging.getLogger("stencilkit.test"), "tuning")
    time.sleep(0.3)
    work.end("block (32, 4, 1)")
    assert shown == ["stencilkit: tuning", "start", "stop"]


def test_no_progress_line_when_stderr_is_not_a_terminal(capsys) -> None:
    with sklog.progress("work"):
        pass
    assert capsys.readouterr().err == ""


@pytest.mark.gpu
def test_gpu_tuning_is_logged(caplog, log_level, rng, tmp_path, monkeypatch) -> None:
    from stencilkit import Dims, Field, float64
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv(
        "STENCILKIT_CACHE_DIR", str(tmp_path / "cache")
    )  # nothing built or tuned yet
    reset_config()

    I, J, K = (
        gtx.Dimension("I"),
        gtx.Dimension("J"),
        gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL),
    )
    F = Field[Dims[I, J, K], float64]

    @gtx.field_operator
    def lap(a: F) -> F:  # a constant no other test uses: not tuned earlier in this process
        return -4.03125 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)

    @gtx.program(backend=gtx.gpu)
    def run(a: F, out: F):
        lap(a, out=out, domain={I: (1, 255), J: (1, 255), K: (0, 64)})

    log_level("info")
    caplog.set_level(logging.INFO, logger="stencilkit")
    a = gtx.as_field([I, J, K], rng.standard_normal((256, 256, 64)), allocator=gtx.gpu)
    out = gtx.zeros({I: 256, J: 256, K: 64}, allocator=gtx.gpu)
    run(a, out, offset_provider={})
    assert any(
        r.name == "stencilkit.build" and "NVRTC build" in r.getMessage() for r in caplog.records
    )
    tuning = [r.getMessage() for r in caplog.records if r.name == "stencilkit.cuda.tuning"]
    # a kernel this size is searched (worth_searching); its start and its choice are both logged
    assert any("started" in t for t in tuning) and any(
        "done in" in t and "block" in t for t in tuning
    ), tuning
    monkeypatch.undo()
    reset_config()
