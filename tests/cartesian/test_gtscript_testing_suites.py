"""``gt4py.cartesian.testing``: StencilTestSuite classes of our own collect, build and check
their stencils on every backend against their NumPy validation; a wrong validation, a write
outside the expected points and a malformed suite are caught."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import testing as gt_testing
from stencilkit.cartesian.gtscript import BACKWARD, FORWARD, PARALLEL, computation, interval
from stencilkit.cartesian.testing import suites

BACKENDS = ["numpy", "gt:cpu_ifirst", pytest.param("gt:gpu", marks=pytest.mark.gpu)]


class TestLaplacianHalo(gt_testing.StencilTestSuite):
    """A 5-point Laplacian scaled by a parameter: the input is read in a halo of 1 in I and J."""

    dtypes = {("phi",): (np.float64, np.float32), ("lap",): np.float64, ("alpha",): np.float64}
    domain_range = [(2, 9), (2, 9), (1, 4)]
    backends = BACKENDS
    max_examples = 15
    symbols = dict(
        phi=gt_testing.field(in_range=(-5, 5), boundary=[(1, 1), (1, 1), (0, 0)]),
        lap=gt_testing.field(in_range=(-5, 5), extent=[(0, 0), (0, 0), (0, 0)]),
        alpha=gt_testing.parameter(in_range=(0.5, 2.0)),
    )

    def definition(phi, lap, *, alpha):
        with computation(PARALLEL), interval(...):
            lap = alpha * (phi[1, 0, 0] + phi[-1, 0, 0] + phi[0, 1, 0] + phi[0, -1, 0] - 4.0 * phi)

    def validation(phi, lap, *, alpha, domain, origin):
        c = phi[1:-1, 1:-1, :]
        lap[...] = alpha * (phi[2:, 1:-1] + phi[:-2, 1:-1] + phi[1:-1, 2:] + phi[1:-1, :-2] - 4 * c)


class TestColumnScanExternal(gt_testing.StencilTestSuite):
    """A FORWARD running sum then a BACKWARD pass, with an external taking two values (a build
    each) and a K-only field."""

    dtypes = (np.float64,)
    domain_range = [(1, 5), (1, 5), (2, 7)]
    backends = BACKENDS
    max_examples = 15
    symbols = dict(
        SCALE=gt_testing.global_name(one_of=(1.0, -3.0)),
        src=gt_testing.field(in_range=(-1, 1), boundary=[(0, 0), (0, 0), (0, 0)]),
        weight=gt_testing.field(in_range=(1, 2), axes="K", boundary=[(0, 0), (0, 0), (0, 0)]),
        acc=gt_testing.field(in_range=(-1, 1), boundary=[(0, 0), (0, 0), (0, 0)]),
    )

    def definition(src, weight, acc):
        from __externals__ import SCALE

        with computation(FORWARD):
            with interval(0, 1):
                acc = SCALE * src
            with interval(1, None):
                acc = acc[0, 0, -1] + SCALE * src * weight
        with computation(BACKWARD), interval(0, -1):
            acc = acc + 0.5 * acc[0, 0, 1]

    def validation(src, weight, acc, *, domain, origin):
        acc[:, :, 0] = SCALE * src[:, :, 0]
        for k in range(1, domain[2]):
            acc[:, :, k] = acc[:, :, k - 1] + SCALE * src[:, :, k] * weight[k]
        for k in range(domain[2] - 2, -1, -1):
            acc[:, :, k] = acc[:, :, k] + 0.5 * acc[:, :, k + 1]


class TestDataDimsAndNone(gt_testing.StencilTestSuite):
    """A field with a data dimension, an IJ field, and an optional field passed as None."""

    dtypes = {"vec": np.float64, "plane": np.float64, "out": np.float64, "unused": np.float64}
    domain_range = [(1, 6), (1, 6), (1, 3)]
    backends = BACKENDS
    max_examples = 10
    symbols = dict(
        vec=gt_testing.field(in_range=(-3, 3), data_dims=(2,), boundary=[(0, 0), (0, 0), (0, 0)]),
        plane=gt_testing.field(in_range=(1, 4), axes="IJ", boundary=[(0, 0), (0, 0), (0, 0)]),
        out=gt_testing.field(in_range=(-3, 3), boundary=[(0, 0), (0, 0), (0, 0)]),
        unused=gt_testing.none(),
    )

    def definition(vec, plane, out, unused=None):
        with computation(PARALLEL), interval(...):
            out = vec[0, 0, 0][0] * plane - vec[0, 0, 0][1]

    def validation(vec, plane, out, unused=None, *, domain, origin):
        out[...] = vec[..., 0] * plane[:, :, None] - vec[..., 1]


def test_cases_are_gt4pys_ids() -> None:
    ids = [t["id"] for t in TestColumnScanExternal.tests]
    assert "numpy_SCALE_1.0_SCALE_float64_src_float64_weight_float64_acc_float64" in ids
    assert len(ids) == 2 * len(BACKENDS)  # one build per value of SCALE and backend
    assert len(TestLaplacianHalo.tests) == 2 * len(BACKENDS)  # phi float64 and float32
    assert TestLaplacianHalo.origin == (1, 1, 0)


def _case(cls: type, backend: str = "numpy") -> dict:
    return next(t for t in cls.tests if t["backend"] == backend)


def test_a_wrong_validation_fails() -> None:
    class Wrong(gt_testing.StencilTestSuite):
        dtypes = (np.float64,)
        domain_range = [(3, 3), (3, 3), (2, 2)]
        backends = ["numpy"]
        symbols = dict(
            a=gt_testing.field(in_range=(1, 2), boundary=[(0, 0), (0, 0), (0, 0)]),
            b=gt_testing.field(in_range=(1, 2), boundary=[(0, 0), (0, 0), (0, 0)]),
        )

        def definition(a, b):
            with computation(PARALLEL), interval(...):
                b = 2.0 * a

        def validation(a, b, *, domain, origin):
            b[...] = 2.0 * a + 1e-3  # off by more than the tolerance

    test = _case(Wrong)
    impl = suites._build(Wrong, test)
    with pytest.raises(AssertionError, match="Wrong data in output field 'b'"):
        suites._run_case(Wrong, test, impl, (3, 3, 2), 7, {})


def test_a_write_into_the_halo_is_caught() -> None:
    """The whole arrays are compared: a validation that writes the halo too (as a stencil
    writing outside its domain would) differs from the stencil's result there."""

    class HaloWrite(gt_testing.StencilTestSuite):
        dtypes = (np.float64,)
        domain_range = [(3, 3), (3, 3), (2, 2)]
        backends = ["numpy"]
        symbols = dict(
            a=gt_testing.field(in_range=(1, 2), boundary=[(1, 1), (0, 0), (0, 0)]),
            b=gt_testing.field(in_range=(1, 2), boundary=[(0, 0), (0, 0), (0, 0)]),
        )

        def definition(a, b):
            with computation(PARALLEL), interval(...):
                b = a[1, 0, 0] - a[-1, 0, 0]

        def validation(a, b, *, domain, origin):
            b[...] = a[2:] - a[:-2]
            a[0] = 0.0  # a point of the halo the stencil never writes

    test = _case(HaloWrite)
    impl = suites._build(HaloWrite, test)
    with pytest.raises(AssertionError, match="output field 'a'"):
        suites._run_case(HaloWrite, test, impl, (3, 3, 2), 3, {})


