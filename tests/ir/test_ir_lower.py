"""Lowering (``ir.lower``), pass by pass as text: the operator-level program the frontend builds
(IR in) and the stencil-level program ``lower_program`` makes of it (IR out), one case per
construct. The IR verifier runs after each pass here (``conftest.py`` turns it on)."""

from __future__ import annotations

import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32
from stencilkit.core.errors import StencilValueError
from stencilkit.core.types import FieldType, ScalarType, TupleType
from stencilkit.experimental import as_offset
from stencilkit.ir import nodes as ir
from stencilkit.ir.lower import TableInfo, flat_params, lower_program

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Cell, Edge = gtx.Dimension("Cell"), gtx.Dimension("Edge")
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
Ioff = gtx.FieldOffset("Ioff", source=I, target=(I,))
TABLES = {"E2C": TableInfo(2, False), "C2E": TableInfo(3, True)}

IJ = Field[Dims[I, J], float64]
FI = Field[Dims[I], float64]
IK = Field[Dims[I, K], float64]
CK = Field[Dims[Cell, K], float64]
EK = Field[Dims[Edge, K], float64]


@gtx.field_operator
def lap(a: IJ) -> IJ:
    return -4.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)


@gtx.program
def p_lap(a: IJ, out: IJ):
    lap(a, out=out, domain={I: (1, 7), J: (1, 5)})


@gtx.field_operator
def shifted_twice(a: IJ) -> IJ:
    b = a(I + 1)
    return b(I + 1) + b(J - 2)


@gtx.program
def p_shifted_twice(a: IJ, out: IJ):
    shifted_twice(a, out=out, domain={I: (0, 3), J: (2, 5)})


@gtx.field_operator
def edge_diff(c: CK) -> EK:
    return c(E2C[1]) - c(E2C[0])


@gtx.program
def p_edge_diff(c: CK, out: EK):
    edge_diff(c, out=out)


@gtx.field_operator
def cell_sum(e: EK, w: Field[Dims[Cell, C2EDim], float64]) -> CK:
    return gtx.neighbor_sum(w * e(C2E), axis=C2EDim)


@gtx.program
def p_cell_sum(e: EK, w: Field[Dims[Cell, C2EDim], float64], out: CK):
    cell_sum(e, w, out=out)


@gtx.field_operator
def edge_max(c: CK) -> EK:
    return gtx.max_over(c(E2C), axis=E2CDim)


@gtx.program
def p_edge_max(c: CK, out: EK):
    edge_max(c, out=out)


@gtx.field_operator
def cell_of_edges_of_cell(c: CK) -> CK:
    return gtx.neighbor_sum(gtx.min_over(c(E2C), axis=E2CDim)(C2E), axis=C2EDim)


@gtx.program
def p_nested(c: CK, out: CK):
    cell_of_edges_of_cell(c, out=out)


@gtx.field_operator
def slots(e: EK, w: Field[Dims[Cell, C2EDim], float64]) -> CK:
    return w[C2EDim(2)] * e(C2E[2]) + e(C2E)[C2EDim(1)]


@gtx.program
def p_slots(e: EK, w: Field[Dims[Cell, C2EDim], float64], out: CK):
    slots(e, w, out=out)


@gtx.field_operator
def sum_diff(a: FI, b: FI) -> tuple[FI, FI]:
    return a + b, a - b


@gtx.program
def p_tuple_out(a: FI, b: FI, x: FI, y: FI):
    sum_diff(a, b, out=(x, y))


@gtx.field_operator
def tuple_in(p: tuple[FI, tuple[FI, float64]]) -> FI:
    return p[0] * p[1][1] + p[1][0]


@gtx.program
def p_tuple_in(p: tuple[FI, tuple[FI, float64]], out: FI):
    tuple_in(p, out=out)


@gtx.field_operator
def choose(a: FI, s: float64) -> FI:
    return gtx.where(a > s, a, gtx.sqrt(a * a)) + gtx.astype(gtx.abs(a), float64)


@gtx.program
def p_where(a: FI, s: float64, out: FI):
    choose(a, s, out=out, domain={I: (0, 4)})


@gtx.field_operator
def first_level(a: Field[Dims[K], float64]) -> Field[Dims[K], float64]:
    return gtx.concat_where(K == 0, a, a(K - 1))


@gtx.program
def p_concat_where(a: Field[Dims[K], float64], out: Field[Dims[K], float64]):
    first_level(a, out=out, domain={K: (0, 5)})


