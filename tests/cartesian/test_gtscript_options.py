"""Stencil options as gt4py treats them: an unknown one warns (RuntimeWarning) and is ignored;
``ignore_np_errstate`` (default True) silences NumPy's floating-point warnings on the NumPy
backends, False lets them through; results are the same either way."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, interval


def recip(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = 1.0 / a


def _data(arrays):
    host = np.random.default_rng(5).uniform(0.5, 2.0, (4, 3, 2))
    host[1, 2, 1] = 0.0  # one division by zero
    return host, arrays.put(host), arrays.put(np.full((4, 3, 2), -1.0))


def test_unknown_option_warns_and_builds(backend: str, arrays) -> None:
    with pytest.warns(RuntimeWarning, match="Unknown option 'no_such_option'"):
        st = gtscript.stencil(backend, recip, no_such_option="x", rebuild=True)
    assert "no_such_option" not in st.options
    host, a, b = _data(arrays)
    with np.errstate(divide="ignore"):
        want = 1.0 / host
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # compiled backends: no NumPy warning
        st(a, b)
    np.testing.assert_array_equal(arrays.host(b), want)


@pytest.mark.parametrize("name", ["numpy", "debug"])
def test_ignore_np_errstate(name: str) -> None:
    host = np.random.default_rng(6).uniform(0.5, 2.0, (4, 3, 2))
    host[2, 0, 0] = 0.0
    with np.errstate(divide="ignore"):
        want = 1.0 / host
    quiet = gtscript.stencil(name, recip, rebuild=True)
    b = np.zeros_like(host)
    quiet(host, b)  # warnings are errors in this test-suite: none may escape
    np.testing.assert_array_equal(b, want)
    loud = gtscript.stencil(name, recip, ignore_np_errstate=False, rebuild=True)
    b = np.zeros_like(host)
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        loud(host, b)
    np.testing.assert_array_equal(b, want)
