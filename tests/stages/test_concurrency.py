"""One program called from several threads at once, and programs called in a forked child: every
result checked against NumPy, on every backend (docs/configuration.md, "Threads and fork").

The cpu backend releases the GIL while its kernels run, so calls of one plan really overlap;
before the fix they shared one argument block and 4-12 of 400 calls left outputs unwritten or
read another thread's input."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32
from stencilkit.toolchain import threads as T

I, J = gtx.Dimension("I"), gtx.Dimension("J")
FIJ = Field[Dims[I, J], float64]
NI, NJ = 160, 128


@gtx.field_operator
def _scaled_laplacian(a: FIJ, s: float64) -> FIJ:
    return s * (a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1) - 4.0 * a) + a


def _reference(a: np.ndarray, s: float, lo: int, hi: int, before: np.ndarray) -> np.ndarray:
    want = before.copy()
    c = a[1:-1, lo:hi]
    lap = a[2:, lo:hi] + a[:-2, lo:hi] + a[1:-1, lo + 1 : hi + 1] + a[1:-1, lo - 1 : hi - 1] - 4 * c
    want[1:-1, lo:hi] = s * lap + c
    return want


def _program(backend):
    @gtx.program(backend=backend)
    def scaled(a: FIJ, s: float64, out: FIJ, lo: int32, hi: int32):
        _scaled_laplacian(a, s, out=out, domain={I: (1, NI - 1), J: (lo, hi)})

    return scaled


def _hammer(case, prog, threads: int, calls: int, bounds) -> list[str]:
    """``threads`` threads, each calling ``prog`` ``calls`` times on fields of its own with a
    fresh random scalar (and the domain bounds of its turn); every result checked. Returns the
    failures (empty: all correct)."""
    start = threading.Barrier(threads)
    failures: list[str] = []

    def worker(t: int) -> None:
        rng = np.random.default_rng(1000 + t)
        a_np = rng.random((NI, NJ)) + t  # each thread's input differs
        a = case.field([I, J], a_np)
        before = rng.random((NI, NJ))
        out = case.field([I, J], before)
        start.wait()
        for n in range(calls):
            s = float(rng.random()) + 0.5
            lo, hi = bounds[(t + n) % len(bounds)]
            prog(a, s, out, lo, hi, offset_provider={})
            got = out.asnumpy()
            want = _reference(a_np, s, lo, hi, before)
            if not np.allclose(got, want, rtol=1e-12, atol=1e-14):
                bad = int(np.sum(~np.isclose(got, want, rtol=1e-12, atol=1e-14)))
                failures.append(f"thread {t} call {n}: {bad} points wrong")
            before = got

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join(timeout=300)
    assert not any(th.is_alive() for th in pool), "a thread did not finish: a hang"
    return failures


def test_threads_calling_one_program_each_get_their_own_result(case) -> None:
    """8 threads x 40 calls of one plan (same shapes and bounds), first call included: the
    threads start together on a program never called before."""
    prog = _program(case.backend)
    with T.threads(2, min_work=0):  # the cpu backend's kernels run on OpenMP threads too
        failures = _hammer(case, prog, threads=8, calls=40, bounds=[(1, NJ - 1)])
    assert failures == []


def test_threads_with_several_plans_at_once(case) -> None:
    """Threads alternate between three domain bounds (three plans, made while others run)."""
    prog = _program(case.backend)
    bounds = [(1, NJ - 1), (2, NJ - 3), (5, 40)]
    failures = _hammer(case, prog, threads=6, calls=30, bounds=bounds)
    assert failures == []


def test_the_plan_cache_is_bounded(case, monkeypatch) -> None:
    """A loop counter used in a domain bound makes one plan per value: the least recently used
    are dropped beyond STENCILKIT_PLAN_CACHE_SIZE, and every call is still right."""
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv("STENCILKIT_PLAN_CACHE_SIZE", "4")
    reset_config()
    try:
        prog = _program(case.backend)
        rng = np.random.default_rng(7)
        a_np, before = rng.random((NI, NJ)), rng.random((NI, NJ))
        a, out = case.field([I, J], a_np), case.field([I, J], before)
        for hi in range(20, 32):
            prog(a, 0.75, out, 1, hi, offset_provider={})
            want = _reference(a_np, 0.75, 1, hi, before)
            np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-12, atol=1e-14)
            before = want
        assert len(prog._runner.plans) == 4
    finally:
        monkeypatch.delenv("STENCILKIT_PLAN_CACHE_SIZE")
        reset_config()


def test_a_bad_plan_cache_size_names_the_variable(monkeypatch) -> None:
    from stencilkit.core.errors import ConfigurationError
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv("STENCILKIT_PLAN_CACHE_SIZE", "0")
    reset_config()
    try:
        with pytest.raises(ConfigurationError, match="STENCILKIT_PLAN_CACHE_SIZE"):
            _program(None)._runner  # noqa: B018
    finally:
        monkeypatch.delenv("STENCILKIT_PLAN_CACHE_SIZE")
        reset_config()


# ------------------------------------------------------------------------------------ fork
def _child_call(queue) -> None:  # runs in the forked child
    try:
        prog = _PROGRAMS["cpu"]
        rng = np.random.default_rng(11)
        a_np, before = rng.random((NI, NJ)), rng.random((NI, NJ))
        a, out = gtx.as_field([I, J], a_np), gtx.as_field([I, J], before)
        prog(a, 1.25, out, 1, NJ - 1, offset_provider={})
        ok = np.allclose(
            out.asnumpy(), _reference(a_np, 1.25, 1, NJ - 1, before), rtol=1e-12, atol=1e-14
        )
        queue.put(("ok" if ok else "wrong result", T.get_num_threads()))
    except BaseException as err:  # reported to the parent, which fails the test
        queue.put((f"{type(err).__name__}: {err}", 0))


_PROGRAMS: dict[str, object] = {}


@pytest.mark.skipif(sys.platform != "linux", reason="os.fork is Linux's multiprocessing default")
def test_a_forked_child_runs_after_the_parent_used_openmp() -> None:
    """libgomp's thread pool does not survive fork(): a child starting a parallel region hangs.
    The parent runs a call on 2 OpenMP threads, then a forked child calls the same program:
    it must finish (serially) with the right result, within a time limit."""
    prog = _PROGRAMS["cpu"] = _program(gtx.cpu)
    rng = np.random.default_rng(3)
    a_np, before = rng.random((NI, NJ)), rng.random((NI, NJ))
    a, out = gtx.as_field([I, J], a_np), gtx.as_field([I, J], before)
    with T.threads(2, min_work=0):  # a real parallel region in the parent
        prog(a, 0.5, out, 1, NJ - 1, offset_provider={})
        np.testing.assert_allclose(
            out.asnumpy(), _reference(a_np, 0.5, 1, NJ - 1, before), rtol=1e-13
        )
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        child = ctx.Process(target=_child_call, args=(queue,))
        child.start()
        child.join(timeout=60)
        if child.is_alive():
            child.kill()
            child.join()
            pytest.fail("the forked child hung in its first cpu call")
    status, nthreads = queue.get(timeout=5)
    assert status == "ok"
    assert nthreads == 1  # serial in the child: libgomp's pool belongs to the parent
    assert child.exitcode == 0


def test_a_forked_child_may_not_ask_for_threads_again() -> None:
    """In a child forked after OpenMP ran, set_num_threads(n > 1) would hang the next call: it is
    refused with the reason and the fix (a spawned process)."""
    prog = _program(gtx.cpu)
    rng = np.random.default_rng(5)
    a = gtx.as_field([I, J], rng.random((NI, NJ)))
    out = gtx.as_field([I, J], rng.random((NI, NJ)))
    with T.threads(2, min_work=0):
        prog(a, 0.5, out, 1, NJ - 1, offset_provider={})
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what set_num_threads(2) did, then leave at once
        os.close(r)
        try:
            T.set_num_threads(2)
            msg = "accepted"
        except Exception as err:
            msg = f"{type(err).__name__}: {err}"
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(r) as f:
        msg = f.read()
    assert status == 0
    assert msg.startswith("StencilValueError") and "fork" in msg and "spawn" in msg
