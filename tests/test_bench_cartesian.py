"""The ``cartesian`` section of ``stencilkit bench``: its CPU run (through the CLI, in a child
process because the section installs the gt4py alias), the GPU bandwidth logic run on the CPU,
and the target lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stencilkit_benchmarks.cartesian import bandwidth_rows, call_targets
from stencilkit_benchmarks.report import Runner
from test_bench import _run_bench

SRC = Path(__file__).parents[1] / "src"
BENCH = Path(__file__).parents[1] / "benchmarks"


def test_cli_bench_cartesian_cpu(tmp_path: Path) -> None:
    p, doc = _run_bench(
        tmp_path, "--cpu", "--quick", "--only", "cartesian", "--calls", "300", timeout=240
    )
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    assert doc["ok"] and not doc["failures"]
    res = doc["results"]["cartesian"]
    variants = ("run()", "frozen", "__call__ validate_args=False", "__call__ validated")
    for backend in ("numpy", "gt:cpu_ifirst"):
        for nf in (2, 25):
            entry = res[backend][f"{nf}_fields"]
            assert set(entry) == {*variants, "gt4py.next program"}
            for v in entry.values():
                assert v["error"] <= 1e-12 and v["us"] > 0 and v["n_calls"] == 300
    names = [row["what"] for row in doc["table"]]
    assert "cartesian gt:cpu_ifirst 25 fields 8^3 __call__ validated" in names
    for kind in ("lap", "fwdbwd"):
        cold, warm = res["builds"][kind]["cold"], res["builds"][kind]["warm"]
        assert cold["error"] <= 1e-10 and warm["error"] <= 1e-10
        assert warm["first_call_s"] < cold["first_call_s"]  # the warm child built nothing
    targets = [t["what"] for t in doc["targets"]]
    assert len(targets) == 2 * 4 + 2 * 2 + 1  # calls (cpu only), builds, the import
    assert "cartesian gt:cpu_ifirst 2 fields run() <= 10 us" in targets
    met = sum(t["met"] for t in doc["targets"])
    assert f"targets: {met}/{len(targets)} met" in p.stdout


def test_bandwidth_logic_on_cpu(tmp_path: Path) -> None:
    """The GPU bandwidth measurement, run on the CPU backend with the host clock."""
    script = """
import json, sys
from stencilkit_benchmarks.cartesian import bandwidth_case, bandwidth_rows, calls_module
from stencilkit_benchmarks.devices import Dev
from stencilkit_benchmarks.report import Runner
C, R = calls_module(), Runner(verbose=False)
res = {k: bandwidth_case(C, Dev(gpu=False), k, "gt:cpu_ifirst", 14, 3) for k in ("lap", "cumsum")}
bandwidth_rows(R, res, copy_gbs=res["cumsum"]["GBps"])
print(json.dumps({"res": res, "checks": R.checks, "targets": R.targets, "rows": R.rows}))
"""
    env = dict(os.environ, STENCILKIT_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(BENCH), env.get("PYTHONPATH", "")])
    p = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=180
    )
    assert p.returncode == 0, p.stderr[-4000:]
    doc = json.loads(p.stdout.splitlines()[-1])
    lap, cumsum = doc["res"]["lap"], doc["res"]["cumsum"]
    assert lap["bytes"] == 2 * 8 * 12 * 12 * 14 and cumsum["bytes"] == 2 * 8 * 14**3
    assert lap["error"] <= 1e-12 and cumsum["error"] <= 1e-12
    assert cumsum["fraction_of_copy"] == pytest.approx(1.0)
    assert all(ok for _, ok, _ in doc["checks"]) and len(doc["checks"]) == 2
    assert [t[0] for t in doc["targets"]] == [
        "cartesian PARALLEL lap 14^3 run(): target >= 0.80 of copy",
        "cartesian FORWARD cumsum 14^3 run(): target >= 0.60 of copy",
    ]
    assert [r[4].split(";")[0].rsplit(":", 1)[0] for r in doc["rows"]] == [
        "target >= 0.80 of copy",
        "target >= 0.60 of copy",
    ]  # each row says its target, and it is the one counted


def test_bandwidth_rows_flag_a_wrong_result() -> None:
    R = Runner(verbose=False)
    res = {"lap": {"n": 8, "error": float("nan"), "ms": 1.0, "GBps": 90.0}}
    bandwidth_rows(R, res, copy_gbs=100.0)
    assert R.checks[0][1] is False and not R.ok
    assert R.targets == [
        ("cartesian PARALLEL lap 8^3 run(): target >= 0.80 of copy", True, "1.000 ms 0.90")
    ]


def test_call_targets_met_and_missed_keep_ok() -> None:
    R = Runner(verbose=False)
    us = {"run()": 9.0, "frozen": 11.0, "__call__ validate_args=False": 19.0}
    call_targets(R, "gt:cpu_ifirst", 2, {**us, "__call__ validated": 101.0})
    assert [(w.split(" fields ")[1], met) for w, met, _ in R.targets] == [
        ("run() <= 10 us", True),
        ("frozen <= 10 us", False),
        ("__call__ validate_args=False <= 20 us", True),
        ("__call__ validated <= 100 us", False),
    ]
    assert R.ok  # a missed performance target is reported, not a failed run
    assert "targets: 2/4 met" in R.table("t") and "MISSED TARGET" in R.table("t")
    call_targets(R, "gt:cpu_ifirst", 25, {**us, "__call__ validated": 50.0})
    assert R.targets[4] == ("cartesian gt:cpu_ifirst 25 fields run() <= 15 us", True, "9.0 us")
