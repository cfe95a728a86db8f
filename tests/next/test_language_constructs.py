"""Language constructs on every backend: if on scalars, locals, tuples, operators calling
operators, several statements with caller-allocated temporaries, tuple out=."""

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32

I = gtx.Dimension("I")
J = gtx.Dimension("J")
IJ = Field[Dims[I, J], float64]
SHAPE = (6, 5)


@gtx.field_operator
def axpy(alpha: float64, x: IJ, y: IJ) -> IJ:
    return alpha * x + y


@gtx.field_operator
def diff_i(a: IJ) -> IJ:
    return a(I + 1) - a


@gtx.field_operator
def pair(a: IJ, b: IJ) -> tuple[IJ, IJ]:
    return a + b, a - b


def _f(case, rng, shape=SHAPE):
    data = rng.standard_normal(shape)
    return data.copy(), case.field([I, J], data)


def test_if_expression_and_if_statement_on_scalars(case, rng) -> None:
    @gtx.field_operator
    def op(a: IJ, s: float64, flag: bool, n: int32) -> tuple[IJ, IJ]:
        x = a * 2.0 if flag else a * 3.0
        if n > 2:
            y = x + s
        elif n == 2:
            y = x - s
        else:
            return x, -x
        return x, y

    a, fa = _f(case, rng)
    for flag, n in [(True, 3), (False, 2), (True, 1)]:
        outs = (case.field([I, J], rng.random(SHAPE)), case.field([I, J], rng.random(SHAPE)))
        op.with_backend(case.backend)(fa, 0.5, flag, np.int32(n), out=outs, offset_provider={})
        x = a * (2.0 if flag else 3.0)
        y = x + 0.5 if n > 2 else (x - 0.5 if n == 2 else -x)
        np.testing.assert_allclose(outs[0].asnumpy(), x)
        np.testing.assert_allclose(outs[1].asnumpy(), y)


def test_local_assignments_and_tuple_unpacking(case, rng) -> None:
    @gtx.field_operator
    def op(a: IJ, b: IJ) -> IJ:
        s, d = pair(a, b)
        t: IJ = s * d
        u, (v, w) = t, (a, b)
        return u + v * w

    (a, fa), (b, fb) = _f(case, rng), _f(case, rng)
    out = case.field([I, J], rng.random(SHAPE))
    op.with_backend(case.backend)(fa, fb, out=out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), (a + b) * (a - b) + a * b, rtol=1e-14)


def test_operators_calling_operators_with_shifts(case, rng) -> None:
    @gtx.field_operator
    def op(a: IJ, b: IJ) -> IJ:
        return axpy(2.0, diff_i(a), b(J + 1)) + diff_i(diff_i(b))

    @gtx.program(backend=case.backend)
    def run(a: IJ, b: IJ, out: IJ):
        op(a, b, out=out, domain={I: (0, SHAPE[0] - 2), J: (0, SHAPE[1] - 1)})

    (a, fa), (b, fb) = _f(case, rng), _f(case, rng)
    out0 = rng.random(SHAPE)
    out = case.field([I, J], out0)
    run(fa, fb, out, offset_provider={})
    expected = out0.copy()
    ni, nj = SHAPE[0] - 2, SHAPE[1] - 1
    expected[:ni, :nj] = (
        2.0 * (a[1 : ni + 1, :nj] - a[:ni, :nj])
        + b[:ni, 1 : nj + 1]
        + (b[2 : ni + 2, :nj] - 2 * b[1 : ni + 1, :nj] + b[:ni, :nj])
    )
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-13)


def test_several_statements_with_a_caller_allocated_temporary(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def run(a: IJ, b: IJ, tmp: IJ, out: IJ, alpha: float64):
        diff_i(a, out=tmp, domain={I: (0, SHAPE[0] - 1), J: (0, SHAPE[1])})
        axpy(alpha, tmp, b, out=out, domain={I: (0, SHAPE[0] - 1), J: (0, SHAPE[1])})
        axpy(alpha, out, out, out=out, domain={I: (0, SHAPE[0] - 1), J: (0, SHAPE[1])})

    (a, fa), (b, fb) = _f(case, rng), _f(case, rng)
    out0 = rng.random(SHAPE)
    tmp, out = case.field([I, J], rng.random(SHAPE)), case.field([I, J], out0)
    run(fa, fb, tmp, out, 0.75, offset_provider={})
    expected = out0.copy()
    step = 0.75 * (a[1:] - a[:-1]) + b[:-1]
    expected[:-1] = 0.75 * step + step
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-13)


def test_tuple_out_and_tuple_parameters(case, rng) -> None:
    @gtx.field_operator
    def swap(t: tuple[IJ, IJ]) -> tuple[IJ, IJ]:
        a, b = t
        return b, a

    @gtx.program(backend=case.backend)
    def run(x: tuple[IJ, IJ], y: tuple[IJ, IJ], z: IJ):
        pair(x[0], x[1], out=y)
        swap(y, out=(z, x[0]))

    (a, fa), (b, fb) = _f(case, rng), _f(case, rng)
    y = (case.field([I, J], rng.random(SHAPE)), case.field([I, J], rng.random(SHAPE)))
    z = case.field([I, J], rng.random(SHAPE))
    run((fa, fb), y, z, offset_provider={})
    np.testing.assert_allclose(y[0].asnumpy(), a + b)
    np.testing.assert_allclose(y[1].asnumpy(), a - b)
    np.testing.assert_allclose(z.asnumpy(), a - b)
    np.testing.assert_allclose(fa.asnumpy(), a + b)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_programs(case, rng, dtype) -> None:
    T = Field[Dims[I, J], gtx.int32 if dtype == np.int32 else gtx.int64]

    @gtx.field_operator
    def op(a: T, b: T) -> T:
        return gtx.where(a > b, a - b, (b * 3) // 2) + gtx.maximum(a, 0)

    @gtx.program(backend=case.backend)
    def run(a: T, b: T, out: T):
        op(a, b, out=out)

    a = rng.integers(-1000, 1000, SHAPE).astype(dtype)
    b = rng.integers(-1000, 1000, SHAPE).astype(dtype)
    out = case.field([I, J], rng.integers(0, 5, SHAPE).astype(dtype))
    run(case.field([I, J], a), case.field([I, J], b), out, offset_provider={})
    np.testing.assert_array_equal(
        out.asnumpy(), np.where(a > b, a - b, (b * 3) // 2) + np.maximum(a, 0)
    )


def test_tuple_outputs_with_their_own_domains(case, rng) -> None:
    X = gtx.Dimension("X")

    @gtx.field_operator
    def pair(a: Field[Dims[X], float64]) -> tuple[Field[Dims[X], float64], Field[Dims[X], float64]]:
        return a(X + 1) - a, 2.0 * a

    @gtx.program(backend=case.backend)
    def run(a: Field[Dims[X], float64], d: Field[Dims[X], float64], s: Field[Dims[X], float64]):
        pair(a, out=(d, s), domain=({X: (0, 9)}, {X: (3, 10)}))

    ad = rng.standard_normal(10)
    dd, sd = rng.standard_normal(10), rng.standard_normal(10)
    d, s = case.field([X], dd), case.field([X], sd)
    run(case.field([X], ad), d, s, offset_provider={})
    exp_d, exp_s = dd.copy(), sd.copy()
    exp_d[:9] = ad[1:] - ad[:9]
    exp_s[3:] = 2.0 * ad[3:]
    np.testing.assert_allclose(d.asnumpy(), exp_d, rtol=1e-15)
    np.testing.assert_allclose(s.asnumpy(), exp_s, rtol=1e-15)
