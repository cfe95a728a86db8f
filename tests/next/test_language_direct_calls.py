"""Field operators called outside a program through ``op.returning(...)`` (stencilkit's opt-in
for a call without out=): they return new fields over the domain where the result is defined,
on the arguments' device. A plain call without out= raises, as in gt4py.next."""

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Edge = gtx.Dimension("Edge")
Cell = gtx.Dimension("Cell")
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))
IJ = Field[Dims[I, J], float64]


@gtx.field_operator
def lap(a: IJ) -> IJ:
    return -4.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)


@gtx.field_operator
def shifted_pair(a: IJ) -> tuple[IJ, IJ]:
    return a(I + 1), 2.0 * a


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def cumsum(carry: float, x: float) -> float:
    return carry + x


@gtx.field_operator
def edge_sum(c: Field[Dims[Cell], float64]) -> Field[Dims[Edge], float64]:
    return gtx.neighbor_sum(c(E2C), axis=E2CDim)


def test_result_over_the_shrunk_domain(case, rng) -> None:
    data = rng.standard_normal((7, 6))
    a = gtx.as_field(gtx.domain({I: (2, 9), J: (-1, 5)}), data, allocator=case.allocator)
    r = lap.with_backend(case.backend).returning(a, offset_provider={})
    assert r.domain == gtx.domain({I: (3, 8), J: (0, 4)})
    assert r.device == a.device
    expected = (
        -4 * data[1:-1, 1:-1] + data[2:, 1:-1] + data[:-2, 1:-1] + data[1:-1, 2:] + data[1:-1, :-2]
    )
    np.testing.assert_allclose(r.asnumpy(), expected, rtol=1e-13)


def test_tuple_result_shares_one_domain(case, rng) -> None:
    data = rng.standard_normal((5, 4))
    r0, r1 = shifted_pair.with_backend(case.backend).returning(
        case.field([I, J], data), offset_provider={}
    )
    assert r0.domain == r1.domain == gtx.domain({I: (0, 4), J: (0, 4)})
    np.testing.assert_array_equal(r0.asnumpy(), data[1:])
    np.testing.assert_array_equal(r1.asnumpy(), 2.0 * data[:4])


def test_explicit_domain_without_out(case, rng) -> None:
    data = rng.standard_normal((6, 6))
    r = lap.with_backend(case.backend).returning(
        case.field([I, J], data), domain={I: (2, 4), J: (1, 3)}, offset_provider={}
    )
    assert r.domain == gtx.domain({I: (2, 4), J: (1, 3)})
    expected = (
        -4 * data[2:4, 1:3] + data[3:5, 1:3] + data[1:3, 1:3] + data[2:4, 2:4] + data[2:4, 0:2]
    )
    np.testing.assert_allclose(r.asnumpy(), expected, rtol=1e-13)


def test_scan_without_out(case, rng) -> None:
    data = rng.standard_normal((3, 8))
    r = cumsum.with_backend(case.backend).returning(case.field([I, K], data), offset_provider={})
    assert r.domain == gtx.domain({I: 3, K: 8})
    np.testing.assert_allclose(r.asnumpy(), np.cumsum(data, axis=1), rtol=1e-13)


def test_neighbour_sum_without_out_uses_the_table_rows(case, rng) -> None:
    table = rng.integers(0, 5, (9, 2)).astype(np.int32)
    cells = rng.standard_normal(5)
    conn = case.connectivity([Edge, E2CDim], Cell, table)
    r = edge_sum.with_backend(case.backend).returning(
        case.field([Cell], cells), offset_provider={"E2C": conn}
    )
    assert r.domain == gtx.domain({Edge: 9})
    np.testing.assert_allclose(r.asnumpy(), cells[table].sum(axis=1), rtol=1e-13)


def test_result_without_any_field_is_refused() -> None:
    @gtx.field_operator
    def const(s: float64) -> Field[Dims[I], float64]:
        return gtx.broadcast(s, (I,))

    with pytest.raises(gtx.StencilTypeError, match="at least one field"):
        const.returning(1.0, offset_provider={})


def test_unconstrained_dimension_is_refused() -> None:
    @gtx.field_operator
    def spread(a: Field[Dims[I], float64]) -> IJ:
        return gtx.broadcast(a, (I, J))

    with pytest.raises(gtx.StencilTypeError, match="cannot tell the result's range along J"):
        spread.returning(gtx.as_field([I], np.ones(3)), offset_provider={})


def test_call_without_out_raises_missing_argument_error() -> None:
    a = gtx.as_field([I, J], np.ones((4, 4)))
    with pytest.raises(gtx.errors.MissingArgumentError, match="Expected keyword-argument 'out'"):
        lap(a, offset_provider={})
    with pytest.raises(gtx.errors.MissingArgumentError):
        cumsum(gtx.as_field([I, K], np.ones((2, 3))))
