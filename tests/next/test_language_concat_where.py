"""concat_where: values chosen by conditions on indices; a branch is read only where selected."""

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32
from stencilkit.experimental import concat_where

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
IK = Field[Dims[I, K], float64]
IJ = Field[Dims[I, J], float64]
N, NK = 5, 9


def _guarded_reads_are_refined() -> bool:
    """Whether the bounds check counts guarded reads only where they happen (it needs the
    kernel's domain from backends/binding.py)."""

    @gtx.field_operator
    def probe(a: Field[Dims[K], float64]) -> Field[Dims[K], float64]:
        return concat_where(K == 0, a, a(K - 1))

    a = gtx.as_field([K], np.arange(3.0))
    try:
        probe(a, out=gtx.zeros({K: 3}), offset_provider={})
    except gtx.StencilValueError:
        return False
    return True


needs_refined_bounds = pytest.mark.xfail(
    not _guarded_reads_are_refined(),
    strict=True,
    reason="backends/binding.py::check_kernel_bounds does not pass the kernel domain to read_extents yet",
)


def test_concat_where_is_exported_like_gt4py() -> None:
    assert concat_where is gtx.concat_where


def test_select_by_level(case, rng) -> None:
    @gtx.field_operator
    def op(ground: IK, air: IK) -> tuple[IK, IK]:
        return concat_where(K == 0, ground, air), concat_where(K > 0, air, ground)

    g, a = rng.standard_normal((N, NK)), rng.standard_normal((N, NK))
    outs = (
        case.field([I, K], rng.standard_normal((N, NK))),
        case.field([I, K], rng.standard_normal((N, NK))),
    )
    op.with_backend(case.backend)(
        case.field([I, K], g), case.field([I, K], a), out=outs, offset_provider={}
    )
    k = np.arange(NK)[None, :]
    np.testing.assert_array_equal(outs[0].asnumpy(), np.where(k == 0, g, a))
    np.testing.assert_array_equal(outs[1].asnumpy(), np.where(k == 0, g, a))


@needs_refined_bounds
def test_boundary_condition_reads_below_only_above_the_bottom(case, rng) -> None:
    @gtx.field_operator
    def op(a: IK) -> IK:
        return concat_where(K == 0, a, a(K - 1))

    @gtx.program(backend=case.backend)
    def run(a: IK, out: IK):
        op(a, out=out)  # the whole K range: a(K - 1) is read only for K >= 1

    a = rng.standard_normal((N, NK))
    out = case.field([I, K], rng.standard_normal((N, NK)))
    run(case.field([I, K], a), out, offset_provider={})
    expected = np.concatenate([a[:, :1], a[:, :-1]], axis=1)
    np.testing.assert_array_equal(out.asnumpy(), expected)


@needs_refined_bounds
def test_conditions_with_scalars_and_and_or(case, rng) -> None:
    @gtx.field_operator
    def op(interior: IK, boundary: IK, nlev: int32) -> tuple[IK, IK, IK]:
        return (
            concat_where((0 < K) & (K < nlev - 1), interior(K + 1) - interior(K - 1), boundary),
            concat_where((K < 2) | (K >= 5), boundary, interior),
            concat_where(~(K != 3), boundary, interior),
        )

    interior, boundary = rng.standard_normal((N, NK)), rng.standard_normal((N, NK))
    outs = tuple(case.field([I, K], rng.standard_normal((N, NK))) for _ in range(3))
    op.with_backend(case.backend)(
        case.field([I, K], interior),
        case.field([I, K], boundary),
        np.int32(NK),
        out=outs,
        offset_provider={},
    )
    k = np.arange(NK)[None, :]
    centred = np.zeros((N, NK))
    centred[:, 1:-1] = interior[:, 2:] - interior[:, :-2]
    np.testing.assert_allclose(
        outs[0].asnumpy(), np.where((0 < k) & (k < NK - 1), centred, boundary)
    )
    np.testing.assert_array_equal(
        outs[1].asnumpy(), np.where((k < 2) | (k >= 5), boundary, interior)
    )
    np.testing.assert_array_equal(outs[2].asnumpy(), np.where(k == 3, boundary, interior))


