"""Regressions found running pyFV3's dycore stencils against real gt4py 1.2.1
(benchmarks/pyfv3_compare.py), each on every backend against a NumPy reference."""

from __future__ import annotations

import numpy as np

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import (
    FORWARD,
    PARALLEL,
    Field,
    I,
    computation,
    horizontal,
    interval,
    region,
)

F64 = Field[np.float64]
F2 = Field[gtscript.IJ, np.float64]
I2 = Field[gtscript.IJ, np.int64]


@gtscript.function
def _rebinds_arguments(a, b):
    a = a + 1.0
    with horizontal(region[I[0] + 1 :, :]):
        b = b * 2.0
    return a + b


@gtscript.function
def _doubles_first(x, y):
    x = 2.0 * x
    return x - y


def test_function_assigns_its_arguments(backend, arrays) -> None:
    # pyFV3's xppm/yppm bl_br_edges(bl, br, ...) assign bl and br in regions. In gt4py an
    # argument is a value: the callee rebinds its own name, the caller's temporary or field
    # keeps its value (checked on gt4py 1.2.1's numpy backend)
    @gtscript.stencil(backend=backend)
    def st(a: F64, b: F64, c: F64, d: F64, e: F64):
        with computation(PARALLEL), interval(...):
            t = a * 1.0
            c = _rebinds_arguments(t, b)
            d = t
            e = _doubles_first(a, b)

    a, b, c, d, e = (arrays.random(6, 5, 3) for _ in range(5))
    A, B, before = arrays.host(a), arrays.host(b), arrays.host(c)
    st(a, b, c, d, e, origin=(1, 0, 0), domain=(4, 5, 3))
    Bm = B.copy()
    Bm[2:] *= 2.0  # region I[0] + 1: from the second compute column (origin 1)
    ref_c = before.copy()
    ref_c[1:5] = (A + 1.0 + Bm)[1:5]
    np.testing.assert_allclose(arrays.host(c), ref_c, rtol=1e-15)
    np.testing.assert_array_equal(arrays.host(d)[1:5], A[1:5])
    np.testing.assert_allclose(arrays.host(e)[1:5], (2.0 * A - B)[1:5], rtol=1e-15)
    np.testing.assert_array_equal(arrays.host(a), A)  # the API field argument is not written
    np.testing.assert_array_equal(arrays.host(b), B)


def test_parallel_intervals_read_levels_other_intervals_write(backend, arrays) -> None:
    # pyFV3's nh_p_grad.set_k0_and_calc_wk: interval(0, 1) writes pk3 and reads pk3[0, 0, 1]
    # (the old value: a one-level interval is exempt), interval(1, None) reads pk3 at K
    # offsets; the intervals run in order, so level 0 is the new value there (gt4py 1.2.1)
    @gtscript.stencil(backend=backend)
    def st(f: F64, g: F64, w: F64, top: float):
        with computation(PARALLEL):
            with interval(0, 1):
                f = top
                w = f[0, 0, 1] - f
            with interval(1, None):
                w = f[0, 0, 1] - f[0, 0, -1] + g

    nk = 5
    f, g, w = (arrays.random(5, 4, nk + 1) for _ in range(3))
    Fv, G, W = arrays.host(f), arrays.host(g), arrays.host(w)
    st(f, g, w, 7.0, origin=(1, 1, 0), domain=(3, 2, nk))
    c = (slice(1, 4), slice(1, 3))
    ref_f, ref_w = Fv.copy(), W.copy()
    ref_f[(*c, 0)] = 7.0
    ref_w[(*c, 0)] = Fv[(*c, 1)] - 7.0
    ref_w[(*c, slice(1, nk))] = (
        ref_f[(*c, slice(2, nk + 1))] - ref_f[(*c, slice(0, nk - 1))] + G[(*c, slice(1, nk))]
    )
    np.testing.assert_array_equal(arrays.host(f), ref_f)
    np.testing.assert_allclose(arrays.host(w), ref_w, rtol=1e-15)


