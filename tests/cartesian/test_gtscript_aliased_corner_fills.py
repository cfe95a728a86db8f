"""One field passed as an input and as an output, the input read at offsets: pyFV3's
``c_sw.fill_corners_delp_pt_w(delp, pt, w, delp, pt, w)`` fills the halo corners of each field
from the field itself (NDSL's ``fill_corners_2cells_x``). gt4py's statements see the input's
values before the output is written; the compiled backends read such an input from a copy made
at the call (they refused it: "argument 'delp_in' is the same field as output 'delp_out'").
Where the statements read the field after another output wrote it (NDSL's
``fill_corners_dgrid_defn(x, x, y, y)``), the call runs in gt4py's statement order on the
embedded evaluator. Every backend against a NumPy reference on random data, untouched points
checked."""

from __future__ import annotations

import numpy as np

from stencilkit.cartesian import gtscript
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


# NDSL's fill_corners_2cells_mult_x, south-west and north-east corners, as written there
@gtscript.function
def corners_x(q, q_corner, sw_mult, ne_mult):
    from __externals__ import i_end, i_start, j_end, j_start

    with horizontal(region[i_start - 1, j_start - 1]):
        q = sw_mult * q_corner[0, 1, 0]
    with horizontal(region[i_start - 2, j_start - 1]):
        q = sw_mult * q_corner[1, 2, 0]
    with horizontal(region[i_end + 1, j_end + 1]):
        q = ne_mult * q_corner[0, -1, 0]
    with horizontal(region[i_end + 2, j_end + 1]):
        q = ne_mult * q_corner[-1, -2, 0]
    return q


@gtscript.function
def fill_x(q):
    return corners_x(q, q, 1.0, 1.0)


def fill_two(a_in: F64, b_in: F64, a_out: F64, b_out: F64):
    with computation(PARALLEL), interval(...):
        a_out = fill_x(a_in)
        b_out = fill_x(b_in)


H = 2  # halo points; the compute domain is [H, n - H)


def reference(q: np.ndarray) -> np.ndarray:
    out, n, m = q.copy(), q.shape[0], q.shape[1]
    i0, j0, i1, j1 = H, H, n - H - 1, m - H - 1
    out[i0 - 1, j0 - 1] = q[i0 - 1, j0]
    out[i0 - 2, j0 - 1] = q[i0 - 1, j0 + 1]
    out[i1 + 1, j1 + 1] = q[i1 + 1, j1]
    out[i1 + 2, j1 + 1] = q[i1 + 1, j1 - 1]
    return out


def build(backend: str):
    externals = {"i_start": I[0] + H, "j_start": J[0] + H, "i_end": I[-1] - H, "j_end": J[-1] - H}
    return gtscript.stencil(backend=backend, definition=fill_two, externals=externals)


def test_corner_fill_in_place(backend, arrays) -> None:
    shape = (9, 8, 3)
    rng = np.random.default_rng(2)
    a0, b0 = rng.standard_normal(shape), rng.standard_normal(shape)
    s = build(backend)
    for _ in range(2):  # the second call: the plan's fast path
        a, b = arrays.put(a0), arrays.put(b0)
        s(a, b, a, b, origin=(0, 0, 0), domain=shape)
        np.testing.assert_array_equal(arrays.host(a), reference(a0))
        np.testing.assert_array_equal(arrays.host(b), reference(b0))
    a, b, c, d = (arrays.put(x) for x in (a0, b0, a0, b0))  # separate outputs: the same
    s(a, b, c, d, origin=(0, 0, 0), domain=shape)
    np.testing.assert_array_equal(arrays.host(c), reference(a0))
    np.testing.assert_array_equal(arrays.host(a), a0)


# the south-west corner of NDSL's fill_corners_dgrid_defn, as written there
def dgrid(x_in: F64, x_out: F64, y_in: F64, y_out: F64, mysign: float):
    from __externals__ import i_start, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1, j_start - 1]):
            x_out = mysign * y_in[0, 1, 0]
            y_out = mysign * x_in[1, 0, 0]
        with horizontal(region[i_start - 1, j_start - 2]):
            x_out = mysign * y_in[-1, 2, 0]
            y_out = mysign * x_in[2, 1, 0]
        with horizontal(region[i_start - 2, j_start - 1]):
            x_out = mysign * y_in[1, 2, 0]
            y_out = mysign * x_in[2, -1, 0]


def test_dgrid_corner_fill_in_place(backend, arrays) -> None:
    shape = (7, 7, 2)
    rng = np.random.default_rng(4)
    x0, y0 = rng.standard_normal(shape), rng.standard_normal(shape)
    x, y = x0.copy(), y0.copy()  # gt4py's statement order, one region after the other
    for i, j, (xi, xj), (yi, yj) in (
        (H - 1, H - 1, (0, 1), (1, 0)),
        (H - 1, H - 2, (-1, 2), (2, 1)),
        (H - 2, H - 1, (1, 2), (2, -1)),
    ):
        x[i, j] = -1.0 * y[i + xi, j + xj]
        y[i, j] = -1.0 * x[i + yi, j + yj]
    s = gtscript.stencil(
        backend=backend, definition=dgrid, externals={"i_start": I[0] + H, "j_start": J[0] + H}
    )
    for _ in range(2):
        xd, yd = arrays.put(x0), arrays.put(y0)
        s(xd, xd, yd, yd, -1.0, origin=(0, 0, 0), domain=shape)
        np.testing.assert_array_equal(arrays.host(xd), x)
        np.testing.assert_array_equal(arrays.host(yd), y)


def test_an_input_read_after_its_output_is_written_runs_in_statement_order(backend, arrays) -> None:
    def then_read(a_in: F64, a_out: F64, b_out: F64):
        with computation(PARALLEL), interval(...):
            a_out = a_in[1, 0, 0]
        with computation(PARALLEL), interval(...):
            b_out = a_in[0, 1, 0]

    s = gtscript.stencil(backend=backend, definition=then_read)
    a0 = np.random.default_rng(3).standard_normal((5, 5, 2))
    a, b = arrays.put(a0), arrays.put(np.zeros((5, 5, 2)))
    s(a, a, b, origin=(0, 0, 0), domain=(4, 4, 2))
    want_a = a0.copy()
    want_a[:4, :4] = a0[1:5, :4]
    want_b = np.zeros((5, 5, 2))
    want_b[:4, :4] = want_a[:4, 1:5]
    np.testing.assert_array_equal(arrays.host(a), want_a)
    np.testing.assert_array_equal(arrays.host(b), want_b)
