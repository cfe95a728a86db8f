"""Getting a function's source, AST and the names it can see, with exact user locations."""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.errors import SourceLocation, StencilError, StencilTypeError, UnsupportedSyntaxError

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


@dataclass(frozen=True)
class SourceFunction:
    """A parsed Python function: its AST, where it lives, and its visible names."""

    fn: Callable[..., Any]
    tree: ast.FunctionDef
    filename: str
    first_line: int
    col_shift: int
    lines: tuple[str, ...]
    names: dict[str, Any]

    def loc(self, node: ast.AST | None) -> SourceLocation:
        if node is None or not hasattr(node, "lineno"):
            return SourceLocation(self.filename, self.first_line, 1)
        line = self.first_line + node.lineno - 1
        text = self.lines[node.lineno - 1] if node.lineno - 1 < len(self.lines) else ""
        col = getattr(node, "col_offset", 0)
        return SourceLocation(self.filename, line, col + 1 + self.col_shift, text)

    def type_error(self, node: ast.AST | None, message: str, hint: str = "") -> StencilError:
        return StencilTypeError(message, self.loc(node), hint)

    def unsupported(self, node: ast.AST, hint: str) -> UnsupportedSyntaxError:
        """gt4py's ``UnsupportedPythonFeatureError`` for ``node``; ``hint`` says what to do."""
        feature = _FEATURES.get(type(node).__name__, f"ast.{type(node).__name__}")
        err = UnsupportedSyntaxError(f"Unsupported Python syntax: {feature}.", self.loc(node), hint)
        err.feature = feature
        return err


def parse_function(fn: Callable[..., Any]) -> SourceFunction:
    try:
        raw_lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as err:
        raise StencilTypeError(
            f"cannot read the source of {getattr(fn, '__name__', fn)!r}: {err}",
            hint="stencil functions must be defined in a file (or a notebook cell), not in exec()",
        ) from err
    raw = "".join(raw_lines)
    dedented = textwrap.dedent(raw)
    col_shift = len(raw_lines[0]) - len(raw_lines[0].lstrip()) if raw_lines else 0
    module = ast.parse(dedented)
    tree = next(n for n in module.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    if not isinstance(tree, ast.FunctionDef):
        raise StencilTypeError(f"{fn.__name__} must be a plain function, not async")
    filename = inspect.getsourcefile(fn) or "<unknown>"
    # Line numbers in the AST are relative to the dedented snippet, which starts at first_line.
    lines = tuple(line.rstrip("\n") for line in raw_lines)
    return SourceFunction(fn, tree, filename, first_line, col_shift, lines, _visible_names(fn))


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
