"""``log10``, ``erf`` and ``erfc`` (CARTESIAN.md 2.9) on every backend against NumPy / the C
library on random data, in float64 and float32."""

from __future__ import annotations

import math

import numpy as np

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, erf, erfc, interval, log10
from stencilkit.ir.ops import array_function

_ERF = np.vectorize(math.erf)
_ERFC = np.vectorize(math.erfc)


def test_log10_erf_erfc(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def special(
        a: Field[np.float64],
        b: Field[np.float32],
        o1: Field[np.float64],
        o2: Field[np.float64],
        o3: Field[np.float32],
    ):
        with computation(PARALLEL), interval(...):
            o1 = log10(abs(a) + 1e-3)
            o2 = erf(a) + 1000.0 * erfc(a * 3.0)
            o3 = erf(b) + erfc(b)

    a, b = arrays.random(5, 4, 6) * 2.0, arrays.random(5, 4, 6, dtype=np.float32)
    o1, o2, o3 = arrays.random(5, 4, 6), arrays.random(5, 4, 6), arrays.random(5, 4, 6)
    o3 = arrays.put(arrays.host(o3).astype(np.float32))
    special(a, b, o1, o2, o3)
    ah, bh = arrays.host(a), arrays.host(b).astype(np.float64)
    np.testing.assert_allclose(arrays.host(o1), np.log10(np.abs(ah) + 1e-3), rtol=1e-15)
    np.testing.assert_allclose(arrays.host(o2), _ERF(ah) + 1000.0 * _ERFC(ah * 3.0), rtol=1e-15)
    ref3 = (_ERF(bh).astype(np.float32) + _ERFC(bh).astype(np.float32)).astype(np.float32)
    np.testing.assert_allclose(arrays.host(o3), ref3, rtol=3e-7)
    assert arrays.host(o3).dtype == np.float32


def test_embedded_erf_is_the_c_library_one() -> None:
    """The embedded ``erf``/``erfc``: ``math``'s per element (the C library's), special values
    included, in the argument's dtype."""
    x = np.array([0.0, -0.0, 0.5, -3.0, 6.5, 30.0, -30.0, np.inf, -np.inf, np.nan, 1e-310])
    for name, ref in (("erf", math.erf), ("erfc", math.erfc)):
        got = array_function(np, name)(x)
        want = np.array([ref(v) for v in x])
        np.testing.assert_array_equal(got, want)
        assert np.signbit(got[1]) == np.signbit(want[1])
        assert array_function(np, name)(x.astype(np.float32)).dtype == np.float32
        assert isinstance(array_function(np, name)(np.float64(0.5)), np.float64)
