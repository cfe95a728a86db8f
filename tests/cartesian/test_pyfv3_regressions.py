"""Regressions found running pyFV3's dycore stencils against real gt4py 1.2.1
(benchmarks/pyfv3_compare.py), each on every backend against a NumPy reference."""

from __future__ import annotations

import numpy as np

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import PARALLEL, Field, I, computation, horizontal, interval, region

F64 = Field[np.float64]


@gtscript.function
def _rebinds_arguments(a, b):
    a = a + 1.0
    with horizontal(region[I[0] + 1 :, :]):
        b = b * 2.0
    return a + b


@gtscript.function
def _doubles_first(x, y):
    x = 2.0 * x
    return x - y


def test_function_assigns_its_arguments(backend, arrays) -> None:
    # pyFV3's xppm/yppm bl_br_edges(bl, br, ...) assign bl and br in regions. In gt4py an
    # argument is a value: the callee rebinds its own name, the caller's temporary or field
    # keeps its value (checked on gt4py 1.2.1's numpy backend)
    @gtscript.stencil(backend=backend)
    def st(a: F64, b: F64, c: F64, d: F64, e: F64):
        with computation(PARALLEL), interval(...):
            t = a * 1.0
            c = _rebinds_arguments(t, b)
            d = t
            e = _doubles_first(a, b)

    a, b, c, d, e = (arrays.random(6, 5, 3) for _ in range(5))
    A, B, before = arrays.host(a), arrays.host(b), arrays.host(c)
    st(a, b, c, d, e, origin=(1, 0, 0), domain=(4, 5, 3))
    Bm = B.copy()
    Bm[2:] *= 2.0  # region I[0] + 1: from the second compute column (origin 1)
    ref_c = before.copy()
    ref_c[1:5] = (A + 1.0 + Bm)[1:5]
    np.testing.assert_allclose(arrays.host(c), ref_c, rtol=1e-15)
    np.testing.assert_array_equal(arrays.host(d)[1:5], A[1:5])
    np.testing.assert_allclose(arrays.host(e)[1:5], (2.0 * A - B)[1:5], rtol=1e-15)
    np.testing.assert_array_equal(arrays.host(a), A)  # the API field argument is not written
    np.testing.assert_array_equal(arrays.host(b), B)
