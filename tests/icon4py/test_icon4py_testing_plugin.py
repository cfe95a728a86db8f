"""icon4py's own test machinery on stencilkit: ``plugin_cases/stencil_cases.py``, StencilTest
suites in icon4py 0.4.1's style (its ``STATIC_PARAMS`` variants none / compile_time_domain /
compile_time_vertical included), run by icon4py's pytest plugin with ``--backend=embedded`` and
``--backend=gtfn_cpu`` through the gt4py alias, as scripts/icon4py_suite.sh runs icon4py's
suite. It needs ``scripts/icon4py_env.sh --suite`` (icon4py-testing and its dependencies)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from icon4py_support import icon4py_skip_reason, module_exists

CASES = Path(__file__).parent / "plugin_cases"


def _skip_reason() -> str | None:
    reason = icon4py_skip_reason()
    if reason is None and os.environ.get("STENCILKIT_REQUIRE_ICON4PY") != "1":
        if not module_exists("icon4py.model.testing"):
            reason = "icon4py-testing is not installed here: run scripts/icon4py_env.sh --suite"
    return reason


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


@pytest.mark.parametrize("backend", ["embedded", "gtfn_cpu"])
def test_stencil_tests_pass_through_icon4pys_plugin(backend: str) -> None:
    run = subprocess.run(
        [
            *(sys.executable, "-m", "stencilkit.gt4py_run", "-m", "pytest", "-q", "-rA"),
            f"--backend={backend}",
            "stencil_cases.py",
        ],
        cwd=CASES,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "STENCILKIT_CXXFLAGS": os.environ.get("STENCILKIT_CXXFLAGS", "-O1")},
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    passed = [line for line in run.stdout.splitlines() if line.startswith("PASSED")]
    for variant in ("none", "compile_time_domain", "compile_time_vertical"):
        assert any(f"[{variant}]" in line for line in passed), run.stdout[-3000:]
