"""gt4py.next language items: keyword arguments inside operators, astype on tuples, typed
literals, several offsets in one shift, math builtins, 0-d field parameters, starred unpacking."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import (
    Dims,
    Field,
    broadcast,
    concat_where,
    float32,
    float64,
    int32,
    neighbor_sum,
    where,
)
from stencilkit.next.builtins import arccosh, arcsinh, arctanh, gamma, neg

X = gtx.Dimension("X")
Y = gtx.Dimension("Y")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
F = Field[Dims[X, Z], float64]
FZ = Field[Dims[X, Z], float64]
FXY = Field[Dims[X, Y], float64]
NX, NZ = 7, 5


@gtx.field_operator
def blend(a: F, b: F, w: float64) -> F:
    return w * a + (1.0 - w) * b


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def integrate(acc: float, dz: float, rho: float) -> float:
    return acc + dz * rho


@gtx.field_operator
def user(a: F, b: F, dz: FZ, rho: FZ) -> tuple[F, FZ]:
    return blend(a, w=0.25, b=b), integrate(rho=rho, dz=dz)


def test_keyword_arguments_inside_operators(case, rng) -> None:
    a, b, dz, rho = (rng.standard_normal((NX, NZ)) for _ in range(4))
    o1, o2 = rng.standard_normal((NX, NZ)), rng.standard_normal((NX, NZ))

    @gtx.program(backend=case.backend)
    def run(a: F, b: F, dz: FZ, rho: FZ, o1: F, o2: FZ):
        user(a, b, dz, rho, out=(o1, o2))

    f1, f2 = case.field([X, Z], o1), case.field([X, Z], o2)
    run(*(case.field([X, Z], v) for v in (a, b, dz, rho)), f1, f2, offset_provider={})
    np.testing.assert_allclose(f1.asnumpy(), 0.25 * a + 0.75 * b, rtol=1e-14)
    np.testing.assert_allclose(f2.asnumpy(), np.cumsum(dz * rho, axis=1), rtol=1e-13)


@pytest.mark.parametrize(
    "call, message",
    [
        ("blend(a, a=b, w=0.5)", "Got multiple values for argument 'a'."),
        ("blend(a, b)", "Missing 1 required positional argument: 'w'"),
        ("blend(a, b, 0.5, q=a)", "Got unexpected keyword argument 'q'."),
    ],
)
def test_keyword_argument_errors(call: str, message: str) -> None:
    namespace = {"gtx": gtx, "blend": blend, "F": F}
    src = f"@gtx.field_operator\ndef op(a: F, b: F) -> F:\n    return {call}\n"
    import linecache

    filename = f"<kw-test-{abs(hash(call))}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    with pytest.raises(gtx.StencilTypeError) as err:
        exec(compile(src, filename, "exec"), namespace)
    assert "Invalid argument types in call to 'blend'." in str(err.value)
    assert message in str(err.value)


@gtx.field_operator
def to_int(
    a: F, b: F, c: F
) -> tuple[Field[Dims[X, Z], int32], tuple[Field[Dims[X, Z], int32], Field[Dims[X, Z], int32]]]:
    return gtx.astype((a, (b, c)), int32)


@gtx.field_operator
def cast_pair(a: F, b: F) -> Field[Dims[X, Z], float32]:
    a32, b32 = gtx.astype((a, b), float32)
    return a32 + b32


def test_astype_on_nested_tuples(case, rng) -> None:
    a, b, c = (rng.standard_normal((NX, NZ)) * 10 for _ in range(3))
    outs = [rng.integers(-5, 5, (NX, NZ)).astype(np.int32) for _ in range(3)]
    o4 = rng.standard_normal((NX, NZ)).astype(np.float32)

    @gtx.program(backend=case.backend)
    def run(
        a: F,
        b: F,
        c: F,
        o1: Field[Dims[X, Z], int32],
        o2: Field[Dims[X, Z], int32],
        o3: Field[Dims[X, Z], int32],
        o4: Field[Dims[X, Z], float32],
    ):
        to_int(a, b, c, out=(o1, (o2, o3)))
        cast_pair(a, b, out=o4)

    fo = [case.field([X, Z], o) for o in outs]
    f4 = case.field([X, Z], o4)
    run(*(case.field([X, Z], v) for v in (a, b, c)), *fo, f4, offset_provider={})
    for f, v in zip(fo, (a, b, c)):
        np.testing.assert_array_equal(f.asnumpy(), v.astype(np.int32))
    np.testing.assert_allclose(f4.asnumpy(), a.astype(np.float32) + b.astype(np.float32), rtol=1e-6)


wpfloat = float64
vpfloat = float32


@gtx.field_operator
def literals(
    a: F, b: Field[Dims[X, Z], float32], i: Field[Dims[X, Z], int32]
) -> tuple[F, Field[Dims[X, Z], float32], Field[Dims[X, Z], int32]]:
    return (
        wpfloat("0.1") * a + float64(-2) + float(-1),
        -vpfloat("0.1") * b,
        i + int32("7") + gtx.int32(-3),
    )


def test_scalar_constructors_with_string_and_negated_literals(case, rng) -> None:
    a = rng.standard_normal((NX, NZ))
    b = rng.standard_normal((NX, NZ)).astype(np.float32)
    i = rng.integers(-10, 10, (NX, NZ)).astype(np.int32)

    @gtx.program(backend=case.backend)
    def run(
        a: F,
        b: Field[Dims[X, Z], float32],
        i: Field[Dims[X, Z], int32],
        o1: F,
        o2: Field[Dims[X, Z], float32],
        o3: Field[Dims[X, Z], int32],
    ):
        literals(a, b, i, out=(o1, o2, o3))

    o1, o2, o3 = (
        case.field([X, Z], a * 0 + 1.5),
        case.field([X, Z], b * 0 + 1),
        case.field([X, Z], i * 0 + 1),
    )
    run(
        case.field([X, Z], a),
        case.field([X, Z], b),
        case.field([X, Z], i),
        o1,
        o2,
        o3,
        offset_provider={},
    )
    np.testing.assert_allclose(o1.asnumpy(), 0.1 * a - 3.0, rtol=1e-14)
    # "0.1" parsed as a float32 (rounded once), not as 0.1 of float64 rounded again
    np.testing.assert_array_equal(o2.asnumpy(), -np.float32("0.1") * b)
    np.testing.assert_array_equal(o3.asnumpy(), i + 4)


def test_scalar_constructor_refuses_non_numeric_text() -> None:
    with pytest.raises(gtx.StencilTypeError, match="is not a float64 literal"):

        @gtx.field_operator
        def op(a: F) -> F:
            return a * float64("abc")


@gtx.field_operator
def diag(a: FXY) -> FXY:
    return a(X + 1, Y + 1) - a(X - 1, Y - 1)


def test_several_offsets_in_one_shift(case, rng) -> None:
    a = rng.standard_normal((9, 8))
    od = rng.standard_normal((9, 8))

    @gtx.program(backend=case.backend)
    def run(a: FXY, out: FXY):
        diag(a, out=out, domain={X: (1, 8), Y: (1, 7)})

    out = case.field([X, Y], od)
    run(case.field([X, Y], a), out, offset_provider={})
    expected = od.copy()
    expected[1:8, 1:7] = a[2:9, 2:8] - a[0:7, 0:6]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


Xoff = gtx.FieldOffset("Xoff", source=X, target=(X,))


@gtx.field_operator
def signed_offsets(a: FXY) -> FXY:
    return a(Xoff[-1]) * 2.0 + a(Xoff[+1]) - a(X + (-2)) * a(X - (-1))


def test_cartesian_field_offset_with_a_negative_index(case, rng) -> None:
    """``Koff[-1]`` and ``X + (-2)`` (a minus applied to a literal, in Python's syntax tree) are
    offsets."""
    a = rng.standard_normal((9, 8))
    od = rng.standard_normal((9, 8))

    @gtx.program(backend=case.backend)
    def run(a: FXY, out: FXY):
        signed_offsets(a, out=out, domain={X: (2, 8), Y: (0, 8)})

    out = case.field([X, Y], od)
    run(case.field([X, Y], a), out, offset_provider={"Xoff": X})
    expected = od.copy()
    expected[2:8] = a[1:7] * 2.0 + a[3:9] - a[0:6] * a[3:9]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


WEIGHTS = (0.5, 0.25, 2.0)


@gtx.field_operator
def negative_tuple_indices(a: FXY, b: FXY) -> FXY:
    pair = (a, b * 3.0)
    return pair[-1] - pair[-2] * WEIGHTS[-1] + WEIGHTS[-3]


def test_negative_indices_of_tuples_and_constant_tuples(case, rng) -> None:
    a, b = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))

    @gtx.program(backend=case.backend)
    def run(a: FXY, b: FXY, out: FXY):
        negative_tuple_indices(a, b, out=out)

    out = case.field([X, Y], np.zeros((5, 4)))
    run(case.field([X, Y], a), case.field([X, Y], b), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), b * 3.0 - a * 2.0 + 0.5, rtol=1e-14)


E = gtx.Dimension("E")
E2XDim = gtx.Dimension("E2XDim", kind=gtx.DimensionKind.LOCAL)
E2X = gtx.FieldOffset("E2X", source=X, target=(E, E2XDim))


def test_several_offsets_refused_with_a_neighbour_offset() -> None:
    with pytest.raises(gtx.StencilTypeError, match="only 1 argument in unstructured case"):

        @gtx.field_operator
        def op(a: FXY) -> Field[Dims[E, Y], float64]:
            return a(E2X[0], Y + 1)


@gtx.field_operator
def math_ops(a: F) -> tuple[F, F, F, F, F]:
    return gamma(a), arcsinh(a), arccosh(a + 1.5), arctanh(a * 0.1), neg(a)


def test_gamma_and_inverse_hyperbolic_builtins(case, rng) -> None:
    a = rng.uniform(0.1, 4.0, (NX, NZ))
    outs = [rng.standard_normal((NX, NZ)) for _ in range(5)]

    @gtx.program(backend=case.backend)
    def run(a: F, o1: F, o2: F, o3: F, o4: F, o5: F):
        math_ops(a, out=(o1, o2, o3, o4, o5))

    fo = [case.field([X, Z], o) for o in outs]
    run(case.field([X, Z], a), *fo, offset_provider={})
    expected = [
        np.vectorize(math.gamma)(a),
        np.arcsinh(a),
        np.arccosh(a + 1.5),
        np.arctanh(a * 0.1),
        -a,
    ]
    for f, e in zip(fo, expected):
        np.testing.assert_allclose(f.asnumpy(), e, rtol=1e-12)


def test_gamma_outside_an_operator_and_in_float32() -> None:
    a = np.array([0.5, 1.0, 3.0, 5.5], dtype=np.float32)
    got = gamma(gtx.as_field([X], a))
    np.testing.assert_allclose(got.asnumpy(), [math.gamma(float(v)) for v in a], rtol=1e-6)
    assert got.asnumpy().dtype == np.float32
    with pytest.raises(gtx.StencilTypeError, match="needs a floating-point argument"):

        @gtx.field_operator
        def op(a: Field[Dims[X], int32]) -> Field[Dims[X], int32]:
            return gamma(a)


@gtx.field_operator
def scale(s: Field[Dims[()], float64], a: F) -> F:
    return s * a


@gtx.field_operator
def twice(a: F, t: float64) -> F:
    return scale(2.0, a) + scale(t, a)


def test_scalar_for_a_zero_dimensional_field_parameter(case, rng) -> None:
    a = rng.standard_normal((NX, NZ))

    @gtx.program(backend=case.backend)
    def run(a: F, t: float64, out: F):
        twice(a, t, out=out)

    out = case.field([X, Z], rng.standard_normal((NX, NZ)))
    run(case.field([X, Z], a), 0.5, out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), 2.5 * a, rtol=1e-14)


def test_scalar_of_another_dtype_for_a_zero_dimensional_field_is_refused() -> None:
    with pytest.raises(gtx.StencilTypeError, match="argument 's' of scale must be"):

        @gtx.field_operator
        def op(a: F, t: float32) -> F:
            return scale(t, a)


@gtx.field_operator
def starred(a: F, b: F, c: F, d: F) -> tuple[F, F]:
    first, *mid, last = (a, b, c, d)
    return first - last, mid[0] * mid[1]


def test_starred_unpacking(case, rng) -> None:
    a, b, c, d = (rng.standard_normal((NX, NZ)) for _ in range(4))

    @gtx.program(backend=case.backend)
    def run(a: F, b: F, c: F, d: F, o1: F, o2: F):
        starred(a, b, c, d, out=(o1, o2))

    o1, o2 = (
        case.field([X, Z], rng.standard_normal((NX, NZ))),
        case.field([X, Z], rng.standard_normal((NX, NZ))),
    )
    run(*(case.field([X, Z], v) for v in (a, b, c, d)), o1, o2, offset_provider={})
    np.testing.assert_allclose(o1.asnumpy(), a - d, rtol=1e-14)
    np.testing.assert_allclose(o2.asnumpy(), b * c, rtol=1e-14)


def test_zero_dimensional_fields_on_every_backend(case, rng) -> None:
    """Regression: a program over Field[[], int32] emitted invalid C++ (``- ()``)."""

    @gtx.field_operator
    def inc(a: Field[Dims[()], int32]) -> Field[Dims[()], int32]:
        return a + int32(3)

    @gtx.program(backend=case.backend)
    def run(a: Field[Dims[()], int32], out: Field[Dims[()], int32]):
        inc(a, out=out)

    a = case.field([], np.array(int(rng.integers(1, 100)), dtype=np.int32))
    out = case.field([], np.array(0, dtype=np.int32))
    run(a, out, offset_provider={})
    assert int(out.asnumpy()) == int(a.asnumpy()) + 3


def test_python_scalar_for_a_zero_dimensional_field(case, rng) -> None:
    a = rng.standard_normal((NX, NZ))
    if case.on_gpu:
        pytest.skip("a Python scalar becomes a host 0-d field; the gpu backend wants device fields")

    @gtx.program(backend=case.backend)
    def run(s: Field[Dims[()], float64], a: F, out: F):
        scale(s, a, out=out)

    out = case.field([X, Z], rng.standard_normal((NX, NZ)))
    run(1.5, case.field([X, Z], a), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), 1.5 * a, rtol=1e-14)
    with pytest.raises(gtx.StencilTypeError, match="argument 's'"):
        run(
            3, case.field([X, Z], a), out, offset_provider={}
        )  # int32 is not float64: no conversion
    out2 = case.field([X, Z], rng.standard_normal((NX, NZ)))
    scale.with_backend(case.backend)(2.0, case.field([X, Z], a), out=out2, offset_provider={})
    np.testing.assert_allclose(out2.asnumpy(), 2.0 * a, rtol=1e-14)


def test_negative_literal_offsets(case, rng) -> None:
    a = rng.standard_normal((9, 8))
    od = rng.standard_normal((9, 8))

    @gtx.field_operator
    def back(a: FXY) -> FXY:
        return a(X + (-1), Y - -1)

    @gtx.program(backend=case.backend)
    def run(a: FXY, out: FXY):
        back(a, out=out, domain={X: (1, 9), Y: (0, 7)})

    out = case.field([X, Y], od)
    run(case.field([X, Y], a), out, offset_provider={})
    expected = od.copy()
    expected[1:9, 0:7] = a[0:8, 1:8]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


@gtx.field_operator
def chained_comparisons(a: FXY, b: FXY, lo: float64) -> tuple[FXY, FXY]:
    inside = where(lo < a <= b, a, b)  # (lo < a) & (a <= b), gt4py's unchaining
    return inside, concat_where(1 <= X < 4, a, b * 2.0)


def test_chained_comparisons(case, rng) -> None:
    """Regression: ``a < b < c`` was refused; gt4py reads it as ``(a < b) & (b < c)``, also on
    indices in concat_where conditions (``1 <= X < 4``)."""
    a, b = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))

    @gtx.program(backend=case.backend)
    def run(a: FXY, b: FXY, lo: float64, o1: FXY, o2: FXY):
        chained_comparisons(a, b, lo, out=(o1, o2))

    o1, o2 = (case.field([X, Y], rng.standard_normal((6, 4))) for _ in range(2))
    run(case.field([X, Y], a), case.field([X, Y], b), -0.25, o1, o2, offset_provider={})
    np.testing.assert_array_equal(o1.asnumpy(), np.where((-0.25 < a) & (a <= b), a, b))
    x = np.arange(6)[:, None]
    np.testing.assert_array_equal(o2.asnumpy(), np.where((1 <= x) & (x < 4), a, b * 2.0))


Cell = gtx.Dimension("Cell")
C2XDim = gtx.Dimension("C2XDim", kind=gtx.DimensionKind.LOCAL)
C2X = gtx.FieldOffset("C2X", source=X, target=(Cell, C2XDim))
FCZ = Field[Dims[Cell, Z], float64]
FCLZ = Field[Dims[Cell, C2XDim, Z], float64]  # gt4py's order: horizontal, local, vertical


@gtx.field_operator
def weighted_neighbours(a: F, w: FCLZ) -> tuple[FCLZ, FCZ]:
    return a(C2X) * w, neighbor_sum(w * a(C2X), axis=C2XDim)


def test_neighbour_values_combine_with_fields_in_gt4py_dimension_order(case, rng) -> None:
    """Regression: ``a(C2X) * w`` with ``w: Field[Dims[Cell, C2XDim, Z]]`` (gt4py's canonical
    order) was refused: "their dimension orders differ" (stencilkit places the local dimension
    last). Only the order among dimensions of one kind can conflict."""
    table = rng.integers(0, NX, (4, 3)).astype(np.int32)
    a, w = rng.standard_normal((NX, NZ)), rng.standard_normal((4, 3, NZ))

    @gtx.program(backend=case.backend)
    def run(a: F, w: FCLZ, o1: FCLZ, o2: FCZ):
        weighted_neighbours(a, w, out=(o1, o2))

    o1 = case.field([Cell, C2XDim, Z], rng.standard_normal((4, 3, NZ)))
    o2 = case.field([Cell, Z], rng.standard_normal((4, NZ)))
    c2x = case.connectivity([Cell, C2XDim], X, table)
    run(
        case.field([X, Z], a),
        case.field([Cell, C2XDim, Z], w),
        o1,
        o2,
        offset_provider={"C2X": c2x},
    )
    np.testing.assert_allclose(o1.asnumpy(), a[table] * w, rtol=1e-14)
    np.testing.assert_allclose(o2.asnumpy(), (w * a[table]).sum(axis=1), rtol=1e-13)


def _define_operator(signature: str, expr: str) -> None:
    """Define ``op({signature}: return {expr}`` from source text, with this module's names; the
    text is kept in linecache so that errors show the line."""
    import linecache

    src = f"@gtx.field_operator\ndef op({signature}:\n    return {expr}\n"
    filename = f"<op-{abs(hash(src))}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), dict(globals()))


@pytest.mark.parametrize(
    "expr, message",
    [
        ("a(C2X[-1])", "neighbour index -1 of C2X is negative"),
        ("w[C2XDim(-1)]", "neighbour slot -1 of C2XDim is negative"),
        ("w(C2XDim(0))", "to select a neighbour slot index the field: f[C2XDim(0)]"),
    ],
)
def test_negative_neighbour_indices_are_refused(expr: str, message: str) -> None:
    """Regression: ``C2X[-1]`` parsed once signed literals were read, and the cpu backend read
    the table before the row (gt4py: out of bounds on embedded, unchecked on gtfn)."""
    with pytest.raises(gtx.StencilTypeError, match=re.escape(message)):
        _define_operator("a: F, w: FCLZ) -> FCZ", expr)


def test_signed_neighbour_index_literals(case, rng) -> None:
    table = rng.integers(0, NX, (4, 3)).astype(np.int32)
    a, w = rng.standard_normal((NX, NZ)), rng.standard_normal((4, 3, NZ))

    @gtx.field_operator
    def pick(a: F, w: FCLZ) -> FCZ:
        return a(C2X[+2]) * w[C2XDim(+1)]

    @gtx.program(backend=case.backend)
    def run(a: F, w: FCLZ, out: FCZ):
        pick(a, w, out=out)

    out = case.field([Cell, Z], rng.standard_normal((4, NZ)))
    c2x = case.connectivity([Cell, C2XDim], X, table)
    run(case.field([X, Z], a), case.field([Cell, C2XDim, Z], w), out, offset_provider={"C2X": c2x})
    np.testing.assert_allclose(out.asnumpy(), a[table[:, 2]] * w[:, 1], rtol=1e-14)


@pytest.mark.parametrize(
    "expr, message",
    [
        ("(-(a, a))[0]", "unary - cannot be applied to a tuple"),
        ("gtx.astype(a, int32) ** -2", "integers to negative integer powers are not allowed"),
        ("gtx.astype(a, int32) + 3000000000", "the constant 3000000000 does not fit in int32"),
        (
            "gtx.astype(a, int32) + int32(-2147483649)",
            "the constant -2147483649 does not fit in int32",
        ),
        (
            "gtx.astype(a, int32) + 1180591620717411303424",
            "the integer constant 1180591620717411303424 does not fit",
        ),
    ],
)
def test_refused_literal_and_operator_forms(expr: str, message: str) -> None:
    """Refused where they are written: ``i ** -2`` raises in NumPy and gave 1 on the cpu backend;
    a constant too large for its dtype raised NumPy's OverflowError without a location."""
    with pytest.raises(gtx.StencilTypeError, match=re.escape(message)):
        _define_operator("a: F) -> Field[Dims[X, Z], int32]", expr)


def test_signed_literal_bounds_of_a_sliced_out(case, rng) -> None:
    a, od = rng.standard_normal((NX, NZ)), rng.standard_normal((NX, NZ))

    @gtx.program(backend=case.backend)
    def run(a: F, out: F):
        blend(a, a, 0.5, out=out[+1:-1, +2:])

    out = case.field([X, Z], od)
    run(case.field([X, Z], a), out, offset_provider={})
    expected = od.copy()
    expected[1:-1, 2:] = a[1:-1, 2:]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


@gtx.field_operator
def integer_powers(a: F, n: int32, e: Field[Dims[X, Z], int32]) -> tuple[F, F, F]:
    return a ** int32(2), a**n, a**e


def test_float_to_an_integer_power(case, rng) -> None:
    """Regression: ``a ** n`` with a float ``a`` and an int32 ``n`` was refused ("operands have
    different dtypes"); gt4py types a power as its base."""
    a = rng.standard_normal((NX, NZ))
    e = rng.integers(0, 4, (NX, NZ)).astype(np.int32)

    @gtx.program(backend=case.backend)
    def run(a: F, n: int32, e: Field[Dims[X, Z], int32], o1: F, o2: F, o3: F):
        integer_powers(a, n, e, out=(o1, o2, o3))

    outs = [case.field([X, Z], rng.standard_normal((NX, NZ))) for _ in range(3)]
    run(case.field([X, Z], a), np.int32(3), case.field([X, Z], e), *outs, offset_provider={})
    for out, expected in zip(outs, (a**2, a**3, a**e)):
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


I64 = Field[Dims[X, Z], gtx.int64]


@gtx.field_operator
def int64_constants(j: I64) -> tuple[I64, I64]:
    big = broadcast(3000000000, (X, Z)) + j - (1 + 3000000000)
    return big, j + int(-1) * int("3")  # noqa: UP018, RUF046 (the DSL forms under test)


def test_int64_constants(case, rng) -> None:
    """Regressions: ``broadcast(3000000000, ...)`` was typed int32 (a Python integer that int32
    cannot hold is int64, as in gt4py), and ``int(-1)`` was an int32 constant while an ``int``
    annotation is int64 (gt4py: both int64)."""
    j = rng.integers(-(2**40), 2**40, (NX, NZ))

    @gtx.program(backend=case.backend)
    def run(j: I64, o1: I64, o2: I64):
        int64_constants(j, out=(o1, o2))

    o1, o2 = (case.field([X, Z], np.zeros((NX, NZ), dtype=np.int64)) for _ in range(2))
    run(case.field([X, Z], j), o1, o2, offset_provider={})
    np.testing.assert_array_equal(o1.asnumpy(), j - 1)
    np.testing.assert_array_equal(o2.asnumpy(), j - 3)
    with pytest.raises(gtx.StencilTypeError, match="different dtypes, int32 and int64"):
        _define_operator("i: Field[Dims[X, Z], int32]) -> Field[Dims[X, Z], int32]", "i + int(1)")


def test_a_slot_beyond_a_local_dimension_is_refused_before_running(case, rng) -> None:
    """Regression: ``w[C2XDim(3)]`` of a field with three slots read past the slots on the cpu
    backend (and raised NumPy's IndexError on embedded)."""
    w = rng.standard_normal((4, 3, NZ))

    @gtx.field_operator
    def beyond(w: FCLZ) -> FCZ:
        return w[C2XDim(3)]

    @gtx.program(backend=case.backend)
    def run(w: FCLZ, out: FCZ):
        beyond(w, out=out)

    od = rng.standard_normal((4, NZ))
    out = case.field([Cell, Z], od)
    with pytest.raises(gtx.StencilValueError, match="reads slot 3 of 'w' along C2XDim"):
        run(case.field([Cell, C2XDim, Z], w), out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), od)
