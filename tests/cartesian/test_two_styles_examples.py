"""The two-style examples (examples/two_styles_*.py), GTScript and gt4py.next on the same
storages, on embedded and cpu (and gpu), each result checked against the NumPy reference on
random data, outputs' untouched parts included, and against the other style."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.examples import EXAMPLES, load_example

NAMES = ("two_styles_diffusion", "two_styles_tridiagonal", "two_styles_mixed_precision")
BACKENDS = [
    "numpy",
    "gt:cpu_ifirst",
    "gt:cpu_kfirst",
    "dace:cpu",
    pytest.param("gt:gpu", marks=pytest.mark.gpu),
]


def _host(array: object) -> np.ndarray:
    return np.array(array.get() if hasattr(array, "get") else array)  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", BACKENDS)
def test_diffusion_with_tile_edge_regions(backend: str) -> None:
    res = load_example("two_styles_diffusion").main(backend, shape=(12, 9, 3))
    out, before = _host(res["out"]), res["before"]
    np.testing.assert_array_equal(out, res["expected"])
    np.testing.assert_array_equal(res["gtscript"], res["expected"])
    np.testing.assert_array_equal(res["next"], res["gtscript"])
    halo = np.ones(out.shape, bool)
    halo[1:-1, 1:-1] = False
    np.testing.assert_array_equal(out[halo], before[halo])  # the halo is not written
    assert (out[1:-1, 1:-1] != before[1:-1, 1:-1]).all()  # the compute domain is
    # the west edge column took the along-edge formula, the east one (no edge) the 5-point one
    inp = _host(res["inp"])
    c = inp[1, 2:-2]
    along_j = c + 0.1 * (inp[1, 3:-1] + inp[1, 1:-3] - 2.0 * c)
    np.testing.assert_array_equal(out[1, 2:-2], along_j)
    _timed(res["times"])


def _timed(times: dict[str, float]) -> None:
    assert set(times) == {
        "GTScript __call__",
        "GTScript __call__ (no checks)",
        "GTScript run()",
        "gt4py.next program",
    }
    assert all(t > 0 for t in times.values())


@pytest.mark.parametrize("backend", BACKENDS)
def test_tridiagonal(backend: str) -> None:
    res = load_example("two_styles_tridiagonal").main(backend, shape=(5, 4, 17))
    np.testing.assert_allclose(_host(res["x"]), res["expected"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res["gtscript"], res["expected"], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(res["next"], res["gtscript"])
    _timed(res["times"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_mixed_precision(backend: str) -> None:
    res = load_example("two_styles_mixed_precision").main(backend, shape=(9, 7, 4))
    q_new = _host(res["q_new"])
    assert q_new.dtype == np.float32
    np.testing.assert_array_equal(q_new, res["expected"])
    assert res["gtscript"].dtype == np.float32
    np.testing.assert_array_equal(res["gtscript"], res["expected"])
    np.testing.assert_array_equal(res["next"], res["gtscript"])
    _timed(res["times"])
    assert ((q_new[0] >= 5.0) & (q_new[0] < 6.0)).all()  # row 0 is not written
    assert res["naive_diff"] > 0  # gt4py.next's weak literal really differs


@pytest.mark.parametrize("name", NAMES)
def test_example_runs_as_a_script(name: str) -> None:
    env = dict(
        os.environ,
        PYTHONPATH=str(Path(__file__).parents[2] / "src"),
        STENCILKIT_EXAMPLE_BACKEND="embedded",
    )
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "(gt4py.next: embedded)" in run.stdout
    assert "GTScript run()" in run.stdout and "gt4py.next program" in run.stdout
