"""Scan operators called from field operators: returned scans, scans fed by field expressions,
one scan's columns passed to another (through caller-invisible temporaries)."""

import numpy as np
from test_scan import (  # the same scan operators, tested there alone
    cumsum,
    thomas_backward,
    thomas_forward,
)

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I = gtx.Dimension("I")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
IK = Field[Dims[I, K], float64]
N, NK = 6, 11


@gtx.scan_operator(axis=K, forward=False, init=1.0)
def backward_product(carry: float, x: float, s: float) -> float:
    return carry * x + s


@gtx.scan_operator(axis=K, forward=True, init=(0.0, 1.0))
def sum_and_max(state: tuple[float, float], x: float) -> tuple[float, float]:
    total, top = state
    return total + x, gtx.maximum(top, x)


@gtx.field_operator
def solve(a: IK, b: IK, c: IK, d: IK) -> IK:
    cp, dp = thomas_forward(a, b, c, d)
    return thomas_backward(cp, dp)


@gtx.field_operator
def forward_of_expression(x: IK, y: IK) -> IK:
    return cumsum(2.0 * x(I + 1) - y(K - 1))


@gtx.field_operator
def backward_of_expression(x: IK, s: float64) -> IK:
    return backward_product(gtx.sin(x), s)


@gtx.field_operator
def tuple_scan(x: IK) -> tuple[IK, IK]:
    return sum_and_max(x * x)


def _tridiagonal(rng):
    a = rng.uniform(-1, 0, (N, NK))
    c = rng.uniform(-1, 0, (N, NK))
    b = 4.0 + rng.random((N, NK))
    a[:, 0] = 0.0
    c[:, -1] = 0.0
    return a, b, c, rng.standard_normal((N, NK))


def _check_solution(x, a, b, c, d) -> None:
    for col in range(x.shape[0]):
        m = np.diag(b[col]) + np.diag(a[col, 1:], -1) + np.diag(c[col, :-1], 1)
        np.testing.assert_allclose(m @ x[col], d[col], rtol=1e-10, atol=1e-12)


def test_returned_forward_scan_of_shifted_expressions(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def run(x: IK, y: IK, out: IK):
        forward_of_expression(x, y, out=out, domain={I: (0, N - 1), K: (1, NK)})

    x, y = rng.standard_normal((N, NK)), rng.standard_normal((N, NK))
    out0 = rng.standard_normal((N, NK))
    out = case.field([I, K], out0)
    run(case.field([I, K], x), case.field([I, K], y), out, offset_provider={})
    expected = out0.copy()
    expected[: N - 1, 1:] = np.cumsum(2.0 * x[1:, 1:] - y[: N - 1, :-1], axis=1)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-12)


def test_returned_backward_scan_with_scalar_argument(case, rng) -> None:
    x = rng.uniform(0.5, 1.0, (N, NK))
    out = case.field([I, K], rng.standard_normal((N, NK)))
    backward_of_expression.with_backend(case.backend)(
        case.field([I, K], x), 0.25, out=out, offset_provider={}
    )
    expected = np.empty_like(x)
    carry = np.ones(N)
    for k in reversed(range(NK)):
        carry = carry * np.sin(x[:, k]) + 0.25
        expected[:, k] = carry
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-12)


def test_returned_scan_with_tuple_carry(case, rng) -> None:
    x = rng.standard_normal((N, NK))
    outs = (
        case.field([I, K], rng.standard_normal((N, NK))),
        case.field([I, K], rng.standard_normal((N, NK))),
    )

    @gtx.program(backend=case.backend)
    def run(x: IK, s: IK, m: IK):
        tuple_scan(x, out=(s, m))

    run(case.field([I, K], x), *outs, offset_provider={})
    np.testing.assert_allclose(outs[0].asnumpy(), np.cumsum(x * x, axis=1), rtol=1e-12)
    np.testing.assert_allclose(
        outs[1].asnumpy(), np.maximum.accumulate(np.maximum(x * x, 1.0), axis=1)
    )


def test_scan_columns_passed_to_another_scan(case, rng) -> None:
    a, b, c, d = _tridiagonal(rng)

    @gtx.program(backend=case.backend)
    def run(a: IK, b: IK, c: IK, d: IK, x: IK):
        solve(a, b, c, d, out=x)

    assert "temp __tmp0_0" in run.ir_text  # the forward columns are a temporary of the program
    x = case.field([I, K], rng.standard_normal((N, NK)))
    fields = [case.field([I, K], v) for v in (a, b, c, d)]
    run(*fields, x, offset_provider={})
    _check_solution(x.asnumpy(), a, b, c, d)
    # a second call reuses the temporaries and gives the same answer
    d2 = rng.standard_normal((N, NK))
    run(*fields[:3], case.field([I, K], d2), x, offset_provider={})
    _check_solution(x.asnumpy(), a, b, c, d2)


def test_chained_scans_on_a_subdomain_and_direct_call(case, rng) -> None:
    a, b, c, d = _tridiagonal(rng)
    fields = [case.field([I, K], v) for v in (a, b, c, d)]
    x0 = rng.standard_normal((N, NK))
    x = case.field([I, K], x0)
    solve.with_backend(case.backend)(
        *fields, out=x, domain={I: (1, N - 1), K: (0, NK)}, offset_provider={}
    )
    got = x.asnumpy()
    np.testing.assert_array_equal(got[[0, N - 1]], x0[[0, N - 1]])
    _check_solution(got[1 : N - 1], a[1 : N - 1], b[1 : N - 1], c[1 : N - 1], d[1 : N - 1])


def test_scan_result_used_in_an_expression(case, rng) -> None:
    @gtx.field_operator
    def scaled(x: IK, y: IK) -> IK:
        s, m = sum_and_max(x)
        return 2.0 * s - m + cumsum(y)

    x, y = rng.standard_normal((N, NK)), rng.standard_normal((N, NK))
    out = case.field([I, K], rng.standard_normal((N, NK)))
    scaled.with_backend(case.backend)(
        case.field([I, K], x), case.field([I, K], y), out=out, offset_provider={}
    )
    expected = (
        2.0 * np.cumsum(x, axis=1)
        - np.maximum.accumulate(np.maximum(x, 1.0), axis=1)
        + np.cumsum(y, axis=1)
    )
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-12)
