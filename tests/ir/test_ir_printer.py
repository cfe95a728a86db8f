"""The IR printer (``ir.printer``): the text of every node class, and ``let`` bindings for
values used more than once (a DAG printed as text, each shared value once)."""

from __future__ import annotations

import pytest

import stencilkit as gtx
from stencilkit.core.types import FieldType, ScalarType, TupleType
from stencilkit.ir import nodes as ir
from stencilkit.ir.printer import to_text

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Cell, Edge = gtx.Dimension("Cell"), gtx.Dimension("Edge")
IHalf = gtx.Dimension("I_half")
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
F64, I32, I64, BOOL = (
    ScalarType("float64"),
    ScalarType("int32"),
    ScalarType("int64"),
    ScalarType("bool"),
)
FI = FieldType((I,), "float64")
a, s = ir.Ref("a", FI), ir.Ref("s", F64)
LOC = ir.LocalIndex(C2EDim)

NODES: list[tuple[ir.Node, str]] = [
    (ir.Literal(2.5, F64), "float64(2.5)"),
    (ir.Literal(2, I64, weak=True), "2"),
    (ir.Literal(True, BOOL), "bool(True)"),
    (ir.BinOp("**", a, s, FI), "(a ** s)"),
    (ir.UnaryOp("not", ir.Ref("b", BOOL), BOOL), "(notb)"),
    (ir.UnaryOp("-", a, FI), "(-a)"),
    (ir.Call("sqrt", (a,), FI), "sqrt(a)"),
    (ir.Call("astype", (a,), FieldType((I,), "float32")), "astype[Field[[I], float32]](a)"),
    (
        ir.Call("broadcast", (s,), FieldType((I, K), "float64")),
        "broadcast[Field[[I, K], float64]](s)",
    ),
    (ir.IfElse(ir.Ref("b", BOOL), a, s, FI), "(a if b else s)"),
    (ir.Shift(a, ir.CartesianShift(I, -2), FI), "a(I-2)"),
    (ir.Shift(a, ir.NeighborShift("E2C", Cell, (Edge, C2EDim), None), FI), "a(E2C)"),
    (ir.Shift(a, ir.NeighborShift("E2C", Cell, (Edge, C2EDim), 1), FI), "a(E2C[1])"),
    (ir.Shift(a, ir.DynamicShift(I, ir.Ref("idx", FieldType((I,), "int32"))), FI), "a(I+idx)"),
    (ir.Shift(a, ir.StaggeredShift(I, IHalf, 1), FI), "a(I->I_half+1)"),
    (
        ir.LocalSelect(
            ir.Ref("w", FieldType((Cell, C2EDim), "float64")),
            C2EDim,
            2,
            FieldType((Cell,), "float64"),
        ),
        "w[C2E=2]",
    ),
    (
        ir.Reduce(
            "max",
            ir.Ref("w", FieldType((Cell, C2EDim), "float64")),
            C2EDim,
            FieldType((Cell,), "float64"),
        ),
        "max_over[C2E](w)",
    ),
    (ir.DimIndex(K, FieldType((K,), "int64")), "index(K)"),
    (
        ir.ScanCall(
            K, False, "c", ir.Literal(0.0, F64), ir.BinOp("+", ir.Ref("c", F64), a, F64), FI
        ),
        "scan[K, backward](c = float64(0.0); (c + a))",
    ),
    (ir.MakeTuple((a,), TupleType((FI,))), "(a,)"),
    (ir.TupleGet(ir.Ref("t", TupleType((FI, F64))), 1, F64), "t[1]"),
    (ir.Access("a", (ir.Pos(I, 0),), F64), "a[I]"),
    (ir.Access("a", (ir.Pos(I, -3),), F64), "a[I-3]"),
    (ir.Access("b", (ir.Pos(I, 2), ir.ConstIndex(4)), F64), "b[I+2, 4]"),
    (
        ir.Access("e", (ir.Lookup("C2E", ir.Pos(Cell), LOC), ir.Pos(K)), F64),
        "e[C2E[Cell, #C2E], K]",
    ),
    (
        ir.Access("e", (ir.Lookup("C2E", ir.Pos(Cell), ir.LocalIndex(C2EDim, 1)),), F64),
        "e[C2E[Cell, #C2E1]]",
    ),
    (
        ir.Access("a", (ir.DynIndex(ir.Pos(I), ir.Access("idx", (ir.Pos(I),), I32)),), F64),
        "a[(I+idx[I])]",
    ),
    (ir.IndexValue(ir.Pos(K, -1), I64), "index(K-1)"),
    (ir.Valid("C2E", ir.Pos(Cell), LOC, BOOL), "valid(C2E[Cell, #C2E])"),
    (
        ir.LocalReduce("sum", C2EDim, 3, ir.Access("w", (ir.Pos(Cell), LOC), F64), None, F64),
        "sum(#C2E < 3: w[Cell, #C2E])",
    ),
    (
        ir.LocalReduce(
            "min",
            C2EDim,
            3,
            ir.Access("w", (ir.Pos(Cell), ir.LocalIndex(C2EDim, 1)), F64),
            ir.Valid("C2E", ir.Pos(Cell), ir.LocalIndex(C2EDim, 1), BOOL),
            F64,
            1,
        ),
        "min(#C2E1 < 3 if valid(C2E[Cell, #C2E1]): w[Cell, #C2E1])",
    ),
    (ir.Param("t", TupleType((FI, F64))), "t: tuple[Field[[I], float64], float64]"),
    (ir.DomainRange(I, ir.Literal(1, I64), ir.Ref("n", I64)), "I: int64(1):n"),
    (
        ir.Scan(K, True, ("c0", "c1"), (ir.Literal(0.0, F64), s)),
        "scan[K, forward](c0 = float64(0.0), c1 = s)",
    ),
]


