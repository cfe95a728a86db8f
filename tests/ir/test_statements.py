"""The IR rewrites that turn operator values into statements (``ir/statements.py``,
``ir/own_domains.py``), on IR built without a frontend: IR in, IR out."""

from __future__ import annotations

import stencilkit as gtx
from helpers.irbuild import ProgramBuilder
from stencilkit.core.types import FieldType, TupleType
from stencilkit.ir import nodes as ir
from stencilkit.ir.own_domains import own_domains, shared_domain_groups
from stencilkit.ir.statements import in_place

I = gtx.Dimension("I")
FI = FieldType((I,), "float64")


def test_a_statement_reading_its_output_elsewhere_writes_a_temporary_then_copies() -> None:
    b = ProgramBuilder("update")
    q = b.field("q", I)
    b.apply(q.shift(I, 1) + q, q, {I: (0, 7)})
    stmts, temps = in_place(list(b.build().body), [], "__t")
    assert [p.name for p in temps] == ["__t0"]
    assert [[o.name for o in s.outs] for s in stmts] == [["__t0"], ["q"]]
    copy = stmts[1]
    assert isinstance(copy, ir.Apply) and copy.expr == ir.Ref("__t0", FI)
    assert copy.domain == stmts[0].domain


def test_a_read_at_the_written_point_keeps_the_direct_write() -> None:
    b = ProgramBuilder("scale")
    q = b.field("q", I)
    b.apply(q * 2.0, q)
    body = list(b.build().body)
    assert in_place(body, [], "__t") == (body, [])


def test_tuple_outputs_without_a_domain_get_one_statement_each() -> None:
    b = ProgramBuilder("pair")
    a, x, y = b.field("a", I), b.field("x", I), b.field("y", I)
    value = ir.MakeTuple((a.node, (a * 2.0).node), TupleType((FI, FI)))
    b.body.append(ir.Apply(value, (x.node, y.node), (), "both"))  # type: ignore[arg-type]
    prog = b.build()
    assert shared_domain_groups(prog) == [("x", "y")]
    own = own_domains(prog)
    assert [[o.name for o in s.outs] for s in own.body] == [["x"], ["y"]]
    assert [str(s.expr) for s in own.body] == ["a", "(a * 2.0)"]  # type: ignore[union-attr]
