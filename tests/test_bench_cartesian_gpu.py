"""``benchmarks/cartesian_gpu_vs_gt4py.py`` (issue 24's GPU side by side) run on the CPU: its
stencilkit side through every step (builds, run, report) on ``gt:cpu_ifirst``, the NumPy
references it checks against, and ``scripts/cartesian_gpu_bench.sh`` failing loudly without a
GPU. Real gt4py is not installed here: its side is run by hand in a scratch venv
(``benchmarks/README.md``)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).parents[1]
BENCH = ROOT / "benchmarks" / "cartesian_gpu_vs_gt4py.py"
DEFS = ROOT / "benchmarks" / "stencilkit_benchmarks" / "cartesian_gpu_defs.py"


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, STENCILKIT_CACHE_DIR=str(tmp_path / "cache"), OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


def _bench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), *args],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def _defs() -> ModuleType:
    from stencilkit.cartesian import gtscript

    spec = importlib.util.spec_from_file_location("cartesian_gpu_defs_test", DEFS)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    mod.GTSCRIPT = gtscript  # type: ignore[attr-defined]
    spec.loader.exec_module(mod)
    return mod


def test_stencilkit_side_on_cpu(tmp_path: Path) -> None:
    d = tmp_path / "out"
    p = _bench(
        tmp_path, "build", "--impl", "stencilkit", "--backend", "gt:cpu_ifirst", "--dir", str(d)
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    builds = json.loads((d / "builds-stencilkit.json").read_text())
    assert set(builds["kinds"]) == {"copy2", "lap7", "tridiag", "cumsum"}
    assert all(b["ok"] and b["first_call_s"] > 0 for b in builds["kinds"].values())
    p = _bench(
        tmp_path, "run", "--impls", "stencilkit", "--backend", "gt:cpu_ifirst", "--dir", str(d),
        "--sizes", "20x18x9", "--lap-sizes", "24x24x24", "--rounds", "3", "--reps", "2",
        "--calls", "200",
    )  # fmt: skip
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    doc = json.loads((d / "result.json").read_text())
    assert doc["errors"] == [] and doc["storage_from"] == "stencilkit"
    variants = {"run()", "frozen", "__call__ validate_args=False", "__call__ validated"}
    pc = doc["per_call"]["stencilkit"]
    assert set(pc) == variants
    assert all(v["ok"] and v["us"] > 0 and len(v["rounds_us"]) == 3 for v in pc.values())
    assert doc["per_call"]["bare_launch_us"] is None  # the CPU has no bare launch
    bw = doc["bandwidth"]
    assert [(e["kind"], e["shape"]) for e in bw] == [
        ("copy", [20, 18, 9]),
        ("lap7", [20, 18, 9]),
        ("tridiag", [20, 18, 9]),
        ("cumsum", [20, 18, 9]),
        ("copy", [24, 24, 24]),
        ("lap7", [24, 24, 24]),
    ]
    lap = bw[1]
    assert lap["bytes"] == 8 * 18 * 16 * 9 * 2 and bw[2]["bytes"] == 8 * 20 * 18 * 9 * 5
    for e in bw:
        if e["kind"] == "copy":
            assert e["exact"] and e["ceiling_GBps"] > 0
            continue
        r = e["impls"]["stencilkit"]
        assert r["ok"] and r["untouched_ok"] and r["rel_error"] <= 1e-12
        assert len(r["samples_ms"]) == 3 and r["fraction_of_copy"] is None  # no ceiling on CPU
        assert r["wall_ms_per_call"] > 0 and len(r["wall_ms"]) == 3
    p = _bench(tmp_path, "report", "--dir", str(d))
    assert p.returncode == 0, p.stderr
    assert "| lap7 | PARALLEL (target >= 0.8) | 20x18x9 |" in p.stdout
    assert "| __call__ validated |" in p.stdout and "first builds, stencilkit" in p.stdout


def test_references() -> None:
    D = _defs()
    ins = D.inputs("tridiag", (3, 2, 9), seed=1)
    x = D.reference("tridiag", ins)
    a, b, c, d = ins
    for i in range(3):
        for j in range(2):
            A = np.diag(b[i, j]) + np.diag(a[i, j, 1:], -1) + np.diag(c[i, j, :-1], 1)
            np.testing.assert_allclose(A @ x[i, j], d[i, j], rtol=0, atol=1e-12)
    (u,) = D.inputs("lap7", (5, 6, 4), seed=2)
    lap = D.reference("lap7", [u])
    i, j, k = 2, 3, 1
    direct = sum(u[i + di, j + dj, k + dk] for di, dj, dk in
                 ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))) - 6 * u[i, j, k]  # fmt: skip
    assert lap[i - 1, j - 1, k - 1] == pytest.approx(direct)
    assert lap.shape == u[D.written("lap7", u.shape)].shape == (3, 4, 2)


def test_script_fails_loudly_without_a_gpu(tmp_path: Path) -> None:
    probe = "import cupy; assert cupy.cuda.runtime.getDeviceCount() > 0"
    if subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0:
        pytest.skip("a GPU is usable here")
    env = dict(_env(tmp_path), OUT=str(tmp_path / "o"), PYTHON=sys.executable)
    p = subprocess.run(
        ["bash", str(ROOT / "scripts" / "cartesian_gpu_bench.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert p.returncode == 2, p.stdout + p.stderr
    assert "FATAL: CuPy cannot use a GPU" in p.stderr
    steps = json.loads((tmp_path / "o" / "cartesian_gpu" / "steps.json").read_text())
    assert steps["steps"] == [{"step": "gpu_check", "rc": 2, "t_s": steps["steps"][0]["t_s"]}]


def _fake_cupy() -> ModuleType:
    """Just enough of CuPy's API, over NumPy, for the benchmark's ``Device`` on a "GPU"."""
    import time
    from types import SimpleNamespace

    class Event:
        t = 0.0

        def record(self, stream: object = None) -> None:
            self.t = time.perf_counter()

        def synchronize(self) -> None:
            pass

    stream = SimpleNamespace(ptr=0, synchronize=lambda: None)
    runtime = SimpleNamespace(
        getDeviceCount=lambda: 1,
        getDeviceProperties=lambda i: {"name": b"Fake GPU", "totalGlobalMem": 2**37},
        runtimeGetVersion=lambda: 13000,
        driverGetVersion=lambda: 13000,
        memcpyDeviceToDevice=3,
    )
    cp = ModuleType("cupy")
    cp.__version__ = "fake"  # type: ignore[attr-defined]
    cp.cuda = SimpleNamespace(  # type: ignore[attr-defined]
        runtime=runtime,
        Device=lambda i: SimpleNamespace(compute_capability="90"),
        get_current_stream=lambda: stream,
        Event=Event,
        get_elapsed_time=lambda a, b: (b.t - a.t) * 1e3,
    )
    cp.asnumpy = np.asarray  # type: ignore[attr-defined]
    cp.copyto = np.copyto  # type: ignore[attr-defined]
    cp.get_default_memory_pool = lambda: SimpleNamespace(free_all_blocks=lambda: None)  # type: ignore[attr-defined]
    return cp


def test_device_gpu_paths_with_a_fake_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU-only code of the benchmark's ``Device`` (describe, CUDA-event timing, copies),
    which no test here can run on a GPU: a typo there would cost a device call."""
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    spec = importlib.util.spec_from_file_location("cartesian_gpu_vs_gt4py_test", BENCH)
    assert spec and spec.loader
    B = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(B)
    dev = B.Device("gt:gpu")
    assert dev.gpu and dev.describe()["device"] == "Fake GPU"
    calls: list[int] = []
    ms = dev.time_ms(lambda: calls.append(1), reps=4, warmup=1)
    assert len(ms) == 4 and len(calls) == 5 and all(t >= 0 for t in ms) and dev.last_wall_ms > 0
    src, dst = np.random.default_rng(0).standard_normal((4, 3, 2)), np.full((4, 3, 2), np.nan)
    copies = dev.copiers(dst, src)
    assert set(copies) == {"cupy.copyto", "cudaMemcpyAsync D2D"}
    copies["cupy.copyto"]()
    assert np.array_equal(dst, src) and np.array_equal(dev.to_host(dst), src)
    dev.sync()
    dev.free()
