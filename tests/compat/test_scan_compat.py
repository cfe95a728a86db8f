"""gt4py.next scan operators (COMPAT.md §6.1-6.3, Part 2 C): tuple parameters fed with tuples of
fields and scalars, scans without field arguments, arguments without the scan axis, keyword
arguments, and the checks made when a scan operator is decorated."""

from __future__ import annotations

import re

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float32, float64, int32

X = gtx.Dimension("X")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
FX = Field[Dims[X], float64]
FZ = Field[Dims[Z], float64]
FXZ = Field[Dims[X, Z], float64]


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def weighted(acc: float, p: tuple[float, float]) -> float:
    return acc + p[0] * p[1]


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def nested(acc: float, p: tuple[float, tuple[float, float]]) -> float:
    return acc + p[0] * p[1][0] - p[1][1]


@gtx.scan_operator(axis=Z, forward=False, init=0.0)
def countdown(c: float) -> float:
    return c + 1.0


@gtx.scan_operator(axis=Z, forward=True, init=(1.0, 0.0))
def geometric(state: tuple[float, float], r: float) -> tuple[float, float]:
    return state[0] * r, state[1] + state[0] * r


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def integrate(acc: float, dz: float, rho: float) -> float:
    return acc + dz * rho


# ------------------------------------------------------------------ §6.1 tuple parameters
def test_tuple_parameter_fed_with_scalar_and_field(case, rng) -> None:
    @gtx.field_operator
    def use(w: float, v: FXZ) -> FXZ:
        return weighted((w, v))

    vd = rng.standard_normal((3, 6))
    out = case.field([X, Z], rng.standard_normal((3, 6)))
    use.with_backend(case.backend)(1.5, case.field([X, Z], vd), out=out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), np.cumsum(1.5 * vd, axis=1), rtol=1e-13)


def test_tuple_parameter_fed_with_fields_of_different_extents(case, rng) -> None:
    """The columns cover the intersection of the arguments; a nested tuple mixes a field
    without the scan axis (constant per column) and a scalar."""

    @gtx.field_operator
    def use(u: FXZ, v: FXZ, h: FX) -> FXZ:
        return nested((u, (v, 0.5))) + weighted((u, h))

    ud, vd, hd = rng.standard_normal((4, 6)), rng.standard_normal((4, 7)), rng.standard_normal(4)
    od = rng.standard_normal((4, 6))
    out = case.field([X, Z], od.copy())
    u = case.field([X, Z], ud)
    v = case.field(gtx.domain({X: (0, 4), Z: (-1, 6)}), vd)
    use.with_backend(case.backend)(u, v, case.field([X], hd), out=out, offset_provider={})
    expected = np.cumsum(ud * vd[:, 1:] - 0.5, axis=1) + np.cumsum(ud * hd[:, None], axis=1)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-12)


def test_tuple_parameter_in_a_program_and_direct_call(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(u: FXZ, v: FXZ, out: FXZ):
        weighted((u, v), out=out)

    ud, vd = rng.standard_normal((2, 3, 5))
    out = case.field([X, Z], rng.standard_normal((3, 5)))
    prog(case.field([X, Z], ud), case.field([X, Z], vd), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), np.cumsum(ud * vd, axis=1), rtol=1e-13)
    out2 = case.field([X, Z], rng.standard_normal((3, 5)))
    weighted.with_backend(case.backend)((case.field([X, Z], ud), 2.0), out=out2, offset_provider={})
    np.testing.assert_allclose(out2.asnumpy(), np.cumsum(2.0 * ud, axis=1), rtol=1e-13)


def test_tuple_parameter_with_a_wrong_element_dtype_is_refused() -> None:
    with pytest.raises(gtx.StencilTypeError, match="p\\[1\\]"):

        @gtx.field_operator
        def bad(u: FXZ, v: Field[Dims[X, Z], float32]) -> FXZ:
            return weighted((u, v))


# ------------------------------------------------------------------ §6.2 no field arguments
def test_scan_without_field_arguments(case, rng) -> None:
    od = rng.standard_normal(6)
    oz = case.field([Z], od.copy())
    countdown.with_backend(case.backend)(out=oz, domain={Z: (1, 5)}, offset_provider={})
    expected = od.copy()
    expected[1:5] = [4.0, 3.0, 2.0, 1.0]
    np.testing.assert_array_equal(oz.asnumpy(), expected)

    @gtx.program(backend=case.backend)
    def prog(o: FZ, g: FZ, s: FZ, r: float):
        countdown(out=o)
        geometric(r, out=(g, s))

    o, g, s = (case.field([Z], rng.standard_normal(5)) for _ in range(3))
    prog(o, g, s, 0.5, offset_provider={})
    np.testing.assert_array_equal(o.asnumpy(), [5.0, 4.0, 3.0, 2.0, 1.0])
    powers = 0.5 ** np.arange(1, 6)
    np.testing.assert_allclose(g.asnumpy(), powers, rtol=1e-15)
    np.testing.assert_allclose(s.asnumpy(), np.cumsum(powers), rtol=1e-15)


# ------------------------------------------------------------------ Part 2 C: argument without the axis
def test_scan_argument_without_the_scan_axis_is_broadcast(case, rng) -> None:
    @gtx.field_operator
    def column_integral(dz: FX, rho: FXZ) -> FXZ:
        return integrate(dz, rho)

    dz, rho = rng.random(4), rng.random((4, 7))
    od = rng.standard_normal((4, 7))
    out = case.field([X, Z], od.copy())
    column_integral.with_backend(case.backend)(
        case.field([X], dz),
        case.field([X, Z], rho),
        out=out,
        domain={X: (1, 4), Z: (2, 7)},
        offset_provider={},
    )
    expected = od.copy()
    expected[1:, 2:] = np.cumsum(dz[1:, None] * rho[1:, 2:], axis=1)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-13)


