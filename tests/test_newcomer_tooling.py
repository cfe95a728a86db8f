"""What a newcomer runs: the suite without pytest-xdist, and the pre-commit hooks (ruff)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_the_suite_runs_without_xdist() -> None:
    """conftest.py's xdist hook is optional: with xdist absent (here: disabled) pytest collects
    and runs instead of stopping with INTERNALERROR (unknown hook)."""
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
         "tests/test_newcomer_tooling.py::test_pre_commit_runs_ruff"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed" in r.stdout and "INTERNALERROR" not in r.stdout + r.stderr


def test_pre_commit_runs_ruff() -> None:
    """.pre-commit-config.yaml runs the two ruff checks tests/test_lint.py runs, with the ruff
    version pinned (a formatter that changes under the tree would reformat unrelated lines)."""
    config = (ROOT / ".pre-commit-config.yaml").read_text()
    entries = re.findall(r"entry: (.+)", config)
    assert entries == ["ruff check --force-exclude", "ruff format --force-exclude"]
    assert len(re.findall(r'additional_dependencies: \["ruff==[0-9.]+"\]', config)) == 2
