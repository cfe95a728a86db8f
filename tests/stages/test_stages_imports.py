"""The shape of the house, module by module: no module imports a private name (``_x``) from
another package folder, and the cuda/ modules import each other without a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).parents[2] / "src" / "stencilkit"


def _folder(parts: tuple[str, ...]) -> str:
    """The package folder a module belongs to: ``backends/cuda`` for backends/cuda/x.py."""
    return "/".join(parts[:-1])


def _imported_names(path: Path) -> list[tuple[str, str, int]]:
    """(imported module's folder, name, line) for every ``from X import name``."""
    rel = path.relative_to(PKG).parts
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0:
            if not (node.module or "").startswith("stencilkit"):
                continue
            target = (node.module or "").split(".")[1:]
        else:
            target = [
                *rel[:-1][: len(rel) - 1 - (node.level - 1)],
                *((node.module or "").split(".") if node.module else []),
            ]
        for alias in node.names:
            module_path = PKG.joinpath(*target)
            if module_path.is_dir() and (module_path / f"{alias.name}.py").exists():
                folder = "/".join(target)  # ``from . import x``: a module, not a name
            elif module_path.is_dir():
                folder = "/".join(target)
            else:
                folder = "/".join(target[:-1])
            found.append((folder, alias.name, node.lineno))
    return found


def test_no_private_name_is_imported_across_folders() -> None:
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        own = _folder(path.relative_to(PKG).parts)
        for folder, name, line in _imported_names(path):
            if name.startswith("_") and not name.startswith("__") and folder != own:
                bad.append(
                    f"{path.relative_to(PKG)}:{line} imports {name} from {folder or 'stencilkit'}/"
                )
    assert not bad, "\n".join(bad)


def test_the_checker_sees_a_private_import(tmp_path: Path) -> None:
    probe = PKG / "backends" / "cuda" / "_probe_private_import.py"
    probe.write_text(
        "from ..cpp.codegen import _kernel\nfrom .codegen import _own_folder_is_fine\n"
    )
    try:
        names = _imported_names(probe)
    finally:
        probe.unlink()
    assert ("backends/cpp", "_kernel", 1) in names and (
        "backends/cuda",
        "_own_folder_is_fine",
        2,
    ) in names


def test_cuda_modules_import_without_a_cycle() -> None:
    cuda = PKG / "backends" / "cuda"
    graph: dict[str, set[str]] = {}
    for path in cuda.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                deps.add(node.module.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.level == 1:
                deps.update(a.name for a in node.names)
        graph[path.stem] = deps & {p.stem for p in cuda.glob("*.py")}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            d == goal or (d not in seen and reaches(d, goal, seen | {d}))
            for d in graph.get(start, ())
        )

    cyclic = sorted(m for m in graph if reaches(m, m, {m}))
    assert not cyclic, f"import cycle among backends/cuda/{cyclic}"
    assert (
        "CAPTURING" not in (cuda / "backend.py").read_text()
    )  # graph capture needs no global flag
