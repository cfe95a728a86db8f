"""Local dimensions: ``field[LocalDim(i)]`` slot selection, nested reductions (of different
widths and over one dimension), reads through skipped slots; ``if`` in a scan body per column."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64

Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
Vertex = gtx.Dimension("Vertex")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
C2EDim = gtx.Dimension("C2EDim", kind=gtx.DimensionKind.LOCAL)
C2CDim = gtx.Dimension("C2CDim", kind=gtx.DimensionKind.LOCAL)
E2VDim = gtx.Dimension("E2VDim", kind=gtx.DimensionKind.LOCAL)
V2EDim = gtx.Dimension("V2EDim", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
C2C = gtx.FieldOffset("C2C", source=Cell, target=(Cell, C2CDim))
E2V = gtx.FieldOffset("E2V", source=Vertex, target=(Edge, E2VDim))
V2E = gtx.FieldOffset("V2E", source=Edge, target=(Vertex, V2EDim))
NC, NE, NV, NK = 12, 18, 9, 4
CK = Field[Dims[Cell, K], float64]
EK = Field[Dims[Edge, K], float64]
VK = Field[Dims[Vertex, K], float64]


@gtx.field_operator
def first_minus_second(e: EK) -> CK:
    nb = e(C2E)
    return nb[C2EDim(0)] - nb[C2EDim(1)]


@gtx.field_operator
def weighted_slot(w: Field[Dims[Cell, C2EDim], float64], e: EK) -> CK:
    return w[C2EDim(2)] * e(C2E[2]) + e(C2E)[C2EDim(1)]


def test_local_dim_slot_selection(case, rng) -> None:
    c2e = rng.integers(0, NE, (NC, 3)).astype(np.int32)
    e = rng.standard_normal((NE, NK))
    w = rng.standard_normal((NC, 3))
    o1, o2 = rng.standard_normal((NC, NK)), rng.standard_normal((NC, NK))

    @gtx.program(backend=case.backend)
    def run(e: EK, w: Field[Dims[Cell, C2EDim], float64], o1: CK, o2: CK):
        first_minus_second(e, out=o1)
        weighted_slot(w, e, out=o2)

    f1, f2 = case.field([Cell, K], o1), case.field([Cell, K], o2)
    run(
        case.field([Edge, K], e),
        case.field([Cell, C2EDim], w),
        f1,
        f2,
        offset_provider={"C2E": case.connectivity([Cell, C2EDim], Edge, c2e)},
    )
    np.testing.assert_allclose(f1.asnumpy(), e[c2e[:, 0]] - e[c2e[:, 1]], rtol=1e-14)
    np.testing.assert_allclose(f2.asnumpy(), w[:, 2:3] * e[c2e[:, 2]] + e[c2e[:, 1]], rtol=1e-14)


def test_local_dim_slot_selection_errors() -> None:
    with pytest.raises(gtx.StencilTypeError, match="no dimension C2CDim"):

        @gtx.field_operator
        def wrong_dim(e: EK) -> CK:
            return e(C2E)[C2CDim(0)]

    with pytest.raises(gtx.StencilTypeError, match="one integer literal"):

        @gtx.field_operator
        def not_literal(e: EK, i: gtx.int32) -> CK:
            return e(C2E)[C2EDim(i)]


@gtx.field_operator
def vertex_of_edges(a: VK) -> VK:
    t = gtx.neighbor_sum(a(E2V), axis=E2VDim)  # width 2
    return gtx.neighbor_sum(t(V2E), axis=V2EDim)  # width 3


def test_nested_reductions_of_different_widths(case, rng) -> None:
    """Regression: embedded broadcast the outer local axis with the inner width."""
    e2v = rng.integers(0, NV, (NE, 2)).astype(np.int32)
    v2e = rng.integers(0, NE, (NV, 3)).astype(np.int32)
    a = rng.standard_normal((NV, NK))

    @gtx.program(backend=case.backend)
    def run(a: VK, out: VK):
        vertex_of_edges(a, out=out)

    out = case.field([Vertex, K], rng.standard_normal((NV, NK)))
    run(
        case.field([Vertex, K], a),
        out,
        offset_provider={
            "E2V": case.connectivity([Edge, E2VDim], Vertex, e2v),
            "V2E": case.connectivity([Vertex, V2EDim], Edge, v2e),
        },
    )
    t = a[e2v].sum(axis=1)
    np.testing.assert_allclose(out.asnumpy(), t[v2e].sum(axis=1), rtol=1e-13)


@gtx.field_operator
def lap(a: CK, w: Field[Dims[Cell, C2CDim], float64]) -> CK:
    return gtx.neighbor_sum(a(C2C) * w, axis=C2CDim) - a


@gtx.field_operator
def lap_lap(a: CK, w: Field[Dims[Cell, C2CDim], float64]) -> CK:
    return lap(lap(a, w), w)


def test_nested_reductions_over_one_local_dimension(case, rng) -> None:
    """Regression: the inner reduction's loop index shadowed the outer one (KeyError)."""
    c2c = rng.integers(0, NC, (NC, 3)).astype(np.int32)
    c2c[rng.random((NC, 3)) < 0.25] = -1
    a = rng.standard_normal((NC, NK))
    w = rng.standard_normal((NC, 3))

    @gtx.program(backend=case.backend)
    def run(a: CK, w: Field[Dims[Cell, C2CDim], float64], out: CK):
        lap_lap(a, w, out=out)

    out = case.field([Cell, K], rng.standard_normal((NC, NK)))
    run(
        case.field([Cell, K], a),
        case.field([Cell, C2CDim], w),
        out,
        offset_provider={"C2C": case.connectivity([Cell, C2CDim], Cell, c2c, skip_value=-1)},
    )

    def ref_lap(x: np.ndarray) -> np.ndarray:
        valid = c2c >= 0
        nb = np.where(valid[:, :, None], x[np.where(valid, c2c, 0)] * w[:, :, None], 0.0)
        return nb.sum(axis=1) - x

    np.testing.assert_allclose(out.asnumpy(), ref_lap(ref_lap(a)), rtol=1e-12, atol=1e-13)