def test_parallel_interval_reading_what_it_writes_at_a_k_offset_is_refused() -> None:
    import pytest

    from stencilkit.cartesian.definitions import GTScriptDefinitionError

    def st(f: F64, g: F64):
        with computation(PARALLEL), interval(1, None):
            g = f[0, 0, -1]
            f = g + 1.0

    with pytest.raises(GTScriptDefinitionError, match=r"read at a K offset \(-1\) in a PARALLEL"):
        gtscript.stencil(backend="numpy", definition=st)


def test_forward_computation_writes_2d_and_3d_fields(backend, arrays) -> None:
    # pyFV3's moist_cv.te_zsum and fillz.fix_tracer: one FORWARD computation writes 2-D fields
    # with 2-D values (te = te0 - te at the first level, count = 0) beside values of 3-D
    # fields (zsum = zsum + pkz * delp); it was refused ("fields over different axes")
    @gtscript.stencil(backend=backend)
    def st(te: F2, te0: F2, delp: F64, pkz: F64, zsum: F2, count: I2, q: F64):
        with computation(FORWARD):
            with interval(0, 1):
                te = te0 - te
                zsum = pkz * delp
                count = 0
            with interval(1, None):
                zsum = zsum + pkz * delp
                if q < 0.0:
                    count += 1
                q = q + zsum

    ni, nj, nk = 6, 5, 4
    te, te0, zsum = (arrays.random(ni, nj) for _ in range(3))
    delp, pkz, q = (arrays.random(ni, nj, nk) for _ in range(3))
    count = arrays.put(np.full((ni, nj), 7, dtype=np.int64))
    TE, TE0, ZS, DP, PK, Q = (arrays.host(x) for x in (te, te0, zsum, delp, pkz, q))
    st(te, te0, delp, pkz, zsum, count, q, origin=(1, 1, 0), domain=(4, 3, nk))
    c = (slice(1, 5), slice(1, 4))
    ref_te, ref_zs, ref_n, ref_q = TE.copy(), ZS.copy(), np.full((ni, nj), 7), Q.copy()
    ref_te[c] = TE0[c] - TE[c]
    acc = (PK * DP)[(*c, 0)]
    n = np.zeros_like(acc, dtype=np.int64)
    for k in range(1, nk):
        acc = acc + (PK * DP)[(*c, k)]
        n += Q[(*c, k)] < 0.0
        ref_q[(*c, k)] = Q[(*c, k)] + acc
    ref_zs[c], ref_n[c] = acc, n
    np.testing.assert_array_equal(arrays.host(te), ref_te)
    np.testing.assert_allclose(arrays.host(zsum), ref_zs, rtol=1e-14)
    np.testing.assert_array_equal(arrays.host(count), ref_n)
    np.testing.assert_allclose(arrays.host(q), ref_q, rtol=1e-14)


_DEEP = 26
_deep_src = (
    "def _deep_local(a):\n    t = a + a[1, 0, 0]\n"
    + "    t = 0.5 * t + 0.5 * t\n" * _DEEP
    + "    return t[-1, 0, 0]\n"
)


def test_function_locals_read_many_times_build_in_linear_time(backend, arrays, tmp_path) -> None:
    # a gtscript.function local read twice per statement makes a DAG whose tree is 2^depth:
    # moving it to an offset and walking its reads must visit each node once (pyFV3's
    # d_sw.compute_kinetic_energy at hord 8 took 64 s to build, now well under a second)
    import time

    path = tmp_path / "deep_local.py"
    path.write_text(_deep_src)
    ns: dict[str, object] = {}
    exec(compile(_deep_src, str(path), "exec"), ns)
    deep = gtscript.function(ns["_deep_local"])

    def st(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            b = deep(a)

    t0 = time.perf_counter()
    stencil = gtscript.stencil(backend=backend, definition=st, externals={"deep": deep})
    a, b = arrays.random(7, 4, 3), arrays.random(7, 4, 3)
    A, before = arrays.host(a), arrays.host(b)
    stencil(a, b, origin=(1, 0, 0), domain=(5, 4, 3))
    assert time.perf_counter() - t0 < 30.0  # before the fix: 2^26 node visits, minutes
    ref = before.copy()
    ref[1:6] = A[0:5] + A[1:6]  # 0.5 * t + 0.5 * t == t exactly
    np.testing.assert_array_equal(arrays.host(b), ref)
