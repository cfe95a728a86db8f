"""Errors raised at decoration time name the user's file:line:col and say how to fix it."""

from __future__ import annotations

import re

import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float32, float64

I, J = gtx.Dimension("I"), gtx.Dimension("J")
HERE = re.escape(__file__)


def test_mixed_dtypes() -> None:
    with pytest.raises(
        TypeError, match=HERE + r":\d+:\d+: operands have different dtypes, float64 and float32"
    ) as info:

        @gtx.field_operator
        def bad(a: Field[Dims[I], float64], b: Field[Dims[I], float32]) -> Field[Dims[I], float64]:
            return a + b

    assert "hint: convert one side explicitly" in str(info.value)
    assert "return a + b" in str(info.value)


def test_missing_annotation() -> None:
    with pytest.raises(TypeError, match=r"Parameter 'a' is missing type annotations"):

        @gtx.field_operator
        def bad(a) -> Field[Dims[I], float64]:
            return a


def test_shift_along_missing_dimension() -> None:
    with pytest.raises(TypeError, match=r"cannot shift along J: the field has dimensions \[I\]"):

        @gtx.field_operator
        def bad(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
            return a(J + 1)


def test_unknown_name() -> None:
    with pytest.raises(TypeError, match=r"Undeclared symbol 'undefined_thing'"):

        @gtx.field_operator
        def bad(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
            return a + undefined_thing  # noqa: F821


def test_unsupported_statement() -> None:
    with pytest.raises(
        TypeError, match=r"'for x in range\(3\):': this statement is not part of the DSL"
    ):

        @gtx.field_operator
        def bad(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
            for x in range(3):  # noqa: B007
                a = a + 1.0
            return a


def test_program_without_out() -> None:
    @gtx.field_operator
    def ident(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
        return a

    with pytest.raises(TypeError, match=r"the call of ident needs out="):

        @gtx.program
        def bad(a: Field[Dims[I], float64]):
            ident(a)


def test_return_annotation_mismatch() -> None:
    with pytest.raises(
        TypeError,
        match=r"annotated to return Field\[\[I\], float32\] but returns Field\[\[I\], float64\]",
    ):

        @gtx.field_operator
        def bad(a: Field[Dims[I], float64]) -> Field[Dims[I], float32]:
            return a


def test_integer_true_division() -> None:
    with pytest.raises(TypeError, match=r"true division '/' of integers \(int32\)"):

        @gtx.field_operator
        def bad(a: Field[Dims[I], gtx.int32]) -> Field[Dims[I], gtx.int32]:
            return a / 2


def test_output_dtype_mismatch_in_program() -> None:
    @gtx.field_operator
    def ident(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
        return a

    with pytest.raises(
        TypeError, match=r"result of dtype float64 cannot be written to 'out' of dtype float32"
    ):

        @gtx.program
        def bad(a: Field[Dims[I], float64], out: Field[Dims[I], float32]):
            ident(a, out=out)


def test_errors_are_stencil_errors_and_builtin_types() -> None:
    with pytest.raises(gtx.StencilTypeError) as info:

        @gtx.field_operator
        def bad(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
            return a(J + 1)

    assert isinstance(info.value, TypeError)
    assert info.value.location is not None and info.value.location.filename == __file__


def test_a_misspelt_offset_is_an_undeclared_symbol_with_the_nearest_dimension() -> None:
    """`a(Ii - 1)` names the typo (gt4py: "Undeclared symbol 'Ii'") and the dimension meant,
    not "'Ii - 1' is not an offset"."""
    with pytest.raises(gtx.errors.UndefinedSymbolError, match=r"Undeclared symbol 'Ii'\.") as info:

        @gtx.field_operator
        def bad(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
            return a(Ii - 1)  # noqa: F821

    assert "hint: did you mean 'I'?" in str(info.value)
    assert "return a(Ii - 1)" in str(info.value) and "is not an offset" not in str(info.value)


Cell = gtx.Dimension("Cell")
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=Cell, target=(I, E2CDim))


def test_misspelt_field_and_offset_names_suggest_the_nearest() -> None:
    with pytest.raises(TypeError, match=r"Undeclared symbol 'alph'\.") as info:

        @gtx.field_operator
        def bad(alpha: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
            return alph * 2.0  # noqa: F821

    assert "hint: did you mean 'alpha'?" in str(info.value)
    with pytest.raises(TypeError, match=r"Undeclared symbol 'E2c'\.") as info:

        @gtx.field_operator
        def bad2(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
            return a(E2c[0])  # noqa: F821

    assert "hint: did you mean 'E2C'?" in str(info.value)
    with pytest.raises(TypeError, match=r"Undeclared symbol 'zzz'\.") as info:

        @gtx.field_operator
        def bad3(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
            return a + zzz  # noqa: F821

    assert "did you mean" not in str(info.value)  # nothing close: no guess
