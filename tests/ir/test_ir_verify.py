"""The IR verifier (``ir.verify``): hand-built broken IR at both levels, each refused with an
``InternalError`` naming the broken invariant and printing the node; and its hooks after the
passes (``STENCILKIT_VERIFY_IR`` / ``VERIFY_IR``, on throughout the test suite)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

import stencilkit as gtx
from stencilkit.core.errors import InternalError
from stencilkit.core.types import FieldType, ScalarType, TupleType
from stencilkit.ir import nodes as ir
from stencilkit.ir import verify
from stencilkit.ir.fuse import fuse_kernels
from stencilkit.ir.lower import TableInfo, lower_program
from stencilkit.ir.verify import verify_program, verify_stencil

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Cell, Edge = gtx.Dimension("Cell"), gtx.Dimension("Edge")
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
F64, I64, BOOL = ScalarType("float64"), ScalarType("int64"), ScalarType("bool")
FIJ = FieldType((I, J), "float64")
FIK = FieldType((I, K), "float64")
a, b, out = ir.Ref("a", FIJ), ir.Ref("b", FIJ), ir.Ref("out", FIJ)
s = ir.Ref("s", F64)
PARAMS = (ir.Param("a", FIJ), ir.Param("b", FIJ), ir.Param("s", F64), ir.Param("out", FIJ))
ZERO, SEVEN, ZERO_F = ir.Literal(0, I64), ir.Literal(7, I64), ir.Literal(0.0, F64)
DOM = (ir.DomainRange(I, ZERO, SEVEN),)


def _program(
    *body: ir.Apply | ir.ScanApply,
    params: tuple[ir.Param, ...] = PARAMS,
    temps: tuple[ir.Param, ...] = (),
) -> ir.Program:
    return ir.Program("p", params, body, temps)


def _apply(expr: ir.Expr, *outs: ir.Ref, domain: tuple[ir.DomainRange, ...] = DOM) -> ir.Apply:
    return ir.Apply(expr, outs or (out,), domain, "op")


GOOD = _program(
    _apply(ir.BinOp("+", ir.Shift(a, ir.CartesianShift(I, 1), FIJ), ir.BinOp("*", b, s, FIJ), FIJ))
)


def _refused(check: object, prog: object, message: str) -> str:
    with pytest.raises(InternalError) as err:
        check(prog)  # type: ignore[operator]
    text = str(err.value)
    assert message in text, text
    return text


# ---------------------------------------------------------------- operator level
def test_a_well_formed_program_passes() -> None:
    verify_program(GOOD)


OPERATOR_LEVEL: dict[str, tuple[ir.Program, str]] = {
    "unbound name": (
        _program(_apply(ir.BinOp("+", a, ir.Ref("c", FIJ), FIJ))),
        "'c' is not bound here (not a parameter, temporary or carry in scope)",
    ),
    "name with the wrong type": (
        _program(_apply(ir.BinOp("+", a, ir.Ref("s", FIJ), FIJ))),
        "'s' has type Field[[I, J], float64] here but is declared float64",
    ),
    "stencil-level node": (
        _program(_apply(ir.Access("a", (ir.Pos(I), ir.Pos(J)), F64))),
        "Access is a stencil-level node in an operator-level program",
    ),
    "comparison not bool": (
        _program(_apply(ir.BinOp("<", a, b, FIJ))),
        "'<' gives bool, not Field[[I, J], float64]",
    ),
    "unknown operator": (
        _program(_apply(ir.BinOp("<>", a, b, FIJ))),
        "unknown binary operator '<>'",
    ),
    "unknown unary operator": (
        _program(_apply(ir.UnaryOp("!", a, FIJ))),
        "unknown unary operator '!'",
    ),
    "unknown builtin": (
        _program(_apply(ir.Call("frobnicate", (a,), FIJ))),
        "unknown builtin 'frobnicate'",
    ),
    "wrong arity": (
        _program(_apply(ir.Call("sqrt", (a, b), FIJ))),
        "sqrt takes 1 arguments, not 2",
    ),
    "predicate not bool": (
        _program(_apply(ir.Call("isnan", (a,), FIJ))),
        "isnan gives bool, not Field[[I, J], float64]",
    ),
    "where on a float condition": (
        _program(_apply(ir.Call("where", (a, a, b), FIJ))),
        "the condition of where must be bool",
    ),
    "operand over more dimensions than the result": (
        _program(
            _apply(ir.BinOp("+", ir.Ref("k", FIK), a, FIJ)), params=(*PARAMS, ir.Param("k", FIK))
        ),
        "an operand over I, K gives a result of type Field[[I, J], float64]",
    ),
    "bool literal of a float type": (
        _program(_apply(ir.BinOp("*", a, ir.Literal(True, F64), FIJ))),
        "literal True does not have type float64",
    ),
    "float literal of an integer type": (
        _program(_apply(ir.BinOp("*", a, ir.Literal(1.5, I64), FIJ))),
        "float literal 1.5 of integer type int64",
    ),
    "unknown dtype": (
        _program(_apply(ir.BinOp("*", a, ir.Literal(1.5, ScalarType("float16")), FIJ))),
        "unknown dtype 'float16'",
    ),
    "field type repeating a dimension": (
        _program(_apply(a), params=(*PARAMS, ir.Param("r", FieldType((I, I), "float64")))),
        "field type Field[[I, I], float64] repeats a dimension",
    ),
    "if on a field": (
        _program(_apply(ir.IfElse(ir.BinOp("<", a, b, FieldType((I, J), "bool")), a, b, FIJ))),
        "the condition of an if must be a bool scalar",
    ),
    "if with branches of different types": (
        _program(_apply(ir.IfElse(ir.Literal(True, BOOL), a, s, FIJ))),
        "branches of types Field[[I, J], float64] and float64",
    ),
    "tuple element out of range": (
        _program(_apply(ir.TupleGet(ir.MakeTuple((a, b), TupleType((FIJ, FIJ))), 2, FIJ))),
        "element 2 of a value of type tuple[Field[[I, J], float64], Field[[I, J], float64]]",
    ),
    "tuple typed wrongly": (
        _program(_apply(ir.TupleGet(ir.MakeTuple((a, s), TupleType((FIJ, FIJ))), 0, FIJ))),
        "a tuple of (Field[[I, J], float64], float64) typed tuple",
    ),
    "reduction over a horizontal dimension": (
        _program(_apply(ir.Reduce("sum", a, J, FieldType((I,), "float64")))),
        "reduction over J, which is not a local dimension",
    ),
    "reduction keeping its axis": (
        _program(
            _apply(
                ir.Reduce(
                    "sum",
                    ir.Ref("w", FieldType((Cell, C2EDim), "float64")),
                    C2EDim,
                    FieldType((Cell, C2EDim), "float64"),
                ),
                ir.Ref("o", FieldType((Cell, C2EDim), "float64")),
            ),
            params=(
                ir.Param("w", FieldType((Cell, C2EDim), "float64")),
                ir.Param("o", FieldType((Cell, C2EDim), "float64")),
            ),
        ),
        "a reduction over C2E must remove it",
    ),
    "neighbour shift from the wrong dimension": (
        _program(
            _apply(
                ir.Shift(
                    a,
                    ir.NeighborShift("C2E", Edge, (Cell, C2EDim), 0),
                    FieldType((Cell, J), "float64"),
                ),
                ir.Ref("o", FieldType((Cell, J), "float64")),
            ),
            params=(*PARAMS, ir.Param("o", FieldType((Cell, J), "float64"))),
        ),
        "shift through C2E (from Edge) of a field over I, J",
    ),
    "output that is not a field": (_program(_apply(a, s)), "output 's' is not a field but float64"),
    "one field written twice": (
        _program(_apply(ir.MakeTuple((a, b), TupleType((FIJ, FIJ))), out, out)),
        "a statement writes one field twice",
    ),
    "outputs over different dimensions": (
        _program(
            _apply(ir.MakeTuple((a, b), TupleType((FIJ, FIJ))), out, ir.Ref("k", FIK)),
            params=(*PARAMS, ir.Param("k", FIK)),
        ),
        "the outputs of one statement have different dimensions",
    ),
    "more values than outputs": (
        _program(_apply(ir.MakeTuple((a, b), TupleType((FIJ, FIJ))), out)),
        "2 values written to 1 outputs",
    ),
    "two parameters of one name": (
        _program(_apply(a), params=(*PARAMS, ir.Param("a", F64))),
        "two parameters or temporaries named 'a'",
    ),
    "a dimension given twice in a domain": (
        _program(_apply(a, domain=(*DOM, *DOM))),
        "the domain gives I twice",
    ),
    "a float domain bound": (
        _program(_apply(a, domain=(ir.DomainRange(I, ir.Literal(0.5, F64), SEVEN),))),
        "a domain bound must be an integer scalar",
    ),
    "an unbound name in a domain bound": (
        _program(_apply(a, domain=(ir.DomainRange(I, ZERO, ir.Ref("n", I64)),))),
        "'n' is not bound here",
    ),
    "a field bound outside a domain": (
        _program(
            _apply(
                ir.BinOp(
                    "+",
                    a,
                    ir.Call("__field_start", (a, ir.DimIndex(I, FieldType((I,), "int64"))), I64),
                    FIJ,
                )
            )
        ),
        "__field_start outside a domain bound",
    ),
    "a field bound along a dimension the field lacks": (
        _program(
            _apply(
                a,
                domain=(
                    ir.DomainRange(
                        I,
                        ir.Call("__field_stop", (a, ir.DimIndex(K, FieldType((K,), "int64"))), I64),
                        SEVEN,
                    ),
                ),
            )
        ),
        "__field_stop along K, which field 'a' does not have",
    ),
    "a temporary read before it is written": (
        _program(
            _apply(ir.Ref("tmp", FIJ)), _apply(a, ir.Ref("tmp", FIJ)), temps=(ir.Param("tmp", FIJ),)
        ),
        "temporary 'tmp' is read before any statement writes it",
    ),
    "a dangling temporary": (
        _program(_apply(a, ir.Ref("tmp", FIJ)), temps=(ir.Param("tmp", FIJ),)),
        "temporary 'tmp' is written but never read (a dangling temporary)",
    ),
    "a dangling temporary written by a scan of one column": (
        _program(
            ir.ScanApply(
                I,
                True,
                "c",
                ZERO_F,
                ir.BinOp("+", ir.Ref("c", F64), a, F64),
                (ir.Ref("tmp", FIJ),),
                (),
                "s",
            ),
            _apply(a),
            temps=(ir.Param("tmp", FIJ),),
        ),
        "temporary 'tmp' is written but never read (a dangling temporary)",
    ),
    "a temporary never written": (
        _program(_apply(a), temps=(ir.Param("tmp", FIJ),)),
        "temporary 'tmp' is never written",
    ),
    "a temporary that is not a field": (
        _program(_apply(a), temps=(ir.Param("tmp", F64),)),
        "temporary 'tmp' is not a field but float64",
    ),
}


def _scan(
    carry: str = "c", axis: gtx.Dimension = K, init: ir.Expr = ZERO_F, step: ir.Expr | None = None
) -> ir.Program:
    k = ir.Ref("k", FIK)
    step = step if step is not None else ir.BinOp("+", ir.Ref(carry, F64), k, F64)
    return _program(
        ir.ScanApply(axis, True, carry, init, step, (ir.Ref("ko", FIK),), (), "scan"),
        params=(*PARAMS, ir.Param("k", FIK), ir.Param("ko", FIK)),
    )


OPERATOR_LEVEL |= {
    "a carry shadowing a parameter": (_scan(carry="s"), "the carry 's' shadows a parameter"),
    "a scan along a dimension the output lacks": (
        _scan(axis=J),
        "a scan along J writing fields over I, K",
    ),
    "a carry read in its own initial value": (
        _scan(init=ir.Ref("c", F64)),
        "'c' is not bound here",
    ),
    "a step of another type than the carry": (
        _scan(step=ir.MakeTuple((ir.Ref("c", F64), ir.Ref("c", F64)), TupleType((F64, F64)))),
        "the step gives tuple[float64, float64] but the carry starts as float64",
    ),
    "a scan call reading its carry in its initial value": (
        _program(
            _apply(
                ir.ScanCall(K, True, "c", ir.Ref("c", F64), ir.Ref("c", F64), FIK, "s"),
                ir.Ref("ko", FIK),
            ),
            params=(*PARAMS, ir.Param("ko", FIK)),
        ),
        "'c' is not bound here",
    ),
}


@pytest.mark.parametrize("case", list(OPERATOR_LEVEL))
def test_broken_operator_ir_is_refused(case: str) -> None:
    prog, message = OPERATOR_LEVEL[case]
    text = _refused(verify_program, prog, message)
    assert text.startswith("invalid operator-level IR: ")
    assert "\n  node: " in text


def test_the_message_prints_the_node_and_its_statement() -> None:
    bad = ir.BinOp("+", a, ir.Ref("c", FIJ), FIJ)
    text = _refused(verify_program, _program(_apply(bad)), "'c' is not bound")
    assert text == (
        "invalid operator-level IR: 'c' is not bound here (not a parameter, temporary or carry in scope)\n"
        "  node: c\n"
        "  in: out @ {I: int64(0):int64(7)} <- (a + c)  # op"
    )


# ---------------------------------------------------------------- stencil level
P, PJ, LOC = ir.Pos(I), ir.Pos(J), ir.LocalIndex(C2EDim)


def _acc(name: str = "a", *index: ir.Index) -> ir.Access:
    return ir.Access(name, index or (P, PJ), F64)


def _stencil(
    *values: ir.Expr,
    outs: tuple[str, ...] = ("out",),
    dims: tuple[gtx.Dimension, ...] = (I, J),
    scan: ir.Scan | None = None,
    params: tuple[ir.Param, ...] = PARAMS,
    domain: tuple[ir.DomainRange, ...] = DOM,
) -> ir.StencilProgram:
    return ir.StencilProgram("p", params, (ir.Kernel("k0", dims, outs, values, domain, scan),))


UNSTRUCTURED = (
    ir.Param("e", FieldType((Edge, K), "float64")),
    ir.Param("o", FieldType((Cell, K), "float64")),
)
TABLES = {"C2E": TableInfo(3, False)}


def _gather(
    neighbor: ir.Index, mask: ir.Expr | None = None, table: str = "C2E", var: int = 0
) -> ir.StencilProgram:
    read = ir.Access("e", (ir.Lookup(table, ir.Pos(Cell), neighbor), ir.Pos(K)), F64)
    body = (
        ir.LocalReduce("sum", C2EDim, 3, read, mask, F64, var)
        if isinstance(neighbor, ir.LocalIndex)
        else read
    )
    return _stencil(body, outs=("o",), dims=(Cell, K), params=UNSTRUCTURED, domain=())


def test_a_well_formed_stencil_program_passes() -> None:
    verify_stencil(
        _stencil(ir.BinOp("+", _acc("a", ir.Pos(I, 1), PJ), ir.BinOp("*", _acc("b"), s, F64), F64))
    )
    verify_stencil(_gather(LOC), TABLES)


STENCIL_LEVEL: dict[str, tuple[ir.StencilProgram, str]] = {
    "operator-level node": (
        _stencil(ir.Shift(a, ir.CartesianShift(I, 1), FIJ)),
        "Shift is an operator-level node: lowering must remove it",
    ),
    "a whole field read by name": (
        _stencil(ir.BinOp("+", a, s, F64)),
        "'a' is read as a whole Field[[I, J], float64]",
    ),
    "an unknown field": (_stencil(_acc("c")), "'c' is read as a field but is not a parameter"),
    "a scalar read as a field": (_stencil(_acc("s")), "'s' is read as a field but is float64"),
    "too few indices": (
        _stencil(ir.Access("a", (P,), F64)),
        "'a' has 2 dimensions but is read with 1 indices",
    ),
    "the wrong dtype": (
        _stencil(ir.Access("a", (P, PJ), ScalarType("float32"))),
        "'a' holds float64 but is read as float32",
    ),
    "a position along a dimension the kernel lacks": (
        _stencil(_acc("a", P, ir.Pos(K))),
        "position along K, which is not a dimension of the kernel",
    ),
    "a loop variable outside its reduction": (
        _gather(LOC).__class__(
            "p",
            UNSTRUCTURED,
            (
                ir.Kernel(
                    "k0",
                    (Cell, K),
                    ("o",),
                    (ir.Access("e", (ir.Lookup("C2E", ir.Pos(Cell), LOC), ir.Pos(K)), F64),),
                    (),
                ),
            ),
        ),
        "loop variable #C2E is used outside a reduction binding it",
    ),
    "a negative constant index": (_gather(ir.ConstIndex(-1)), "negative constant index"),
    "a dynamic offset that is not an integer": (
        _stencil(_acc("a", ir.DynIndex(P, s), PJ)),
        "a dynamic offset must be an integer, not float64",
    ),
    "a reduction over no neighbours": (
        _stencil(ir.LocalReduce("sum", C2EDim, 0, s, None, F64)),
        "a reduction over 0 neighbours",
    ),
    "an unknown reduction": (
        _stencil(ir.LocalReduce("prod", C2EDim, 3, s, None, F64)),
        "unknown reduction 'prod'",
    ),
    "nested reductions sharing a loop variable": (
        _stencil(
            ir.LocalReduce(
                "sum", C2EDim, 3, ir.LocalReduce("sum", C2EDim, 3, s, None, F64), None, F64
            )
        ),
        "nested reductions share the loop variable #C2E",
    ),
    "a mask that is not bool": (
        _stencil(ir.LocalReduce("sum", C2EDim, 3, s, s, F64)),
        "the mask of a reduction must be bool, not float64",
    ),
    "more outputs than values": (_stencil(_acc(), outs=("out", "b")), "1 values for 2 outputs"),
    "an output over other dimensions": (
        _stencil(_acc("a", P, ir.Pos(K)), dims=(I, K)),
        "kernel over [I, K] writes fields over [I, J]",
    ),
    "kernel dimensions repeating one": (
        _stencil(_acc(), dims=(I, J, I)),
        "kernel dimensions [I, J, I] repeat one",
    ),
    "an output that is not a parameter": (
        _stencil(_acc(), outs=("nowhere",)),
        "'nowhere' is not bound here",
    ),
    "a tuple parameter": (
        _stencil(_acc(), params=(*PARAMS, ir.Param("t", TupleType((F64, F64))))),
        "tuple parameter 't' is not flattened",
    ),
    "a carry outside a scan": (
        _stencil(ir.BinOp("+", ir.Ref("c", F64), _acc(), F64)),
        "'c' is not bound here",
    ),
    "a scan along a dimension the kernel lacks": (
        _stencil(
            ir.BinOp("+", ir.Ref("c", F64), _acc(), F64),
            scan=ir.Scan(K, True, ("c",), (ir.Literal(0.0, F64),)),
        ),
        "a scan along K in a kernel over [I, J]",
    ),
    "more carries than values": (
        _stencil(
            _acc(), scan=ir.Scan(J, True, ("c", "d"), (ir.Literal(0.0, F64), ir.Literal(0.0, F64)))
        ),
        "2 carries, 2 initial values and 1 values",
    ),
    "a carry shadowing a parameter": (
        _stencil(_acc(), scan=ir.Scan(J, True, ("s",), (ir.Literal(0.0, F64),))),
        "scan carries must be distinct and not shadow a parameter",
    ),
    "a scan starting from a field": (
        _stencil(_acc(), scan=ir.Scan(J, True, ("c",), (_acc(),))),
        "Access in a scan's initial value",
    ),
    "a scan starting from an unknown scalar": (
        _stencil(_acc(), scan=ir.Scan(J, True, ("c",), (ir.Ref("x", F64),))),
        "the scan's initial value reads 'x', which is not a scalar parameter",
    ),
}


@pytest.mark.parametrize("case", list(STENCIL_LEVEL))
def test_broken_stencil_ir_is_refused(case: str) -> None:
    prog, message = STENCIL_LEVEL[case]
    text = _refused(verify_stencil, prog, message)
    assert text.startswith("invalid stencil-level IR: ")
    assert "\n  node: " in text


def test_neighbour_tables_are_checked_against_those_lowering_was_given() -> None:
    _refused(
        lambda p: verify_stencil(p, TABLES),
        _gather(LOC, table="E2C"),
        "neighbour table 'E2C' is not among the tables given to lowering (C2E)",
    )
    _refused(
        lambda p: verify_stencil(p, TABLES),
        _gather(ir.ConstIndex(3)),
        "neighbour slot 3 of 'C2E', which has 3",
    )
    masked = _gather(LOC, mask=ir.Valid("C2E", ir.Pos(Cell), LOC, BOOL))
    _refused(
        lambda p: verify_stencil(p, TABLES),
        masked,
        "a skip mask for table 'C2E', which has no skip values",
    )
    verify_stencil(masked, {"C2E": TableInfo(3, True)})
    verify_stencil(_gather(LOC, table="E2C"))  # without tables, table names are not checked


# ---------------------------------------------------------------- the hooks after the passes
def test_the_suite_runs_with_the_verifier_on() -> None:
    assert verify.VERIFY_IR


def test_lowering_checks_its_input_and_output(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = _program(_apply(ir.BinOp("+", a, ir.Ref("c", FIJ), FIJ)))
    with pytest.raises(
        InternalError, match="invalid operator-level IR after the frontend: 'c' is not bound"
    ):
        lower_program(broken, {})
    monkeypatch.setattr(verify, "VERIFY_IR", False)
    lowered = lower_program(broken, {})  # unchecked, the broken IR goes through, still broken
    _refused(verify_stencil, lowered, "'c' is read as a field but is not a parameter")


def test_fusion_checks_its_output(monkeypatch: pytest.MonkeyPatch) -> None:
    good = lower_program(GOOD, {})
    kernel = good.kernels[0]
    broken = dataclasses.replace(
        good, kernels=(dataclasses.replace(kernel, values=(_acc("nowhere"),)),)
    )
    with pytest.raises(
        InternalError,
        match="invalid stencil-level IR after fuse_kernels: 'nowhere' is read as a field",
    ):
        fuse_kernels(broken)
    monkeypatch.setattr(verify, "VERIFY_IR", False)
    assert fuse_kernels(broken) == broken


@pytest.mark.parametrize("value, on", [("1", True), ("true", True), ("0", False), ("", False)])
def test_the_environment_variable_turns_it_on(value: str, on: bool) -> None:
    env = dict(os.environ, STENCILKIT_VERIFY_IR=value)
    got = subprocess.run(
        [sys.executable, "-c", "import stencilkit.ir.verify as v; print(v.VERIFY_IR)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert got == str(on)


def test_columns_of_a_scan_nobody_reads_are_not_dangling() -> None:
    """A scan writes every column of its carry; those no statement reads go to temporaries
    (the frontend's per-output scans)."""
    two = TupleType((F64, F64))
    c = ir.Ref("c", two)
    step = ir.MakeTuple(
        (ir.BinOp("+", ir.TupleGet(c, 0, F64), a, F64), ir.TupleGet(c, 1, F64)), two
    )
    prog = _program(
        ir.ScanApply(
            I,
            True,
            "c",
            ir.MakeTuple((ZERO_F, ZERO_F), two),
            step,
            (out, ir.Ref("tmp", FIJ)),
            (),
            "s",
        ),
        temps=(ir.Param("tmp", FIJ),),
    )
    verify_program(prog)


def test_a_kernel_over_no_dimensions_writes_one_point() -> None:
    f0 = FieldType((), "float64")
    verify_stencil(
        ir.StencilProgram(
            "p",
            (ir.Param("x", f0), ir.Param("y", f0)),
            (
                ir.Kernel(
                    "k",
                    (),
                    ("y",),
                    (ir.BinOp("*", ir.Access("x", (), F64), ir.Literal(2.0, F64), F64),),
                    (),
                ),
            ),
        )
    )


def test_a_dynamic_offset_read_from_a_field_is_an_integer_at_the_point() -> None:
    """Regression (icon4py's truly_horizontal_diffusion_nabla_of_theta_over_steep_points):
    lowering keeps the offset's field type; at the point only its dtype counts."""
    fk = FieldType((I, J), "int32")
    amount = ir.BinOp(
        "+", ir.Access("off", (P, PJ), ScalarType("int32")), ir.Literal(1, ScalarType("int32")), fk
    )
    verify_stencil(
        _stencil(_acc("a", P, ir.DynIndex(PJ, amount)), params=(*PARAMS, ir.Param("off", fk)))
    )
