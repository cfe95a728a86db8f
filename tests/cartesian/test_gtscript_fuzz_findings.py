"""What differential fuzzing of GTScript against gt4py 1.2's numpy backend found (issue 40):
each against NumPy on random data, untouched points checked."""

from __future__ import annotations

import numpy as np

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, interval, sqrt


# -- math builtins of integer arguments: computed in float32, gt4py's ufunc-loop rule -----------
def test_math_of_integers_is_float32(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def roots(a: Field[np.int32], b: Field[np.int64], o1: Field[np.float64], o2: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            o1 = sqrt(a)
            o2 = sqrt(b) + abs(a)

    rng = np.random.default_rng(3)
    ah = rng.integers(0, 10**6, size=(4, 3, 5)).astype(np.int32)
    bh = rng.integers(0, 10**9, size=(4, 3, 5)).astype(np.int64)
    a, b = arrays.put(ah), arrays.put(bh)
    o1, o2 = arrays.random(4, 3, 5), arrays.random(4, 3, 5)
    roots(a, b, o1, o2)
    ref1 = np.sqrt(ah.astype(np.float32)).astype(np.float64)
    ref2 = np.sqrt(bh.astype(np.float32)).astype(np.float64) + np.abs(ah)
    np.testing.assert_array_equal(arrays.host(o1), ref1)  # float32 sqrt, exactly
    np.testing.assert_allclose(arrays.host(o2), ref2, rtol=1e-7)
    assert not np.array_equal(ref1, np.sqrt(ah.astype(np.float64)))  # the rule matters here


def test_the_promotion_rule() -> None:
    from stencilkit.cartesian.promotion import ufunc_operands

    assert ufunc_operands("sqrt", ["int32"]) == ["float32"]
    assert ufunc_operands("sqrt", ["int64"]) == ["float32"]
    assert ufunc_operands("sqrt", ["float64"]) == ["float64"]
    assert ufunc_operands("abs", ["int64"]) == ["int64"]
    assert ufunc_operands("minimum", ["int32", "float32"]) == ["float32", "float32"]
    assert ufunc_operands("minimum", ["int64", "float64"]) == ["float64", "float64"]
    assert ufunc_operands("gamma", ["int32"]) == ["float32"]
