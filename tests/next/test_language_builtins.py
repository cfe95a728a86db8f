"""Every math builtin and operator of the DSL, on every backend, against NumPy on random data."""

from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float32, float64, int32, int64

I = gtx.Dimension("I")
J = gtx.Dimension("J")

F64 = Field[Dims[I, J], float64]
F32 = Field[Dims[I, J], float32]
I32 = Field[Dims[I, J], int32]
I64 = Field[Dims[I, J], int64]
B = Field[Dims[I, J], bool]
SHAPE = (5, 7)

# name -> (NumPy reference, input range)
UNARY_FLOAT: dict[str, tuple[Any, tuple[float, float]]] = {
    "sqrt": (np.sqrt, (0.1, 4.0)),
    "exp": (np.exp, (-2.0, 2.0)),
    "log": (np.log, (0.1, 4.0)),
    "sin": (np.sin, (-3.0, 3.0)),
    "cos": (np.cos, (-3.0, 3.0)),
    "tan": (np.tan, (-1.2, 1.2)),
    "arcsin": (np.arcsin, (-0.99, 0.99)),
    "arccos": (np.arccos, (-0.99, 0.99)),
    "arctan": (np.arctan, (-5.0, 5.0)),
    "sinh": (np.sinh, (-2.0, 2.0)),
    "cosh": (np.cosh, (-2.0, 2.0)),
    "tanh": (np.tanh, (-2.0, 2.0)),
    "floor": (np.floor, (-5.0, 5.0)),
    "ceil": (np.ceil, (-5.0, 5.0)),
    "trunc": (np.trunc, (-5.0, 5.0)),
    "cbrt": (np.cbrt, (-8.0, 8.0)),
    "abs": (np.abs, (-5.0, 5.0)),
}


def _call(case: Any, op: Any, *args: Any, out: Any) -> Any:
    op.with_backend(case.backend)(*args, out=out, offset_provider={})
    return out


