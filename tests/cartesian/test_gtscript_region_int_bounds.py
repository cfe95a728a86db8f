"""Plain int region bounds, as gt4py reads them: ``c >= 0`` is ``c`` points after the compute
domain's first point, ``c < 0`` is ``-c`` points before its end (a Python slice of the compute
domain); pyFV3's fv_tp_2d writes its fluxes in ``region[:, :-1]`` and ``region[:-1, :]``.

Every backend against a NumPy reference on random data, the points no region writes checked
to keep their values."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptSyntaxError
from stencilkit.cartesian.gtscript import (
    PARALLEL,
    Field,
    I,
    J,
    computation,
    horizontal,
    interval,
    region,
)

F64 = Field[np.float64]
ORIGIN, DOMAIN = (2, 1, 0), (9, 8, 3)


def _compute(a: np.ndarray) -> tuple[slice, slice]:
    return slice(ORIGIN[0], ORIGIN[0] + DOMAIN[0]), slice(ORIGIN[1], ORIGIN[1] + DOMAIN[1])


def test_fv_tp_2d_flux_regions(backend, arrays) -> None:
    """pyFV3's ``final_fluxes``: x flux on all rows but the last, y flux on all but the last
    column of the compute domain."""

    @gtscript.stencil(backend=backend)
    def fluxes(qa: F64, qb: F64, ux: F64, uy: F64, fx: F64, fy: F64):
        with computation(PARALLEL), interval(...):
            with horizontal(region[:, :-1]):
                fx = 0.5 * (qa + qb) * ux
            with horizontal(region[:-1, :]):
                fy = 0.5 * (qa - qb) * uy

    qa, qb, ux, uy, fx, fy = (arrays.random(13, 11, 3) for _ in range(6))
    before_x, before_y = arrays.host(fx), arrays.host(fy)
    fluxes(qa, qb, ux, uy, fx, fy, origin=ORIGIN, domain=DOMAIN)
    QA, QB, UX, UY = (arrays.host(x) for x in (qa, qb, ux, uy))
    i, j = _compute(QA)
    rx, ry = before_x.copy(), before_y.copy()
    jx = slice(j.start, j.stop - 1)
    ix = slice(i.start, i.stop - 1)
    rx[i, jx] = (0.5 * (QA + QB) * UX)[i, jx]
    ry[ix, j] = (0.5 * (QA - QB) * UY)[ix, j]
    np.testing.assert_array_equal(arrays.host(fx), rx)
    np.testing.assert_array_equal(arrays.host(fy), ry)


def test_positive_negative_single_and_mixed_bounds(backend, arrays) -> None:
    @gtscript.stencil(backend=backend, externals={"lo": 1, "i_end": I[-1]})
    def bounds(a: F64, out: F64):
        from __externals__ import i_end, lo

        with computation(PARALLEL), interval(...):
            with horizontal(region[3:-3, 3:-3]):
                out = a + 1.0
            with horizontal(region[2, :], region[-3, lo:]):  # single ints; an int external
                out = out * 2.0
            with horizontal(region[I[0] + 1 : -6, J[-1] - 1 :], region[-2:i_end, 0:2]):
                out = out - a

    a, out = arrays.random(13, 11, 3), arrays.random(13, 11, 3)
    before = arrays.host(out)
    bounds(a, out, origin=ORIGIN, domain=DOMAIN)
    A = arrays.host(a)
    oi, oj = ORIGIN[0], ORIGIN[1]
    n, m = DOMAIN[0], DOMAIN[1]
    ref = before.copy()
    ref[oi + 3 : oi + n - 3, oj + 3 : oj + m - 3] = A[oi + 3 : oi + n - 3, oj + 3 : oj + m - 3] + 1
    ref[oi + 2, oj : oj + m] *= 2.0
    ref[oi + n - 3, oj + 1 : oj + m] *= 2.0
    ref[oi + 1 : oi + n - 6, oj + m - 2 : oj + m] -= A[oi + 1 : oi + n - 6, oj + m - 2 : oj + m]
    # -2 : I[-1] is the last-but-one point only (I[-1] is exclusive as an upper bound)
    ref[oi + n - 2, oj : oj + 2] -= A[oi + n - 2, oj : oj + 2]
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_int_bounds_on_a_temporary_reach_into_the_halo(backend, arrays) -> None:
    """``region[:1, :]`` on a temporary read at I - 1: the open lower side covers the halo
    column the consumer needs, the int upper bound stops after the first compute column."""

    @gtscript.stencil(backend=backend)
    def halo(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            t = a
            with horizontal(region[:1, :]):
                t = 10.0 * a
        with computation(PARALLEL), interval(...):
            out = t[-1, 0, 0]

    a, out = arrays.random(13, 11, 3), arrays.random(13, 11, 3)
    before = arrays.host(out)
    halo(a, out, origin=ORIGIN, domain=DOMAIN)
    A = arrays.host(a)
    t = A.copy()
    t[: ORIGIN[0] + 1] *= 10.0
    i, j = _compute(A)
    ref = before.copy()
    ref[i, j] = t[i.start - 1 : i.stop - 1, j]
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_region_index_minus_one_is_refused_with_the_fix() -> None:
    with pytest.raises(GTScriptSyntaxError, match=r"I\[-1\] for the last compute point"):

        @gtscript.stencil(backend="numpy")
        def last(a: F64):
            with computation(PARALLEL), interval(...):
                with horizontal(region[-1, :]):
                    a = 0.0


def test_a_float_bound_is_refused() -> None:
    with pytest.raises(GTScriptSyntaxError, match="is not a bound along J"):

        @gtscript.stencil(backend="numpy")
        def flt(a: F64):
            with computation(PARALLEL), interval(...):
                with horizontal(region[:, :1.5]):
                    a = 0.0