@needs_refined_bounds
def test_branches_defined_only_where_selected(case, rng) -> None:
    """gt4py's non-overlapping case: ground exists on level 0 only, air above it."""

    @gtx.field_operator
    def op(ground: IK, air: IK) -> IK:
        return concat_where(K == 0, ground, air)

    g, a = rng.standard_normal((N, 1)), rng.standard_normal((N, NK - 1))
    out = case.field([I, K], rng.standard_normal((N, NK)))
    ground = gtx.as_field(gtx.domain({I: N, K: (0, 1)}), g, allocator=case.allocator)
    air = gtx.as_field(gtx.domain({I: N, K: (1, NK)}), a, allocator=case.allocator)
    op.with_backend(case.backend)(ground, air, out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate([g, a], axis=1))


@needs_refined_bounds
def test_lap_like_boundary_with_nested_conditions(case, rng) -> None:
    @gtx.field_operator
    def op(inp: IJ, boundary: float64, n: int32, m: int32) -> IJ:
        return concat_where(
            (I == 0) | (I == n - 1), boundary, concat_where((J == 0) | (J == m - 1), boundary, inp)
        )

    n, m = 6, 7
    data = rng.standard_normal((n - 2, m - 2))
    inp = gtx.as_field(gtx.domain({I: (1, n - 1), J: (1, m - 1)}), data, allocator=case.allocator)
    out = case.field([I, J], rng.standard_normal((n, m)))
    op.with_backend(case.backend)(inp, 2.5, np.int32(n), np.int32(m), out=out, offset_provider={})
    expected = np.full((n, m), 2.5)
    expected[1:-1, 1:-1] = data
    np.testing.assert_array_equal(out.asnumpy(), expected)


def test_lower_dimensional_and_scalar_branches(case, rng) -> None:
    @gtx.field_operator
    def op(interior: IK, surface: Field[Dims[I], float64], top: float64) -> IK:
        return concat_where(K == 0, surface, concat_where(K == NK - 1, top, interior))

    interior, surface = rng.standard_normal((N, NK)), rng.standard_normal(N)
    out = case.field([I, K], rng.standard_normal((N, NK)))
    op.with_backend(case.backend)(
        case.field([I, K], interior), case.field([I], surface), 3.0, out=out, offset_provider={}
    )
    expected = interior.copy()
    expected[:, 0] = surface
    expected[:, -1] = 3.0
    np.testing.assert_array_equal(out.asnumpy(), expected)


def test_tuples_and_condition_value_pairs(case, rng) -> None:
    @gtx.field_operator
    def op(a: IK, b: IK, c: IK) -> tuple[IK, IK, IK]:
        x, y = concat_where(K < 3, (a, b), (b, a))
        z = concat_where((K == 0, a), (K == NK - 1, b), c)
        return x, y, z

    a, b, c = (rng.standard_normal((N, NK)) for _ in range(3))
    outs = tuple(case.field([I, K], rng.standard_normal((N, NK))) for _ in range(3))
    op.with_backend(case.backend)(
        *(case.field([I, K], v) for v in (a, b, c)), out=outs, offset_provider={}
    )
    k = np.arange(NK)[None, :]
    np.testing.assert_array_equal(outs[0].asnumpy(), np.where(k < 3, a, b))
    np.testing.assert_array_equal(outs[1].asnumpy(), np.where(k < 3, b, a))
    np.testing.assert_array_equal(
        outs[2].asnumpy(), np.where(k == 0, a, np.where(k == NK - 1, b, c))
    )


def test_shifted_concat_where_uses_the_shifted_index(case, rng) -> None:
    @gtx.field_operator
    def masked(a: IK) -> IK:
        return concat_where(K < 4, a, -a)

    @gtx.field_operator
    def op(a: IK) -> IK:
        return masked(a)(K + 1)

    a = rng.standard_normal((N, NK))
    out0 = rng.standard_normal((N, NK))
    out = case.field([I, K], out0)
    op.with_backend(case.backend)(
        case.field([I, K], a), out=out, domain={I: (0, N), K: (0, NK - 1)}, offset_provider={}
    )
    expected = out0.copy()
    k = np.arange(1, NK)[None, :]
    expected[:, :-1] = np.where(k < 4, a[:, 1:], -a[:, 1:])
    np.testing.assert_array_equal(out.asnumpy(), expected)


