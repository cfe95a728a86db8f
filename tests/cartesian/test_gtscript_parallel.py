"""PARALLEL computations on every backend against NumPy: offsets, intervals, temporaries and
their extents, conditionals, builtins, 2-D and 1-D fields; the untouched parts of outputs."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import IJ, PARALLEL, Field, K, computation, interval

F64 = Field[np.float64]


def test_offsets_with_origin_and_domain(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def lap(a: F64, out: F64, w: float):
        with computation(PARALLEL), interval(...):
            out = w * (a[1, 0, 0] + a[-1, 0, 0] + a[0, 1, 0] + a[0, -1, 0] - 4.0 * a)

    a, out = arrays.random(9, 8, 5), arrays.random(9, 8, 5)
    before = arrays.host(out)
    lap(a, out, 0.25, origin=(1, 1, 0), domain=(7, 6, 5))
    A = arrays.host(a)
    ref = before.copy()
    ref[1:8, 1:7] = 0.25 * (A[2:9, 1:7] + A[0:7, 1:7] + A[1:8, 2:8] + A[1:8, 0:6] - 4 * A[1:8, 1:7])
    np.testing.assert_array_equal(arrays.host(out), ref)
    assert lap.field_info["a"].boundary == ((1, 1), (1, 1), (0, 0))


def test_default_domain_from_shapes_and_boundary(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def diff(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            out = a[1, 0, 0] - a[0, 0, -1]

    a, out = arrays.random(6, 5, 4), arrays.random(6, 5, 4)
    before = arrays.host(out)
    diff(a, out, origin=(0, 0, 1))  # domain: (6 - 0 - 1, 5, 4 - 1)
    A = arrays.host(a)
    ref = before.copy()
    ref[0:5, :, 1:] = A[1:6, :, 1:] - A[0:5, :, 0:3]
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_every_interval_form(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def levels(out: F64):
        with computation(PARALLEL):
            with interval(0, 1):
                out = 1.0
            with interval(1, 3):
                out = 2.0
            with interval(3, -2):
                out = 3.0
            with interval(-2, -1):
                out = 4.0
            with interval(-1, None):
                out = 5.0
        with computation(PARALLEL), interval(K[0] + 2, K[0] + 3):
            out = out + 10.0

    out = arrays.random(3, 2, 8)
    levels(out)
    got = arrays.host(out)[0, 0]
    np.testing.assert_array_equal(got, [1, 2, 12, 3, 3, 3, 4, 5])
    assert levels.domain_info.min_sequential_axis_size >= 3


def test_temporaries_inlined_and_materialised_with_extents(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def two_steps(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            t = a[1, 0, 0] - a  # inlined: read in this block only
            u = t[0, 1, 0] + t
        with computation(PARALLEL), interval(...):
            out = u[-1, 0, 0] + u[1, 0, 0]  # u read in a later block: materialised on I +-1

    a, out = arrays.random(10, 9, 3), arrays.random(10, 9, 3)
    before = arrays.host(out)
    two_steps(a, out, origin=(2, 1, 0), domain=(6, 6, 3))
    A = arrays.host(a)
    t = A[1:, :] - A[:-1, :]  # t[i] at array index i (i < 9)
    u = t[:, 1:] + t[:, :-1]  # u[i, j] at array (i, j)
    ref = before.copy()
    ref[2:8, 1:7] = u[1:7, 1:7] + u[3:9, 1:7]
    np.testing.assert_allclose(arrays.host(out), ref, rtol=1e-14, atol=1e-14)
    assert two_steps.field_info["a"].boundary == ((1, 2), (0, 1), (0, 0))


def test_field_if_ternary_and_scalar_if(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def cond(a: F64, b: F64, out: F64, flag: bool):
        with computation(PARALLEL), interval(...):
            if a > 0.0:
                out = a * 2.0
                b = out + 1.0  # sees the branch's new out
            elif a < -0.5:
                out = -a
            if flag:
                b = b + 100.0
            out = out if out > 1.0 else 0.0

    a, b, out = (arrays.random(5, 4, 3) for _ in range(3))
    A, B, O = (arrays.host(x) for x in (a, b, out))
    cond(a, b, out, True)
    o = np.where(A > 0, 2 * A, np.where(A < -0.5, -A, O))
    bb = np.where(A > 0, o + 1, B) + 100.0
    o = np.where(o > 1, o, 0.0)
    np.testing.assert_array_equal(arrays.host(out), o)
    np.testing.assert_array_equal(arrays.host(b), bb)


def test_math_builtins_and_promotion(backend, arrays) -> None:
    from stencilkit.cartesian.gtscript import abs, exp, floor, max, min, mod, sqrt

    @gtscript.stencil(backend=backend)
    def maths(a: Field[np.float32], i: Field[np.int64], out: Field[np.float32], out64: F64):
        with computation(PARALLEL), interval(...):
            out = sqrt(abs(a)) + min(a, 0.5) * max(a, -0.5) + mod(a, 0.3)
            out64 = exp(a * 0.1) + floor(a) + i / 2 + a % 2.0

    a = arrays.random(4, 3, 2, dtype=np.float32)
    i = arrays.put(np.random.default_rng(1).integers(-9, 9, (4, 3, 2)))
    out = arrays.random(4, 3, 2, dtype=np.float32)
    out64 = arrays.random(4, 3, 2)
    maths(a, i, out, out64)
    A = arrays.host(a)
    Ii = arrays.host(i)
    # 0.5 and 0.3 are float64 literals (not weak): the float32 field is upcast, the result cast back
    A64 = A.astype(np.float64)
    ref = (np.sqrt(np.abs(A)) + np.minimum(A64, 0.5) * np.maximum(A64, -0.5) + np.remainder(A64, 0.3)).astype(np.float32)
    np.testing.assert_allclose(arrays.host(out), ref, rtol=1e-6)
    # int64 / int64 literal divides in float32 (gt4py 1.2.3)
    ref64 = np.exp(A64 * 0.1) + np.floor(A) + (Ii.astype(np.float32) / np.float32(2)) + np.remainder(A64, 2.0)
    np.testing.assert_allclose(arrays.host(out64), ref64, rtol=1e-6)


def test_2d_and_1d_fields(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def mixed(a: F64, s: Field[IJ, np.float64], k1: Field[K, np.float64], out: F64, s_out: Field[IJ, np.float64]):
        with computation(PARALLEL), interval(...):
            out = a * s + k1[1]
        with computation(PARALLEL), interval(0, 1):
            s_out = 2.0 * s[1, 0]

    a, out = arrays.random(5, 4, 3), arrays.random(5, 4, 3)
    s, s_out = arrays.random(6, 4), arrays.random(6, 4)
    k1 = arrays.random(4)
    before = arrays.host(s_out)
    mixed(a, s, k1, out, s_out, domain=(5, 4, 3))
    A, S, K1 = arrays.host(a), arrays.host(s), arrays.host(k1)
    np.testing.assert_array_equal(arrays.host(out), A * S[:5, :, None] + K1[None, None, 1:4])
    ref = before.copy()
    ref[:5] = 2.0 * S[1:6]
    np.testing.assert_array_equal(arrays.host(s_out), ref)


def test_round_half_even_and_away_from_zero(backend, arrays) -> None:
    from stencilkit.cartesian.gtscript import round, round_away_from_zero

    @gtscript.stencil(backend=backend)
    def rounding(a: F64, even: F64, away: F64):
        with computation(PARALLEL), interval(...):
            even = round(a)
            away = round_away_from_zero(a)

    vals = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, -0.4, 3.7, -3.7, 1e17, 2.0])
    a = arrays.put(np.tile(vals, (2, 1, 1)).reshape(2, 1, -1))
    even, away = arrays.random(2, 1, vals.size), arrays.random(2, 1, vals.size)
    rounding(a, even, away)
    A = arrays.host(a)
    np.testing.assert_array_equal(arrays.host(even), np.round(A))
    ref_away = np.where(np.abs(A - np.trunc(A)) >= 0.5, np.trunc(A) + np.sign(A), np.trunc(A))
    np.testing.assert_array_equal(arrays.host(away), ref_away)
    assert arrays.host(away)[0, 0, 0] == 1.0 and arrays.host(away)[0, 0, 3] == -1.0


@pytest.mark.parametrize("name", ["numpy", "gt:cpu_ifirst", "gt:cpu_kfirst", "dace:cpu", "dace:cpu_KJI"])
def test_storages_of_every_cpu_layout(name: str) -> None:
    from stencilkit.cartesian import storage

    @gtscript.stencil(backend=name)
    def shifted(a: F64, b: F64):
        with computation(PARALLEL), interval(1, None):
            b = a[1, 0, 0] + a[0, -1, -1]

    data = np.random.default_rng(5).standard_normal((7, 6, 4))
    a = storage.from_array(data, np.float64, backend=name, aligned_index=(1, 1, 0))
    b = storage.zeros((7, 6, 4), np.float64, backend=name, aligned_index=(1, 1, 0))
    shifted(a, b, origin=(1, 1, 0), domain=(5, 5, 4))
    ref = np.zeros((7, 6, 4))
    ref[1:6, 1:6, 1:] = data[2:7, 1:6, 1:] + data[1:6, 0:5, 0:3]
    np.testing.assert_array_equal(np.asarray(b), ref)
