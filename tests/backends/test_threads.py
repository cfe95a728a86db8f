"""Threads of the cpu backend: the size threshold in the generated code, the thread count read at
run time, the same results on any number of threads. (Speed is measured by the benchmark
``stencilkit bench --cpu --only threads``, not here: timing tests on a shared machine only flake.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.backends.cpp.omp import parallel_for, point_cost
from stencilkit.toolchain import threads as T

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
ROOT = Path(__file__).parents[2]


@gtx.field_operator
def smooth(a: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    return 0.5 * a + 0.125 * (a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1))


@gtx.program(backend=gtx.cpu)
def run_smooth(a: Field[Dims[I, J], float64], out: Field[Dims[I, J], float64]):
    smooth(a, out=out, domain={I: (1, 39), J: (1, 29)})


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def damped_sum(carry: float, x: float) -> float:
    return 0.5 * carry + x


@gtx.program(backend=gtx.cpu)
def run_scan(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64]):
    damped_sum(a, out=out)


def _smooth_ref(a: np.ndarray, out: np.ndarray) -> np.ndarray:
    ref = out.copy()
    ref[1:39, 1:29] = 0.5 * a[1:39, 1:29] + 0.125 * (
        a[2:40, 1:29] + a[0:38, 1:29] + a[1:39, 2:30] + a[1:39, 0:28]
    )
    return ref


def test_every_parallel_loop_has_a_size_test_and_a_run_time_thread_count(rng) -> None:
    a = gtx.as_field([I, J], rng.standard_normal((40, 30)))
    out = gtx.as_field([I, J], rng.standard_normal((40, 30)))
    source = run_smooth.inspect(a, out, offset_provider={}).source.as_text()
    pragmas = [line for line in source.splitlines() if "#pragma omp parallel" in line]
    assert pragmas
    for line in pragmas:
        assert re.search(
            r"if\(sk_parallel\(\(int64_t\)\(I_hi\d+ - I_lo\d+\) \* \(int64_t\)\(J_hi\d+ - J_lo\d+\), \d+\)\)",
            line,
        ), line
        assert line.rstrip().endswith("num_threads(sk_threads())"), line
    assert 'extern "C" void sk_bind_settings' in source


def test_a_heavier_body_has_a_higher_cost_per_point(rng) -> None:
    a3 = gtx.as_field([I, J, K], rng.standard_normal((6, 5, 4)))
    src_scan = run_scan.inspect(a3, a3, offset_provider={}).source.as_text()
    a = gtx.as_field([I, J], rng.standard_normal((40, 30)))
    src_smooth = run_smooth.inspect(a, a, offset_provider={}).source.as_text()
    cost = lambda src: int(re.search(r"if\(sk_parallel\(.*, (\d+)\)\)", src).group(1))  # noqa: E731
    assert cost(src_smooth) > cost(src_scan) >= 1  # 5 loads + 8 operations against 2 + 2
    # the scan's points include its levels: the scan axis is part of the work
    assert "(int64_t)(K_hi0 - K_lo0)" in src_scan


@pytest.mark.parametrize(
    ("threads", "min_work"), [(1, None), (2, 0), (3, 0), (None, None), (2, 10**12)]
)
def test_the_same_result_on_any_number_of_threads(rng, threads, min_work) -> None:
    """Serial, parallel for every kernel, more threads than cores, the defaults, never parallel:
    bit-identical results (each point is computed by the same code whichever thread runs it)."""
    data = rng.standard_normal((40, 30))
    a = gtx.as_field([I, J], data)
    before = rng.standard_normal((40, 30))
    out = gtx.as_field([I, J], before.copy())
    col = rng.standard_normal((7, 5, 9))
    a3, out3 = gtx.as_field([I, J, K], col), gtx.zeros({I: 7, J: 5, K: 9})
    with T.threads(threads, min_work):
        run_smooth(a, out, offset_provider={})
        run_scan(a3, out3, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), _smooth_ref(data, before))  # borders untouched too
    ref = np.zeros_like(col)
    carry = np.zeros(col.shape[:2])
    for k in range(col.shape[2]):
        carry = 0.5 * carry + col[:, :, k]
        ref[:, :, k] = carry
    np.testing.assert_allclose(out3.asnumpy(), ref, rtol=1e-15, atol=0)


def test_embedded_backend_is_unaffected_by_thread_settings(rng) -> None:
    data, before = rng.standard_normal((40, 30)), rng.standard_normal((40, 30))
    out = gtx.as_field([I, J], before.copy())
    with T.threads(1, 0):
        run_smooth.with_backend(None)(gtx.as_field([I, J], data), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), _smooth_ref(data, before), rtol=1e-14)


def test_set_num_threads_acts_at_once_and_threads_restores() -> None:
    default = T.get_num_threads()
    with T.threads(1, 123):
        assert T.get_num_threads() == 1 and T.get_parallel_min_work() == 123
        gtx.set_num_threads(3)
        assert gtx.get_num_threads() == 3
    assert T.get_num_threads() == default
    with pytest.raises(ValueError, match="whole number >= 1"):
        gtx.set_num_threads(0)
    with pytest.raises(ValueError, match="whole number >= 0"):
        gtx.set_parallel_min_work(-1)


def test_pragma_shapes() -> None:
    """One loop: ``parallel for simd``; nested loops: ``collapse(2)``; both keep the clauses."""

    class K1:  # the attributes parallel_for reads
        dims = (I,)
        values = ()
        scan = None
        outs = ("o",)

    one = parallel_for(K1, 0, 1, simd=True)  # type: ignore[arg-type]
    assert one.strip().startswith("#pragma omp parallel for simd schedule(static) if(sk_parallel(")
    assert point_cost(K1) == 1  # type: ignore[arg-type]
    two = parallel_for(K1, 3, 2, simd=False)  # type: ignore[arg-type]
    assert "collapse(2)" in two and "(int64_t)(I_hi3 - I_lo3)" in two


def _child(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OMP_WAIT_POLICY", "STENCILKIT_NUM_THREADS")
    }
    full.update(env, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=full,
        timeout=300,
        check=False,
    )


CHILD = """
import os, numpy as np, stencilkit as gtx
from stencilkit import Dims, Field, float64
I = gtx.Dimension("I")
src = '''
import stencilkit as gtx
from stencilkit import Dims, Field, float64
I = gtx.Dimension("I")
@gtx.field_operator
def f(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
    return a + 1.0
@gtx.program(backend=gtx.cpu)
def p(a: Field[Dims[I], float64], b: Field[Dims[I], float64]):
    f(a, out=b)
'''
import tempfile, importlib.util, pathlib
d = tempfile.mkdtemp(); path = pathlib.Path(d) / "m.py"; path.write_text(src)
spec = importlib.util.spec_from_file_location("m", path); m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
a = gtx.as_field([I], np.arange(5.0)); b = gtx.zeros({I: 5})
m.p(a, b, offset_provider={})
print(os.environ.get("OMP_WAIT_POLICY"), gtx.get_num_threads(), gtx.get_parallel_min_work(), b.asnumpy().tolist())
import ctypes, subprocess, sys
from stencilkit.toolchain import threads
print("policy:", threads.wait_policy())
print("child:", subprocess.run(["env"], capture_output=True, text=True).stdout.count("OMP_WAIT_POLICY"))
sys.stdout.flush()
ctypes.CDLL("libgomp.so.1").omp_display_env(0)  # what libgomp itself runs with, on stderr
"""


def test_environment_sets_threads_and_wait_policy_defaults_to_passive() -> None:
    """OpenMP runs with the passive wait policy, given to libgomp as it loads, while the
    process environment (os.environ, and what a child process inherits) stays as it was."""
    r = _child(CHILD, STENCILKIT_NUM_THREADS="3", STENCILKIT_PARALLEL_MIN_WORK="77")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:3] == ["None", "3", "77"]  # os.environ untouched
    assert "[1.0, 2.0, 3.0, 4.0, 5.0]" in r.stdout
    assert "policy: passive (stencilkit's default, given to OpenMP" in r.stdout
    assert "child: 0" in r.stdout  # a process started later does not inherit it
    assert "OMP_WAIT_POLICY = 'PASSIVE'" in r.stderr  # libgomp's own view
    r = _child(CHILD, OMP_WAIT_POLICY="active")  # the user's choice is kept
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "active" and "policy: active (set by the user)" in r.stdout
    assert "OMP_WAIT_POLICY = 'ACTIVE'" in r.stderr


def test_a_bad_thread_count_names_the_variable_when_a_cpu_program_loads() -> None:
    r = _child(CHILD, STENCILKIT_NUM_THREADS="many")
    assert r.returncode != 0
    assert "ConfigurationError" in r.stderr and "STENCILKIT_NUM_THREADS='many'" in r.stderr
    assert "whole number >= 1" in r.stderr


def test_the_bench_has_the_threads_section() -> None:
    from stencilkit_benchmarks.options import SECTIONS_CPU

    assert "threads" in SECTIONS_CPU


def test_one_thread_by_default_on_a_small_machine(monkeypatch) -> None:
    """Threads only where they pay: below MIN_CPUS_FOR_THREADS usable CPUs the default is one
    thread (measured on the 2-vCPU VM: threads lost at every size for three of four kernel
    shapes); OMP_NUM_THREADS or a larger machine gives OpenMP's default (0 in the block)."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(T, "usable_cpus", lambda: 2)
    assert T.default_threads() == 1
    monkeypatch.setattr(T, "usable_cpus", lambda: T.MIN_CPUS_FOR_THREADS)
    assert T.default_threads() == 0
    monkeypatch.setattr(T, "usable_cpus", lambda: 2)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert T.default_threads() == 0


@pytest.mark.parametrize(
    ("env", "source"),
    [
        ({}, None),  # the default: depends on the CPUs here, checked below
        ({"STENCILKIT_NUM_THREADS": "3"}, "3 (STENCILKIT_NUM_THREADS)"),
        ({"OMP_NUM_THREADS": "2"}, "2 (OMP_NUM_THREADS)"),
    ],
)
def test_info_says_who_chose_the_thread_count(env: dict[str, str], source: str | None) -> None:
    """`stencilkit info`'s CPU threads line names the real source of the count: one thread on
    a small machine is stencilkit's policy, not OpenMP's default."""
    from stencilkit.toolchain import threads

    r = _child("from stencilkit.cli import main; main(['info'])", **env)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("CPU threads"))
    if source is None:
        cpus = threads.usable_cpus()
        if cpus < threads.MIN_CPUS_FOR_THREADS:
            source = f"1 (stencilkit's default: one thread below 4 usable CPUs, {cpus} here"
        else:
            source = f"{cpus} (OpenMP's default: one per usable CPU)"
    assert line.split(None, 2)[2].startswith(source), line
    assert "OpenMP default)" not in line
