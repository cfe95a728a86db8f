"""A GTScript stencil's temporaries are laid out like its fields: I-contiguous temporaries beside
I-contiguous fields (gt:gpu's and gt:cpu_ifirst's storages), K-contiguous beside K-contiguous.
A K-contiguous temporary beside I-contiguous fields made the Thomas solve on gt:gpu 9x slower
than gt4py's (benchmarks/RESULTS.md); the results must not change."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.arguments import _memory_order

F64 = gtscript.Field[np.float64]
PARALLEL, FORWARD, BACKWARD = gtscript.PARALLEL, gtscript.FORWARD, gtscript.BACKWARD
computation, interval = gtscript.computation, gtscript.interval


def tridiag(a: F64, b: F64, c: F64, d: F64, x: F64):  # type: ignore[no-untyped-def]
    with computation(FORWARD):
        with interval(0, 1):
            cc = c / b
            dd = d / b
        with interval(1, None):
            m = 1.0 / (b - a * cc[0, 0, -1])
            cc = c * m
            dd = (d - a * dd[0, 0, -1]) * m
    with computation(BACKWARD):
        with interval(-1, None):
            x = dd
        with interval(0, -1):
            x = dd - cc * x[0, 0, 1]


def _thomas(a, b, c, d):
    n = a.shape[2]
    cc, dd, x = np.empty_like(a), np.empty_like(a), np.empty_like(a)
    cc[..., 0] = c[..., 0] / b[..., 0]
    dd[..., 0] = d[..., 0] / b[..., 0]
    for k in range(1, n):
        m = 1.0 / (b[..., k] - a[..., k] * cc[..., k - 1])
        cc[..., k] = c[..., k] * m
        dd[..., k] = (d[..., k] - a[..., k] * dd[..., k - 1]) * m
    x[..., -1] = dd[..., -1]
    for k in range(n - 2, -1, -1):
        x[..., k] = dd[..., k] - cc[..., k] * x[..., k + 1]
    return x


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("backend", ["numpy", "gt:cpu_ifirst", "gt:cpu_kfirst"])
def test_temporaries_follow_the_fields_layout(backend: str, order: str) -> None:
    rng = np.random.default_rng(3)
    shape = (9, 7, 11)
    a, c, d = (np.asarray(rng.standard_normal(shape), order=order) for _ in range(3))
    b = np.asarray(rng.standard_normal(shape) + 6.0, order=order)
    x = np.asarray(rng.standard_normal(shape), order=order)
    st = gtscript.stencil(backend=backend, definition=tridiag)
    st(a, b, c, d, x)
    np.testing.assert_allclose(x, _thomas(a, b, c, d), rtol=1e-12, atol=1e-12)
    # the stencil object is shared by the parametrisations (gtscript.stencil caches it): the
    # binding of this call's arrays
    bound = next(b for bs in st._args.bound.values() for b in bs if b.arrays[-1] is x)
    want = (2, 1, 0) if order == "F" else (0, 1, 2)
    assert _memory_order(bound.flat) == want
    temps = st._args.take_temporaries(bound)
    assert temps, "the stencil has temporaries"
    for t in temps:
        s = t.ndarray.strides
        assert tuple(sorted(range(3), key=lambda j: -s[j])) == want
