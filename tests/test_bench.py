"""``stencilkit bench``: the CPU quick path, the hand-written CUDA baselines (NVRTC and a CPU
emulation of their launches), the benchmark mesh, and on a GPU the GPU quick path."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import stencilkit_benchmarks as bench

SRC = Path(__file__).parents[1] / "src"


def _run_bench(
    tmp_path: Path, *args: str, timeout: float
) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp_path / "bench.json"
    env = dict(os.environ)
    # this checkout's suite first: an installed stencilkit_benchmarks (another checkout's) loses
    ours = os.pathsep.join([str(SRC), str(SRC.parent / "benchmarks")])
    env["PYTHONPATH"] = ours + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["STENCILKIT_CACHE_DIR"] = str(tmp_path / "cache")
    env.setdefault(
        "OMP_NUM_THREADS", "1"
    )  # this checks the path; oversubscribed OpenMP spins slowly
    p = subprocess.run(
        [sys.executable, "-m", "stencilkit.cli", "bench", *args, "--json", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    doc = json.loads(out.read_text()) if out.exists() else {}
    return p, doc


def test_cli_bench_cpu_quick(tmp_path: Path) -> None:
    p, doc = _run_bench(tmp_path, "--cpu", "--quick", timeout=120)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    assert "---- stencilkit CPU benchmarks" in p.stdout
    assert "checks:" in p.stdout and "sections failed: none" in p.stdout
    assert doc["ok"] and not doc["failures"]
    assert set(bench.SECTIONS_CPU) <= set(doc["results"])
    assert doc["results"]["scan"]["bytes"] == 9 * 8 * 32 * 32 * 16
    names = [row["what"] for row in doc["table"]]
    for op in ("scan", "e2c", "c2e", "v2e"):
        assert f"{op} stencilkit gtx.cpu" in names and f"{op} embedded NumPy" in names
    # the rows and the footer agree: every target a row states is counted, met or missed
    stated = [row for row in doc["table"] if "target" in row["note"]]
    assert stated, "the cpu run states its targets (speed-up, per-call overhead, first call)"
    for row in stated:
        met = row["note"].split("target")[1].split(";")[0].endswith(": met")
        counted = [t for t in doc["targets"] if t["what"].startswith(row["what"].strip() + ":")]
        assert len(counted) == 1 and counted[0]["met"] == met, (row, counted)
    n_met = sum(t["met"] for t in doc["targets"])
    assert f"targets: {n_met}/{len(doc['targets'])} met" in p.stdout
    gpu_only = ("of copy",)  # DESIGN.md's bandwidth targets are the H200's: not shown on cpu
    assert not [r for r in stated if any(g in r["note"] for g in gpu_only)], stated


def test_a_row_states_a_target_only_by_counting_it() -> None:
    from stencilkit_benchmarks.report import Runner

    R = Runner(verbose=False)
    R.row("speedup", "5.5x", target=("target >= 10x", False))
    R.row("import", "250 ms", note="no GPU library", target=("target <= 300 ms", True))
    assert [r[4] for r in R.rows] == [
        "target >= 10x: MISSED",
        "target <= 300 ms: met; no GPU library",
    ]
    assert "targets: 1/2 met" in R.table("t") and "MISSED TARGET: speedup: target >= 10x" in (
        R.table("t")
    )
    with pytest.raises(ValueError, match="a target goes in target="):
        R.row("scan", "0.1 ms", note="target >= 0.90")


def test_cuda_sources_emulated_on_cpu(tmp_path: Path) -> None:
    """The hand-written CUDA kernels and the launch arguments the suite computes for them, run
    on the CPU through the C++ emulation and checked like every variant (also NVRTC-compiled)."""
    p, doc = _run_bench(
        tmp_path,
        "--cpu",
        "--quick",
        "--check-cuda-sources",
        "--skip-compile",
        "--only",
        "scan,e2c,c2e,v2e",
        timeout=180,
    )
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    names = [row["what"] for row in doc["table"]]
    assert (
        sum(
            n.startswith(("scan hand CUDA", "e2c hand CUDA", "c2e hand CUDA", "v2e hand CUDA"))
            for n in names
        )
        == 2 + 3 * 2
    )
    checked = [c["what"] for c in doc["checks"] if "hand CUDA" in c["what"]]
    assert checked and all(c["ok"] for c in doc["checks"])


@pytest.mark.nvrtc
@pytest.mark.parametrize("name", sorted(bench.CUDA_SOURCES))
def test_cuda_sources_compile_with_nvrtc(name: str) -> None:
    source, kernels = bench.CUDA_SOURCES[name]
    assert all(f"void {k}(" in source for k in kernels)
    assert bench.nvrtc_compile(source, "90", name) is None


@pytest.mark.nvrtc
def test_laplacian_candidates_compile_with_nvrtc() -> None:
    """benchmarks/laplacian_variants.py's hand-written kernels (run only on a GPU) compile."""
    spec = importlib.util.spec_from_file_location(
        "laplacian_variants",
        Path(__file__).resolve().parents[1] / "benchmarks/laplacian_variants.py",
    )
    assert spec is not None and spec.loader is not None
    lv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lv)
    assert all(f"void lap_{k}(" in lv.SRC for k in lv.NAMES)
    assert set(lv.CPA_SLOTS) <= set(lv.NAMES)
    assert bench.nvrtc_compile(lv.SRC, "90", "laplacian_variants") is None


