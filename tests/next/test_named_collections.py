"""Named collections (gt4py.next): NamedTuple and dataclass values as parameters, results,
program arguments and outputs, and scan carries."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32

X = gtx.Dimension("X")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
F = Field[Dims[X, Z], float64]
FI = Field[Dims[X, Z], int32]
NX, NZ = 6, 4


class Wind(NamedTuple):
    u: F
    v: F


@dataclasses.dataclass
class Polar:
    speed: F
    angle: F


@dataclasses.dataclass
class Nested:
    wind: Wind
    scale: float64


class Acc(NamedTuple):
    total: float
    count: int32
    started: bool


@gtx.field_operator
def to_polar(w: Wind) -> Polar:
    s = gtx.sqrt(w.u * w.u + w.v * w.v)
    return Polar(angle=w.v - w.u, speed=s)


@gtx.field_operator
def norm1(w: Wind) -> F:
    u, v = w
    return abs(u) + abs(v)


@gtx.field_operator
def pick(m: Field[Dims[X, Z], bool], a: Wind, b: Wind) -> Wind:
    return gtx.where(m, a, b)


@gtx.field_operator
def speed_of(w: Wind) -> F:
    return to_polar(w).speed * 2.0


@gtx.field_operator
def scaled(n: Nested) -> Wind:
    return Wind(n.wind.u * n.scale, v=n.wind.v)


@gtx.field_operator
def choose(flag: bool, a: Wind) -> Wind:
    return Wind(a.v, a.u) if flag else Wind(u=a.u, v=a.v)


@gtx.scan_operator(axis=Z, forward=True, init=Acc(0.0, 0, False))
def accumulate(state: Acc, x: float) -> Acc:
    return Acc(total=state.total + x, count=state.count + 1, started=True)


@gtx.field_operator
def running(x: F) -> F:
    return accumulate(x).total


@gtx.field_operator
def running_both(x: F) -> tuple[F, FI]:
    total, count, _ = accumulate(x)
    return total, count


@gtx.program
def prog(w: Wind, out: Polar, n: int32):
    to_polar(w, out=out, domain={X: (0, n), Z: (0, NZ)})


def _data(rng: np.random.Generator, k: int) -> list[np.ndarray]:
    return [rng.standard_normal((NX, NZ)) for _ in range(k)]


def test_parameters_attributes_construction_and_program_outputs(case, rng) -> None:
    u, v, s0, a0 = _data(rng, 4)
    out = Polar(case.field([X, Z], s0), case.field([X, Z], a0))
    prog.with_backend(case.backend)(
        Wind(case.field([X, Z], u), case.field([X, Z], v)), out, NX - 1, offset_provider={}
    )
    es, ea = s0.copy(), a0.copy()
    es[: NX - 1] = np.sqrt(u * u + v * v)[: NX - 1]
    ea[: NX - 1] = (v - u)[: NX - 1]
    np.testing.assert_allclose(out.speed.asnumpy(), es, rtol=1e-14)
    np.testing.assert_allclose(out.angle.asnumpy(), ea, rtol=1e-14)


def test_unpacking_where_nesting_and_calls(case, rng) -> None:
    u, v, u2, v2, o1, o2, o3, o4 = _data(rng, 8)
    m = rng.random((NX, NZ)) < 0.5

    @gtx.program(backend=case.backend)
    def run(
        w: Wind, w2: Wind, m: Field[Dims[X, Z], bool], n: Nested, r1: F, r2: Wind, r3: F, r4: Wind
    ):
        norm1(w, out=r1)
        pick(m, w, w2, out=r2)
        speed_of(w, out=r3)
        scaled(n, out=r4)

    f = lambda a: case.field([X, Z], a)  # noqa: E731
    w, w2 = Wind(f(u), f(v)), Wind(f(u2), f(v2))
    r1, r2, r3, r4 = f(o1), Wind(f(o2), f(o3)), f(o4), Wind(f(o1 * 2), f(o2 * 2))
    run(w, w2, case.field([X, Z], m), Nested(w, 3.0), r1, r2, r3, r4, offset_provider={})
    np.testing.assert_allclose(r1.asnumpy(), np.abs(u) + np.abs(v), rtol=1e-14)
    np.testing.assert_allclose(r2.u.asnumpy(), np.where(m, u, u2), rtol=1e-14)
    np.testing.assert_allclose(r2.v.asnumpy(), np.where(m, v, v2), rtol=1e-14)
    np.testing.assert_allclose(r3.asnumpy(), 2.0 * np.sqrt(u * u + v * v), rtol=1e-14)
    np.testing.assert_allclose(r4.u.asnumpy(), 3.0 * u, rtol=1e-14)
    np.testing.assert_allclose(r4.v.asnumpy(), v, rtol=1e-14)


def test_ternary_between_instances(case, rng) -> None:
    u, v = _data(rng, 2)

    @gtx.program(backend=case.backend)
    def run(flag: bool, a: Wind, out: Wind):
        choose(flag, a, out=out)

    for flag in (True, False):
        out = Wind(case.field([X, Z], u * 0 + 7), case.field([X, Z], v * 0 + 7))
        run(flag, Wind(case.field([X, Z], u), case.field([X, Z], v)), out, offset_provider={})
        np.testing.assert_array_equal(out.u.asnumpy(), v if flag else u)
        np.testing.assert_array_equal(out.v.asnumpy(), u if flag else v)


def test_scan_with_a_collection_carry(case, rng) -> None:
    (x,) = _data(rng, 1)
    o1, o2 = _data(rng, 2)
    oc = rng.integers(-9, 9, (NX, NZ)).astype(np.int32)

    @gtx.program(backend=case.backend)
    def run(x: F, r1: F, r2: F, rc: FI):
        running(x, out=r1)
        running_both(x, out=(r2, rc))

    r1, r2, rc = case.field([X, Z], o1), case.field([X, Z], o2), case.field([X, Z], oc)
    run(case.field([X, Z], x), r1, r2, rc, offset_provider={})
    np.testing.assert_allclose(r1.asnumpy(), np.cumsum(x, axis=1), rtol=1e-13)
    np.testing.assert_allclose(r2.asnumpy(), np.cumsum(x, axis=1), rtol=1e-13)
    np.testing.assert_array_equal(rc.asnumpy(), np.broadcast_to(np.arange(1, NZ + 1), (NX, NZ)))


def test_direct_call_with_instances_in_and_out(rng) -> None:
    u, v, s0, a0 = _data(rng, 4)
    out = Polar(gtx.as_field([X, Z], s0), gtx.as_field([X, Z], a0))
    to_polar(Wind(gtx.as_field([X, Z], u), gtx.as_field([X, Z], v)), out=out, offset_provider={})
    np.testing.assert_allclose(out.speed.asnumpy(), np.sqrt(u * u + v * v), rtol=1e-14)
    np.testing.assert_allclose(out.angle.asnumpy(), v - u, rtol=1e-14)


def test_errors() -> None:
    with pytest.raises(gtx.StencilTypeError, match="has no element 'w'"):

        @gtx.field_operator
        def no_element(w: Wind) -> F:
            return w.w

    with pytest.raises(gtx.StencilTypeError, match="Missing 1 required positional argument: 'v'"):

        @gtx.field_operator
        def missing(a: F) -> Wind:
            return Wind(u=a)

    with pytest.raises(gtx.StencilTypeError, match="element 'u' of Wind must be"):

        @gtx.field_operator
        def wrong_type(a: FI) -> Wind:
            return Wind(a, a)

    with pytest.raises(gtx.StencilTypeError, match="same tuple/collection structure"):

        @gtx.field_operator
        def structure(m: Field[Dims[X, Z], bool], a: Wind, b: F) -> Wind:
            return gtx.where(m, a, (b, b, b))


@dataclasses.dataclass
class MinMax:
    lo: float
    hi: float


@gtx.scan_operator(axis=Z, forward=False, init=MinMax(1e300, -1e300))
def extremes(state: MinMax, x: float) -> MinMax:
    return MinMax(hi=gtx.maximum(state.hi, x), lo=gtx.minimum(state.lo, x))


@gtx.field_operator
def spread(x: F) -> F:
    m = extremes(x)
    return m.hi - m.lo


def test_backward_scan_with_a_dataclass_carry(case, rng) -> None:
    (x,) = _data(rng, 1)

    @gtx.program(backend=case.backend)
    def run(x: F, out: F):
        spread(x, out=out)

    out = case.field([X, Z], rng.standard_normal((NX, NZ)))
    run(case.field([X, Z], x), out, offset_provider={})
    rev = x[:, ::-1]
    expected = (np.maximum.accumulate(rev, axis=1) - np.minimum.accumulate(rev, axis=1))[:, ::-1]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


def test_returning_call_gives_an_instance(rng) -> None:
    u, v = _data(rng, 2)
    result = to_polar.returning(
        Wind(gtx.as_field([X, Z], u), gtx.as_field([X, Z], v)), offset_provider={}
    )
    assert isinstance(result, Polar)
    np.testing.assert_allclose(result.speed.asnumpy(), np.sqrt(u * u + v * v), rtol=1e-14)
    np.testing.assert_allclose(result.angle.asnumpy(), v - u, rtol=1e-14)


def test_direct_call_without_out_is_refused_as_in_gt4py(rng) -> None:
    u, v = _data(rng, 2)
    with pytest.raises(gtx.errors.MissingArgumentError, match="Expected keyword-argument 'out'"):
        to_polar(Wind(gtx.as_field([X, Z], u), gtx.as_field([X, Z], v)), offset_provider={})
