"""In-place updates (COMPAT.md Part 1 §9, Part 2 A): ``op(q, ..., out=q)`` in a program statement
or a direct call, also with scans and tuple outputs. Reads of the written field at the written
point write directly; any other read goes through a temporary, never a wrong result."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32
from stencilkit.core.errors import StencilValueError

X = gtx.Dimension("X")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
FX = Field[Dims[X], float64]
FXZ = Field[Dims[X, Z], float64]


def to_numpy(f) -> np.ndarray:
    return f.asnumpy()


@gtx.scan_operator(axis=Z, forward=True, init=(0.0, 0.0))
def _sweep(
    state: tuple[float, float], a: float, b: float, c: float, d: float
) -> tuple[float, float]:
    cp_prev, dp_prev = state
    denom = b - a * cp_prev
    return c / denom, (d - a * dp_prev) / denom


@gtx.scan_operator(axis=Z, forward=False, init=0.0)
def _back(x_next: float, cp: float, dp: float) -> float:
    return dp - cp * x_next


@gtx.field_operator
def _solve(a: FXZ, b: FXZ, c: FXZ, w: FXZ) -> FXZ:
    d = w + 0.5 * w(Z + 1)  # reads the field the program writes, one level up
    cp, dp = _sweep(a, b, c, d)
    return _back(cp, dp) + 0.25 * w(Z + 1)  # and again after the solve


@gtx.program
def _solve_in_place(a: FXZ, b: FXZ, c: FXZ, w: FXZ, nx: int32, nz: int32):
    _solve(a, b, c, w, out=w, domain={X: (0, nx), Z: (0, nz - 1)})


def _thomas(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    n = d.shape[1]
    cp, dp = np.zeros_like(d), np.zeros_like(d)
    cprev, dprev = np.zeros(d.shape[0]), np.zeros(d.shape[0])
    for k in range(n):
        denom = b[:, k] - a[:, k] * cprev
        cp[:, k], dp[:, k] = c[:, k] / denom, (d[:, k] - a[:, k] * dprev) / denom
        cprev, dprev = cp[:, k], dp[:, k]
    x = np.zeros_like(d)
    nxt = np.zeros(d.shape[0])
    for k in reversed(range(n)):
        x[:, k] = dp[:, k] - cp[:, k] * nxt
        nxt = x[:, k]
    return x


def test_tridiagonal_solver_reading_the_written_field_one_level_up(case, rng) -> None:
    nx, nz = 3, 6
    a, c = rng.uniform(-0.3, 0.3, (nx, nz)), rng.uniform(-0.3, 0.3, (nx, nz))
    b, w0 = rng.uniform(2.0, 3.0, (nx, nz)), rng.standard_normal((nx, nz))
    w = case.field([X, Z], w0.copy())
    fs = [case.field([X, Z], v) for v in (a, b, c)]
    _solve_in_place.with_backend(case.backend)(*fs, w, nx, nz, offset_provider={})
    s = slice(0, nz - 1)
    expect = w0.copy()
    expect[:, s] = _thomas(a[:, s], b[:, s], c[:, s], w0[:, s] + 0.5 * w0[:, 1:]) + 0.25 * w0[:, 1:]
    np.testing.assert_allclose(to_numpy(w), expect, rtol=1e-12)


@gtx.field_operator
def _next_plus(q: FX) -> FX:
    return 2.0 * q(X + 1) + q


@gtx.program
def _next_plus_in_place(q: FX, n: int32):
    _next_plus(q, out=q, domain={X: (0, n - 1)})


def test_program_statement_with_a_shifted_read_of_its_output(case, rng) -> None:
    q0 = rng.standard_normal(7)
    q = case.field([X], q0.copy())
    _next_plus_in_place.with_backend(case.backend)(q, 7, offset_provider={})
    expect = q0.copy()
    expect[:-1] = 2.0 * q0[1:] + q0[:-1]
    np.testing.assert_allclose(to_numpy(q), expect, rtol=1e-15)


def test_direct_call_with_a_shifted_read_of_its_output(case, rng) -> None:
    q0 = rng.standard_normal(7)
    q = case.field([X], q0.copy())
    _next_plus.with_backend(case.backend)(q, out=q, domain={X: (0, 6)}, offset_provider={})
    expect = q0.copy()
    expect[:-1] = 2.0 * q0[1:] + q0[:-1]
    np.testing.assert_allclose(to_numpy(q), expect, rtol=1e-15)


@gtx.field_operator
def _axpy(a: FX, b: FX) -> FX:
    return a * 2.0 + b


def test_direct_call_updating_an_argument_in_place(case, rng) -> None:
    a0, b0 = rng.standard_normal(8), rng.standard_normal(8)
    a, b = case.field([X], a0.copy()), case.field([X], b0.copy())
    _axpy.with_backend(case.backend)(a, b, out=a, offset_provider={})
    np.testing.assert_allclose(to_numpy(a), 2.0 * a0 + b0, rtol=1e-15)
    _axpy.with_backend(case.backend)(b, a, out=a, offset_provider={})  # the aliased argument second
    np.testing.assert_allclose(to_numpy(a), 2.0 * b0 + (2.0 * a0 + b0), rtol=1e-15)


def test_zero_offset_in_place_statement_needs_no_temporary() -> None:
    @gtx.program
    def prog(a: FX, b: FX):
        _axpy(a, b, out=a)

    assert prog.definition.temps == ()
    assert _next_plus_in_place.definition.temps != ()


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def _cumsum(carry: float, x: float) -> float:
    return carry + x


@gtx.field_operator
def _cumsum_of_next(q: FXZ) -> FXZ:
    return _cumsum(q(Z + 1))


def test_scans_in_place(case, rng) -> None:
    q0 = rng.standard_normal((2, 5))
    q = case.field([X, Z], q0.copy())
    _cumsum.with_backend(case.backend)(q, out=q, offset_provider={})
    np.testing.assert_allclose(to_numpy(q), np.cumsum(q0, axis=1), rtol=1e-14)
    q = case.field([X, Z], q0.copy())
    _cumsum_of_next.with_backend(case.backend)(
        q, out=q, domain={X: (0, 2), Z: (0, 4)}, offset_provider={}
    )
    expect = q0.copy()
    expect[:, :4] = np.cumsum(q0[:, 1:], axis=1)
    np.testing.assert_allclose(to_numpy(q), expect, rtol=1e-14)


@gtx.field_operator
def _pair(a: FX) -> tuple[FX, FX]:
    return a(X + 1) + 1.0, a * 2.0


@gtx.program
def _pair_in_place(a: FX, b: FX):
    _pair(a, out=(a, b), domain={X: (0, 5)})


def test_tuple_output_one_element_of_which_is_an_input(case, rng) -> None:
    a0, b0 = rng.standard_normal(6), rng.standard_normal(6)
    expect_a, expect_b = a0.copy(), b0.copy()
    expect_a[:5], expect_b[:5] = a0[1:] + 1.0, 2.0 * a0[:5]
    a, b = case.field([X], a0.copy()), case.field([X], b0.copy())
    _pair_in_place.with_backend(case.backend)(a, b, offset_provider={})
    np.testing.assert_allclose(to_numpy(a), expect_a, rtol=1e-15)
    np.testing.assert_allclose(to_numpy(b), expect_b, rtol=1e-15)
    a, b = case.field([X], a0.copy()), case.field([X], b0.copy())
    _pair.with_backend(case.backend)(a, out=(a, b), domain={X: (0, 5)}, offset_provider={})
    np.testing.assert_allclose(to_numpy(a), expect_a, rtol=1e-15)
    np.testing.assert_allclose(to_numpy(b), expect_b, rtol=1e-15)


@gtx.program
def _axpy_into(a: FX, b: FX, out: FX):
    _axpy(a, b, out=out)


@gtx.program
def _next_plus_into(q: FX, out: FX):
    _next_plus(q, out=out, domain={X: (0, 6)})


@pytest.mark.parametrize(
    "backend", [gtx.cpu, pytest.param(gtx.gpu, marks=pytest.mark.gpu)], ids=["cpu", "gpu"]
)
def test_compiled_program_accepts_the_same_field_only_where_planned(backend, rng) -> None:
    alloc = gtx.gpu if backend is gtx.gpu else None
    a0, b0 = rng.standard_normal(7), rng.standard_normal(7)
    a, b = (
        gtx.as_field([X], a0.copy(), allocator=alloc),
        gtx.as_field([X], b0.copy(), allocator=alloc),
    )
    _axpy_into.with_backend(backend)(a, b, a, offset_provider={})  # read only where written
    np.testing.assert_allclose(a.asnumpy(), 2.0 * a0 + b0, rtol=1e-15)
    with pytest.raises(StencilValueError, match="same field"):
        _next_plus_into.with_backend(backend)(b, b, offset_provider={})  # read at X + 1: refused
    np.testing.assert_array_equal(b.asnumpy(), b0)
    base = gtx.as_field([X], np.concatenate([b0, b0]), allocator=alloc).ndarray
    v1, v2 = base[0:7], base[1:8]  # raw arrays: passed zero-copy, the same domain
    with pytest.raises(StencilValueError, match="shares memory"):
        _axpy_into.with_backend(backend)(
            v1, b, v2, offset_provider={}
        )  # overlapping views: refused


@gtx.scan_operator(axis=Z, forward=True, init=(0.0, 0.0))
def _running(state: tuple[float, float], x: float) -> tuple[float, float]:
    return state[0] + x, x


def test_scan_with_a_tuple_output_one_element_of_which_is_its_input(case, rng) -> None:
    q0, w0 = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    q, w = case.field([X, Z], q0.copy()), case.field([X, Z], w0.copy())
    _running.with_backend(case.backend)(q, out=(w, q), offset_provider={})
    np.testing.assert_allclose(to_numpy(w), np.cumsum(q0, axis=1), rtol=1e-14)
    np.testing.assert_allclose(to_numpy(q), q0, rtol=1e-15)
    q, w = case.field([X, Z], q0.copy()), case.field([X, Z], w0.copy())
    _running.with_backend(case.backend)(q, out=(q, w), offset_provider={})
    np.testing.assert_allclose(to_numpy(q), np.cumsum(q0, axis=1), rtol=1e-14)
    np.testing.assert_allclose(to_numpy(w), q0, rtol=1e-15)


# ------------------------------------------------------------ COMPAT §4.2: one domain per output
@gtx.field_operator
def _two(a: FX) -> tuple[FX, FX]:
    return a + 1.0, a * 2.0


@gtx.program
def _two_prog(a: FX, o1: FX, o2: FX):
    _two(a, out=(o1, o2))


@gtx.field_operator
def _swap_scaled(a: FX, b: FX) -> tuple[FX, FX]:
    return 2.0 * b, 3.0 * a


def test_tuple_outputs_of_different_extents_each_over_its_own_domain(case, rng) -> None:
    a0 = rng.standard_normal(8)
    a = case.field([X], a0)
    for prog in (
        _two_prog.with_backend(case.backend),
        lambda a, o1, o2, **kw: _two.with_backend(case.backend)(a, out=(o1, o2), **kw),
    ):
        o1 = case.field([X], np.full(4, -7.0), origin={X: -2})  # X: 2..6
        o2 = case.field([X], np.full(8, -7.0))  # X: 0..8
        prog(a, o1, o2, offset_provider={})
        np.testing.assert_allclose(to_numpy(o1), a0[2:6] + 1.0, rtol=1e-15)
        np.testing.assert_allclose(to_numpy(o2), a0 * 2.0, rtol=1e-15)
    o1, o2 = case.field([X], np.zeros(8)), case.field([X], np.zeros(8))
    _two_prog.with_backend(case.backend)(a, o1, o2, offset_provider={})  # equal extents: one kernel
    np.testing.assert_allclose(to_numpy(o1), a0 + 1.0, rtol=1e-15)
    # outputs that are also inputs: every element from the values before the statement
    b0 = rng.standard_normal(5)
    x, y = case.field([X], a0.copy()), case.field([X], b0.copy(), origin={X: -1})
    _swap_scaled.with_backend(case.backend)(
        x[{X: (1, 6)}], y, out=(x[{X: (1, 6)}], y), offset_provider={}
    )
    expect_x = a0.copy()
    expect_x[1:6] = 2.0 * b0
    np.testing.assert_allclose(to_numpy(x), expect_x, rtol=1e-15)
    np.testing.assert_allclose(to_numpy(y), 3.0 * a0[1:6], rtol=1e-15)


@gtx.scan_operator(axis=Z, forward=True, init=(0.0, 0.0))
def _two_sums(s: tuple[float, float], x: float) -> tuple[float, float]:
    return s[0] + x, s[1] + 2.0 * x


def test_scan_outputs_of_different_extents_each_over_its_own_domain(case, rng) -> None:
    x0 = rng.standard_normal((2, 5))
    x = case.field([X, Z], x0)
    for n1, n2 in ((5, 3), (3, 5)):
        o1, o2 = (
            case.field([X, Z], np.full((2, n1), -7.0)),
            case.field([X, Z], np.full((2, n2), -7.0)),
        )
        _two_sums.with_backend(case.backend)(x, out=(o1, o2), offset_provider={})
        np.testing.assert_allclose(to_numpy(o1), np.cumsum(x0, axis=1)[:, :n1], rtol=1e-14)
        np.testing.assert_allclose(to_numpy(o2), 2.0 * np.cumsum(x0, axis=1)[:, :n2], rtol=1e-14)
