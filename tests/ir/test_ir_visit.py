"""The generic traversals of ``ir.visit`` (children, map_children, walk, postorder,
substitute) and the tuple helpers of ``ir.tuples``, each stated on small IR as text."""

from __future__ import annotations

import stencilkit as gtx
from stencilkit.core.types import FieldType, ScalarType, TupleType
from stencilkit.ir import nodes as ir
from stencilkit.ir.tuples import flat_name, flatten_value
from stencilkit.ir.visit import children, map_children, postorder, substitute, walk

I = gtx.Dimension("I")
F64 = ScalarType("float64")
FI = FieldType((I,), "float64")
a, b = ir.Ref("a", FI), ir.Ref("b", FI)


def test_children_in_field_order_through_tuples() -> None:
    call = ir.Call("where", (ir.Ref("m", FieldType((I,), "bool")), a, b), FI)
    assert [str(c) for c in children(call)] == ["m", "a", "b"]
    k = ir.Kernel(
        "k", (I,), ("o",), (a,), (ir.DomainRange(I, ir.Literal(0, F64), ir.Literal(1, F64)),)
    )
    assert [str(c) for c in children(k)] == ["a", "I: float64(0):float64(1)"]
    assert children(ir.Pos(I)) == [] and children(a) == []
    shift = ir.Shift(a, ir.CartesianShift(I, 1), FI)
    assert [type(c).__name__ for c in children(shift)] == ["Ref", "CartesianShift"]


def test_map_children_rebuilds_only_what_changed() -> None:
    e = ir.BinOp("+", a, ir.UnaryOp("-", b, FI), FI)
    assert map_children(e, lambda c: c) is e
    swapped = map_children(e, lambda c: b if c is a else c)
    assert str(swapped) == "(b + (-b))" and swapped.right is e.right


def test_walk_is_preorder_and_postorder_is_children_first() -> None:
    e = ir.BinOp("*", ir.BinOp("+", a, b, FI), a, FI)
    assert [str(x) for x in walk(e)] == ["((a + b) * a)", "(a + b)", "a", "b"]
    assert [str(x) for x in postorder(e)] == ["a", "b", "(a + b)", "((a + b) * a)"]
    assert [str(x) for x in postorder(a, e, a)] == ["a", "b", "(a + b)", "((a + b) * a)"]


def test_substitute_replaces_names() -> None:
    e = ir.BinOp("+", a, ir.Shift(b, ir.CartesianShift(I, 1), FI), FI)
    c = ir.Ref("c", FI)
    assert str(substitute(e, {"b": ir.BinOp("*", c, c, FI)})) == "(a + (c * c)(I+1))"


def test_flatten_value_and_flat_names() -> None:
    t = TupleType((FI, TupleType((F64, FI))))
    p = ir.Ref("p", t)
    leaves = flatten_value(p)
    assert [str(x) for x in leaves] == ["p[0]", "p[1][0]", "p[1][1]"]
    assert [flat_name(x) for x in leaves] == ["p__0", "p__1__0", "p__1__1"]
    made = ir.MakeTuple(
        (a, ir.MakeTuple((b, a), TupleType((FI, FI)))), TupleType((FI, TupleType((FI, FI))))
    )
    assert [str(x) for x in flatten_value(made)] == ["a", "b", "a"]
    assert flatten_value(a) == (a,)
    assert flat_name(ir.BinOp("+", a, b, FI)) is None
