"""`stencilkit bench frontend`: each row printed once, and its build is the first call's own
(timed inside it), so build <= first call <= total."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stencilkit_benchmarks import frontend


def test_rows_once_and_build_within_the_first_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "frontend.json"
    assert frontend.main(["--cases", "chain", "--n", "6", "--json", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("case ") for line in printed) == 1  # one header
    assert sum(line.startswith("chain ") for line in printed) == 1  # the row once
    (r,) = json.loads(out.read_text())
    assert 0 < r["build"] <= r["first call"] <= r["total"], r
    assert r["total"] == pytest.approx(r["parse"] + r["first call"])
