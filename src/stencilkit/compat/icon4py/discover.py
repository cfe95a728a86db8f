"""Find the decorated stencils of a package by reading its source (no import needed).

A stencil is a function decorated with ``field_operator``, ``program`` or ``scan_operator``,
written bare (``@gtx.program``) or called (``@gtx.program(grid_type=...)``), under any
module alias. Functions defined inside other functions are found too (their ``nested`` flag is
set: they cannot be reached as module attributes).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

__all__ = ["KINDS", "StencilSource", "find_stencils", "module_name"]

KINDS = ("field_operator", "scan_operator", "program")


@dataclass(frozen=True)
class StencilSource:
    """One decorated function as written: module, name, kind, line, nesting."""

    module: str
    name: str
    kind: str
    line: int
    nested: bool

    @property
    def key(self) -> str:
        return f"{self.module}.{self.name}"


def _decorator_kind(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        name = node.attr
    elif isinstance(node, ast.Name):
        name = node.id
    else:
        return None
    return name if name in KINDS else None


def module_name(path: Path, root: Path) -> str:
    """``root/a/b/c.py`` -> ``a.b.c`` (``__init__.py`` -> its package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _walk(tree: ast.AST, module: str, depth: int, found: list[StencilSource]) -> None:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for dec in node.decorator_list:
                kind = _decorator_kind(dec)
                if kind is not None:
                    found.append(StencilSource(module, node.name, kind, node.lineno, depth > 0))
                    break
            _walk(node, module, depth + 1, found)
        elif isinstance(node, ast.ClassDef):
            _walk(node, module, depth + 1, found)
        else:
            _walk(node, module, depth, found)


def find_stencils(package_dir: Path, root: Path) -> list[StencilSource]:
    """Every decorated stencil under ``package_dir`` (module names relative to ``root``),
    in file order."""
    found: list[StencilSource] = []
    for path in sorted(package_dir.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not any(k in text for k in KINDS):
            continue
        _walk(ast.parse(text, str(path)), module_name(path, root), 0, found)
    return found
