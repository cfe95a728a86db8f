"""gt4py.next program statements (COMPAT.md §3.1, §4.1-4.3): keyword arguments, sliced out=,
one domain per output element, builtin calls in domain bounds."""

from __future__ import annotations

import re

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32, maximum, minimum

X = gtx.Dimension("X")
Y = gtx.Dimension("Y")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
FX = Field[Dims[X], float64]
FY = Field[Dims[Y], float64]
FXY = Field[Dims[X, Y], float64]
FXZ = Field[Dims[X, Z], float64]


@gtx.field_operator
def blend(a: FXY, b: FXY, w: float64) -> FXY:
    return w * a + (1.0 - w) * b


@gtx.field_operator
def diag(a: FXY) -> FXY:
    return a(X + 1) + a(Y - 1)


@gtx.field_operator
def pair(a: FXY) -> tuple[FXY, FXY]:
    return a + 1.0, 2.0 * a


@gtx.field_operator
def swap(x: FX, y: FY) -> tuple[FY, FX]:
    return 2.0 * y, x + 1.0


@gtx.scan_operator(axis=Z, forward=True, init=(0.0, 1.0))
def sum_prod(state: tuple[float, float], x: float) -> tuple[float, float]:
    return state[0] + x, state[1] * x


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def integrate(acc: float, dz: float, rho: float) -> float:
    return acc + dz * rho


# ------------------------------------------------------------------ §3.1 keyword arguments
def test_keyword_arguments_in_a_program_statement(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(a: FXY, b: FXY, o: FXY, o2: FXY):
        blend(b=b, a=a, w=0.25, out=o)
        blend(a, w=0.75, b=b, out=o2, domain={X: (1, 4), Y: (0, 3)})

    ad, bd, od = rng.standard_normal((3, 5, 4))
    o, o2 = case.field([X, Y], od.copy()), case.field([X, Y], od.copy())
    prog(case.field([X, Y], ad), case.field([X, Y], bd), o, o2, offset_provider={})
    np.testing.assert_allclose(o.asnumpy(), 0.25 * ad + 0.75 * bd, rtol=1e-14)
    expected = od.copy()
    expected[1:4, 0:3] = 0.75 * ad[1:4, 0:3] + 0.25 * bd[1:4, 0:3]
    np.testing.assert_allclose(o2.asnumpy(), expected, rtol=1e-14)


def test_keyword_arguments_of_a_scan_in_a_program(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(dz: FXZ, rho: FXZ, out: FXZ):
        integrate(rho=rho, dz=dz, out=out)

    dz, rho = rng.random((2, 3, 6))
    out = case.field([X, Z], rng.standard_normal((3, 6)))
    prog(case.field([X, Z], dz), case.field([X, Z], rho), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), np.cumsum(dz * rho, axis=1), rtol=1e-13)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("blend(a, a=a, b=a, w=0.5, out=o)", "Got multiple values for argument 'a'."),
        ("blend(a, b=a, out=o)", "Missing 1 required positional argument: 'w'"),
        ("blend(a, a, w=0.5, q=1.0, out=o)", "Got unexpected keyword argument 'q'."),
        (
            "blend(a, a, 0.5, 1.0, out=o)",
            "Function takes 3 positional arguments, but 4 were given.",
        ),
    ],
)
def test_keyword_argument_errors(call: str, message: str) -> None:
    import textwrap
    import types

    src = textwrap.dedent(f"""
        @gtx.program
        def prog(a: FXY, o: FXY):
            {call}
    """)
    module = types.ModuleType("kw_errors")
    module.__dict__.update(gtx=gtx, FXY=FXY, blend=blend)
    path = f"/tmp/stencilkit_kw_errors_{abs(hash(call))}.py"
    with open(path, "w") as f:
        f.write(src)
    with pytest.raises(gtx.StencilTypeError) as err:
        exec(compile(src, path, "exec"), module.__dict__)
    assert "Invalid argument types in call to 'blend'." in str(err.value)
    assert message in str(err.value)


