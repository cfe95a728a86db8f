"""Read extents and domain inference (``ir.extents``): how far from the output point each field
and table is read, the largest domain whose reads stay inside given fields, and the scalars that
decide where a program reads and writes."""

from __future__ import annotations

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32
from stencilkit.core.domain import UnitRange
from stencilkit.ir.extents import FieldExtent, bound_scalars, output_domain, read_extents
from stencilkit.ir.lower import TableInfo, lower_program

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Cell, Edge = gtx.Dimension("Cell"), gtx.Dimension("Edge")
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
IJ = Field[Dims[I, J], float64]
FK = Field[Dims[K], float64]
DIMS = {
    "a": (I, J),
    "b": (I, J),
    "out": (I, J),
    "e": (Edge, K),
    "w": (Cell, C2EDim),
    "o": (Cell, K),
    "C2E": (Cell, C2EDim),
    "k": (K,),
    "ko": (K,),
    "edge": (K,),
}


@gtx.field_operator
def skewed(a: IJ, b: IJ) -> IJ:
    return a(I + 2)(J - 1) + a(I - 1) + b


@gtx.program
def p_skewed(a: IJ, b: IJ, out: IJ):
    skewed(a, b, out=out, domain={I: (1, 6), J: (1, 5)})


@gtx.field_operator
def cell_sum(
    e: Field[Dims[Edge, K], float64], w: Field[Dims[Cell, C2EDim], float64]
) -> Field[Dims[Cell, K], float64]:
    return gtx.neighbor_sum(w * e(C2E), axis=C2EDim)


@gtx.program
def p_cell_sum(
    e: Field[Dims[Edge, K], float64],
    w: Field[Dims[Cell, C2EDim], float64],
    o: Field[Dims[Cell, K], float64],
):
    cell_sum(e, w, out=o)


@gtx.field_operator
def guarded(k: FK, edge: FK, n: int32) -> FK:
    return gtx.concat_where((K == 0) | (K >= n), edge, k(K - 1) + k(K + 1))


@gtx.program
def p_guarded(k: FK, edge: FK, n: int32, ko: FK, top: int32):
    guarded(k, edge, n, out=ko, domain={K: (0, top)})


def _kernel(prog: gtx.Program, tables: dict[str, TableInfo] | None = None):  # type: ignore[no-untyped-def]
    (k,) = lower_program(prog.definition, tables or {}).kernels
    return k


def test_cartesian_reads() -> None:
    ext = read_extents(_kernel(p_skewed), DIMS)
    assert set(ext) == {"a", "b"}
    assert ext["a"].offsets == {I: (-1, 2), J: (-1, 0)} and not ext["a"].indirect
    assert ext["b"].offsets == {I: (0, 0), J: (0, 0)}


def test_reads_through_a_table_are_indirect() -> None:
    ext = read_extents(_kernel(p_cell_sum, {"C2E": TableInfo(3, True)}), DIMS)
    assert ext["e"].indirect == {Edge: {"C2E"}} and ext["e"].offsets == {K: (0, 0)}
    assert ext["w"].offsets == {Cell: (0, 0)}  # the local dimension is looped over whole
    assert ext["C2E"].offsets == {Cell: (0, 0)}  # the table itself, at the row of the output


def test_a_guarded_read_counts_only_where_its_guard_selects() -> None:
    k = _kernel(p_guarded)
    # without the domain every read counts everywhere: K - 1 and K + 1
    assert read_extents(k, DIMS)["k"].offsets == {K: (-1, 1)}
    # over K: [0, 10) with n = 7, k(K - 1) and k(K + 1) are read on [1, 7): at [0, 8) - inside
    ext = read_extents(k, DIMS, {K: UnitRange(0, 10)}, {"n": 7})
    assert ext["k"].offsets == {K: (0, -2)}
    assert ext["edge"].offsets == {K: (0, 0)}  # read on [0, 1) and [7, 10)
    # with n unknown the guard K >= n cannot be used: only K == 0 is excluded
    assert read_extents(k, DIMS, {K: UnitRange(0, 10)}, {})["k"].offsets == {K: (0, 1)}


def test_output_domain_is_where_every_read_stays_inside() -> None:
    have = {
        "a": {I: UnitRange(0, 10), J: UnitRange(0, 8)},
        "b": {I: UnitRange(0, 9), J: UnitRange(0, 8)},
    }
    got = output_domain((_kernel(p_skewed),), (I, J), have, DIMS)
    assert got == {I: UnitRange(1, 8), J: UnitRange(1, 8)}
    assert output_domain((_kernel(p_skewed),), (I,), have, DIMS) == {I: UnitRange(1, 8)}


def test_bound_scalars_are_those_deciding_where_points_are_read_or_written() -> None:
    assert bound_scalars(p_guarded.definition) == {"n", "top"}
    assert bound_scalars(p_skewed.definition) == set()


def test_field_extents_start_empty() -> None:
    ext = FieldExtent()
    assert ext.offsets == {} and ext.indirect == {}
