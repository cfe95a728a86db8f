"""Vertical scans: forward and backward, scalar and tuple carries, a tridiagonal solve."""

from __future__ import annotations

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I = gtx.Dimension("I")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def cumsum(carry: float, x: float) -> float:
    return carry + x


@gtx.scan_operator(axis=K, forward=False, init=1.0)
def backward_product(carry: float, x: float) -> float:
    return carry * x


@gtx.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def thomas_forward(
    state: tuple[float, float], a: float, b: float, c: float, d: float
) -> tuple[float, float]:
    cp_prev, dp_prev = state
    denom = b - a * cp_prev
    return c / denom, (d - a * dp_prev) / denom


@gtx.scan_operator(axis=K, forward=False, init=0.0)
def thomas_backward(x_next: float, cp: float, dp: float) -> float:
    return dp - cp * x_next


def test_forward_and_backward_scans(case, rng) -> None:
    xd = rng.standard_normal((7, 9))

    @gtx.program(backend=case.backend)
    def run(
        x: Field[Dims[I, K], float64], s: Field[Dims[I, K], float64], p: Field[Dims[I, K], float64]
    ):
        cumsum(x, out=s)
        backward_product(x, out=p, domain={I: (0, 7), K: (2, 9)})

    s = case.field([I, K], rng.standard_normal((7, 9)))
    pd = rng.standard_normal((7, 9))
    p = case.field([I, K], pd)
    run(case.field([I, K], xd), s, p, offset_provider={})
    np.testing.assert_allclose(s.asnumpy(), np.cumsum(xd, axis=1), rtol=1e-13)
    expected = pd.copy()
    expected[:, 2:] = np.cumprod(xd[:, 2:][:, ::-1], axis=1)[:, ::-1]
    np.testing.assert_allclose(p.asnumpy(), expected, rtol=1e-12)


def test_tridiagonal_solve(case, rng) -> None:
    n, nk = 6, 16
    a = rng.uniform(-1, 0, (n, nk))
    c = rng.uniform(-1, 0, (n, nk))
    b = 4.0 + rng.random((n, nk))
    a[:, 0] = 0.0
    c[:, -1] = 0.0
    d = rng.standard_normal((n, nk))

    @gtx.program(backend=case.backend)
    def solve(
        a: Field[Dims[I, K], float64],
        b: Field[Dims[I, K], float64],
        c: Field[Dims[I, K], float64],
        d: Field[Dims[I, K], float64],
        cp: Field[Dims[I, K], float64],
        dp: Field[Dims[I, K], float64],
        x: Field[Dims[I, K], float64],
    ):
        thomas_forward(a, b, c, d, out=(cp, dp))
        thomas_backward(cp, dp, out=x)

    fields = [case.field([I, K], v) for v in (a, b, c, d)]
    scratch = [case.field([I, K], rng.standard_normal((n, nk))) for _ in range(3)]
    solve(*fields, *scratch, offset_provider={})
    x = scratch[2].asnumpy()
    for col in range(n):
        m = np.diag(b[col]) + np.diag(a[col, 1:], -1) + np.diag(c[col, :-1], 1)
        np.testing.assert_allclose(m @ x[col], d[col], rtol=1e-10, atol=1e-12)
