"""``stencilkit demo`` runs on the fastest usable backend, says which and why, and reports its
time per step against NumPy with the first step (the build) apart."""

from __future__ import annotations

import re

import pytest

from stencilkit.cli import main
from stencilkit.models import demo
from stencilkit.models.shallow_water import DemoResult


def _result(
    backend: str, first: float, steps_s: float, reference_s: float, steps: int = 11
) -> DemoResult:
    return DemoResult(
        backend=backend,
        steps=steps,
        size=8,
        mass_initial=1.0,
        mass_final=1.0,
        max_abs_diff=0.0,
        first_step_s=first,
        steps_s=steps_s,
        reference_s=reference_s,
        height_range=(0.9, 1.1),
    )


@pytest.mark.parametrize(
    ("gpu", "cpu", "expected"),
    [(None, None, "gpu"), ("no CuPy", None, "cpu"), ("no CuPy", "no compiler", "embedded")],
)
def test_the_fastest_usable_backend_is_chosen(
    monkeypatch: pytest.MonkeyPatch, gpu: str | None, cpu: str | None, expected: str
) -> None:
    monkeypatch.setattr(demo, "_gpu_problem", lambda: gpu)
    monkeypatch.setattr(demo, "_cpu_problem", lambda: cpu)
    choice = demo.choose_backend()
    assert choice.name == expected
    if gpu is not None:
        assert gpu in choice.reason  # says why the GPU was not taken
    if expected == "embedded":
        assert "no compiler" in choice.reason


def test_no_cupy_here_means_the_cpu_backend() -> None:
    # this machine: no CuPy, g++ present
    choice = demo.choose_backend()
    assert choice.name == "cpu" and "CuPy" in choice.reason and "g++" in choice.reason


def test_the_report_keeps_the_build_apart_and_compares_per_step() -> None:
    # 10 later steps in 0.1 s (10 ms/step), numpy 11 steps in 0.55 s (50 ms/step): 5x faster;
    # first step 2.01 s: about 2.0 s of build
    text = "\n".join(demo.report_lines(_result("cpu", 2.01, 0.1, 0.55)))
    assert "about 2.000 s building the program" in text
    assert "10 in 0.100 s: 10.000 ms/step" in text
    assert "11 in 0.550 s: 50.000 ms/step" in text
    assert "5.0x faster than NumPy per step" in text
    slow = "\n".join(demo.report_lines(_result("embedded", 0.05, 1.0, 0.11)))
    assert "10.0x slower than NumPy per step" in slow and "--backend cpu" in slow


def test_the_demo_says_which_backend_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--steps", "5", "--size", "8", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"backend          cpu: no usable GPU \(.*\); C\+\+ compiler .* found", out), (
        out
    )
    assert "ms/step" in out and "than NumPy per step" in out
    assert main(["demo", "--backend", "embedded", "--steps", "5", "--size", "8", "--quiet"]) == 0
    assert "embedded: chosen with --backend" in capsys.readouterr().out