@pytest.mark.parametrize("node, text", NODES, ids=[t for _, t in NODES])
def test_node_text(node: ir.Node, text: str) -> None:
    assert str(node) == text == to_text(node)


def test_shared_values_are_bound_once_with_let() -> None:
    x = ir.BinOp("*", a, a, FI)  # used twice below: one let
    y = ir.BinOp("+", x, ir.UnaryOp("-", x, FI), FI)
    assert str(y) == "let t0 = (a * a)\n(t0 + (-t0))"
    # a leaf used twice is short enough to print in place
    assert str(ir.BinOp("+", a, a, FI)) == "(a + a)"


def test_lets_of_a_field_operator_come_before_its_return() -> None:
    x = ir.Shift(a, ir.CartesianShift(I, 1), FI)
    op = ir.FieldOperator("f", (ir.Param("a", FI),), ir.BinOp("*", x, x, FI))
    assert (
        str(op)
        == "field_operator f(a: Field[[I], float64]) {\n  let t0 = a(I+1)\n  return (t0 * t0)\n}"
    )


def test_program_statements_temporaries_and_lets() -> None:
    x = ir.BinOp("*", a, a, FI)
    out, tmp = ir.Ref("out", FI), ir.Ref("tmp", FI)
    prog = ir.Program(
        "p",
        (ir.Param("a", FI), ir.Param("out", FI), ir.Param("n", I64)),
        (
            ir.Apply(ir.BinOp("+", x, x, FI), (tmp,), (), "first"),
            ir.ScanApply(
                I,
                True,
                "c",
                ir.Literal(0.0, F64),
                ir.BinOp("+", ir.Ref("c", F64), tmp, F64),
                (out,),
                (ir.DomainRange(I, ir.Literal(0, I64), ir.Ref("n", I64)),),
                "second",
            ),
        ),
        (ir.Param("tmp", FI),),
    )
    assert (
        str(prog)
        == """\
program p(a: Field[[I], float64], out: Field[[I], float64], n: int64) {
  temp tmp: Field[[I], float64]
  tmp @ {out} <- {
    let t0 = (a * a)
    (t0 + t0)
  }  # first
  out @ {I: int64(0):n} <- scan[I, forward](c = float64(0.0); (c + tmp))  # second
}"""
    )


def test_kernel_with_scan_and_lets() -> None:
    x = ir.BinOp("*", ir.Ref("c", F64), ir.Access("a", (ir.Pos(I), ir.Pos(K)), F64), F64)
    k = ir.Kernel(
        "k",
        (I, K),
        ("o1", "o2"),
        (x, ir.BinOp("+", x, ir.Literal(1.0, F64), F64)),
        (ir.DomainRange(K, ir.Literal(1, I64), ir.Literal(9, I64)),),
        ir.Scan(K, False, ("c",), (s,)),
    )
    sp = ir.StencilProgram("sp", (ir.Param("s", F64),), (k,))
    assert (
        str(sp)
        == """\
stencil_program sp(s: float64) {
  kernel k over [I, K] @ {K: int64(1):int64(9)} scan[K, backward](c = s) {
    let t0 = (c * a[I, K])
    o1 = t0
    o2 = (t0 + float64(1.0))
  }
}"""
    )


def test_lets_are_scoped_to_their_statement() -> None:
    """A value shared between two kernels is bound in each, never across them."""
    x = ir.BinOp("*", ir.Access("a", (ir.Pos(I),), F64), ir.Access("a", (ir.Pos(I),), F64), F64)
    y = ir.BinOp("+", x, x, F64)
    k1 = ir.Kernel("k1", (I,), ("o",), (y,), ())
    k2 = ir.Kernel("k2", (I,), ("p",), (ir.BinOp("-", x, ir.Literal(1.0, F64), F64),), ())
    text = str(ir.StencilProgram("sp", (), (k1, k2)))
    assert "let t0 = (a[I] * a[I])\n    o = (t0 + t0)" in text
    assert "p = ((a[I] * a[I]) - float64(1.0))" in text


def test_values_that_are_not_nodes_print_as_their_repr() -> None:
    assert to_text(3) == "3" and to_text("x") == "'x'"