# ------------------------------------------------------------------ §4.1 sliced out=
def test_sliced_out(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def interior(a: FXY, out: FXY):
        diag(a, out=out[1:-1, :-1])  # X: 1 .. 5, Y: 0 .. 4; reads a over X: 2 .. 6, Y: -1 .. 4

    a = case.field(gtx.domain({X: (0, 7), Y: (-1, 5)}), rng.standard_normal((7, 6)))
    an = a.asnumpy()
    od = rng.standard_normal((6, 5))
    out = case.field([X, Y], od.copy())
    interior(a, out, offset_provider={})
    expected = od.copy()
    expected[1:5, 0:4] = an[2:6, 1:5] + an[1:5, 0:4]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


def test_sliced_out_relative_to_the_fields_own_domain(case, rng) -> None:
    """Slice bounds count from each field's own start and stop; a tuple mixes sliced and plain
    fields, and an output that is also an input is written after the operator is evaluated."""

    @gtx.program(backend=case.backend)
    def prog(a: FXY, out: FXY):
        pair(a, out=(out[2:, 1:-2], a[:-1, :]))

    ad = rng.standard_normal((5, 6))
    a = case.field(gtx.domain({X: (-2, 3), Y: (0, 6)}), ad.copy())
    out = case.field(gtx.domain({X: (-3, 3), Y: (-1, 6)}), rng.standard_normal((6, 7)))
    on = out.asnumpy().copy()
    prog(a, out, offset_provider={})
    # out[2:, 1:-2]: X -1 .. 3, Y 0 .. 4 -> a's indices X 1 .. 5, Y 0 .. 4; out's X 2 .. 6, Y 1 .. 5
    eo, ea = on.copy(), ad.copy()
    eo[2:6, 1:5] = ad[1:5, 0:4] + 1.0
    ea[:-1, :] = 2.0 * ad[:-1, :]  # evaluated from the original a
    np.testing.assert_allclose(out.asnumpy(), eo, rtol=1e-15)
    np.testing.assert_allclose(a.asnumpy(), ea, rtol=1e-15)


def test_sliced_out_of_a_scan(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def columns(x: FXZ, q: FXZ, w: FXZ):
        sum_prod(x, out=(q[:, 1:], w[:, 1:]))

    xd = rng.uniform(0.5, 1.5, (3, 6))
    qd, wd = rng.standard_normal((2, 3, 6))
    q, w = case.field([X, Z], qd.copy()), case.field([X, Z], wd.copy())
    columns(case.field([X, Z], xd), q, w, offset_provider={})
    eq, ew = qd.copy(), wd.copy()
    eq[:, 1:] = np.cumsum(xd[:, 1:], axis=1)
    ew[:, 1:] = np.cumprod(xd[:, 1:], axis=1)
    np.testing.assert_allclose(q.asnumpy(), eq, rtol=1e-13)
    np.testing.assert_allclose(w.asnumpy(), ew, rtol=1e-13)


def test_sliced_out_with_domain_uses_the_domain(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(a: FXY, out: FXY):
        pair(a, out=(out[1:, :], a), domain={X: (0, 2), Y: (1, 3)})

    ad, od = rng.standard_normal((2, 4, 4))
    a, out = case.field([X, Y], ad.copy()), case.field([X, Y], od.copy())
    prog(a, out, offset_provider={})
    eo, ea = od.copy(), ad.copy()
    eo[0:2, 1:3] = ad[0:2, 1:3] + 1.0
    ea[0:2, 1:3] = 2.0 * ad[0:2, 1:3]
    np.testing.assert_allclose(out.asnumpy(), eo, rtol=1e-15)
    np.testing.assert_allclose(a.asnumpy(), ea, rtol=1e-15)


def test_sliced_out_errors() -> None:
    with pytest.raises(
        gtx.StencilTypeError,
        match=re.escape(
            "Too many indices for field 'out': field is 2-dimensional, but 1 were indexed."
        ),
    ):

        @gtx.program
        def prog(a: FXY, out: FXY):
            diag(a, out=out[1:])

    with pytest.raises(gtx.StencilTypeError, match="integer literals"):

        @gtx.program
        def prog2(a: FXY, out: FXY, n: int32):
            diag(a, out=out[1:n, :])


# ------------------------------------------------------------------ §4.2 one domain per output
def test_elements_with_different_dimensions(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(x: FX, y: FY, ox: FX, oy: FY):
        swap(x, y, out=(oy, ox))

    xd, yd = rng.standard_normal(5), rng.standard_normal(3)
    ox, oy = case.field([X], rng.standard_normal(5)), case.field([Y], rng.standard_normal(3))
    prog(case.field([X], xd), case.field([Y], yd), ox, oy, offset_provider={})
    np.testing.assert_allclose(oy.asnumpy(), 2.0 * yd, rtol=1e-15)
    np.testing.assert_allclose(ox.asnumpy(), xd + 1.0, rtol=1e-15)


def test_nested_domain_tuples_mirror_out(case, rng) -> None:
    @gtx.field_operator
    def three(x: FX, y: FY) -> tuple[tuple[FX, FY], FX]:
        return (x + 1.0, y * 3.0), x * x

    @gtx.program(backend=case.backend)
    def prog(x: FX, y: FY, o1: FX, o2: FY, o3: FX, n: int32):
        three(x, y, out=((o1, o2), o3), domain=(({X: (0, n)}, {Y: (1, 3)}), {X: (2, n)}))

    xd, yd = rng.standard_normal(6), rng.standard_normal(4)
    d1, d2, d3 = rng.standard_normal(6), rng.standard_normal(4), rng.standard_normal(6)
    o1, o2, o3 = case.field([X], d1.copy()), case.field([Y], d2.copy()), case.field([X], d3.copy())
    prog(case.field([X], xd), case.field([Y], yd), o1, o2, o3, int32(5), offset_provider={})
    e1, e2, e3 = d1.copy(), d2.copy(), d3.copy()
    e1[0:5] = xd[0:5] + 1.0
    e2[1:3] = yd[1:3] * 3.0
    e3[2:5] = xd[2:5] ** 2
    np.testing.assert_allclose(o1.asnumpy(), e1, rtol=1e-15)
    np.testing.assert_allclose(o2.asnumpy(), e2, rtol=1e-15)
    np.testing.assert_allclose(o3.asnumpy(), e3, rtol=1e-15)


def test_direct_call_with_one_domain_per_output(case, rng) -> None:
    xd, yd = rng.standard_normal(4), rng.standard_normal(5)
    d_x, d_y = rng.standard_normal(4), rng.standard_normal(5)
    ox, oy = case.field([X], d_x.copy()), case.field([Y], d_y.copy())
    swap.with_backend(case.backend)(
        case.field([X], xd),
        case.field([Y], yd),
        out=(oy, ox),
        domain=({Y: (1, 4)}, {X: (0, 2)}),
        offset_provider={},
    )
    ey, ex = d_y.copy(), d_x.copy()
    ey[1:4] = 2.0 * yd[1:4]
    ex[0:2] = xd[0:2] + 1.0
    np.testing.assert_allclose(oy.asnumpy(), ey, rtol=1e-15)
    np.testing.assert_allclose(ox.asnumpy(), ex, rtol=1e-15)


def test_direct_call_without_domain_writes_each_output_whole(case, rng) -> None:
    xd, yd = rng.standard_normal(4), rng.standard_normal(5)
    ox, oy = case.field([X], rng.standard_normal(4)), case.field([Y], rng.standard_normal(5))
    swap.with_backend(case.backend)(
        case.field([X], xd), case.field([Y], yd), out=(oy, ox), offset_provider={}
    )
    np.testing.assert_allclose(oy.asnumpy(), 2.0 * yd, rtol=1e-15)
    np.testing.assert_allclose(ox.asnumpy(), xd + 1.0, rtol=1e-15)


# ------------------------------------------------------------------ §4.3 builtins in domain bounds
def test_builtin_calls_in_domain_bounds(case, rng) -> None:
    @gtx.field_operator
    def double(a: FX) -> FX:
        return 2.0 * a

    @gtx.program(backend=case.backend)
    def prog(a: FX, out: FX, n: int32, m: int32):
        double(a, out=out, domain={X: (minimum(2, n), maximum(m, abs(n - 10)))})

    ad, od = rng.standard_normal(9), rng.standard_normal(9)
    out = case.field([X], od.copy())
    prog(case.field([X], ad), out, int32(4), int32(3), offset_provider={})  # X: 2 .. 6
    expected = od.copy()
    expected[2:6] = 2.0 * ad[2:6]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-15)
    out = case.field([X], od.copy())
    prog(case.field([X], ad), out, int32(1), int32(8), offset_provider={})  # X: 1 .. 9
    expected = od.copy()
    expected[1:9] = 2.0 * ad[1:9]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-15)