def test_a_declared_halo_larger_than_read_fails_generation() -> None:
    class TooWide(gt_testing.StencilTestSuite):
        dtypes = (np.float64,)
        domain_range = [(3, 3), (3, 3), (2, 2)]
        backends = ["numpy"]
        symbols = dict(
            a=gt_testing.field(in_range=(1, 2), boundary=[(2, 2), (0, 0), (0, 0)]),
            b=gt_testing.field(in_range=(1, 2), boundary=[(0, 0), (0, 0), (0, 0)]),
        )

        def definition(a, b):
            with computation(PARALLEL), interval(...):
                b = a[1, 0, 0]

        def validation(a, b, *, domain, origin):
            b[...] = a[3:-1]

    with pytest.raises(AssertionError, match="less than the declared boundary"):
        suites._build(TooWide, _case(TooWide))


def test_malformed_suites_are_refused() -> None:
    with pytest.raises(ValueError, match="disagree at parameter 'a'"):

        class Mismatch(gt_testing.StencilTestSuite):
            dtypes = (np.float64,)
            domain_range = [(1, 2)] * 3
            backends = ["numpy"]
            symbols = dict(a=gt_testing.field(in_range=(0, 1), boundary=[(0, 0)] * 3))

            def definition(a):
                pass

            def validation(b, *, domain, origin):
                pass

    with pytest.raises(TypeError, match="lacks backends"):

        class NoBackends(gt_testing.StencilTestSuite):
            dtypes = (np.float64,)
            domain_range = [(1, 2)] * 3
            symbols = {}

            def definition():
                pass

            def validation(*, domain, origin):
                pass

    with pytest.raises(ValueError, match="gives no dtype to a"):

        class NoDtype(gt_testing.StencilTestSuite):
            dtypes = {"b": np.float64}
            domain_range = [(1, 2)] * 3
            backends = ["numpy"]
            symbols = dict(a=gt_testing.field(in_range=(0, 1), boundary=[(0, 0)] * 3))

            def definition(a):
                pass

            def validation(a, *, domain, origin):
                pass


def test_symbol_descriptors() -> None:
    f = gt_testing.field(in_range=(0, 1), extent=[(-2, 1), (0, 0), (0, 3)])
    assert f.boundary == ((2, 1), (0, 0), (0, 3))
    with pytest.raises(ValueError, match="disagree"):
        gt_testing.field(in_range=(0, 1), boundary=[(1, 1)] * 3, extent=[(0, 0)] * 3)
    with pytest.raises(TypeError, match="exactly one"):
        gt_testing.global_name(one_of=(1,), in_range=(0, 1))
    assert gt_testing.global_name(singleton=print).values == (print,)
    assert gt_testing.parameter(one_of=(1, 2)).values == (1, 2)
