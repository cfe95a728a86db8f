"""icon4py 0.4.1 as an acceptance client: every stencil imported through the gt4py alias, run
on random inputs on embedded and cpu, compared (``python -m stencilkit.compat.icon4py``).

The stencils listed in ``icon4py_passing.txt`` passed every stage when it was last updated
(``scripts/icon4py_acceptance.sh`` then ``--update-baseline`` below); each must still pass. New
passes are reported, not required. Environment: ``ICON4PY_JOBS`` (default 2) worker processes,
``ICON4PY_TIMEOUT`` seconds per import and per stencil (default 60), ``ICON4PY_RESULTS`` a
path to keep the JSON records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from icon4py_support import icon4py_skip_reason

pytestmark = pytest.mark.skipif(
    icon4py_skip_reason() is not None, reason=str(icon4py_skip_reason())
)

HERE = Path(__file__).parent
BASELINE = HERE / "icon4py_passing.txt"
DECORATED = 662  # field operators, scan operators and programs in icon4py 0.4.1


def _passing(records: list[dict[str, object]]) -> set[str]:
    stages = ("import", "parse", "feed", "embedded", "cpu", "agree_cpu")
    return {
        f"{r['module']}.{r['name']}"
        for r in records
        if all(r["status"].get(s) == "ok" for s in stages)
    }  # type: ignore[attr-defined]


def test_every_decorated_stencil_is_found() -> None:
    from stencilkit.compat.icon4py import stencil_sources

    found = stencil_sources()
    assert len(found) == DECORATED
    assert len({(s.module, s.name) for s in found}) == DECORATED


@pytest.mark.slow
def test_icon4py_stencils_run_and_agree(tmp_path: Path) -> None:
    out = Path(os.environ.get("ICON4PY_RESULTS", tmp_path / "icon4py.json"))
    cmd = [
        sys.executable,
        "-m",
        "stencilkit.compat.icon4py",
        "--json",
        str(out),
        "--backend",
        "cpu",
        "--jobs",
        os.environ.get("ICON4PY_JOBS", "2"),
        "--timeout",
        os.environ.get("ICON4PY_TIMEOUT", "60"),
    ]
    subprocess.run(cmd, check=True)
    result = json.loads(out.read_text())
    counts = result["counts"]
    print("icon4py acceptance:", json.dumps(counts))
    assert counts["total"] == DECORATED
    passing = _passing(result["stencils"])
    expected = set(BASELINE.read_text().split()) if BASELINE.exists() else set()
    lost = sorted(expected - passing)
    by_key = {f"{r['module']}.{r['name']}": r for r in result["stencils"]}
    assert not lost, "stencils that passed before and fail now:\n" + "\n".join(
        f"{k}: {by_key[k]['reasons']}" for k in lost
    )
    gained = sorted(passing - expected)
    if gained:
        print(f"{len(gained)} stencils pass that are not in {BASELINE.name} yet")


def update_baseline(results: Path, slowest: float = 20.0) -> None:
    """``python tests/icon4py/test_icon4py_acceptance.py icon4py-results.json``: record the
    stencils that pass now as the baseline, leaving out those that took over ``slowest`` seconds
    (their pass could depend on the CI machine's speed, under the 60 s limit)."""
    records = json.loads(results.read_text())["stencils"]
    fast = [r for r in records if r.get("seconds", 0.0) <= slowest]
    BASELINE.write_text("\n".join(sorted(_passing(fast))) + "\n")


if __name__ == "__main__":
    update_baseline(Path(sys.argv[1]))