@gtx.field_operator
def spread(s: float64) -> IK:
    return gtx.broadcast(s, (I, K))


@gtx.program
def p_broadcast(s: float64, out: IK):
    spread(s, out=out)


@gtx.field_operator
def gather(g: FI, idx: Field[Dims[I], int32]) -> FI:
    return g(as_offset(Ioff, idx))


@gtx.program
def p_as_offset(g: FI, idx: Field[Dims[I], int32], out: FI):
    gather(g, idx, out=out, domain={I: (0, 3)})


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def cumsum(carry: float, a: float) -> float:
    return carry + a


@gtx.program
def p_scan(a: IK, out: IK):
    cumsum(a, out=out)


@gtx.scan_operator(axis=K, forward=False, init=(0.0, 1.0))
def sum_and_max(state: tuple[float, float], x: float) -> tuple[float, float]:
    total, top = state
    return total + x, gtx.maximum(top, x)


@gtx.program
def p_tuple_scan(x: IK, s: IK, m: IK):
    sum_and_max(x, out=(s, m), domain={I: (0, 2), K: (1, 4)})


@gtx.scan_operator(axis=K, forward=False, init=0.0)
def rsum(carry: float, a: float) -> float:
    return carry + a


@gtx.field_operator
def twice_cumsum(a: IK) -> IK:
    return rsum(cumsum(a))


@gtx.program
def p_scan_of_scan(a: IK, out: IK):
    twice_cumsum(a, out=out)


@gtx.program
def p_two_statements(a: IJ, tmp: IJ, out: IJ):
    lap(a, out=tmp, domain={I: (1, 7), J: (1, 5)})
    lap(tmp, out=out, domain={I: (2, 6), J: (2, 4)})


