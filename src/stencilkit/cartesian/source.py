"""A definition's Python source: its AST, file, line numbers and visible names, and the
GTScript errors pointing into it (file, line, column, the line itself with a caret, a hint)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from ..core.pysource import FunctionSource, read_function
from .definitions import (
    GTScriptDefinitionError,
    GTScriptNotSupportedError,
    GTScriptSymbolError,
    GTScriptSyntaxError,
)


class Source(FunctionSource):
    """A parsed GTScript definition (``core/pysource.py``) with GTScript's errors."""

    def syntax(self, node: ast.AST | None, message: str, hint: str = "") -> GTScriptSyntaxError:
        return GTScriptSyntaxError(message, self.loc(node), hint)

    def symbol(self, node: ast.AST | None, message: str, hint: str = "") -> GTScriptSymbolError:
        return GTScriptSymbolError(message, self.loc(node), hint)

    def definition(
        self, node: ast.AST | None, message: str, hint: str = ""
    ) -> GTScriptDefinitionError:
        return GTScriptDefinitionError(message, self.loc(node), hint)

    def unsupported(
        self, node: ast.AST | None, message: str, hint: str = ""
    ) -> GTScriptNotSupportedError:
        return GTScriptNotSupportedError(
            f"{message} (not supported by stencilkit's GTScript yet)", self.loc(node), hint
        )


def read_source(fn: Callable[..., Any]) -> Source:
    return read_function(fn, Source, GTScriptSyntaxError, "stencil definitions")
