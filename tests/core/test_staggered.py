"""Staggered dimensions (gt4py ADR 0026): half-integer shifts between a dimension and its
staggered counterpart."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.core.staggered import as_non_staggered, flip_staggered, is_staggered

X = gtx.Dimension("X")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
XH = flip_staggered(X)
ZH = flip_staggered(Z)
FX = Field[Dims[X], float64]
FXH = Field[Dims[XH], float64]
FXZ = Field[Dims[X, Z], float64]
FXZH = Field[Dims[X, ZH], float64]


@gtx.field_operator
def face_avg(c: FX) -> FXH:
    return 0.5 * (c(XH - 0.5) + c(XH + 0.5))


@gtx.field_operator
def divergence(f: FXH) -> FX:
    return f(X + 0.5) - f(X - 0.5)


@gtx.field_operator
def half_levels(c: FXZ) -> FXZH:
    return c(ZH + 0.5) - c(ZH - 0.5) + c(ZH + 1.5)


@gtx.field_operator
def back_to_full(w: FXZH, c: FXZ) -> FXZ:
    return w(Z + 0.5) * c + w(Z - 0.5) + w(ZH + 1)(Z - 0.5)


def test_helpers() -> None:
    assert XH.value == "_StaggeredX" and XH.kind == X.kind
    assert is_staggered(XH) and not is_staggered(X)
    assert flip_staggered(XH) == X and as_non_staggered(XH) == X and as_non_staggered(X) == X
    assert ZH.kind is gtx.DimensionKind.VERTICAL


def test_gt4py_example(case) -> None:
    @gtx.program(backend=case.backend)
    def run(c: FX, out: FXH):
        face_avg(c, out=out, domain={XH: (1, 4)})

    out = case.field(gtx.domain({XH: (1, 4)}), np.full(3, -7.0))
    run(case.field([X], np.array([1.0, 2, 4, 8])), out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), [1.5, 3, 6])


def test_divergence_of_faces(case, rng) -> None:
    f = rng.standard_normal(8)  # faces 0..7 around cells 0..6
    od = rng.standard_normal(7)

    @gtx.program(backend=case.backend)
    def run(f: FXH, out: FX):
        divergence(f, out=out, domain={X: (1, 7)})

    out = case.field([X], od)
    run(case.field(gtx.domain({XH: (0, 8)}), f), out, offset_provider={})
    expected = od.copy()
    expected[1:7] = f[2:8] - f[1:7]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


def test_vertical_half_levels_both_ways(case, rng) -> None:
    nx, nz = 5, 6
    c = rng.standard_normal((nx, nz))
    w = rng.standard_normal((nx, nz + 1))
    o1, o2 = rng.standard_normal((nx, nz + 1)), rng.standard_normal((nx, nz))

    @gtx.program(backend=case.backend)
    def run(c: FXZ, w: FXZH, o1: FXZH, o2: FXZ):
        half_levels(c, out=o1, domain={X: (0, nx), ZH: (1, nz - 1)})
        back_to_full(w, c, out=o2, domain={X: (0, nx), Z: (0, nz - 1)})

    f1 = case.field([X, ZH], o1)
    f2 = case.field([X, Z], o2)
    run(case.field([X, Z], c), case.field([X, ZH], w), f1, f2, offset_provider={})
    e1 = o1.copy()
    for k in range(1, nz - 1):  # half level k lies between full levels k-1 and k
        e1[:, k] = c[:, k] - c[:, k - 1] + c[:, k + 1]
    e2 = o2.copy()
    for k in range(nz - 1):
        e2[:, k] = w[:, k + 1] * c[:, k] + w[:, k] + w[:, k + 1]
    np.testing.assert_allclose(f1.asnumpy(), e1, rtol=1e-14)
    np.testing.assert_allclose(f2.asnumpy(), e2, rtol=1e-14)


def test_out_of_bounds_staggered_read_is_refused(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def run(c: FX, out: FXH):
        face_avg(c, out=out, domain={XH: (0, 4)})  # face 0 reads cell -1

    out = case.field(gtx.domain({XH: (0, 5)}), np.zeros(5))
    with pytest.raises(gtx.StencilValueError, match="reads field 'c' along X"):
        run(case.field([X], rng.standard_normal(4)), out, offset_provider={})


def test_invalid_offsets() -> None:
    with pytest.raises(
        gtx.StencilTypeError, match=r"Invalid offset '0\.25' for a Cartesian shift of dimension 'X'"
    ):

        @gtx.field_operator
        def quarter(f: FXH) -> FX:
            return f(X + 0.25)

    with pytest.raises(gtx.StencilTypeError, match="literal right-hand side"):

        @gtx.field_operator
        def variable(f: FXH, n: float64) -> FX:
            return f(X + n)

    with pytest.raises(gtx.StencilTypeError, match="reads a field over _StaggeredX"):

        @gtx.field_operator
        def wrong_field(c: FX) -> FX:
            return c(X + 0.5)


def test_a_dimension_and_its_staggered_counterpart_do_not_combine() -> None:
    with pytest.raises(
        gtx.StencilTypeError, match="staggered counterpart must not appear together"
    ):

        @gtx.field_operator
        def mixed(c: FX, f: FXH) -> FX:
            return c + f
