"""Neighbour tables: shifts through connectivities, reductions with skip values, on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64

Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))

N_CELLS, N_EDGES, N_LEVELS = 40, 60, 5


@gtx.field_operator
def edge_diff(c: Field[Dims[Cell, K], float64]) -> Field[Dims[Edge, K], float64]:
    return c(E2C[1]) - c(E2C[0])


@gtx.field_operator
def cell_sum(
    e: Field[Dims[Edge, K], float64], w: Field[Dims[Cell, C2EDim], float64]
) -> Field[Dims[Cell, K], float64]:
    return gtx.neighbor_sum(w * e(C2E), axis=C2EDim)


@gtx.field_operator
def cell_extremes(
    e: Field[Dims[Edge, K], float64],
) -> tuple[Field[Dims[Cell, K], float64], Field[Dims[Cell, K], float64]]:
    return gtx.max_over(e(C2E), axis=C2EDim), gtx.min_over(e(C2E), axis=C2EDim)


def _tables(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    e2c = rng.integers(0, N_CELLS, size=(N_EDGES, 2)).astype(np.int32)
    c2e = rng.integers(0, N_EDGES, size=(N_CELLS, 4)).astype(np.int32)
    c2e[rng.random((N_CELLS, 4)) < 0.2] = -1  # boundary cells: missing neighbours
    c2e[0] = -1  # a cell with no neighbour at all
    return e2c, c2e


def test_shift_by_one_neighbour(case, rng) -> None:
    e2c, _ = _tables(rng)
    cd = rng.standard_normal((N_CELLS, N_LEVELS))
    od = rng.standard_normal((N_EDGES, N_LEVELS))

    @gtx.program(backend=case.backend)
    def run(c: Field[Dims[Cell, K], float64], out: Field[Dims[Edge, K], float64]):
        edge_diff(c, out=out)

    out = case.field([Edge, K], od)
    run(
        case.field([Cell, K], cd),
        out,
        offset_provider={"E2C": case.connectivity([Edge, E2CDim], Cell, e2c)},
    )
    np.testing.assert_allclose(out.asnumpy(), cd[e2c[:, 1]] - cd[e2c[:, 0]], rtol=1e-14)


def test_neighbor_sum_with_skip_values(case, rng) -> None:
    _, c2e = _tables(rng)
    ed = rng.standard_normal((N_EDGES, N_LEVELS))
    wd = rng.standard_normal((N_CELLS, 4))
    od = rng.standard_normal((N_CELLS, N_LEVELS))

    @gtx.program(backend=case.backend)
    def run(
        e: Field[Dims[Edge, K], float64],
        w: Field[Dims[Cell, C2EDim], float64],
        out: Field[Dims[Cell, K], float64],
    ):
        cell_sum(e, w, out=out, domain={Cell: (0, N_CELLS - 3), K: (1, N_LEVELS)})

    out = case.field([Cell, K], od)
    table = case.connectivity([Cell, C2EDim], Edge, c2e, skip_value=-1)
    run(
        case.field([Edge, K], ed),
        case.field([Cell, C2EDim], wd),
        out,
        offset_provider={"C2E": table},
    )
    valid = c2e >= 0
    gathered = np.where(valid[:, :, None], ed[np.where(valid, c2e, 0)], 0.0)
    expected = od.copy()
    expected[: N_CELLS - 3, 1:] = np.einsum("cn,cnk->ck", wd, gathered)[: N_CELLS - 3, 1:]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-13, atol=1e-14)


def test_max_and_min_over_skip_identity(case, rng) -> None:
    _, c2e = _tables(rng)
    ed = rng.standard_normal((N_EDGES, N_LEVELS))

    @gtx.program(backend=case.backend)
    def run(
        e: Field[Dims[Edge, K], float64],
        hi: Field[Dims[Cell, K], float64],
        lo: Field[Dims[Cell, K], float64],
    ):
        cell_extremes(e, out=(hi, lo))

    hi = case.field([Cell, K], rng.standard_normal((N_CELLS, N_LEVELS)))
    lo = case.field([Cell, K], rng.standard_normal((N_CELLS, N_LEVELS)))
    run(
        case.field([Edge, K], ed),
        hi,
        lo,
        offset_provider={"C2E": case.connectivity([Cell, C2EDim], Edge, c2e, skip_value=-1)},
    )
    valid = c2e >= 0
    vals = ed[np.where(valid, c2e, 0)]
    # no neighbour at all: the lowest / highest finite value (gt4py's gtfn convention)
    exp_hi = np.where(valid[:, :, None], vals, np.finfo(np.float64).min).max(axis=1)
    exp_lo = np.where(valid[:, :, None], vals, np.finfo(np.float64).max).min(axis=1)
    np.testing.assert_array_equal(hi.asnumpy(), exp_hi)
    np.testing.assert_array_equal(lo.asnumpy(), exp_lo)


def test_missing_offset_provider_is_refused(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def run(c: Field[Dims[Cell, K], float64], out: Field[Dims[Edge, K], float64]):
        edge_diff(c, out=out)

    with pytest.raises(ValueError, match="offset_provider has no entry for 'E2C'"):
        run(
            case.field([Cell, K], rng.standard_normal((N_CELLS, N_LEVELS))),
            case.field([Edge, K], rng.standard_normal((N_EDGES, N_LEVELS))),
            offset_provider={},
        )


def test_table_pointing_outside_the_field_is_refused(case, rng) -> None:
    e2c, _ = _tables(rng)
    e2c[3, 1] = N_CELLS + 5

    @gtx.program(backend=case.backend)
    def run(c: Field[Dims[Cell, K], float64], out: Field[Dims[Edge, K], float64]):
        edge_diff(c, out=out)

    with pytest.raises(
        ValueError,
        match=r"neighbour table 'E2C' holds indices .*45, but 'c' is defined on Cell: 0:40",
    ):
        run(
            case.field([Cell, K], rng.standard_normal((N_CELLS, N_LEVELS))),
            case.field([Edge, K], rng.standard_normal((N_EDGES, N_LEVELS))),
            offset_provider={"E2C": case.connectivity([Edge, E2CDim], Cell, e2c)},
        )


def test_read_through_a_missing_neighbour_is_refused(case, rng) -> None:
    e2c, _ = _tables(rng)
    e2c[7, 1] = -1  # edge 7 has one cell only (a boundary edge)

    @gtx.program(backend=case.backend)
    def run(c: Field[Dims[Cell, K], float64], out: Field[Dims[Edge, K], float64], lo: gtx.int32):
        edge_diff(c, out=out, domain={Edge: (lo, N_EDGES), K: (0, N_LEVELS)})

    table = case.connectivity([Edge, E2CDim], Cell, e2c, skip_value=-1)
    cd = rng.standard_normal((N_CELLS, N_LEVELS))
    od = rng.standard_normal((N_EDGES, N_LEVELS))
    out = case.field([Edge, K], od)
    with pytest.raises(
        ValueError,
        match=r"reads through E2C\[1\], but the table has no neighbour there .* the first at 7",
    ):
        run(case.field([Cell, K], cd), out, 0, offset_provider={"E2C": table})
    np.testing.assert_array_equal(out.asnumpy(), od)  # nothing ran
    run(
        case.field([Cell, K], cd), out, 8, offset_provider={"E2C": table}
    )  # the edges after 7 are fine
    np.testing.assert_allclose(out.asnumpy()[8:], (cd[e2c[:, 1]] - cd[e2c[:, 0]])[8:], rtol=1e-14)


def test_sparse_output_over_a_local_dimension(case, rng) -> None:
    """A field over [Cell, C2EDim, K] written from the neighbours' values."""
    _, c2e = _tables(rng)
    full = np.where(c2e >= 0, c2e, 0).astype(np.int32)  # no missing neighbours here

    @gtx.field_operator
    def gather(e: Field[Dims[Edge, K], float64]) -> Field[Dims[Cell, C2EDim, K], float64]:
        return 2.0 * e(C2E)

    @gtx.program(backend=case.backend)
    def run(e: Field[Dims[Edge, K], float64], out: Field[Dims[Cell, C2EDim, K], float64]):
        gather(e, out=out)

    ed = rng.standard_normal((N_EDGES, N_LEVELS))
    out = case.field([Cell, C2EDim, K], rng.standard_normal((N_CELLS, 4, N_LEVELS)))
    run(
        case.field([Edge, K], ed),
        out,
        offset_provider={"C2E": case.connectivity([Cell, C2EDim], Edge, full)},
    )
    np.testing.assert_allclose(out.asnumpy(), 2.0 * ed[full], rtol=1e-15)
