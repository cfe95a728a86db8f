"""Regression tests for the two silent wrong results of COMPAT.md Part 2 B, and the refusals that
share their cause (Part 2 C: a scan result read at a shifted level; a spurious out-of-bounds
error for points a concat_where branch never reads)."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, broadcast, concat_where, float64, int32

X = gtx.Dimension("X")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
FX = Field[Dims[X], float64]
FXZ = Field[Dims[X, Z], float64]


@gtx.field_operator
def step(a: FX) -> tuple[FX, FX]:
    return a + 1.0, a * 2.0


@gtx.field_operator
def swap_scaled(a: FX, b: FX) -> tuple[FX, FX]:
    return 2.0 * b, 3.0 * a


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def cumsum(carry: float, x: float) -> float:
    return carry + x


@gtx.scan_operator(axis=Z, forward=True, init=(0.0, 0.0))
def sweep(
    state: tuple[float, float], a: float, b: float, c: float, d: float
) -> tuple[float, float]:
    cp_prev, dp_prev = state
    denom = b - a * cp_prev
    return c / denom, (d - a * dp_prev) / denom


@gtx.scan_operator(axis=Z, forward=False, init=0.0)
def substitute(x_next: float, cp: float, dp: float) -> float:
    return dp - cp * x_next


# ------------------------------------------------------------------ B.1 per-output domains
def test_per_output_domains_when_an_output_is_also_an_input(case) -> None:
    """COMPAT Part 2 B.1, the exact reproduction: b must be computed from the original a."""

    @gtx.program(backend=case.backend)
    def prog(a: FX, b: FX):
        step(a, out=(a, b), domain=({X: (0, 4)}, {X: (0, 6)}))

    a = case.field([X], np.arange(6.0))
    b = case.field([X], np.full(6, -7.0))
    prog(a, b, offset_provider={})
    np.testing.assert_array_equal(b.asnumpy(), [0, 2, 4, 6, 8, 10])
    np.testing.assert_array_equal(a.asnumpy(), [1, 2, 3, 4, 4, 5])  # a[4:] untouched


def test_per_output_domains_with_outputs_read_by_each_other(case, rng) -> None:
    """Both outputs are inputs of the other element: evaluated once, then written."""

    @gtx.program(backend=case.backend)
    def prog(a: FX, b: FX, n: int32):
        swap_scaled(a, b, out=(a, b), domain=({X: (1, n)}, {X: (0, n - 2)}))

    a0, b0 = rng.standard_normal(9), rng.standard_normal(9)
    a, b = case.field([X], a0.copy()), case.field([X], b0.copy())
    prog(a, b, int32(8), offset_provider={})
    ea, eb = a0.copy(), b0.copy()
    ea[1:8] = 2.0 * b0[1:8]
    eb[0:6] = 3.0 * a0[0:6]
    np.testing.assert_allclose(a.asnumpy(), ea, rtol=1e-15)
    np.testing.assert_allclose(b.asnumpy(), eb, rtol=1e-15)


def test_per_output_domains_direct_call(case, rng) -> None:
    a0 = rng.standard_normal(6)
    b0 = rng.standard_normal(6)
    """In place on embedded; the compiled backends refuse an output that is also an argument."""
    a, b, c = (case.field([X], v.copy()) for v in (a0, b0, b0))
    op = step.with_backend(case.backend)
    op(a, out=(c, b), domain=({X: (0, 4)}, {X: (1, 6)}), offset_provider={})
    ea, eb = b0.copy(), b0.copy()
    ea[:4] = a0[:4] + 1.0
    eb[1:] = 2.0 * a0[1:]
    np.testing.assert_allclose(c.asnumpy(), ea, rtol=1e-15)
    np.testing.assert_allclose(b.asnumpy(), eb, rtol=1e-15)
    if case.backend is None:
        op(a, out=(a, b), domain=({X: (0, 4)}, {X: (1, 6)}), offset_provider={})
        ea = a0.copy()
        ea[:4] = a0[:4] + 1.0
        np.testing.assert_allclose(a.asnumpy(), ea, rtol=1e-15)
        np.testing.assert_allclose(b.asnumpy(), eb, rtol=1e-15)


# ------------------------------------------------------------------ B.2 scans in concat_where branches
@gtx.field_operator
def branch_cumsum(x: FXZ) -> FXZ:
    return concat_where(Z > 0, cumsum(x), broadcast(-1.0, (X, Z)))


def test_scan_in_a_concat_where_branch_starts_at_the_branch(case) -> None:
    """COMPAT Part 2 B.2, the exact reproduction: init applies at the branch's first level."""
    out = case.field([X, Z], np.full((1, 4), 5.0))
    x = case.field([X, Z], np.array([[1.0, 10.0, 100.0, 1000.0]]))
    branch_cumsum.with_backend(case.backend)(x, out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), [[-1, 10, 110, 1110]])