# name: (program, operator-level text the frontend gives, stencil-level text lowering gives)
CASES: dict[str, tuple[object, str, str]] = {
    "cartesian shifts become access offsets": (
        p_lap,
        """\
program p_lap(a: Field[[I, J], float64], out: Field[[I, J], float64]) {
  out @ {I: int64(1):int64(7), J: int64(1):int64(5)} <- (((((float64(-4.0) * a) + a(I+1)) + a(I-1)) + a(J+1)) + a(J-1))  # lap
}""",
        """\
stencil_program p_lap(a: Field[[I, J], float64], out: Field[[I, J], float64]) {
  kernel lap over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    out = (((((float64(-4.0) * a[I, J]) + a[I+1, J]) + a[I-1, J]) + a[I, J+1]) + a[I, J-1])
  }
}""",
    ),
    "shifts of a shifted value add up": (
        p_shifted_twice,
        """\
program p_shifted_twice(a: Field[[I, J], float64], out: Field[[I, J], float64]) {
  out @ {I: int64(0):int64(3), J: int64(2):int64(5)} <- {
    let t0 = a(I+1)
    (t0(I+1) + t0(J-2))
  }  # shifted_twice
}""",
        """\
stencil_program p_shifted_twice(a: Field[[I, J], float64], out: Field[[I, J], float64]) {
  kernel shifted_twice over [I, J] @ {I: int64(0):int64(3), J: int64(2):int64(5)} {
    out = (a[I+2, J] + a[I+1, J-2])
  }
}""",
    ),
    "a neighbour slot becomes a table lookup": (
        p_edge_diff,
        """\
program p_edge_diff(c: Field[[Cell, K], float64], out: Field[[Edge, K], float64]) {
  out @ {out} <- (c(E2C[1]) - c(E2C[0]))  # edge_diff
}""",
        """\
stencil_program p_edge_diff(c: Field[[Cell, K], float64], out: Field[[Edge, K], float64]) {
  kernel edge_diff over [Edge, K] @ {out} {
    out = (c[E2C[Edge, 1], K] - c[E2C[Edge, 0], K])
  }
}""",
    ),
    "a reduction over a table with skip values is masked": (
        p_cell_sum,
        """\
program p_cell_sum(e: Field[[Edge, K], float64], w: Field[[Cell, C2E], float64], out: Field[[Cell, K], float64]) {
  out @ {out} <- sum_over[C2E]((w * e(C2E)))  # cell_sum
}""",
        """\
stencil_program p_cell_sum(e: Field[[Edge, K], float64], w: Field[[Cell, C2E], float64], out: Field[[Cell, K], float64]) {
  kernel cell_sum over [Cell, K] @ {out} {
    out = sum(#C2E < 3 if valid(C2E[Cell, #C2E]): (w[Cell, #C2E] * e[C2E[Cell, #C2E], K]))
  }
}""",
    ),
    "a reduction over a table without skip values is not masked": (
        p_edge_max,
        """\
program p_edge_max(c: Field[[Cell, K], float64], out: Field[[Edge, K], float64]) {
  out @ {out} <- max_over[E2C](c(E2C))  # edge_max
}""",
        """\
stencil_program p_edge_max(c: Field[[Cell, K], float64], out: Field[[Edge, K], float64]) {
  kernel edge_max over [Edge, K] @ {out} {
    out = max(#E2C < 2: c[E2C[Edge, #E2C], K])
  }
}""",
    ),
    "nested reductions read through both tables": (
        p_nested,
        """\
program p_nested(c: Field[[Cell, K], float64], out: Field[[Cell, K], float64]) {
  out @ {out} <- sum_over[C2E](min_over[E2C](c(E2C))(C2E))  # cell_of_edges_of_cell
}""",
        """\
stencil_program p_nested(c: Field[[Cell, K], float64], out: Field[[Cell, K], float64]) {
  kernel cell_of_edges_of_cell over [Cell, K] @ {out} {
    out = sum(#C2E < 3 if valid(C2E[Cell, #C2E]): min(#E2C < 2: c[E2C[C2E[Cell, #C2E], #E2C], K]))
  }
}""",
    ),
    "a selected local slot becomes a constant index": (
        p_slots,
        """\
program p_slots(e: Field[[Edge, K], float64], w: Field[[Cell, C2E], float64], out: Field[[Cell, K], float64]) {
  out @ {out} <- ((w[C2E=2] * e(C2E[2])) + e(C2E)[C2E=1])  # slots
}""",
        """\
stencil_program p_slots(e: Field[[Edge, K], float64], w: Field[[Cell, C2E], float64], out: Field[[Cell, K], float64]) {
  kernel slots over [Cell, K] @ {out} {
    out = ((w[Cell, 2] * e[C2E[Cell, 2], K]) + e[C2E[Cell, 1], K])
  }
}""",
    ),
    "a tuple result writes one output per element": (
        p_tuple_out,
        """\
program p_tuple_out(a: Field[[I], float64], b: Field[[I], float64], x: Field[[I], float64], y: Field[[I], float64]) {
  x, y @ {out} <- ((a + b), (a - b),)  # sum_diff
}""",
        """\
stencil_program p_tuple_out(a: Field[[I], float64], b: Field[[I], float64], x: Field[[I], float64], y: Field[[I], float64]) {
  kernel sum_diff over [I] @ {out} {
    x = (a[I] + b[I])
    y = (a[I] - b[I])
  }
}""",
    ),
    "tuple parameters are flattened to name__i": (
        p_tuple_in,
        """\
program p_tuple_in(p: tuple[Field[[I], float64], tuple[Field[[I], float64], float64]], out: Field[[I], float64]) {
  out @ {out} <- ((p[0] * p[1][1]) + p[1][0])  # tuple_in
}""",
        """\
stencil_program p_tuple_in(p__0: Field[[I], float64], p__1__0: Field[[I], float64], p__1__1: float64, out: Field[[I], float64]) {
  kernel tuple_in over [I] @ {out} {
    out = ((p__0[I] * p__1__1) + p__1__0[I])
  }
}""",
    ),
    "builtins and scalar parameters stay point-wise": (
        p_where,
        """\
program p_where(a: Field[[I], float64], s: float64, out: Field[[I], float64]) {
  out @ {I: int64(0):int64(4)} <- (where((a > s), a, sqrt((a * a))) + astype[Field[[I], float64]](abs(a)))  # choose
}""",
        """\
stencil_program p_where(a: Field[[I], float64], s: float64, out: Field[[I], float64]) {
  kernel choose over [I] @ {I: int64(0):int64(4)} {
    out = (where((a[I] > s), a[I], sqrt((a[I] * a[I]))) + astype[Field[[I], float64]](abs(a[I])))
  }
}""",
    ),
    "an index comparison reads the position": (
        p_concat_where,
        """\
program p_concat_where(a: Field[[K], float64], out: Field[[K], float64]) {
  out @ {K: int64(0):int64(5)} <- concat_where((index(K) == int64(0)), a, a(K-1))  # first_level
}""",
        """\
stencil_program p_concat_where(a: Field[[K], float64], out: Field[[K], float64]) {
  kernel first_level over [K] @ {K: int64(0):int64(5)} {
    out = concat_where((index(K) == int64(0)), a[K], a[K-1])
  }
}""",
    ),
    "broadcast disappears": (
        p_broadcast,
        """\
program p_broadcast(s: float64, out: Field[[I, K], float64]) {
  out @ {out} <- broadcast[Field[[I, K], float64]](s)  # spread
}""",
        """\
stencil_program p_broadcast(s: float64, out: Field[[I, K], float64]) {
  kernel spread over [I, K] @ {out} {
    out = s
  }
}""",
    ),
    "as_offset becomes a dynamic index": (
        p_as_offset,
        """\
program p_as_offset(g: Field[[I], float64], idx: Field[[I], int32], out: Field[[I], float64]) {
  out @ {I: int64(0):int64(3)} <- g(I+idx)  # gather
}""",
        """\
stencil_program p_as_offset(g: Field[[I], float64], idx: Field[[I], int32], out: Field[[I], float64]) {
  kernel gather over [I] @ {I: int64(0):int64(3)} {
    out = g[(I+idx[I])]
  }
}""",
    ),
    "a scan becomes a kernel with a carry": (
        p_scan,
        """\
program p_scan(a: Field[[I, K], float64], out: Field[[I, K], float64]) {
  out @ {out} <- scan[K, forward](cumsum_carry_ = float64(0.0); (cumsum_carry_ + a))  # cumsum
}""",
        """\
stencil_program p_scan(a: Field[[I, K], float64], out: Field[[I, K], float64]) {
  kernel cumsum over [I, K] @ {out} scan[K, forward](cumsum_carry___c = float64(0.0)) {
    out = (cumsum_carry___c + a[I, K])
  }
}""",
    ),
    "a tuple carry becomes one carry per element": (
        p_tuple_scan,
        """\
program p_tuple_scan(x: Field[[I, K], float64], s: Field[[I, K], float64], m: Field[[I, K], float64]) {
  s, m @ {I: int64(0):int64(2), K: int64(1):int64(4)} <- scan[K, backward](sum_and_max_carry_ = (float64(0.0), float64(1.0),); ((sum_and_max_carry_[0] + x), maximum(sum_and_max_carry_[1], x),))  # sum_and_max
}""",
        """\
stencil_program p_tuple_scan(x: Field[[I, K], float64], s: Field[[I, K], float64], m: Field[[I, K], float64]) {
  kernel sum_and_max over [I, K] @ {I: int64(0):int64(2), K: int64(1):int64(4)} scan[K, backward](sum_and_max_carry___c0 = float64(0.0), sum_and_max_carry___c1 = float64(1.0)) {
    s = (sum_and_max_carry___c0 + x[I, K])
    m = maximum(sum_and_max_carry___c1, x[I, K])
  }
}""",
    ),
    "a scan of a scan passes columns through a temporary": (
        p_scan_of_scan,
        """\
program p_scan_of_scan(a: Field[[I, K], float64], out: Field[[I, K], float64]) {
  temp __tmp0_0: Field[[I, K], float64]
  __tmp0_0 @ {out} <- scan[K, forward](cumsum_carry_ = float64(0.0); (cumsum_carry_ + a))  # cumsum
  out @ {out} <- scan[K, backward](rsum_carry_ = float64(0.0); (rsum_carry_ + __tmp0_0))  # twice_cumsum
}""",
        """\
stencil_program p_scan_of_scan(a: Field[[I, K], float64], out: Field[[I, K], float64], __tmp0_0: Field[[I, K], float64]) {
  kernel cumsum over [I, K] @ {out} scan[K, forward](cumsum_carry___c = float64(0.0)) {
    __tmp0_0 = (cumsum_carry___c + a[I, K])
  }
  kernel twice_cumsum over [I, K] @ {out} scan[K, backward](rsum_carry___c = float64(0.0)) {
    out = (rsum_carry___c + __tmp0_0[I, K])
  }
}""",
    ),
    "statements become kernels in order": (
        p_two_statements,
        """\
program p_two_statements(a: Field[[I, J], float64], tmp: Field[[I, J], float64], out: Field[[I, J], float64]) {
  tmp @ {I: int64(1):int64(7), J: int64(1):int64(5)} <- (((((float64(-4.0) * a) + a(I+1)) + a(I-1)) + a(J+1)) + a(J-1))  # lap
  out @ {I: int64(2):int64(6), J: int64(2):int64(4)} <- (((((float64(-4.0) * tmp) + tmp(I+1)) + tmp(I-1)) + tmp(J+1)) + tmp(J-1))  # lap
}""",
        """\
stencil_program p_two_statements(a: Field[[I, J], float64], tmp: Field[[I, J], float64], out: Field[[I, J], float64]) {
  kernel lap over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    tmp = (((((float64(-4.0) * a[I, J]) + a[I+1, J]) + a[I-1, J]) + a[I, J+1]) + a[I, J-1])
  }
  kernel lap over [I, J] @ {I: int64(2):int64(6), J: int64(2):int64(4)} {
    out = (((((float64(-4.0) * tmp[I, J]) + tmp[I+1, J]) + tmp[I-1, J]) + tmp[I, J+1]) + tmp[I, J-1])
  }
}""",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_frontend_and_lowering_as_text(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    prog, operator_text, stencil_text = CASES[name]
    # the lowering of what the frontend wrote, without the hoisting of values read at several
    # neighbours (tests/next/test_neighbour_temporaries.py): parsed afresh with it off
    monkeypatch.setattr(gtx.config, "NEIGHBOUR_TEMPORARIES", False)
    definition = type(prog)(None, None, prog.__wrapped__).definition  # type: ignore[attr-defined]
    assert str(definition) == operator_text
    assert str(lower_program(definition, TABLES)) == stencil_text


# ---------------------------------------------------------------- lowering's own errors
def test_a_missing_table_is_named() -> None:
    with pytest.raises(StencilValueError, match="offset_provider has no neighbour table for 'E2C'"):
        lower_program(p_edge_diff.definition, {})


def test_a_neighbour_slot_past_the_table_is_refused() -> None:
    with pytest.raises(
        StencilValueError, match=r"C2E\[2\] is out of range: the table has 2 neighbours"
    ):
        lower_program(p_slots.definition, {"C2E": TableInfo(2, False)})


def test_tables_of_one_reduction_must_agree_on_its_size() -> None:
    @gtx.field_operator
    def both(e: EK, w: Field[Dims[Cell, C2EDim], float64]) -> CK:
        return gtx.neighbor_sum(e(C2E) * w, axis=C2EDim)

    @gtx.program
    def p(e: EK, w: Field[Dims[Cell, C2EDim], float64], out: CK):
        both(e, w, out=out)

    text = str(lower_program(p.definition, {"C2E": TableInfo(4, False)}))
    assert "sum(#C2E < 4: (e[C2E[Cell, #C2E], K] * w[Cell, #C2E]))" in text


def test_writing_a_field_the_operator_reads_goes_through_a_temporary() -> None:
    @gtx.program
    def in_place(a: IJ):
        lap(a, out=a, domain={I: (1, 7), J: (1, 5)})

    assert (
        str(lower_program(in_place.definition, {}))
        == """\
stencil_program in_place(a: Field[[I, J], float64], __tmp0_0: Field[[I, J], float64]) {
  kernel lap over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    __tmp0_0 = (((((float64(-4.0) * a[I, J]) + a[I+1, J]) + a[I-1, J]) + a[I, J+1]) + a[I, J-1])
  }
  kernel lap over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    a = __tmp0_0[I, J]
  }
}"""
    )


def test_an_output_read_at_another_point_is_refused() -> None:
    """Hand-built: the frontend never emits it (it adds a temporary, above)."""
    f = FieldType((I,), "float64")
    a = ir.Ref("a", f)
    prog = ir.Program(
        "p",
        (ir.Param("a", f),),
        (ir.Apply(ir.Shift(a, ir.CartesianShift(I, 1), f), (a,), (), "copy_left"),),
    )
    with pytest.raises(
        StencilValueError,
        match=r"'a' is both written by copy_left and read at another point \(a\[I\+1\]\)",
    ):
        lower_program(prog, {})


def test_flat_params() -> None:
    t = TupleType(
        (FieldType((I,), "float64"), TupleType((ScalarType("int32"), ScalarType("bool"))))
    )
    params = flat_params((ir.Param("p", t), ir.Param("s", ScalarType("float32"))))
    assert [str(p) for p in params] == [
        "p__0: Field[[I], float64]",
        "p__1__0: int32",
        "p__1__1: bool",
        "s: float32",
    ]