def test_read_through_a_skipped_slot_outside_a_reduction() -> None:
    """Regression: embedded read index 0 at a skipped slot; gt4py embedded reads index -1."""
    v2e = np.array([[0, 1, -1], [2, -1, 3], [4, 5, 1]], dtype=np.int32)
    e = np.arange(6, dtype=np.float64) * 1.5 + 1.0

    @gtx.field_operator
    def gather(e: Field[Dims[Edge], float64]) -> Field[Dims[Vertex, V2EDim], float64]:
        return e(V2E)

    out = gtx.as_field([Vertex, V2EDim], np.zeros((3, 3)))
    gather(
        gtx.as_field([Edge], e),
        out=out,
        offset_provider={"V2E": gtx.as_connectivity([Vertex, V2EDim], Edge, v2e, skip_value=-1)},
    )
    np.testing.assert_array_equal(out.asnumpy(), e[v2e])  # NumPy's e[-1] at the skipped slots


@gtx.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def clipped(state: tuple[float, float], x: float, limit: float) -> tuple[float, float]:
    acc = state[0] + x
    if acc > limit:
        acc = limit
    return acc, (state[1] + 1.0 if x > 0.0 else state[1] - 1.0)


def test_if_with_a_per_column_condition_in_a_scan(case, rng) -> None:
    """Regression: embedded called bool() on the array of a per-column condition."""
    x = rng.standard_normal((NC, NK))
    limit = rng.uniform(0.0, 1.0, (NC, NK))

    @gtx.field_operator
    def op(x: CK, limit: CK) -> tuple[CK, CK]:
        return clipped(x, limit)

    @gtx.program(backend=case.backend)
    def run(x: CK, limit: CK, o1: CK, o2: CK):
        op(x, limit, out=(o1, o2))

    o1, o2 = (
        case.field([Cell, K], rng.standard_normal((NC, NK))),
        case.field([Cell, K], rng.standard_normal((NC, NK))),
    )
    run(case.field([Cell, K], x), case.field([Cell, K], limit), o1, o2, offset_provider={})
    e1, e2 = np.empty((NC, NK)), np.empty((NC, NK))
    acc, cnt = np.zeros(NC), np.zeros(NC)
    for k in range(NK):
        acc = np.minimum(acc + x[:, k], limit[:, k])
        cnt = np.where(x[:, k] > 0, cnt + 1, cnt - 1)
        e1[:, k], e2[:, k] = acc, cnt
    np.testing.assert_allclose(o1.asnumpy(), e1, rtol=1e-14)
    np.testing.assert_allclose(o2.asnumpy(), e2, rtol=1e-14)


def test_read_through_a_skipped_slot_on_cpu_stays_inside_the_field() -> None:
    """Compiled code reads the field's first element there (never memory before the field)."""
    v2e = np.array([[0, 1, -1], [2, -1, 3], [4, 5, 1]], dtype=np.int32)
    e = np.arange(6, dtype=np.float64) * 1.5 + 1.0

    @gtx.field_operator
    def gather(e: Field[Dims[Edge], float64]) -> Field[Dims[Vertex, V2EDim], float64]:
        return e(V2E)

    @gtx.program(backend=gtx.cpu)
    def run(e: Field[Dims[Edge], float64], out: Field[Dims[Vertex, V2EDim], float64]):
        gather(e, out=out)

    out = gtx.as_field([Vertex, V2EDim], np.zeros((3, 3)))
    run(
        gtx.as_field([Edge], e),
        out,
        offset_provider={"V2E": gtx.as_connectivity([Vertex, V2EDim], Edge, v2e, skip_value=-1)},
    )
    np.testing.assert_array_equal(out.asnumpy(), np.where(v2e >= 0, e[v2e], e[0]))