@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
def test_unary_float_builtin(case, rng, name) -> None:
    ref, (lo, hi) = UNARY_FLOAT[name]
    fn = getattr(gtx, name)

    @gtx.field_operator
    def op(a: F64) -> F64:
        return fn(a)

    data = rng.uniform(lo, hi, SHAPE)
    out = _call(case, op, case.field([I, J], data), out=case.field([I, J], rng.random(SHAPE)))
    np.testing.assert_allclose(out.asnumpy(), ref(data), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", ["isfinite", "isnan", "isinf"])
def test_float_predicates(case, rng, name) -> None:
    fn = getattr(gtx, name)

    @gtx.field_operator
    def op(a: F64) -> B:
        return fn(a)

    data = rng.standard_normal(SHAPE)
    data[0, 0], data[1, 2], data[2, 3] = np.nan, np.inf, -np.inf
    out = _call(case, op, case.field([I, J], data), out=case.field([I, J], rng.random(SHAPE) < 0.5))
    np.testing.assert_array_equal(out.asnumpy(), getattr(np, name)(data))


@pytest.mark.parametrize("name", ["minimum", "maximum", "fmod", "power"])
def test_binary_float_builtin(case, rng, name) -> None:
    fn = getattr(gtx, name)

    @gtx.field_operator
    def op(a: F64, b: F64) -> F64:
        return fn(a, b)

    a = rng.uniform(0.5, 3.0, SHAPE) * (1 if name == "power" else rng.choice([-1, 1], SHAPE))
    b = rng.uniform(0.5, 2.0, SHAPE) * rng.choice([-1, 1], SHAPE)
    out = _call(
        case,
        op,
        case.field([I, J], a),
        case.field([I, J], b),
        out=case.field([I, J], rng.random(SHAPE)),
    )
    np.testing.assert_allclose(out.asnumpy(), getattr(np, name)(a, b), rtol=1e-13)


@pytest.mark.parametrize("name", ["minimum", "maximum", "abs"])
def test_integer_builtins(case, rng, name) -> None:
    fn = getattr(gtx, name)
    a = rng.integers(-50, 50, SHAPE, dtype=np.int32)
    b = rng.integers(-50, 50, SHAPE, dtype=np.int32)
    out = case.field([I, J], rng.integers(-9, 9, SHAPE, dtype=np.int32))
    if name == "abs":

        @gtx.field_operator
        def one(a: I32, b: I32) -> I32:
            return fn(a) + b

        _call(case, one, case.field([I, J], a), case.field([I, J], b), out=out)
        np.testing.assert_array_equal(out.asnumpy(), np.abs(a) + b)
    else:

        @gtx.field_operator
        def two(a: I32, b: I32) -> I32:
            return fn(a, b)

        _call(case, two, case.field([I, J], a), case.field([I, J], b), out=out)
        np.testing.assert_array_equal(out.asnumpy(), getattr(np, name)(a, b))


def test_python_min_max_abs_are_builtins(case, rng) -> None:
    @gtx.field_operator
    def op(a: F64, b: F64) -> F64:
        return max(a, b) - min(a, b) + abs(a)

    a, b = rng.standard_normal(SHAPE), rng.standard_normal(SHAPE)
    out = _call(
        case,
        op,
        case.field([I, J], a),
        case.field([I, J], b),
        out=case.field([I, J], rng.random(SHAPE)),
    )
    np.testing.assert_allclose(
        out.asnumpy(), np.maximum(a, b) - np.minimum(a, b) + np.abs(a), rtol=1e-14
    )


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_floor_division_and_modulo_follow_python(case, rng, dtype) -> None:
    T = Field[Dims[I, J], gtx.int32 if dtype == np.int32 else gtx.int64]

    @gtx.field_operator
    def op(a: T, b: T) -> tuple[T, T, T]:
        return a // b, a % b, a % 3 + (-a) // 4

    a = rng.integers(-100, 100, SHAPE).astype(dtype)
    b = (rng.integers(1, 9, SHAPE) * rng.choice([-1, 1], SHAPE)).astype(dtype)
    outs = tuple(case.field([I, J], rng.integers(-5, 5, SHAPE).astype(dtype)) for _ in range(3))
    _call(case, op, case.field([I, J], a), case.field([I, J], b), out=outs)
    np.testing.assert_array_equal(outs[0].asnumpy(), a // b)
    np.testing.assert_array_equal(outs[1].asnumpy(), a % b)
    np.testing.assert_array_equal(outs[2].asnumpy(), a % 3 + (-a) // 4)


def test_float_floor_division_and_modulo_follow_python(case, rng) -> None:
    @gtx.field_operator
    def op(a: F64, b: F64) -> tuple[F64, F64]:
        return a // b, a % b

    a = rng.uniform(-10, 10, SHAPE)
    b = rng.uniform(0.5, 3, SHAPE) * rng.choice([-1, 1], SHAPE)
    outs = (case.field([I, J], rng.random(SHAPE)), case.field([I, J], rng.random(SHAPE)))
    _call(case, op, case.field([I, J], a), case.field([I, J], b), out=outs)
    np.testing.assert_allclose(outs[0].asnumpy(), a // b)
    np.testing.assert_allclose(outs[1].asnumpy(), a % b, rtol=1e-12, atol=1e-12)


def test_arithmetic_operators_and_power(case, rng) -> None:
    @gtx.field_operator
    def op(a: F64, b: F64) -> F64:
        return (a + b) * (a - b) / b + a**2 - b**3.0 + 2.0 * -a + (+b)

    a, b = rng.uniform(0.5, 2, SHAPE), rng.uniform(0.5, 2, SHAPE)
    out = _call(
        case,
        op,
        case.field([I, J], a),
        case.field([I, J], b),
        out=case.field([I, J], rng.random(SHAPE)),
    )
    np.testing.assert_allclose(
        out.asnumpy(), (a + b) * (a - b) / b + a**2 - b**3.0 + 2.0 * -a + b, rtol=1e-13
    )


def test_integer_power(case, rng) -> None:
    @gtx.field_operator
    def op(a: I64, b: I64) -> I64:
        return a**b + gtx.power(a, 2)

    a = rng.integers(-6, 6, SHAPE)
    b = rng.integers(0, 5, SHAPE)
    out = _call(
        case,
        op,
        case.field([I, J], a),
        case.field([I, J], b),
        out=case.field([I, J], rng.integers(0, 9, SHAPE)),
    )
    np.testing.assert_array_equal(out.asnumpy(), a**b + a**2)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_bitwise_operators_on_integers(case, rng, dtype) -> None:
    T = Field[Dims[I, J], gtx.int32 if dtype == np.int32 else gtx.int64]

    @gtx.field_operator
    def op(a: T, b: T) -> T:
        return (a & b) | (a ^ 7) ^ ~b

    a = rng.integers(-1000, 1000, SHAPE).astype(dtype)
    b = rng.integers(-1000, 1000, SHAPE).astype(dtype)
    out = _call(
        case, op, case.field([I, J], a), case.field([I, J], b), out=case.field([I, J], a * 0 + 3)
    )
    np.testing.assert_array_equal(out.asnumpy(), (a & b) | (a ^ 7) ^ ~b)


def test_boolean_operators_and_comparisons(case, rng) -> None:
    @gtx.field_operator
    def op(a: F64, b: F64, m: B) -> tuple[B, B, B, B]:
        return ((a < b) & m) | ~(a >= b), (a <= b) ^ m, (a == a) & (a != b), (a > 0.0) | (b > 0.5)

    a, b = rng.standard_normal(SHAPE), rng.standard_normal(SHAPE)
    b[0, :] = a[0, :]  # some equal values
    m = rng.random(SHAPE) < 0.5
    outs = tuple(case.field([I, J], rng.random(SHAPE) < 0.5) for _ in range(4))
    _call(case, op, case.field([I, J], a), case.field([I, J], b), case.field([I, J], m), out=outs)
    np.testing.assert_array_equal(outs[0].asnumpy(), ((a < b) & m) | ~(a >= b))
    np.testing.assert_array_equal(outs[1].asnumpy(), (a <= b) ^ m)
    np.testing.assert_array_equal(outs[2].asnumpy(), a != b)
    np.testing.assert_array_equal(outs[3].asnumpy(), (a > 0) | (b > 0.5))


def test_unary_operators(case, rng) -> None:
    @gtx.field_operator
    def op(a: F64, k: I32, m: B) -> tuple[F64, I32, B]:
        return -a + (+a) * 2.0, -k + ~k, ~m

    a = rng.standard_normal(SHAPE)
    k = rng.integers(-100, 100, SHAPE, dtype=np.int32)
    m = rng.random(SHAPE) < 0.5
    outs = (
        case.field([I, J], rng.random(SHAPE)),
        case.field([I, J], k * 0 + 1),
        case.field([I, J], ~m),
    )
    _call(case, op, case.field([I, J], a), case.field([I, J], k), case.field([I, J], m), out=outs)
    np.testing.assert_allclose(outs[0].asnumpy(), a)
    np.testing.assert_array_equal(outs[1].asnumpy(), -k + ~k)
    np.testing.assert_array_equal(outs[2].asnumpy(), ~m)


def test_where_with_fields_scalars_and_tuples(case, rng) -> None:
    @gtx.field_operator
    def op(m: B, a: F64, b: F64, s: float64) -> tuple[F64, F64, F64, F64]:
        x, y = gtx.where(m, (a, s), (b, 2.0))
        return gtx.where(m, a, b), gtx.where(a > b, s, b), x, y

    m = rng.random(SHAPE) < 0.5
    a, b = rng.standard_normal(SHAPE), rng.standard_normal(SHAPE)
    outs = tuple(case.field([I, J], rng.random(SHAPE)) for _ in range(4))
    _call(
        case, op, case.field([I, J], m), case.field([I, J], a), case.field([I, J], b), 1.5, out=outs
    )
    np.testing.assert_array_equal(outs[0].asnumpy(), np.where(m, a, b))
    np.testing.assert_array_equal(outs[1].asnumpy(), np.where(a > b, 1.5, b))
    np.testing.assert_array_equal(outs[2].asnumpy(), np.where(m, a, b))
    np.testing.assert_array_equal(outs[3].asnumpy(), np.where(m, 1.5, 2.0))


def test_astype_between_dtypes(case, rng) -> None:
    @gtx.field_operator
    def op(a: F64, k: I32) -> tuple[I32, F32, I64, F64]:
        return (
            gtx.astype(a, int32),
            gtx.astype(a, float32),
            gtx.astype(k, int64) * 3,
            gtx.astype(a > 0.0, float64),
        )

    a = rng.uniform(-100, 100, SHAPE)
    k = rng.integers(-1000, 1000, SHAPE, dtype=np.int32)
    outs = (
        case.field([I, J], k + 1),
        case.field([I, J], rng.random(SHAPE).astype(np.float32)),
        case.field([I, J], k.astype(np.int64) + 1),
        case.field([I, J], rng.random(SHAPE)),
    )
    _call(case, op, case.field([I, J], a), case.field([I, J], k), out=outs)
    np.testing.assert_array_equal(outs[0].asnumpy(), a.astype(np.int32))
    np.testing.assert_array_equal(outs[1].asnumpy(), a.astype(np.float32))
    np.testing.assert_array_equal(outs[2].asnumpy(), k.astype(np.int64) * 3)
    np.testing.assert_array_equal(outs[3].asnumpy(), (a > 0).astype(np.float64))


def test_broadcast_of_fields_and_scalars(case, rng) -> None:
    K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)

    @gtx.field_operator
    def op(a: Field[Dims[I], float64], s: float64) -> Field[Dims[I, K], float64]:
        return gtx.broadcast(a, (I, K)) + gtx.broadcast(s, (I, K))

    a = rng.standard_normal(5)
    out = _call(case, op, case.field([I], a), 0.25, out=case.field([I, K], rng.random((5, 4))))
    np.testing.assert_allclose(out.asnumpy(), a[:, None] + 0.25 + np.zeros((5, 4)))


def test_float32_program_keeps_float32(case, rng) -> None:
    @gtx.field_operator
    def op(a: F32, s: float32) -> F32:
        return gtx.sqrt(a) * 2.0 + s * a

    @gtx.program(backend=case.backend)
    def run(a: F32, s: float32, out: F32):
        op(a, s, out=out)

    a = rng.uniform(0.1, 2, SHAPE).astype(np.float32)
    out = case.field([I, J], rng.random(SHAPE).astype(np.float32))
    run(case.field([I, J], a), np.float32(0.5), out, offset_provider={})
    assert out.asnumpy().dtype == np.float32
    np.testing.assert_allclose(
        out.asnumpy(), np.sqrt(a) * np.float32(2) + np.float32(0.5) * a, rtol=1e-6
    )


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_fields_with_shifts(case, rng, dtype) -> None:
    T = Field[Dims[I, J], gtx.int32 if dtype == np.int32 else gtx.int64]

    @gtx.field_operator
    def op(a: T) -> T:
        return a(I + 1) - 2 * a + a(J - 1)

    @gtx.program(backend=case.backend)
    def run(a: T, out: T):
        op(a, out=out, domain={I: (0, 4), J: (1, 7)})

    a = rng.integers(-(10**6), 10**6, SHAPE).astype(dtype)
    out = case.field([I, J], np.zeros(SHAPE, dtype) + 7)
    run(case.field([I, J], a), out, offset_provider={})
    expected = np.full(SHAPE, 7, dtype)
    expected[0:4, 1:7] = a[1:5, 1:7] - 2 * a[0:4, 1:7] + a[0:4, 0:6]
    np.testing.assert_array_equal(out.asnumpy(), expected)
