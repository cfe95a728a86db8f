"""A value that nested ``where`` branches share is computed once, not once per block that uses it.

Before: a value used in a branch of each side of a ``where`` (not on every path of either) was
emitted into every block using it; nested choices doubled it at each level, so ICON's graupel
microphysics generated 51,698 lines of C++ (one expression repeated ~900 times) and took 64 s to
build. The chain below has 12 such levels: 4,096 copies before, one now."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, exp, float64, where

I = gtx.Dimension("I")
J = gtx.Dimension("J")
F = Field[Dims[I, J], float64]
LEVELS = 12


@gtx.field_operator
def chain(a: F, b: F) -> F:
    s = exp(a) * 3.0  # the shared value: every level reads it only inside nested branches
    v0 = b
    v1 = where(a > 0.1, where(b > 0.0, v0 + s, v0), where(b < 0.5, v0 - s, v0 * 0.5))
    v2 = where(a > 0.1, where(b > 0.0, v1 + s, v1), where(b < 0.5, v1 - s, v1 * 0.5))
    v3 = where(a > 0.1, where(b > 0.0, v2 + s, v2), where(b < 0.5, v2 - s, v2 * 0.5))
    v4 = where(a > 0.1, where(b > 0.0, v3 + s, v3), where(b < 0.5, v3 - s, v3 * 0.5))
    v5 = where(a > 0.1, where(b > 0.0, v4 + s, v4), where(b < 0.5, v4 - s, v4 * 0.5))
    v6 = where(a > 0.1, where(b > 0.0, v5 + s, v5), where(b < 0.5, v5 - s, v5 * 0.5))
    v7 = where(a > 0.1, where(b > 0.0, v6 + s, v6), where(b < 0.5, v6 - s, v6 * 0.5))
    v8 = where(a > 0.1, where(b > 0.0, v7 + s, v7), where(b < 0.5, v7 - s, v7 * 0.5))
    v9 = where(a > 0.1, where(b > 0.0, v8 + s, v8), where(b < 0.5, v8 - s, v8 * 0.5))
    v10 = where(a > 0.1, where(b > 0.0, v9 + s, v9), where(b < 0.5, v9 - s, v9 * 0.5))
    v11 = where(a > 0.1, where(b > 0.0, v10 + s, v10), where(b < 0.5, v10 - s, v10 * 0.5))
    v12 = where(a > 0.1, where(b > 0.0, v11 + s, v11), where(b < 0.5, v11 - s, v11 * 0.5))
    return v12


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    s = np.exp(a) * 3.0
    v = b.copy()
    for _ in range(LEVELS):
        v = np.where(a > 0.1, np.where(b > 0.0, v + s, v), np.where(b < 0.5, v - s, v * 0.5))
    return v


@pytest.mark.parametrize("backend", [None, gtx.cpu], ids=["embedded", "cpu"])
def test_shared_value_in_nested_branches(rng, backend) -> None:
    @gtx.program(backend=backend)
    def run(a: F, b: F, out: F):
        chain(a, b, out=out, domain={I: (0, 9), J: (1, 6)})

    a = rng.standard_normal((10, 7))
    b = rng.standard_normal((10, 7))
    out = gtx.as_field([I, J], np.full((10, 7), np.nan))
    a_f, b_f = gtx.as_field([I, J], a), gtx.as_field([I, J], b)
    run(a_f, b_f, out, offset_provider={})
    got = out.asnumpy()
    if backend is not None:  # the generated C++ computes exp once (it was 4,096 times)
        source = run.inspect(a_f, b_f, out, offset_provider={}).source
        assert source is not None and source.as_text().count("std::exp(") == 1
    np.testing.assert_allclose(got[:9, 1:6], _reference(a, b)[:9, 1:6], rtol=1e-13)
    assert np.isnan(got[9]).all() and np.isnan(got[:, 0]).all() and np.isnan(got[:, 6]).all()
