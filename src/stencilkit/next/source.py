"""Getting a function's source, AST and the names it can see, with exact user locations."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from ..core.errors import StencilError, StencilTypeError, UnsupportedSyntaxError
from ..core.pysource import FunctionSource, read_function

#: gt4py's names of Python syntax outside the DSL (``Unsupported Python syntax: 'while' loop.``)
_FEATURES = {
    "While": "'while' loop",
    "For": "'for' loop",
    "AsyncFor": "'async for' loop",
    "Lambda": "lambda",
    "List": "list literal",
    "ListComp": "list comprehension",
    "Dict": "dict literal",
    "DictComp": "dict comprehension",
    "Set": "set literal",
    "SetComp": "set comprehension",
    "GeneratorExp": "generator expression",
    "With": "'with' statement",
    "Try": "'try' statement",
    "Raise": "'raise' statement",
    "Assert": "'assert' statement",
    "Delete": "'del' statement",
    "Import": "'import' statement",
    "ImportFrom": "'import' statement",
    "Global": "'global' statement",
    "Nonlocal": "'nonlocal' statement",
    "FunctionDef": "nested function definition",
    "ClassDef": "class definition",
    "Break": "'break' statement",
    "Continue": "'continue' statement",
    "Yield": "'yield' expression",
    "Await": "'await' expression",
    "Match": "'match' statement",
    "JoinedStr": "f-string",
    "NamedExpr": "assignment expression",
    "Starred": "starred expression",
    "AugAssign": "augmented assignment",
    "Slice": "slice",
}


class SourceFunction(FunctionSource):
    """A parsed Python function (``core/pysource.py``) with the gt4py.next language's errors."""

    def type_error(self, node: ast.AST | None, message: str, hint: str = "") -> StencilError:
        return StencilTypeError(message, self.loc(node), hint)

    def unsupported(self, node: ast.AST, hint: str) -> UnsupportedSyntaxError:
        """gt4py's ``UnsupportedPythonFeatureError`` for ``node``; ``hint`` says what to do."""
        feature = _FEATURES.get(type(node).__name__, f"ast.{type(node).__name__}")
        err = UnsupportedSyntaxError(f"Unsupported Python syntax: {feature}.", self.loc(node), hint)
        err.feature = feature
        return err


def parse_function(fn: Callable[..., Any]) -> SourceFunction:
    return read_function(fn, SourceFunction, StencilTypeError, "stencil functions")
