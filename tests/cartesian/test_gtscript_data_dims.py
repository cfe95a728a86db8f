"""Fields with data dimensions (``Field[IJK, (dtype, (n,))]``, NDSL's 4-D tracer fields) read
element by element with compile-time indices, ``f[i, j, k][n]``, on every backend, compared
with NumPy on random data; the element views are bound without a copy."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import (
    AccessKind,
    GTScriptCallError,
    GTScriptDefinitionError,
    GTScriptSyntaxError,
)
from stencilkit.cartesian.gtscript import FORWARD, IJ, IJK, PARALLEL, Field, computation, interval

F64 = Field[np.float64]
TRACERS = Field[IJK, (np.float64, (4,))]
MATRIX = Field[IJ, (np.float64, (2, 3))]


def test_elements_at_offsets_and_externals(backend, arrays) -> None:
    def pick(q: TRACERS, out: F64):
        from __externals__ import N

        with computation(PARALLEL), interval(...):
            out = max(q[1, 0, 0][N], 0.25) - q[0, 0, -1][0]

    s = gtscript.stencil(backend=backend, definition=pick, externals={"N": 3})
    info = s.field_info["q"]
    assert info.data_dims == (4,) and info.access == AccessKind.READ
    assert tuple(info.boundary) == ((0, 1), (0, 0), (1, 0))
    rng = np.random.default_rng(7)
    q_h, out_h = rng.random((7, 4, 6, 4)), rng.random((7, 4, 6))
    q, out = arrays.put(q_h), arrays.put(out_h)
    s(q, out, origin={"q": (0, 0, 1, 0), "out": (0, 0, 1)}, domain=(6, 4, 5))
    ref = out_h.copy()
    ref[:6, :, 1:] = np.maximum(q_h[1:, :, 1:, 3], 0.25) - q_h[:6, :, :5, 0]
    np.testing.assert_array_equal(arrays.host(out), ref)
    # the fast path NDSL takes after its first call: origins with the data-dim entries
    q_h2 = rng.random((7, 4, 6, 4))
    q2 = arrays.put(q_h2)
    s.run(q=q2, out=out, _origin_={"q": (0, 0, 1, 0), "out": (0, 0, 1)}, _domain_=(6, 4, 5))
    ref[:6, :, 1:] = np.maximum(q_h2[1:, :, 1:, 3], 0.25) - q_h2[:6, :, :5, 0]
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_two_data_dimensions_on_a_2d_field(backend, arrays) -> None:
    def contract(m: MATRIX, out: F64):
        with computation(PARALLEL), interval(...):
            out = m[0, 0][0, 2] * m[0, 0][1, 0]

    s = gtscript.stencil(backend=backend, definition=contract)
    rng = np.random.default_rng(8)
    m_h, out_h = rng.random((3, 5, 2, 3)), rng.random((3, 5, 2))
    m, out = arrays.put(m_h), arrays.put(out_h)
    s(m, out)
    ref = np.broadcast_to((m_h[:, :, 0, 2] * m_h[:, :, 1, 0])[:, :, None], (3, 5, 2))
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_a_wrong_rank_is_refused_before_anything_runs() -> None:
    def pick(q: TRACERS, out: F64):
        with computation(PARALLEL), interval(...):
            out = q[0, 0, 0][1]

    s = gtscript.stencil(backend="numpy", definition=pick)
    out = np.random.default_rng(0).random((3, 3, 3))
    before = out.copy()
    with pytest.raises(GTScriptCallError, match="'q' has 3 dimensions"):
        s(np.zeros((3, 3, 3)), out)
    np.testing.assert_array_equal(out, before)


@pytest.mark.parametrize(
    "body, error, match",
    [
        ("out = q[0, 0, 0][4]", GTScriptSyntaxError, r"data index 4 of 'q' is outside \[0, 4\)"),
        ("out = q[0, 0, 0][0, 1]", GTScriptSyntaxError, r"give 1 data index\(es\), got 2"),
        ("out = q", GTScriptSyntaxError, "has data dimensions: read one element"),
        ("out = q[0, 0, 0][out]", GTScriptDefinitionError, "data index of 'q' must be an integer"),
        # q[0, 0, 0] = out broadcasts out to every element (gt4py's vector assignment)
        ("q[0, 0, 0] = q.T", GTScriptSyntaxError, r"\.T transposes a matrix"),
        ("q[0, 0, 0][1.5] = out", GTScriptSyntaxError, "data index 1.5 is not an integer"),
        ("q[1, 0, 0][1] = out", GTScriptDefinitionError, r"assigned at an offset \(1, 0, 0\)"),
        ("out = q.at(K=1)", GTScriptSyntaxError, "name the element"),
        ("out = out.at(K=1, ddim=[0])", GTScriptSyntaxError, "no data dimensions"),
    ],
)
def test_refused_forms(define, body: str, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        gtscript.stencil(backend="numpy", definition=define(body, {"q": TRACERS, "out": F64}))


def test_writes_of_elements_and_run_time_indices(backend, arrays) -> None:
    """``w[0, 0, 0][1] = ...`` writes one element (its view of the array); ``q[0, 0, 0][idx]``
    with a run-time ``idx`` reads the element it names, ``w[0, 0, 0][idx] += ...`` updates it;
    the other elements are untouched."""

    @gtscript.stencil(backend=backend)
    def pick(q: TRACERS, idx: Field[np.int64], out: F64, w: Field[IJK, (np.float64, (3,))]):
        with computation(PARALLEL), interval(...):
            out = q[0, 0, 0][idx] * 2.0
            w[0, 0, 0][1] = q[0, 0, 0][0] + 1.0
            w[0, 0, 0][idx - 1] += 10.0

    rng = np.random.default_rng(5)
    q, out, w = arrays.random(4, 5, 3, 4), arrays.random(4, 5, 3), arrays.random(4, 5, 3, 3)
    idx_h = rng.integers(1, 4, (4, 5, 3))
    w0 = arrays.host(w)
    pick(q, arrays.put(idx_h), out, w)
    qh = arrays.host(q)
    np.testing.assert_array_equal(
        arrays.host(out), np.take_along_axis(qh, idx_h[..., None], axis=3)[..., 0] * 2.0
    )
    ref = w0.copy()
    ref[..., 1] = qh[..., 0] + 1.0
    sel = (idx_h - 1)[..., None]
    np.put_along_axis(ref, sel, np.take_along_axis(ref, sel, axis=3) + 10.0, axis=3)
    np.testing.assert_array_equal(arrays.host(w), ref)
    assert pick.field_info["w"].access == AccessKind.READ_WRITE
    assert pick.field_info["q"].access == AccessKind.READ


def test_absolute_level_of_an_element(backend, arrays) -> None:
    """``q.at(K=..., ddim=[n])``: element ``n`` at an absolute level (a field value)."""

    @gtscript.stencil(backend=backend)
    def at_level(q: TRACERS, lev: Field[np.int64], out: F64):
        with computation(PARALLEL), interval(...):
            out = q.at(K=lev, ddim=[2]) - q.at(K=0, ddim=[lev % 4])

    rng = np.random.default_rng(6)
    q, out = arrays.random(3, 4, 5, 4), arrays.random(3, 4, 5)
    lev_h = rng.integers(0, 5, (3, 4, 5))
    at_level(q, arrays.put(lev_h), out)
    qh = arrays.host(q)
    a = np.take_along_axis(qh[..., 2], lev_h, axis=2)
    b = np.take_along_axis(np.broadcast_to(qh[:, :, :1, :], qh.shape), (lev_h % 4)[..., None], 3)
    np.testing.assert_array_equal(arrays.host(out), a - b[..., 0])


def test_sizes_written_as_one_bare_integer(backend, arrays) -> None:
    """gt4py's ``(np.int32, (np.int32(3)))`` and ``GlobalTable[(np.float64, (4))]``: the
    parentheses hold one integer, not a tuple; a NumPy integer counts too."""

    @gtscript.stencil(backend=backend)
    def bare(
        out: Field[IJK, np.int32],
        q: Field[IJK, (np.int32, (np.int32(3)))],
        t: gtscript.GlobalTable[(np.float64, (4))],
        w: F64,
    ):
        with computation(PARALLEL), interval(...):
            out = q[0, 0, 0][2] - q[0, 0, 0][0]
            w = t.A[1] * w + t.A[3]

    assert bare.field_info["q"].data_dims == (3,) and bare.field_info["t"].data_dims == (4,)
    rng = np.random.default_rng(11)
    q_h = rng.integers(-50, 50, (4, 3, 5, 3)).astype(np.int32)
    t_h, w_h = rng.standard_normal(4), rng.standard_normal((4, 3, 5))
    out_h = rng.integers(-50, 50, (4, 3, 5)).astype(np.int32)
    out, q, t, w = arrays.put(out_h), arrays.put(q_h), arrays.put(t_h), arrays.put(w_h)
    bare(out, q, t, w, domain=(3, 3, 4))  # the last I plane and K level stay untouched
    ref_out, ref_w = out_h.copy(), w_h.copy()
    ref_out[:3, :, :4] = q_h[:3, :, :4, 2] - q_h[:3, :, :4, 0]
    ref_w[:3, :, :4] = t_h[1] * w_h[:3, :, :4] + t_h[3]
    np.testing.assert_array_equal(arrays.host(out), ref_out)
    np.testing.assert_array_equal(arrays.host(w), ref_w)
    with pytest.raises(ValueError, match="data dimensions 'x' must be integers"):
        Field[IJK, (np.float64, "x")]


def test_an_element_of_a_2d_field_written_level_by_level(backend, arrays) -> None:
    """gt4py's test_data_dimension_1d: a 2-D field's element written in a FORWARD computation
    over K holds the top level's value (the element is bound as a column view)."""

    @gtscript.stencil(backend=backend)
    def d1(a: F64, out: Field[IJ, (np.float64, (2,))]):
        with computation(FORWARD), interval(...):
            out[0, 0][1] = out[0, 0][1] + a

    rng = np.random.default_rng(12)
    a_h, out_h = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 4, 2))
    a, out = arrays.put(a_h), arrays.put(out_h)
    d1(a, out)
    ref = out_h.copy()
    ref[..., 1] += a_h.sum(axis=2)  # element 0 untouched
    np.testing.assert_allclose(arrays.host(out), ref, rtol=1e-14)


def test_a_run_time_index_into_one_element_warns() -> None:
    with pytest.warns(UserWarning, match="Accessing without a Literal is suspicious"):

        @gtscript.stencil(backend="numpy")
        def one(out: Field[IJ, (np.float64, (1,))], index: int):
            with computation(FORWARD), interval(...):
                out[0, 0][index] = 42.0

    out = np.zeros((2, 3, 1))
    one(out, 0)
    np.testing.assert_array_equal(out, 42.0)
