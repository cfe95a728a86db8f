"""IR in -> IR out: parsing to operator IR, lowering to stencil IR, printing."""

from __future__ import annotations

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.ir import nodes as ir
from stencilkit.ir.lower import lower_program
from stencilkit.ir.visit import walk

I, J = gtx.Dimension("I"), gtx.Dimension("J")


@gtx.field_operator
def shifted_sum(
    a: Field[Dims[I, J], float64], b: Field[Dims[I, J], float64]
) -> Field[Dims[I, J], float64]:
    c = a(I + 1) + b
    return c(J - 1) * 2.0


@gtx.program
def prog(
    a: Field[Dims[I, J], float64], b: Field[Dims[I, J], float64], out: Field[Dims[I, J], float64]
):
    shifted_sum(a, b, out=out, domain={I: (0, 4), J: (1, 5)})


def test_operator_ir_text() -> None:
    assert str(shifted_sum.definition) == (
        "field_operator shifted_sum(a: Field[[I, J], float64], b: Field[[I, J], float64]) {\n"
        "  return ((a(I+1) + b)(J-1) * float64(2.0))\n}"
    )


def test_program_ir_text() -> None:
    text = prog.ir_text
    assert text.startswith(
        "program prog(a: Field[[I, J], float64], b: Field[[I, J], float64], out: Field[[I, J], float64]) {"
    )
    assert (
        "out @ {I: int64(0):int64(4), J: int64(1):int64(5)} <- ((a(I+1) + b)(J-1) * float64(2.0))  # shifted_sum"
        in text
    )


def test_lowering_pushes_shifts_to_accesses() -> None:
    sprog = lower_program(prog.definition, {})
    (kernel,) = sprog.kernels
    assert str(kernel.values[0]) == "((a[I+1, J-1] + b[I, J-1]) * float64(2.0))"
    accesses = [x for x in walk(kernel.values[0]) if isinstance(x, ir.Access)]
    assert {(a.field, a.index) for a in accesses} == {
        ("a", (ir.Pos(I, 1), ir.Pos(J, -1))),
        ("b", (ir.Pos(I, 0), ir.Pos(J, -1))),
    }


def test_nodes_are_frozen_hashable_and_structurally_equal() -> None:
    a = lower_program(prog.definition, {})
    b = lower_program(prog.definition, {})
    assert a == b and hash(a) == hash(b)
    assert a is not b
