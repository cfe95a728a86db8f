"""Every example takes its backend one way: ``STENCILKIT_EXAMPLE_BACKEND`` (scripts and executed
documents alike); a bad name stops it with the choices."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# the scripts (a module they share, ``*_common.py``, takes no backend of its own)
EXAMPLES = sorted(
    p
    for p in (Path(__file__).parents[1] / "examples").glob("*.py")
    if not p.stem.endswith("_common")
)
SRC = str(Path(__file__).parents[1] / "src")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_backend_comes_from_one_variable(path: Path) -> None:
    text = path.read_text()
    assert 'os.environ.get("STENCILKIT_EXAMPLE_BACKEND", "embedded")' in text
    assert "sys.argv" not in text


@pytest.mark.parametrize(("name", "ok"), [("cpu", True), ("fortran", False)])
def test_a_script_runs_on_the_named_backend(name: str, ok: bool, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "STENCILKIT_EXAMPLE_BACKEND": name,
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    r = subprocess.run(
        [sys.executable, "examples/tridiagonal.py"],
        cwd=Path(__file__).parents[1],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if ok:
        assert r.returncode == 0, r.stderr
        assert "on <stencilkit backend cpu>" in r.stdout, r.stdout
    else:
        assert r.returncode == 1
        assert "STENCILKIT_EXAMPLE_BACKEND='fortran': use one of embedded, cpu, gpu" in r.stderr
