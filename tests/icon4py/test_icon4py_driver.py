"""icon4py's own model driver, unchanged, on stencilkit: an R2B2 grid from icon-grid-generator,
the Jablonowski-Williamson baroclinic wave, 3 time steps of diffusion + ``solve_nonhydro`` on
the embedded and the cpu backend (``benchmarks/icon4py_driver.py`` runs it, each run in its own
process). Checked: every prognostic field finite after every step, the two backends bitwise
equal, the total air mass conserved to 1e-12 relative, and the wave actually moving (the fields
change from step to step).

Needs ``scripts/icon4py_env.sh --suite`` (icon4py-driver, icon-grid-generator and what the
driver imports)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from icon4py_support import icon4py_skip_reason, module_exists

RUNNER = Path(__file__).parents[2] / "benchmarks" / "icon4py_driver.py"
STEPS = 3


def _skip_reason() -> str | None:
    reason = icon4py_skip_reason()
    if reason is None and os.environ.get("STENCILKIT_REQUIRE_ICON4PY") != "1":
        for module in ("icon4py.model.driver", "grid_generator"):
            if not module_exists(module):
                reason = f"{module} is not installed here: run scripts/icon4py_env.sh --suite"
    return reason


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("icon-driver")
    done = {}
    for backend in ("embedded", "gtfn_cpu"):
        run = subprocess.run(
            [
                sys.executable,
                "-W",
                "ignore",
                str(RUNNER),
                "run",
                "--backend",
                backend,
                "--grid",
                "R2B2",
                "--levels",
                "10",
                "--steps",
                str(STEPS),
                "--dtime",
                "300",
                "--dir",
                str(directory),
            ],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=directory,
        )
        assert run.returncode == 0, (
            f"the driver on {backend} failed:\n{run.stdout[-3000:]}\n{run.stderr[-6000:]}"
        )
        done[backend] = directory / f"stencilkit-{backend}"
    return done


def _fields(path: Path) -> dict[str, np.ndarray]:
    with np.load(path / "fields.npz") as data:
        return {k: data[k] for k in data.files}


def test_the_driver_steps_and_its_fields_stay_finite(runs: dict[str, Path]) -> None:
    for path in runs.values():
        result = json.loads((path / "result.json").read_text())
        assert result["steps"] == STEPS and result["cells"] == 1280
        assert result["finite"]
        fields = _fields(path)
        assert len(fields) == 5 * STEPS
        for name in ("vn", "w", "rho", "exner", "theta_v"):
            assert not np.array_equal(fields[f"{name}_0"], fields[f"{name}_{STEPS - 1}"]), name
        assert 1.0 < float(np.max(np.abs(fields["vn_0"]))) < 100.0  # m/s: a jet of 35 m/s


def test_embedded_and_cpu_agree_bitwise(runs: dict[str, Path]) -> None:
    a, b = _fields(runs["embedded"]), _fields(runs["gtfn_cpu"])
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_total_mass_is_conserved(runs: dict[str, Path]) -> None:
    for path in runs.values():
        mass = json.loads((path / "result.json").read_text())["mass"]
        assert len(mass) == STEPS + 1
        drift = max(abs(m - mass[0]) for m in mass) / mass[0]
        assert drift < 1e-12, (path.name, mass)
