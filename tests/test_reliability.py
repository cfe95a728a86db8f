"""Regression tests for the wrong results, crashes and silent misuse found by differential fuzzing
(one test per finding, on every backend)."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float32, float64, int32

I = gtx.Dimension("I")
J = gtx.Dimension("J")
Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))
FI = Field[Dims[I], float64]
N = 12


# ---------------------------------------------------------------- 1. tuple output aliasing an input
@gtx.field_operator
def _passthrough(a: FI, b: FI, o12: FI) -> tuple[FI, FI, FI]:
    return a + b, a * 2.0, o12


def test_tuple_output_that_is_also_read_passes_the_old_value(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(a: FI, b: FI, o12: FI, x: FI, y: FI):
        _passthrough(a, b, o12, out=(o12, x, y))

    a, b, o = (rng.standard_normal(N) for _ in range(3))
    o_before = o.copy()  # as_field may share o's memory
    fo, fx, fy = (
        case.field([I], o),
        case.field([I], rng.standard_normal(N)),
        case.field([I], rng.standard_normal(N)),
    )
    prog(case.field([I], a), case.field([I], b), fo, fx, fy, offset_provider={})
    np.testing.assert_array_equal(fy.asnumpy(), o_before)  # the old o12, as embedded and gt4py give
    np.testing.assert_array_equal(fo.asnumpy(), a + b)


# ---------------------------------------------------------------- 3. NaN through min/max
@gtx.field_operator
def _minmax(a: FI, b: FI) -> tuple[FI, FI]:
    return gtx.minimum(a, b), gtx.maximum(a, b)


def test_minimum_and_maximum_propagate_nan(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(a: FI, b: FI, lo: FI, hi: FI):
        _minmax(a, b, out=(lo, hi))

    a, b = rng.standard_normal(N), rng.standard_normal(N)
    a[2], b[5], a[7], b[7] = np.nan, np.nan, np.nan, np.nan
    lo, hi = case.field([I], rng.standard_normal(N)), case.field([I], rng.standard_normal(N))
    prog(case.field([I], a), case.field([I], b), lo, hi, offset_provider={})
    np.testing.assert_array_equal(lo.asnumpy(), np.minimum(a, b))
    np.testing.assert_array_equal(hi.asnumpy(), np.maximum(a, b))


@gtx.field_operator
def _extremes(
    c: Field[Dims[Cell], float64],
) -> tuple[Field[Dims[Edge], float64], Field[Dims[Edge], float64]]:
    return gtx.max_over(c(E2C), axis=E2CDim), gtx.min_over(c(E2C), axis=E2CDim)


def test_max_over_and_min_over_propagate_nan(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(
        c: Field[Dims[Cell], float64],
        hi: Field[Dims[Edge], float64],
        lo: Field[Dims[Edge], float64],
    ):
        _extremes(c, out=(hi, lo))

    cd = rng.standard_normal(8)
    cd[3] = np.nan
    table = rng.integers(0, 8, size=(N, 3)).astype(np.int32)
    hi, lo = case.field([Edge], rng.standard_normal(N)), case.field([Edge], rng.standard_normal(N))
    prog(
        case.field([Cell], cd),
        hi,
        lo,
        offset_provider={"E2C": case.connectivity([Edge, E2CDim], Cell, table)},
    )
    np.testing.assert_array_equal(hi.asnumpy(), cd[table].max(axis=1))
    np.testing.assert_array_equal(lo.asnumpy(), cd[table].min(axis=1))


# ---------------------------------------------------------------- 4. mutable closure objects
def test_mutable_closure_objects_are_refused(case) -> None:
    weights = [1.0, 2.0]

    out = case.field([I], np.full(N, 7.0))
    with pytest.raises(TypeError, match="'weights' is a list, a mutable object"):

        @gtx.field_operator(backend=case.backend)
        def scaled(a: FI) -> FI:
            return a * weights[0]

        weights[0] = 3.0
        scaled(case.field([I], np.ones(N)), out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), np.full(N, 7.0))


# ---------------------------------------------------------------- 5. a new table of the same shape
@gtx.field_operator
def _gather(c: Field[Dims[Cell], float64]) -> Field[Dims[Edge], float64]:
    return c(E2C[0])


@pytest.mark.parametrize("bad", ["out_of_range", "negative_without_skip"])
def test_a_new_table_of_the_same_shape_is_checked_again(case, rng, bad) -> None:
    @gtx.program(backend=case.backend)
    def prog(c: Field[Dims[Cell], float64], out: Field[Dims[Edge], float64]):
        _gather(c, out=out)

    cd = rng.standard_normal(8)
    good = rng.integers(0, 8, size=(N, 2)).astype(np.int32)
    out = case.field([Edge], rng.standard_normal(N))
    prog(
        case.field([Cell], cd),
        out,
        offset_provider={"E2C": case.connectivity([Edge, E2CDim], Cell, good)},
    )
    np.testing.assert_array_equal(out.asnumpy(), cd[good[:, 0]])
    table = good.copy()
    table[4, 0] = 10_000_000 if bad == "out_of_range" else -1
    before = out.asnumpy().copy()
    with pytest.raises(
        ValueError,
        match=r"neighbour table 'E2C' holds (indices|negative indices but no skip_value)",
    ):
        prog(
            case.field([Cell], cd),
            out,
            offset_provider={
                "E2C": case.connectivity([Edge, E2CDim], Cell, table, skip_value=None)
            },
        )
    np.testing.assert_array_equal(out.asnumpy(), before)


def test_a_table_with_too_few_rows_is_refused(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(c: Field[Dims[Cell], float64], out: Field[Dims[Edge], float64]):
        _gather(c, out=out)

    cd = rng.standard_normal(8)
    out = case.field([Edge], rng.standard_normal(N))
    prog(
        case.field([Cell], cd),
        out,
        offset_provider={
            "E2C": case.connectivity(
                [Edge, E2CDim], Cell, rng.integers(0, 8, size=(N, 2)).astype(np.int32)
            )
        },
    )
    before = out.asnumpy().copy()
    with pytest.raises(ValueError, match="E2C"):
        prog(
            case.field([Cell], cd),
            out,
            offset_provider={
                "E2C": case.connectivity(
                    [Edge, E2CDim], Cell, rng.integers(0, 8, size=(N - 4, 2)).astype(np.int32)
                )
            },
        )
    np.testing.assert_array_equal(out.asnumpy(), before)


# ---------------------------------------------------------------- 6. integer division by zero
FIi = Field[Dims[I], int32]


@gtx.field_operator
def _divmod(a: FIi, b: FIi) -> tuple[FIi, FIi]:
    return a // b, a % b


def test_integer_division_by_zero_gives_zero(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(a: FIi, b: FIi, q: FIi, r: FIi):
        _divmod(a, b, out=(q, r))

    a = rng.integers(-50, 50, size=N).astype(np.int32)
    b = rng.integers(-5, 5, size=N).astype(np.int32)
    b[[0, 3, 9]] = 0
    a[5], b[5] = np.iinfo(np.int32).min, -1  # the one overflowing quotient: wraps, as in NumPy
    q, r = (
        case.field([I], rng.integers(1, 9, N).astype(np.int32)),
        case.field([I], rng.integers(1, 9, N).astype(np.int32)),
    )
    prog(case.field([I], a), case.field([I], b), q, r, offset_provider={})
    with np.errstate(divide="ignore", over="ignore"):
        np.testing.assert_array_equal(q.asnumpy(), np.floor_divide(a, b))
        np.testing.assert_array_equal(r.asnumpy(), np.remainder(a, b))


@gtx.field_operator
def _fmod(a: FI, b: FI) -> FI:
    return a % b


def test_float_remainder_is_exact_for_huge_dividends(case, rng) -> None:
    """Found by the fuzzer on the H200: ``max_over`` of a cell whose neighbours are all skipped
    is the lowest float, and CuPy's ``remainder`` of it was off by 4e291. Every backend gives
    NumPy's exact value (from ``fmod``), with the divisor's sign."""

    @gtx.program(backend=case.backend)
    def prog(a: FI, b: FI, r: FI):
        _fmod(a, b, out=r)

    a = rng.normal(size=N) * 10.0 ** rng.integers(-3, 300, N)
    a[:4] = np.finfo(np.float64).min, np.finfo(np.float64).max, -0.0, 3.0
    b = rng.uniform(0.5, 4.0, N) * rng.choice([-1.0, 1.0], N)
    b[3] = 1.5
    r = case.field([I], rng.random(N))
    prog(case.field([I], a), case.field([I], b), r, offset_provider={})
    want = np.remainder(a, b)
    np.testing.assert_allclose(r.asnumpy(), want, rtol=1e-15, atol=0)
    assert np.array_equal(np.signbit(r.asnumpy()), np.signbit(want))


# ---------------------------------------------------------------- 9. a negative literal after an operator
@gtx.field_operator
def _negated(a: Field[Dims[I], float32]) -> Field[Dims[I], float32]:
    return a - gtx.broadcast(float32(-0.5), (I,)) + (-gtx.broadcast(float32(-0.5), (I,)))


def test_negated_negative_literals_compile(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(a: Field[Dims[I], float32], out: Field[Dims[I], float32]):
        _negated(a, out=out)

    a = rng.standard_normal(N).astype(np.float32)
    out = case.field([I], rng.standard_normal(N).astype(np.float32))
    prog(case.field([I], a), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), a + np.float32(0.5) + np.float32(0.5), rtol=1e-6)


# ---------------------------------------------------------------- 2. an output overlapping an input
@gtx.field_operator
def _shifted(a: FI) -> FI:
    return a(I + 1) * 2.0


def test_an_output_sharing_memory_with_an_input_is_refused(case, rng) -> None:
    if case.backend is None:
        pytest.skip("embedded evaluates each statement fully before writing: overlap is safe there")

    @gtx.program(backend=case.backend)
    def prog(a: FI, out: FI):
        _shifted(a, out=out, domain={I: (0, N - 1)})

    xp = __import__("cupy") if case.on_gpu else np
    buf = xp.asarray(rng.standard_normal(N + 1))
    before = buf.copy()
    with pytest.raises(ValueError, match="argument 'a' shares memory with output 'out'"):
        prog(buf[1:], buf[:-1], offset_provider={})
    assert bool((buf == before).all())
    prog(buf[1:].copy(), buf[:-1], offset_provider={})  # separate memory: fine
    np.testing.assert_array_equal(
        xp.asnumpy(buf[: N - 1]) if case.on_gpu else buf[: N - 1],
        (xp.asnumpy(before) if case.on_gpu else before)[2 : N + 1] * 2.0,
    )


def test_an_embedded_statement_reading_an_overlapping_view_sees_the_old_values(rng) -> None:
    @gtx.program
    def prog(a: FI, out: FI):
        _shifted(a, out=out, domain={I: (0, N - 1)})

    buf = rng.standard_normal(N + 1)
    before = buf.copy()
    prog(buf[1:], buf[:-1], offset_provider={})
    np.testing.assert_array_equal(buf[: N - 1], before[2 : N + 1] * 2.0)


# ---------------------------------------------------------------- 11. offset providers of the wrong kind
def test_a_raw_array_as_neighbour_table_is_refused_with_the_fix(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(c: Field[Dims[Cell], float64], out: Field[Dims[Edge], float64]):
        _gather(c, out=out)

    out = case.field([Edge], rng.standard_normal(N))
    with pytest.raises(
        TypeError, match=r"offset_provider\['E2C'\] is a raw numpy array.*\n.*as_connectivity"
    ):
        prog(
            case.field([Cell], rng.standard_normal(8)),
            out,
            offset_provider={"E2C": rng.integers(0, 8, size=(N, 2)).astype(np.int32)},
        )


def test_an_offset_provider_that_is_not_a_dict_is_refused(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(c: Field[Dims[Cell], float64], out: Field[Dims[Edge], float64]):
        _gather(c, out=out)

    table = case.connectivity(
        [Edge, E2CDim], Cell, rng.integers(0, 8, size=(N, 2)).astype(np.int32)
    )
    with pytest.raises(TypeError, match="offset_provider must be a dict"):
        prog(
            case.field([Cell], rng.standard_normal(8)),
            case.field([Edge], rng.standard_normal(N)),
            offset_provider=[("E2C", table)],
        )


# ---------------------------------------------------------------- 12. accepted silently before
def test_a_table_with_the_wrong_codomain_is_refused(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(c: Field[Dims[Cell], float64], out: Field[Dims[Edge], float64]):
        _gather(c, out=out)

    table = case.connectivity(
        [Edge, E2CDim], Edge, rng.integers(0, 8, size=(N, 2)).astype(np.int32)
    )
    with pytest.raises(
        ValueError,
        match=r"offset_provider\['E2C'\] maps to Edge, but the offset E2C reads fields over Cell",
    ):
        prog(
            case.field([Cell], rng.standard_normal(8)),
            case.field([Edge], rng.standard_normal(N)),
            offset_provider={"E2C": table},
        )


# ---------------------------------------------------------------- 7. domain= leaving out a dimension
FIJ = Field[Dims[I, J], float64]


@gtx.field_operator
def _double(a: FIJ) -> FIJ:
    return 2.0 * a


def test_a_dimension_left_out_of_domain_spans_the_whole_output(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(a: FIJ, out: FIJ):
        _double(a, out=out, domain={I: (1, 4)})

    a, o = rng.standard_normal((6, 5)), rng.standard_normal((6, 5))
    expected = o.copy()
    out = case.field([I, J], o)
    prog(case.field([I, J], a), out, offset_provider={})
    expected[1:4, :] = 2.0 * a[1:4, :]
    np.testing.assert_array_equal(out.asnumpy(), expected)


def test_a_negative_size_is_refused() -> None:
    with pytest.raises(ValueError, match="a size must not be negative, got -3"):
        gtx.zeros({I: -3})
    with pytest.raises(ValueError, match="a size must not be negative"):
        gtx.empty({I: 4, J: -1}, dtype=gtx.float32)