def test_scan_keyword_arguments_from_python(case, rng) -> None:
    dz, rho = rng.random((2, 3, 4))
    out = case.field([X, Z], rng.standard_normal((3, 4)))

    @gtx.program(backend=case.backend)
    def prog(dz: FXZ, rho: FXZ, out: FXZ):
        integrate(dz, rho=rho, out=out)

    prog(case.field([X, Z], dz), case.field([X, Z], rho), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), np.cumsum(dz * rho, axis=1), rtol=1e-13)


# ------------------------------------------------------------------ §6.3 decoration-time checks
def test_scan_without_parameters_is_refused() -> None:
    with pytest.raises(
        gtx.StencilTypeError,
        match=re.escape("Scan operator 'nothing' must have at least one argument (the carry)."),
    ):

        @gtx.scan_operator(axis=Z, forward=True, init=0.0)
        def nothing() -> float:
            return 1.0


def test_carry_and_return_annotations_must_agree() -> None:
    with pytest.raises(
        gtx.StencilTypeError,
        match=re.escape(
            "Argument 'c' to scan operator 'mixed' must have same type as its return: expected 'float32',"
            " got 'float64'."
        ),
    ):

        @gtx.scan_operator(axis=Z, forward=True, init=0.0)
        def mixed(c: float64, x: float64) -> float32:
            return gtx.astype(c + x, float32)


@pytest.mark.parametrize(
    ("init", "got"),
    [
        (0, "int32"),
        (np.float32(0.0), "float32"),
        ((0.0, 1), "tuple[float64, int32]"),
        (True, "bool"),
    ],
)
def test_init_type_must_be_the_carry_type(init: object, got: str) -> None:
    expected = "tuple[float64, float64]" if isinstance(init, tuple) else "float64"
    with pytest.raises(
        gtx.StencilTypeError,
        match=re.escape(
            f"Argument 'init' to scan operator 'acc' must have same type as 'c' argument: expected"
            f" '{expected}', got '{got}'."
        ),
    ):
        if isinstance(init, tuple):

            @gtx.scan_operator(axis=Z, forward=True, init=init)
            def acc(c: tuple[float, float], x: float) -> tuple[float, float]:
                return c[0] + x, c[1]
        else:

            @gtx.scan_operator(axis=Z, forward=True, init=init)
            def acc(c: float, x: float) -> float:  # type: ignore[no-redef]
                return c + x


def test_init_of_the_carry_type_is_accepted(rng) -> None:
    @gtx.scan_operator(axis=Z, forward=True, init=(np.int32(1), np.float32(0.5)))
    def count(c: tuple[int32, float32], x: float32) -> tuple[int32, float32]:
        return c[0] + 1, c[1] * x

    xd = rng.random((2, 4)).astype(np.float32) + 0.5
    out = (gtx.zeros({X: 2, Z: 4}, np.int32), gtx.zeros({X: 2, Z: 4}, np.float32))
    count(gtx.as_field([X, Z], xd), out=out, offset_provider={})
    np.testing.assert_array_equal(out[0].asnumpy(), np.broadcast_to([2, 3, 4, 5], (2, 4)))
    np.testing.assert_allclose(out[1].asnumpy(), 0.5 * np.cumprod(xd, axis=1), rtol=1e-6)


@pytest.mark.nvrtc
def test_scans_without_fields_and_with_tuple_parameters_compile_for_cuda(monkeypatch) -> None:
    from test_wrong_results_compat import _cuda_build

    monkeypatch.setenv("STENCILKIT_CUDA_COMPILER", "nvrtc")

    @gtx.program
    def prog(o: FZ, g: FZ, s: FZ, r: float, u: FXZ, h: FX, q: FXZ, w: FXZ):
        countdown(out=o)
        geometric(r, out=(g, s))
        weighted((u, h), out=q[:, 1:])
        integrate(h, rho=u, out=w)

    z = [gtx.as_field([Z], np.ones(5)) for _ in range(3)]
    xz = [gtx.as_field([X, Z], np.ones((3, 5))) for _ in range(3)]
    source = _cuda_build(prog, [*z, 0.5, xz[0], gtx.as_field([X], np.ones(3)), xz[1], xz[2]])
    assert "sk_prog" in source


def test_unpacked_and_returned_scan_needs_no_temporaries(case, rng) -> None:
    """``q, w = scan(...); return q, w`` (icon4py's forward sweep) is the scan itself, over the
    statement's domain: init at its first level, no temporaries, keyword arguments."""

    @gtx.field_operator
    def forward(x: FXZ) -> tuple[FXZ, FXZ]:
        g, s = geometric(x)
        return g, s

    @gtx.program(backend=case.backend)
    def prog(x: FXZ, g: FXZ, s: FXZ, k0: int32, k1: int32):
        forward(x=x, out=(g, s), domain={X: (0, 3), Z: (k0, k1)})

    assert "temp" not in prog.ir_text
    xd = rng.uniform(0.5, 1.5, (3, 7))
    gd, sd = rng.standard_normal((2, 3, 7))
    g, s = case.field([X, Z], gd.copy()), case.field([X, Z], sd.copy())
    prog(case.field([X, Z], xd), g, s, int32(2), int32(6), offset_provider={})
    eg, es = gd.copy(), sd.copy()
    eg[:, 2:6] = np.cumprod(xd[:, 2:6], axis=1)
    es[:, 2:6] = np.cumsum(eg[:, 2:6], axis=1)
    np.testing.assert_allclose(g.asnumpy(), eg, rtol=1e-13)
    np.testing.assert_allclose(s.asnumpy(), es, rtol=1e-13)
