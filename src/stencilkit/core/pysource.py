"""A Python function's source as the DSL frontends read it: its AST, where it lives (file,
first line, indentation), its lines for error carets, and the names visible to it.

Shared by the gt4py.next language (``next/source.py``) and GTScript (``cartesian/source.py``):
each subclasses :class:`FunctionSource` with its own error constructors.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import SourceLocation, StencilError


@dataclass(frozen=True)
class FunctionSource:
    """A parsed Python function: its AST, where it lives, and its visible names."""

    fn: Callable[..., Any]
    tree: ast.FunctionDef
    filename: str
    first_line: int
    col_shift: int
    lines: tuple[str, ...]
    names: dict[str, Any]
    text: str

    def loc(self, node: ast.AST | None) -> SourceLocation:
        """Where ``node`` is in the file (the function's first line without a node)."""
        if node is None or not hasattr(node, "lineno"):
            return SourceLocation(self.filename, self.first_line, 1)
        line = self.first_line + node.lineno - 1
        text = self.lines[node.lineno - 1] if node.lineno - 1 < len(self.lines) else ""
        col = int(getattr(node, "col_offset", 0))
        return SourceLocation(self.filename, line, col + 1 + self.col_shift, text)


S = TypeVar("S", bound=FunctionSource)


def read_function(
    fn: Callable[..., Any], kind: type[S], error: type[StencilError], where: str
) -> S:
    """``fn``'s source as a ``kind``; a function whose source cannot be read, or an async one,
    raises ``error`` (``where``: what must be written in a file, for the hint)."""
    found = _block_by_indentation(fn)
    if found is not None:
        raw_lines, first_line, module = found
    else:
        try:
            raw_lines, first_line = inspect.getsourcelines(fn)
        except (OSError, TypeError) as err:
            raise error(
                f"cannot read the source of {getattr(fn, '__name__', fn)!r}: {err}",
                hint=f"{where} must be defined in a file (or a notebook cell), not in exec()",
            ) from err
        module = ast.parse(textwrap.dedent("".join(raw_lines)))
    raw = "".join(raw_lines)
    col_shift = len(raw_lines[0]) - len(raw_lines[0].lstrip()) if raw_lines else 0
    tree = next(n for n in module.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    if not isinstance(tree, ast.FunctionDef):
        raise error(f"{fn.__name__} must be a plain function, not async")
    filename = inspect.getsourcefile(fn) or "<unknown>"
    # line numbers in the AST are relative to the dedented snippet, which starts at first_line
    lines = tuple(line.rstrip("\n") for line in raw_lines)
    return kind(fn, tree, filename, first_line, col_shift, lines, visible_names(fn), raw)


def _block_by_indentation(fn: Callable[..., Any]) -> tuple[list[str], int, ast.Module] | None:
    """``fn``'s lines (decorators included), first line and parsed block, read from its file by
    indentation: from ``co_firstlineno`` to the line before the first statement indented no
    deeper than its ``def`` (blank and comment-only lines do not end it, nor do closing brackets,
    as of a signature over several lines). ``inspect.getsourcelines`` finds the same block by
    tokenizing, which costs a process its first use of ``tokenize`` (5 ms here, about 12 ms on
    the H200 host) and a few ms per function. None (so that ``inspect`` reads it) where the block
    does not parse as exactly one function named as ``fn`` whose last line ends the block: a
    string or bracket that the indentation cut short, a lambda, code without a file."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    try:
        filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except TypeError:
        return None
    lines = linecache.getlines(filename, getattr(fn, "__globals__", None))
    start = code.co_firstlineno - 1
    if not 0 <= start < len(lines):
        return None
    head = lines[start]
    indent = len(head) - len(head.lstrip())
    end = start
    # the decorators, up to the function's own def at the same indentation
    while end < len(lines) and not lines[end].lstrip().startswith(("def ", "async def ")):
        end += 1
    last = end  # the last line that is code (not blank, not only a comment)
    end += 1
    while end < len(lines):
        line = lines[end]
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            if len(line) - len(line.lstrip()) <= indent and not stripped.startswith(
                (")", "]", "}")
            ):
                break
            last = end
        end += 1
    block = lines[start : last + 1]
    try:
        module = ast.parse(textwrap.dedent("".join(block)))
    except (SyntaxError, ValueError):
        return None
    if (
        len(module.body) != 1
        or not isinstance(module.body[0], ast.FunctionDef | ast.AsyncFunctionDef)
        or module.body[0].name != fn.__name__
        or module.body[0].end_lineno != len(block)
    ):
        return None
    return block, start + 1, module


def visible_names(fn: Callable[..., Any]) -> dict[str, Any]:
    """The builtins, globals and closure values ``fn`` sees (an empty cell is left out: its
    name is defined after the function)."""
    names: dict[str, Any] = dict(vars(builtins))
    names.update(getattr(fn, "__globals__", {}))
    closure = getattr(fn, "__closure__", None) or ()
    for name, cell in zip(fn.__code__.co_freevars, closure):
        try:
            names[name] = cell.cell_contents
        except ValueError:
            pass
    return names