def test_scan_in_a_concat_where_branch_in_a_program(case, rng) -> None:
    nx, nz = 5, 8
    xd = rng.standard_normal((nx, nz))
    od = rng.standard_normal((nx, nz))

    @gtx.program(backend=case.backend)
    def prog(x: FXZ, out: FXZ):
        branch_cumsum(x, out=out, domain={X: (1, nx), Z: (0, nz - 1)})

    out = case.field([X, Z], od)
    prog(case.field([X, Z], xd), out, offset_provider={})
    expected = od.copy()
    expected[1:, 0] = -1.0
    expected[1:, 1 : nz - 1] = np.cumsum(xd[1:, 1 : nz - 1], axis=1)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-13)


def test_no_bounds_error_for_points_a_branch_never_reads(case, rng) -> None:
    """The scan reads x(Z - 1) only under Z > 0: x starting at level 0 is enough."""

    @gtx.field_operator
    def lagged(x: FXZ) -> FXZ:
        return concat_where(Z > 0, cumsum(x(Z - 1)), broadcast(-1.0, (X, Z)))

    xd = rng.standard_normal((3, 6))
    out = case.field([X, Z], rng.standard_normal((3, 6)))
    lagged.with_backend(case.backend)(case.field([X, Z], xd), out=out, offset_provider={})
    expected = np.concatenate([np.full((3, 1), -1.0), np.cumsum(xd[:, :-1], axis=1)], axis=1)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-13)


@gtx.field_operator
def solve_w(a: FXZ, b: FXZ, c: FXZ, d: FXZ, w: FXZ, n: int32) -> FXZ:
    """ICON's pattern: the forward sweep under Z > 0, the back substitution under Z < n - 1,
    boundary values of w kept at both ends."""
    cpdp = sweep(a, b, c, d)
    cp = concat_where(Z > 0, cpdp[0], broadcast(0.0, (X, Z)))
    dp = concat_where(Z > 0, cpdp[1], w)
    return concat_where(Z < n - 1, substitute(cp, dp), w)


def _solve_w_reference(a, b, c, d, w):
    out = w.copy()
    nz = w.shape[1]
    for col in range(w.shape[0]):
        m = np.zeros((nz - 2, nz - 2))
        for i, k in enumerate(range(1, nz - 1)):
            m[i, i] = b[col, k]
            if i > 0:
                m[i, i - 1] = a[col, k]
            if i < nz - 3:
                m[i, i + 1] = c[col, k]
        out[col, 1 : nz - 1] = np.linalg.solve(m, d[col, 1 : nz - 1])
    return out


def test_tridiagonal_solve_in_concat_where_branches(case, rng) -> None:
    nx, nz = 4, 10
    a = rng.uniform(-1, -0.1, (nx, nz))
    c = rng.uniform(-1, -0.1, (nx, nz))
    b = 4.0 + rng.random((nx, nz))
    d = rng.standard_normal((nx, nz))
    w = rng.standard_normal((nx, nz))
    od = rng.standard_normal((nx, nz))

    @gtx.program(backend=case.backend)
    def prog(a: FXZ, b: FXZ, c: FXZ, d: FXZ, w: FXZ, n: int32, out: FXZ):
        solve_w(a, b, c, d, w, n, out=out, domain={X: (0, nx - 1), Z: (0, n)})

    out = case.field([X, Z], od)
    args = [case.field([X, Z], v) for v in (a, b, c, d, w)]
    prog(*args, int32(nz), out, offset_provider={})
    expected = od.copy()
    expected[: nx - 1] = _solve_w_reference(a, b, c, d, w)[: nx - 1]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-11, atol=1e-12)


# ------------------------------------------------------------------ C: scan result at a shifted level
def test_scan_result_read_at_a_shifted_level(case, rng) -> None:
    @gtx.field_operator
    def diff_up(x: FXZ, n: int32) -> FXZ:
        s = cumsum(x)
        return concat_where(Z < n - 1, s(Z + 1) - s, broadcast(0.0, (X, Z)))

    xd = rng.standard_normal((3, 7))
    out = case.field([X, Z], rng.standard_normal((3, 7)))
    diff_up.with_backend(case.backend)(
        case.field([X, Z], xd), int32(7), out=out, offset_provider={}
    )
    expected = np.concatenate([xd[:, 1:], np.zeros((3, 1))], axis=1)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-12, atol=1e-14)


