# ruff: noqa: F841, E731, RUF059
"""gt4py.next's error classes and message texts where users' tests match on them (COMPAT.md §2);
stencilkit's own explanation stays in the hint, and str() keeps the source location."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, errors, float64, int32, where

X = gtx.Dimension("X")
FX = Field[Dims[X], float64]


def _message(fn) -> errors.DSLError:
    with pytest.raises(errors.DSLError) as info:
        fn()
    return info.value


def test_unsupported_syntax_names_the_feature() -> None:
    def loop():
        @gtx.field_operator
        def f(a: FX) -> FX:
            while True:
                pass
            return a

    def lam():
        @gtx.field_operator
        def f(a: FX) -> FX:
            g = lambda x: x
            return a

    def lst():
        @gtx.field_operator
        def f(a: FX) -> FX:
            b = [a, a]
            return a

    err = _message(loop)
    assert isinstance(err, errors.UnsupportedPythonFeatureError)
    assert err.message == "Unsupported Python syntax: 'while' loop."
    assert err.feature == "'while' loop"
    assert "test_error_texts_compat.py:" in str(err) and "not part of the DSL" in str(err)
    assert _message(lam).message == "Unsupported Python syntax: lambda."
    assert _message(lst).message == "Unsupported Python syntax: list literal."


def test_if_conditions() -> None:
    def field_condition():
        @gtx.field_operator
        def f(a: FX) -> FX:
            if a > 0.0:
                b = a
            else:
                b = -a
            return b

    def int_condition():
        @gtx.field_operator
        def f(a: FX, c: int32) -> FX:
            if c:
                b = a
            else:
                b = -a
            return b

    err = _message(field_condition)
    assert err.message == "Condition for 'if' must be scalar, got 'Field[[X], bool]' instead."
    assert "where(mask, a, b)" in str(err)
    assert (
        _message(int_condition).message
        == "Condition for 'if' must be of boolean type, got 'int32' instead."
    )


def test_inconsistent_branch_types() -> None:
    def inconsistent():
        @gtx.field_operator
        def f(a: FX, c: bool) -> FX:
            if c:
                b = a
            else:
                b = True
            return where(b, a, a)

    err = _message(inconsistent)
    assert err.message == (
        "Inconsistent types between two branches for variable 'b': got types"
        " 'Field[[X], float64]' and 'bool."
    )


def test_unpacking() -> None:
    def too_many():
        @gtx.field_operator
        def f(a: FX) -> FX:
            x, y, z = (a, a, a, a, a, a, a)
            return x

    def not_a_tuple():
        @gtx.field_operator
        def f(a: FX) -> FX:
            x, y, z = 1
            return a

    assert _message(too_many).message == "Too many values to unpack (expected 3)."
    assert _message(not_a_tuple).message == "Assignment value must be of type tuple, got 'int32'."


@gtx.field_operator
def _ident(a: FX) -> FX:
    return a


def test_program_statement_without_out() -> None:
    def missing_out():
        @gtx.program
        def p(a: FX, b: FX):
            _ident(a)

    err = _message(missing_out)
    assert err.message == "Invalid call to '_ident'.\nMissing required keyword argument 'out'."
    assert "out=result" in str(err)


@gtx.program
def _scaled(a: FX, x: float64, b: FX):
    _ident(a, out=b)


@gtx.program
def _counted(a: FX, n: int32, b: FX):
    _ident(a, out=b)


@pytest.mark.parametrize(
    "backend",
    [None, gtx.cpu, pytest.param(gtx.gpu, marks=pytest.mark.gpu)],
    ids=["embedded", "cpu", "gpu"],
)
@pytest.mark.parametrize(
    ("prog", "value", "expected", "got"),
    [
        (_counted, 1.5, "int32", "float64"),
        (_counted, np.float64(1.0), "int32", "float64"),
        (_scaled, "x", "float64", "str"),
        (_scaled, "field", "float64", "Field[[X], float64]"),
    ],
)
def test_wrong_scalar_argument_type(backend, prog, value, expected, got) -> None:
    alloc = gtx.gpu if backend is gtx.gpu else None
    a = gtx.as_field([X], np.arange(3.0), allocator=alloc)
    b = gtx.as_field([X], np.zeros(3), allocator=alloc)
    if isinstance(value, str) and value == "field":
        value = a
    with pytest.raises(errors.DSLError) as info:
        prog.with_backend(backend)(a, value, b, offset_provider={})
    line = f"  - Expected argument '{'n' if prog is _counted else 'x'}' to be of type '{expected}', got '{got}'."
    assert info.value.message == f"Invalid argument types in call to '{prog.__name__}'.\n{line}"
    assert isinstance(info.value.__cause__, ValueError) and info.value.__cause__.args[0] == line
    np.testing.assert_array_equal(b.asnumpy(), np.zeros(3))
