"""gt4py-style stencils, written as icon4py writes them (imports through the alias)."""

import gt4py.next as gtx
from gt4py.next import neighbor_sum

from .dims import C2E2CO, E2C, C2E2CODim, CellDim, CellKField, EdgeDim, EdgeField, EdgeKField, KDim


@gtx.field_operator
def _grad(psi: CellKField, inv_len: EdgeField) -> EdgeKField:
    return inv_len * (psi(E2C[1]) - psi(E2C[0]))


@gtx.program(grid_type="unstructured")
def grad(
    psi: CellKField,
    inv_len: EdgeField,
    out: EdgeKField,
    horizontal_start: gtx.int32,
    horizontal_end: gtx.int32,
    vertical_start: gtx.int32,
    vertical_end: gtx.int32,
):
    _grad(
        psi,
        inv_len,
        out=out,
        domain={EdgeDim: (horizontal_start, horizontal_end), KDim: (vertical_start, vertical_end)},
    )


@gtx.field_operator
def _avg(a: CellKField, w: gtx.Field[gtx.Dims[CellDim, C2E2CODim], gtx.float64]) -> CellKField:
    return neighbor_sum(a(C2E2CO) * w, axis=C2E2CODim)


@gtx.field_operator
def _dz_below(a: CellKField) -> CellKField:
    return a - a(KDim - 1)


@gtx.program
def dz_below(a: CellKField, out: CellKField, vertical_start: gtx.int32, vertical_end: gtx.int32):
    _dz_below(a, out=out, domain={CellDim: (0, 32), KDim: (vertical_start, vertical_end)})


@gtx.scan_operator(axis=KDim, forward=True, init=0.0)
def _cumsum(carry: float, x: float) -> float:
    return carry + x


@gtx.field_operator
def _sat_pres(t: float, a: gtx.float64) -> tuple[float, gtx.float64]:
    return a * t, t + 1.0
