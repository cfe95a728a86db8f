"""A 2-D field that is the only output of a FORWARD/BACKWARD computation: pyFV3's
``map_single.set_dp`` sets ``lev = 0`` in ``FORWARD, interval(0, 1)``, and a column recurrence
may write an IJ field alone over every level. Each level's write goes to the column's one
value (the last level visited wins; later levels read what earlier ones wrote).

Every backend (both CPU loop orders) against a NumPy reference on random data, the points
outside the compute domain checked to keep their values."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import (
    BACKWARD,
    FORWARD,
    PARALLEL,
    Field,
    computation,
    interval,
)

F64 = Field[np.float64]
I64_IJ = Field[gtscript.IJ, np.int64]
F64_IJ = Field[gtscript.IJ, np.float64]
ORIGIN, DOMAIN = (1, 2, 0), (4, 3, 6)
BACKENDS = [
    pytest.param("numpy", id="numpy"),
    pytest.param("gt:cpu_ifirst", id="cpu_ifirst"),
    pytest.param("gt:cpu_kfirst", id="cpu_kfirst"),
    pytest.param("gt:gpu", id="gpu", marks=pytest.mark.gpu),
]
H = (slice(1, 5), slice(2, 5))  # the compute domain's columns


def _put(backend: str, a: np.ndarray):  # type: ignore[no-untyped-def]
    if backend == "gt:gpu":
        import cupy

        return cupy.asarray(a)
    return a.copy()


def _host(a) -> np.ndarray:  # type: ignore[no-untyped-def]
    return a.get() if hasattr(a, "get") else np.array(a, copy=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_map_single_set_dp(backend: str) -> None:
    @gtscript.stencil(backend=backend)
    def set_dp(dp1: F64, pe1: F64, lev: I64_IJ):
        with computation(PARALLEL), interval(...):
            dp1 = pe1[0, 0, 1] - pe1
        with computation(FORWARD), interval(0, 1):
            lev = 0

    rng = np.random.default_rng(7)
    pe_h, dp_h = rng.standard_normal((6, 6, 7)), rng.standard_normal((6, 6, 7))
    lev_h = rng.integers(1, 100, (6, 6))
    pe, dp, lev = _put(backend, pe_h), _put(backend, dp_h), _put(backend, lev_h)
    set_dp(dp, pe, lev, origin=ORIGIN, domain=DOMAIN)
    ref_dp, ref_lev = dp_h.copy(), lev_h.copy()
    ref_dp[H[0], H[1], :6] = (pe_h[:, :, 1:] - pe_h[:, :, :-1])[H[0], H[1], :6]
    ref_lev[H] = 0
    np.testing.assert_array_equal(_host(dp), ref_dp)
    np.testing.assert_array_equal(_host(lev), ref_lev)


@pytest.mark.parametrize("backend", BACKENDS)
def test_column_recurrences_into_2d_fields_alone(backend: str) -> None:
    """A BACKWARD recurrence over every level and a FORWARD one over the upper levels, each
    writing one IJ field and nothing else; then the IJ results read in a PARALLEL block."""

    @gtscript.stencil(backend=backend)
    def recur(a: F64, s: F64_IJ, m: F64_IJ, out: F64):
        with computation(BACKWARD), interval(...):
            s = 0.5 * s + a
        with computation(FORWARD), interval(2, None):
            m = m * a - 1.0
        with computation(PARALLEL), interval(...):
            out = a * s + m

    rng = np.random.default_rng(8)
    a_h, out_h = rng.standard_normal((6, 6, 6)), rng.standard_normal((6, 6, 6))
    s_h, m_h = rng.standard_normal((6, 6)), rng.standard_normal((6, 6))
    a, s, m, out = (_put(backend, x) for x in (a_h, s_h, m_h, out_h))
    recur(a, s, m, out, origin=ORIGIN, domain=DOMAIN)
    rs, rm, ro = s_h.copy(), m_h.copy(), out_h.copy()
    for k in range(5, -1, -1):
        rs[H] = 0.5 * rs[H] + a_h[H[0], H[1], k]
    for k in range(2, 6):
        rm[H] = rm[H] * a_h[H[0], H[1], k] - 1.0
    ro[H] = a_h[H] * rs[H][:, :, None] + rm[H][:, :, None]
    np.testing.assert_allclose(_host(s), rs, rtol=1e-14, atol=0)
    np.testing.assert_allclose(_host(m), rm, rtol=1e-14, atol=0)
    np.testing.assert_allclose(_host(out), ro, rtol=1e-14, atol=0)
