"""A definition's Python source: its AST, file, line numbers and visible names, and the
GTScript errors pointing into it (file, line, column, the line itself with a caret, a hint)."""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.errors import SourceLocation
from .definitions import (
    GTScriptDefinitionError,
    GTScriptNotSupportedError,
    GTScriptSymbolError,
    GTScriptSyntaxError,
)


@dataclass(frozen=True)
class Source:
    fn: Callable[..., Any]
    tree: ast.FunctionDef
    filename: str
    first_line: int
    col_shift: int
    lines: tuple[str, ...]
    names: dict[str, Any]
    text: str

    def loc(self, node: ast.AST | None) -> SourceLocation:
        if node is None or not hasattr(node, "lineno"):
            return SourceLocation(self.filename, self.first_line, 1)
        line = self.first_line + node.lineno - 1
        text = self.lines[node.lineno - 1] if node.lineno - 1 < len(self.lines) else ""
        col = int(getattr(node, "col_offset", 0))
        return SourceLocation(self.filename, line, col + 1 + self.col_shift, text)

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
    try:
        raw_lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as err:
        raise GTScriptSyntaxError(
            f"cannot read the source of {getattr(fn, '__name__', fn)!r}: {err}",
            hint="stencil definitions must be written in a file (or a notebook cell), not exec()",
        ) from err
    raw = "".join(raw_lines)
    col_shift = len(raw_lines[0]) - len(raw_lines[0].lstrip()) if raw_lines else 0
    module = ast.parse(textwrap.dedent(raw))
    tree = next(n for n in module.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    if not isinstance(tree, ast.FunctionDef):
        raise GTScriptSyntaxError(f"{fn.__name__} must be a plain function, not async")
    filename = inspect.getsourcefile(fn) or "<unknown>"
    lines = tuple(line.rstrip("\n") for line in raw_lines)
    return Source(fn, tree, filename, first_line, col_shift, lines, _visible_names(fn), raw)


def _visible_names(fn: Callable[..., Any]) -> dict[str, Any]:
    names: dict[str, Any] = dict(vars(builtins))
    names.update(getattr(fn, "__globals__", {}))
    closure = getattr(fn, "__closure__", None) or ()
    for name, cell in zip(fn.__code__.co_freevars, closure):
        try:
            names[name] = cell.cell_contents
        except ValueError:  # an empty cell: the name is defined after the function
            pass
    return names
