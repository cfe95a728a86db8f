"""gt4py.next's exception classes: hierarchy, which condition raises which, message texts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, errors, float64
from stencilkit.core.errors import BuildError, SourceLocation

X = gtx.Dimension("X")
Y = gtx.Dimension("Y")
FX = Field[Dims[X], float64]


def test_hierarchy() -> None:
    assert issubclass(errors.DSLError, errors.GT4PyError)
    for cls in (
        errors.UnsupportedPythonFeatureError,
        errors.UndefinedSymbolError,
        errors.MissingAttributeError,
        errors.MissingArgumentError,
        errors.DSLTypeError,
    ):
        assert issubclass(cls, errors.DSLError)
    for cls in (
        errors.MissingParameterAnnotationError,
        errors.InvalidAnnotationError,
        errors.InvalidParameterAnnotationError,
    ):
        assert issubclass(cls, errors.DSLTypeError)
    assert issubclass(errors.CompilationError, errors.GT4PyError)
    assert not issubclass(errors.CompilationError, errors.DSLError)
    assert not issubclass(errors.DSLError, TypeError | ValueError)
    # stencilkit's own errors are DSLErrors and keep their built-in mixins
    assert issubclass(gtx.StencilError, errors.DSLError)
    assert issubclass(gtx.StencilTypeError, TypeError) and issubclass(
        gtx.StencilValueError, ValueError
    )
    assert issubclass(BuildError, errors.CompilationError)


def test_gt4py_constructors_and_messages() -> None:
    loc = SourceLocation("f.py", 3, 5)
    assert errors.UndefinedSymbolError(loc, "x").message == "Undeclared symbol 'x'."
    assert (
        errors.UnsupportedPythonFeatureError(loc, "'while' loop").message
        == "Unsupported Python syntax: 'while' loop."
    )
    assert (
        errors.MissingArgumentError(loc, "out", True).message == "Expected keyword-argument 'out'."
    )
    assert errors.MissingArgumentError(loc, "a", False).message == "Expected argument 'a'."
    assert errors.MissingAttributeError(loc, "G").message == "Object does not have attribute 'G'."
    e = errors.MissingParameterAnnotationError(loc, "a")
    assert e.message == "Parameter 'a' is missing type annotations." and e.location == loc
    assert str(e).startswith("f.py:3:5: ")
    assert errors.CompilationError("log").message.startswith("See attached compilation log.")


def test_message_is_bare_and_str_has_location() -> None:
    with pytest.raises(errors.UndefinedSymbolError) as info:

        @gtx.field_operator
        def op(a: FX) -> FX:
            return a * undefined_name  # type: ignore[name-defined]  # noqa: F821

    err = info.value
    assert err.message == "Undeclared symbol 'undefined_name'."
    assert isinstance(err, TypeError)  # still a StencilTypeError
    assert err.location.line > 0 and "test_compat_errors.py" in err.location.filename
    assert "Undeclared symbol 'undefined_name'." in str(err) and "test_compat_errors.py" in str(err)


def test_missing_and_invalid_parameter_annotations() -> None:
    with pytest.raises(
        errors.MissingParameterAnnotationError, match="Parameter 'b' is missing type annotations"
    ):

        @gtx.field_operator
        def op(a: FX, b) -> FX:  # type: ignore[no-untyped-def]
            return a

    with pytest.raises(
        errors.InvalidAnnotationError,
        match=r"Invalid type annotation for parameter 'a': 'list\[int\]'",
    ):

        @gtx.field_operator
        def op2(a: list[int]) -> FX:
            return a  # type: ignore[return-value]


def test_missing_out_outside_a_program() -> None:
    @gtx.field_operator
    def ident(a: FX) -> FX:
        return a

    with pytest.raises(errors.MissingArgumentError) as info:
        ident(gtx.ones({X: 2}), offset_provider={})
    assert info.value.message == "Expected keyword-argument 'out'."


@pytest.mark.parametrize("backend", [None, gtx.cpu])
def test_program_argument_type_errors(backend: Any) -> None:
    @gtx.field_operator
    def ident(a: FX) -> FX:
        return a

    @gtx.program(backend=backend)
    def copy(inp: FX, out: FX) -> None:
        ident(inp, out=out)

    wrong = gtx.as_field([Y], np.ones(3))
    with pytest.raises(errors.DSLError) as info:
        copy(wrong, gtx.zeros({X: 3}), offset_provider={})
    err = info.value
    assert err.message.startswith("Invalid argument types in call to 'copy'.")
    assert isinstance(err.__cause__, ValueError)
    assert (
        "  - Expected argument 'inp' to be of type 'Field[[X], float64]', got 'Field[[Y], float64]'."
        in err.__cause__.args[0]
    )
    assert isinstance(err, TypeError)
    with pytest.raises(errors.DSLError) as info:
        copy(gtx.ones({X: 3}, np.float32), gtx.zeros({X: 3}), offset_provider={})
    assert "got 'Field[[X], float32]'" in str(info.value.__cause__)


def test_unsupported_syntax() -> None:
    with pytest.raises(errors.UnsupportedPythonFeatureError, match="not part of the DSL"):

        @gtx.field_operator
        def op(a: FX) -> FX:
            while True:
                pass
            return a

    with pytest.raises(errors.UnsupportedPythonFeatureError, match="not part of the DSL"):

        @gtx.field_operator
        def op2(a: FX) -> FX:
            return (lambda x: x)(a)