def _gpu_like(a: np.ndarray, pad: int = 3) -> np.ndarray:
    """A copy of ``a`` with the GPU layout: first axis unit-stride, padded rows."""
    buf = np.full((a.shape[0] + pad, *a.shape[1:]), np.nan, order="F")
    buf[: a.shape[0]] = a
    view = buf[: a.shape[0]]
    assert view.strides[0] == 8 and view.strides[1] == 8 * (a.shape[0] + pad)
    return view


def test_scan_kernels_on_gpu_layout(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    ni, nj, nk = 5, 3, 9
    a, c = rng.uniform(-1, 0, (2, ni, nj, nk))
    b, d = 4 + rng.random((ni, nj, nk)), rng.standard_normal((ni, nj, nk))
    a[..., 0], c[..., -1] = 0, 0
    cp_ref, dp_ref, x_ref = bench._thomas_reference(a, b, c, d)
    ins = [_gpu_like(v) for v in (a, b, c, d)]
    outs = [_gpu_like(np.full((ni, nj, nk), np.nan), pad=1) for _ in range(5)]
    si = [np.int64(s // 8) for s in ins[0].strides]
    so = [np.int64(s // 8) for s in outs[0].strides]
    dims = (np.int32(ni), np.int32(nj), np.int32(nk))
    blk = (4, 1, 1)  # two blocks over I = 5: threads past ni must not write
    fwd = bench.EmulatedKernel(bench.SCAN_SRC, "tridiag_forward", tmp_path)
    bwd = bench.EmulatedKernel(bench.SCAN_SRC, "tridiag_backward", tmp_path)
    fused = bench.EmulatedKernel(bench.SCAN_SRC, "tridiag_fused", tmp_path)
    fwd((2, nj, 1), blk, (*ins, outs[0], outs[1], *dims, *si, *so))
    bwd((2, nj, 1), blk, (outs[0], outs[1], outs[2], *dims, *so, *so))
    fused((2, nj, 1), blk, (*ins, outs[3], outs[4], *dims, *si, *so))
    for got, want in (
        (outs[0], cp_ref),
        (outs[1], dp_ref),
        (outs[2], x_ref),
        (outs[3], cp_ref),
        (outs[4], x_ref),
    ):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    m = np.diag(b[1, 2]) + np.diag(a[1, 2, 1:], -1) + np.diag(c[1, 2, :-1], 1)
    np.testing.assert_allclose(m @ x_ref[1, 2], d[1, 2], atol=1e-12)


@pytest.mark.parametrize("op", ["e2c", "c2e", "v2e"])
def test_mesh_kernels_on_gpu_layout(tmp_path: Path, op: str) -> None:
    rng = np.random.default_rng(1)
    mesh, _ = bench.build_mesh(4, 3)
    nk = 5
    table = {"e2c": mesh.e2c, "c2e": mesh.c2e, "v2e": mesh.v2e}[op]
    n_out, nb = table.shape
    n_src = mesh.n_cells if op == "e2c" else mesh.n_edges
    src = rng.standard_normal((n_src, nk))
    w = rng.standard_normal((n_out, nb))
    if op == "e2c":
        want = src[table[:, 1]] - src[table[:, 0]]
    else:
        want = np.einsum("hn,hnk->hk", w, src[table])
    tab = np.zeros((n_out + 5, nb), dtype=np.int32, order="F")[:n_out]  # Edge unit-stride, padded
    tab[...] = table
    s_src, w_g = _gpu_like(src), _gpu_like(w)
    kernel = bench.NB_OPS[op]["kernel"]
    for variant in ("ek", "kloop"):
        out = _gpu_like(np.full((n_out, nk), np.nan), pad=2)
        k = bench.EmulatedKernel(bench.MESH_SRC, f"{kernel}_{variant}", tmp_path)
        st = lambda x: [np.int64(s // x.itemsize) for s in x.strides]  # noqa: E731
        head = (s_src, tab, out) if op == "e2c" else (s_src, tab, w_g, out)
        wst = [] if op == "e2c" else st(w_g)
        grid = (-(-n_out // 8), nk if variant == "ek" else 1, 1)
        k(
            grid,
            (8, 1, 1),
            (*head, np.int32(n_out), np.int32(nk), *st(s_src), *st(tab), *wst, *st(out)),
        )
        np.testing.assert_allclose(out, want, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("nx, ny", [(3, 3), (4, 7), (16, 8)])
@pytest.mark.parametrize("locality", [False, True])
def test_benchmark_mesh_is_the_library_mesh(nx: int, ny: int, locality: bool) -> None:
    """One mesh generator: the suite measures ``stencilkit.meshes`` and checks its tables."""
    from stencilkit.meshes import periodic_triangular_mesh

    m, why = bench.build_mesh(nx, ny, locality=locality)
    assert why == "ok" and bench.mesh_problems(m) == []
    assert (m.n_cells, m.n_edges, m.n_vertices) == (2 * nx * ny, 3 * nx * ny, nx * ny)
    assert (
        m.source.startswith("stencilkit.meshes.")
        and ("reorder_for_locality" in m.source) == locality
    )
    if not locality:
        np.testing.assert_array_equal(m.c2e, periodic_triangular_mesh(nx, ny).c2e)
    broken = periodic_triangular_mesh(nx, ny)
    c2e = broken.c2e.copy()
    c2e[0, 0] = c2e[0, 1]
    assert bench.mesh_problems(bench.BenchMesh(dataclasses.replace(broken, c2e=c2e), "broken")) == [
        "c2e has a row with a repeated neighbour"
    ]


def test_cli_bench_without_the_suite(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Neither installed nor in a source tree beside ``src/``: ``stencilkit bench`` says what is
    missing and how to get it (exit status 2, no traceback)."""
    from stencilkit import cli

    monkeypatch.setitem(sys.modules, "stencilkit_benchmarks", None)  # import raises
    monkeypatch.setattr(cli, "SOURCE_BENCHMARKS", Path("/nonexistent/benchmarks"))
    assert cli.main(["bench", "--cpu", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "the benchmark suite (package 'stencilkit_benchmarks') is not installed" in err
    assert "pip install -e ." in err


def test_cli_bench_help_lists_the_suite_options(capsys: pytest.CaptureFixture[str]) -> None:
    from stencilkit import cli

    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: stencilkit bench" in out and "--quick" in out and "--cpu" in out


def test_cli_unknown_arguments_of_other_commands_are_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from stencilkit import cli

    with pytest.raises(SystemExit) as exc:
        cli.main(["info", "--quick"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --quick" in capsys.readouterr().err


def test_wheel_ships_the_suite_beside_the_library(tmp_path: Path) -> None:
    """``stencilkit bench`` works from a plain wheel install: the wheel holds both packages."""
    import shutil
    import zipfile

    root, tree = Path(__file__).parents[1], tmp_path / "tree"  # a copy: pip builds in the tree
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for part in (
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "src",
        "benchmarks/stencilkit_benchmarks",
    ):
        if (root / part).is_dir():
            shutil.copytree(root / part, tree / part, ignore=skip)
        else:
            (tree / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(root / part, tree / part)
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(tree)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if p.returncode != 0 and "Could not find a version" in p.stderr:  # offline, no setuptools
        pytest.skip(f"cannot build a wheel here: {p.stderr.strip().splitlines()[-1]}")
    assert p.returncode == 0, p.stderr[-3000:]
    (wheel,) = tmp_path.glob("stencilkit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    suite = {
        f"stencilkit_benchmarks/{f.name}"
        for f in (root / "benchmarks" / "stencilkit_benchmarks").glob("*.py")
    }
    assert suite <= names and "stencilkit/cli.py" in names
    assert not any(n.startswith(("stencilkit/bench/", "benchmarks/")) for n in names)


@pytest.mark.gpu
def test_cli_bench_gpu_quick(tmp_path: Path) -> None:
    p, doc = _run_bench(tmp_path, "--gpu", "--quick", "--skip-compile", timeout=100)
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-6000:]
    assert doc["ok"] and not doc["failures"]
    for section in ("copy", "laplacian", "scan", "mesh", "e2c", "c2e", "v2e", "overhead"):
        assert section in doc["results"], section
    names = [row["what"] for row in doc["table"]]
    assert "scan hand CUDA two kernels" in names and "scan hand CUDA fused" in names