def test_shifted_scan_result_runs_over_the_shifted_domain(case, rng) -> None:
    """Read at Z + 1 over Z: [0, 5), the scan covers [1, 6): init applies at level 1 (gt4py)."""

    @gtx.field_operator
    def ahead(x: FXZ) -> FXZ:
        return cumsum(x)(Z + 1)

    xd = rng.standard_normal((3, 6))
    od = rng.standard_normal((3, 6))
    out = case.field([X, Z], od)
    ahead.with_backend(case.backend)(
        case.field([X, Z], xd), out=out, domain={X: (0, 3), Z: (0, 5)}, offset_provider={}
    )
    expected = od.copy()
    expected[:, :5] = np.cumsum(xd[:, 1:], axis=1)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-12)


def test_shifted_scan_result_beyond_the_output_is_refused() -> None:
    @gtx.field_operator
    def ahead(x: FXZ) -> FXZ:
        return cumsum(x)(Z + 1)

    x = gtx.as_field([X, Z], np.ones((2, 4)))
    out = gtx.as_field([X, Z], np.ones((2, 4)))
    with pytest.raises(gtx.StencilValueError, match="read along Z over"):
        ahead(x, out=out, offset_provider={})


# ------------------------------------------------------------------ CUDA code generation (no GPU needed)
def _cuda_build(prog: gtx.Program, args: list[object]) -> str:
    from stencilkit.backends.compiled import CompiledRunner
    from stencilkit.backends.cuda import CudaTarget
    from stencilkit.stages.interface import interface_of

    runner = CompiledRunner(interface_of(prog.definition), CudaTarget(arch="90"))
    planned = runner.stages(
        prog._flat(tuple(args), {}), {}, check_device=False, until="plan"
    ).planned
    entry = runner.target.build(runner.target.generate(planned))
    source = entry.source.text
    assert (entry.path / "program.cubin").read_bytes()[:4] == b"\x7fELF"  # type: ignore[attr-defined]
    return source  # type: ignore[no-any-return]


@pytest.mark.nvrtc
def test_per_output_domains_and_inferred_scan_domains_compile_for_cuda(monkeypatch) -> None:
    monkeypatch.setenv("STENCILKIT_CUDA_COMPILER", "nvrtc")

    @gtx.program
    def per_output(a: FX, b: FX):
        step(a, out=(a, b), domain=({X: (0, 4)}, {X: (0, 6)}))

    @gtx.program
    def solve(a: FXZ, b: FXZ, c: FXZ, d: FXZ, w: FXZ, n: int32, out: FXZ):
        solve_w(a, b, c, d, w, n, out=out)

    one = np.random.default_rng(1).random((3, 6))
    source = _cuda_build(per_output, [gtx.as_field([X], one[0]), gtx.as_field([X], one[1])])
    assert "__tmp0_0" in source
    fields = [gtx.as_field([X, Z], one + i) for i in range(5)]
    source = _cuda_build(solve, [*fields, int32(6), gtx.as_field([X, Z], one)])
    assert source.count("for (") >= 2  # the two scans loop over levels in the kernel


def test_scan_branch_start_computed_with_builtins_and_floor_division(case, rng) -> None:
    from stencilkit import maximum

    @gtx.field_operator
    def from_level(x: FXZ, k: int32, n: int32) -> FXZ:
        return concat_where(
            (Z >= maximum(k, 1)) & (Z < n // 2 + 3), cumsum(x), broadcast(-1.0, (X, Z))
        )

    xd = rng.standard_normal((2, 9))
    out = case.field([X, Z], rng.standard_normal((2, 9)))
    op = from_level.with_backend(case.backend)
    for k, lo, hi in ((0, 1, 7), (3, 3, 7)):
        op(case.field([X, Z], xd), int32(k), int32(8), out=out, offset_provider={})
        expected = np.full((2, 9), -1.0)
        expected[:, lo:hi] = np.cumsum(xd[:, lo:hi], axis=1)
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-13)


def test_no_warnings_from_levels_a_branch_does_not_select(case, rng) -> None:
    """The scan's columns exist only where the branch reads them; the embedded backend computes
    the unselected rest too (then discards it) and must not warn (warnings are errors here)."""

    @gtx.field_operator
    def inverse(x: FXZ) -> FXZ:
        return concat_where(Z > 0, 1.0 / cumsum(x), broadcast(-1.0, (X, Z)))

    xd = rng.random((2, 5)) + 0.5
    out = case.field([X, Z], rng.standard_normal((2, 5)))
    inverse.with_backend(case.backend)(case.field([X, Z], xd), out=out, offset_provider={})
    expected = np.concatenate([np.full((2, 1), -1.0), 1.0 / np.cumsum(xd[:, 1:], axis=1)], axis=1)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-13)