def test_reads_outside_the_field_where_selected_are_still_refused(case, rng) -> None:
    @gtx.field_operator
    def op(a: IK) -> IK:
        return concat_where(K < 3, a(K - 1), a)  # K == 0 reads a at -1

    a = case.field([I, K], rng.standard_normal((N, NK)))
    with pytest.raises(gtx.StencilValueError, match="reads field 'a' along K"):
        op.with_backend(case.backend)(
            a, out=case.field([I, K], rng.standard_normal((N, NK))), offset_provider={}
        )


def test_condition_on_a_boolean_field_is_refused() -> None:
    with pytest.raises(gtx.StencilTypeError, match="must compare dimensions with integers") as err:

        @gtx.field_operator
        def op(m: Field[Dims[K], bool], a: IK, b: IK) -> IK:
            return concat_where(m, a, b)

    assert "where()" in str(err.value)


def test_index_compared_with_a_float_is_refused() -> None:
    with pytest.raises(gtx.StencilTypeError, match="compared only with integer scalars"):

        @gtx.field_operator
        def op(a: IK, b: IK, x: float64) -> IK:
            return concat_where(K < x, a, b)


def test_read_extents_count_guarded_reads_where_selected() -> None:
    from stencilkit.core.domain import UnitRange
    from stencilkit.ir import nodes as ir
    from stencilkit.ir.extents import read_extents
    from stencilkit.ir.lower import lower_program

    @gtx.field_operator
    def op(a: IK, n: int32) -> IK:
        return concat_where(K == 0, a, concat_where(K < n - 2, a(K - 1), a(K + 2)))

    @gtx.program
    def run(a: IK, n: int32, out: IK):
        op(a, n, out=out)

    (kernel,) = lower_program(run.definition, {}).kernels
    dims_of = {"a": (I, K), "out": (I, K)}
    assert read_extents(kernel, dims_of)["a"].offsets[K] == (-1, 2)  # no domain: every read counts
    dom = {I: UnitRange(0, 4), K: UnitRange(0, 10)}
    # K == 0 reads a at 0; 1 <= K < 6 reads a(K - 1) over [0, 5); 6 <= K < 10 reads a(K + 2) up to 11
    ext = read_extents(kernel, dims_of, dom, {"n": 8})["a"]
    assert ext.offsets[K] == (0, 2) and ext.offsets[I] == (0, 0)
    # with n = 12, the a(K + 2) branch is never selected
    assert read_extents(kernel, dims_of, dom, {"n": 12})["a"].offsets[K] == (0, -1)
    assert isinstance(kernel.values[0], ir.Call)


def test_cached_bounds_check_follows_the_condition_scalar(case, rng) -> None:
    """Regression: a compiled plan was reused when only a scalar in a concat_where condition
    changed, so a read the first value kept inside the field could leave it with the second."""

    @gtx.field_operator
    def up(a: IK, top: int32) -> IK:
        return concat_where(K < top, a(K + 1), a)

    @gtx.program(backend=case.backend)
    def run(a: IK, top: int32, out: IK):
        up(a, top, out=out)

    ad = rng.standard_normal((N, NK))
    out = case.field([I, K], rng.standard_normal((N, NK)))
    run(case.field([I, K], ad), NK - 1, out, offset_provider={})  # K + 1 <= NK - 1: inside
    expected = ad.copy()
    expected[:, : NK - 1] = ad[:, 1:]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-15)
    sentinel = out.asnumpy().copy()
    with pytest.raises(gtx.StencilValueError, match="reads field 'a' along K"):
        run(case.field([I, K], ad), NK, out, offset_provider={})  # K = NK - 1 would read K = NK
    np.testing.assert_array_equal(out.asnumpy(), sentinel)
