"""The foundation slice: the Laplacian of DESIGN.md §1 on every backend, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


@gtx.field_operator
def lap(a: Field[Dims[I, J, K], float64]) -> Field[Dims[I, J, K], float64]:
    return -4.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)


def make_program(backend: object) -> gtx.Program:
    @gtx.program(backend=backend)
    def run_lap(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64]):
        lap(a, out=out, domain={I: (1, 23), J: (1, 17), K: (0, 6)})

    return run_lap


def numpy_lap(a: np.ndarray) -> np.ndarray:
    return -4.0 * a[1:-1, 1:-1] + a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2]


def test_laplacian_matches_numpy_and_leaves_the_rest_untouched(case, rng) -> None:
    data = rng.standard_normal((24, 18, 6))
    sentinel = rng.standard_normal((24, 18, 6))
    a = case.field([I, J, K], data)
    out = case.field([I, J, K], sentinel)
    make_program(case.backend)(a, out, offset_provider={})
    result = out.asnumpy()
    np.testing.assert_allclose(result[1:-1, 1:-1], numpy_lap(data), rtol=1e-13, atol=1e-13)
    # Every point outside the domain keeps its previous value, bit for bit.
    untouched = np.ones(result.shape, bool)
    untouched[1:-1, 1:-1] = False
    np.testing.assert_array_equal(result[untouched], sentinel[untouched])


def test_laplacian_repeated_calls_with_new_fields(case, rng) -> None:
    prog = make_program(case.backend)
    for _ in range(3):
        data = rng.standard_normal((24, 18, 6))
        a = case.field([I, J, K], data)
        out = case.field([I, J, K], np.full((24, 18, 6), np.nan))
        prog(a, out, offset_provider={})
        np.testing.assert_allclose(
            out.asnumpy()[1:-1, 1:-1], numpy_lap(data), rtol=1e-13, atol=1e-13
        )


def test_scalar_domain_bounds_and_arguments(case, rng) -> None:
    @gtx.field_operator
    def axpy(
        alpha: float64, x: Field[Dims[I, J], float64], y: Field[Dims[I, J], float64]
    ) -> Field[Dims[I, J], float64]:
        return alpha * x(I - 1) + y(J + 1)

    @gtx.program(backend=case.backend)
    def run(
        alpha: float64,
        x: Field[Dims[I, J], float64],
        y: Field[Dims[I, J], float64],
        out: Field[Dims[I, J], float64],
        n: gtx.int32,
        m: gtx.int32,
    ):
        axpy(alpha, x, y, out=out, domain={I: (1, n), J: (0, m - 1)})

    xd, yd = rng.standard_normal((10, 7)), rng.standard_normal((10, 7))
    od = rng.standard_normal((10, 7))
    out = case.field([I, J], od)
    run(0.5, case.field([I, J], xd), case.field([I, J], yd), out, 8, 6, offset_provider={})
    expected = od.copy()
    expected[1:8, 0:5] = 0.5 * xd[0:7, 0:5] + yd[1:8, 1:6]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


def test_field_operator_called_directly(case, rng) -> None:
    data = rng.standard_normal((24, 18, 6))
    a = case.field([I, J, K], data)
    out = case.field([I, J, K], np.zeros((24, 18, 6)) + 7.0)
    lap.with_backend(case.backend)(
        a, out=out, domain={I: (1, 23), J: (1, 17), K: (0, 6)}, offset_provider={}
    )
    np.testing.assert_allclose(out.asnumpy()[1:-1, 1:-1], numpy_lap(data), rtol=1e-13, atol=1e-13)
    assert (out.asnumpy()[0] == 7.0).all()


def test_domain_outside_output_is_refused_before_running(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def too_big(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64]):
        lap(a, out=out, domain={I: (0, 24), J: (1, 17), K: (0, 6)})

    sentinel = rng.standard_normal((24, 18, 6))
    a = case.field([I, J, K], rng.standard_normal((24, 18, 6)))
    out = case.field([I, J, K], sentinel)
    with pytest.raises(
        ValueError,
        match=r"test_laplacian.py:[0-9]+.*reads field .a. along I over -1:25 \(offsets -1..\+1",
    ):
        too_big(a, out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), sentinel)


def test_wrong_dimensions_and_dtype_are_refused(case, rng) -> None:
    prog = make_program(case.backend)
    a2 = case.field([I, J], rng.standard_normal((24, 18)))
    out = case.field([I, J, K], rng.standard_normal((24, 18, 6)))
    with pytest.raises(
        TypeError, match=r"argument 'a' has dimensions \[I, J\], expected \[I, J, K\]"
    ):
        prog(a2, out, offset_provider={})
    a32 = case.field([I, J, K], rng.standard_normal((24, 18, 6)).astype(np.float32))
    with pytest.raises(TypeError, match="argument 'a' has dtype float32, expected float64"):
        prog(a32, out, offset_provider={})


def test_program_may_be_annotated_to_return_none(rng) -> None:
    @gtx.program
    def run(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64]) -> None:
        lap(a, out=out, domain={I: (1, 23), J: (1, 17), K: (0, 6)})

    data = rng.standard_normal((24, 18, 6))
    out = gtx.as_field([I, J, K], rng.standard_normal((24, 18, 6)))
    run(gtx.as_field([I, J, K], data), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy()[1:-1, 1:-1], numpy_lap(data), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("backend", [gtx.cpu], ids=["cpu"])
def test_output_passed_as_an_input_too_is_refused(backend, rng) -> None:
    prog = make_program(backend)
    a = gtx.as_field([I, J, K], rng.standard_normal((24, 18, 6)))
    out = gtx.as_field([I, J, K], rng.standard_normal((24, 18, 6)))
    prog(a, out, offset_provider={})  # the plan for this signature now exists
    before = a.asnumpy().copy()
    for _ in range(2):  # refused on the fast path too
        with pytest.raises(ValueError, match="argument 'a' is the same field as output 'out'"):
            prog(a, a, offset_provider={})
    np.testing.assert_array_equal(a.asnumpy(), before)


def test_fields_stored_in_another_dimension_order(case, rng) -> None:
    """A field made as [J, I] passed for a Field[Dims[I, J], ...] parameter (and as output):
    read and written through its own strides, bounds checked along the right dimensions."""

    @gtx.field_operator
    def skew(a: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
        return a(I + 1) - a(J - 1)

    @gtx.program(backend=case.backend)
    def run(a: Field[Dims[I, J], float64], out: Field[Dims[I, J], float64]):
        skew(a, out=out, domain={I: (0, 5), J: (1, 5)})

    ad = rng.standard_normal((6, 5))
    expected_inner = ad[1:6, 1:5] - ad[0:5, 0:4]
    od = rng.standard_normal((6, 5))
    out = case.field([I, J], od)
    run(case.field([J, I], ad.T.copy()), out, offset_provider={})
    exp = od.copy()
    exp[0:5, 1:5] = expected_inner
    np.testing.assert_allclose(out.asnumpy(), exp, rtol=1e-15)
    out_t = case.field([J, I], od.T.copy())
    run(case.field([I, J], ad), out_t, offset_provider={})
    np.testing.assert_allclose(out_t.asnumpy().T, exp, rtol=1e-15)
    with pytest.raises(ValueError, match=r"reads field .a. along I over 0:7 \(offsets \+0\.\.\+1"):

        @gtx.program(backend=case.backend)
        def too_far(a: Field[Dims[I, J], float64], out: Field[Dims[I, J], float64]):
            skew(a, out=out, domain={I: (0, 6), J: (1, 5)})

        too_far(case.field([J, I], ad.T.copy()), out, offset_provider={})
