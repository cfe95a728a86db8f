"""The ``stencilkit`` command and the shallow-water demo model behind ``stencilkit demo``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.cli import main
from stencilkit.models import shallow_water
from stencilkit.models.shallow_water import (
    MASS_TOLERANCE,
    REFERENCE_TOLERANCE,
    ShallowWater,
    run_demo,
)
from stencilkit.toolchain.config import reset_config

I, J = gtx.Dimension("I"), gtx.Dimension("J")


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    cache = tmp_path / "cache"
    monkeypatch.setenv("STENCILKIT_CACHE_DIR", str(cache))
    reset_config()
    yield cache
    monkeypatch.undo()
    reset_config()


def test_info(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    for row in (
        "stencilkit",
        gtx.__version__,
        "Python",
        "NumPy",
        "CuPy",
        "cuda-bindings",
        "GPU",
        "C++ compiler",
        "CUDA compiler",
        "cache",
    ):
        assert row in out


def test_cli_does_not_import_gpu_libraries() -> None:
    code = "import sys, stencilkit.cli; assert 'cupy' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cache_info_and_clear(private_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    @gtx.field_operator
    def double(a: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
        return 2.0 * a + a(I + 1)

    @gtx.program(backend=gtx.cpu)
    def run(a: Field[Dims[I, J], float64], out: Field[Dims[I, J], float64]):  # type: ignore[no-untyped-def]
        double(a, out=out, domain={I: (0, 3), J: (0, 4)})

    a = gtx.as_field([I, J], np.arange(20.0).reshape(4, 5))
    out = gtx.zeros({I: 4, J: 5}, dtype=gtx.float64)
    run(a, out, offset_provider={})
    np.testing.assert_array_equal(
        out.asnumpy()[:3, :4], 2 * a.asnumpy()[:3, :4] + a.asnumpy()[1:, :4]
    )

    assert main(["cache", "info"]) == 0
    out_text = capsys.readouterr().out
    assert str(private_cache) in out_text
    entries = int(
        next(line.split()[1] for line in out_text.splitlines() if line.startswith("entries"))
    )
    assert entries >= 1

    assert "run (cpu)" in out_text  # the entry is listed with its program and target
    assert "of 2.0 GiB at most" in out_text

    assert main(["cache", "clear"]) == 0
    word = "entry" if entries == 1 else "entries"
    assert f"removed {entries} {word} from" in capsys.readouterr().out
    assert main(["cache", "info"]) == 0
    assert any(
        line.split()[:2] == ["entries", "0"] for line in capsys.readouterr().out.splitlines()
    )


def test_cache_without_an_action_shows_the_cache(
    private_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert str(private_cache) in out and "entries" in out and "size" in out


@pytest.mark.parametrize("backend", ["embedded", "cpu"])
def test_run_demo(backend: str) -> None:
    result = run_demo(backend, steps=30, size=24, progress=False)
    assert result.backend == backend
    assert (result.steps, result.size) == (30, 24)
    assert result.mass_rel_error <= MASS_TOLERANCE
    assert result.max_abs_diff < REFERENCE_TOLERANCE
    lo, hi = result.height_range
    assert 0.9 < lo < 1.0 < hi < 1.2  # the bump has spread out but is still there
    assert result.ok


@pytest.mark.parametrize("backend", ["embedded", "cpu"])
def test_demo_command(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--backend", backend, "--steps", "20", "--size", "16", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"backend {backend}" in out
    assert "mass conserved" in out and "vs numpy" in out
    assert out.rstrip().endswith("check passed")


def test_demo_fails_when_the_model_is_wrong(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # zero-gradient (outflow) halos instead of periodic ones: both checks must notice
    def fill_outflow_halo(field: gtx.Field) -> None:
        a = field.ndarray
        a[0, :], a[-1, :] = a[1, :], a[-2, :]
        a[:, 0], a[:, -1] = a[:, 1], a[:, -2]

    monkeypatch.setattr(shallow_water, "fill_periodic_halo", fill_outflow_halo)
    result = run_demo(None, steps=20, size=16, progress=False)
    assert not result.mass_ok and not result.reference_ok and not result.ok
    assert main(["demo", "--steps", "20", "--size", "16", "--quiet"]) == 1
    assert "CHECK FAILED" in capsys.readouterr().out


def test_demo_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--steps", "0"])
    assert exit_info.value.code == 2
    with pytest.raises(ValueError, match="unknown backend"):
        run_demo("fortran", steps=1, size=8, progress=False)


def test_console_script_module() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "stencilkit.cli", "demo", "--steps", "5", "--size", "8", "--quiet"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "check passed" in r.stdout


@pytest.mark.gpu
def test_demo_on_gpu() -> None:
    import cupy as cp

    model = ShallowWater(16, gtx.gpu)
    assert all(
        isinstance(f.ndarray, cp.ndarray) for f in (*model.state, *model.next, *model.scratch)
    )
    model.step()
    assert isinstance(model.state[0].ndarray, cp.ndarray)

    result = run_demo("gpu", steps=100, size=64, progress=False)
    assert result.backend == "gpu"
    assert result.mass_rel_error <= MASS_TOLERANCE
    assert result.max_abs_diff < REFERENCE_TOLERANCE
    assert result.ok
