"""The shape of the house: imports point down the pipeline; importing is quick and GPU-free."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).parents[1] / "src" / "stencilkit"

# Every floor of the house (a package, or a top-level module) and the floors it may import
# from; ``facade`` is ``import stencilkit`` itself. A floor missing here fails the test: a new
# one must say where it stands.
ENGINE = {"core", "storage", "fields", "ir", "toolchain", "stages", "backends"}
ALLOWED: dict[str, set[str]] = {
    "_version": set(),
    "core": set(),
    "storage": {"core"},
    "fields": {"core", "storage"},
    "ir": {"core"},
    "toolchain": {"core", "_version"},
    "stages": {"core", "ir", "fields"},
    "backends": {"core", "ir", "toolchain", "storage", "fields", "stages"},
    "config": {"core", "toolchain"},
    "instrumentation": {"config"},
    # the gt4py.next language: above the engine, which it enters through stages/interface.py
    # (toolchain, _version: the build cache directory and the version that key next/decoration.py's
    # record)
    "next": {
        "core",
        "ir",
        "storage",
        "fields",
        "stages",
        "backends",
        "toolchain",
        "_version",
        "config",
        "instrumentation",
    },
    # the GTScript language (gt4py.cartesian): beside next/, entering the engine the same way
    "cartesian": {"core", "ir", "storage", "fields", "stages", "backends", "toolchain", "config"},
    "meshes": {"core", "fields"},
    "io": {"core", "fields", "meshes"},
    "distributed": {"core", "storage", "fields", "ir", "stages", "meshes"},  # halos: read extents
    # io: the demo reads an ICON torus grid where icon-grid-generator is installed
    "models": {"facade", "core", "toolchain", "meshes", "io", "distributed"},
    "aot": {"facade"},
    "cli": {"_version", "core", "toolchain", "models", "facade"},
    # the top floor: what the gt4py alias serves, and the icon4py acceptance run
    "compat": {
        *ENGINE,
        "config",
        "instrumentation",
        "next",
        "cartesian",
        "meshes",
        "io",
        "facade",
    },
    "gt4py_run": {"compat"},
}


def _floor(path: Path) -> str:
    rel = path.relative_to(PKG).parts
    return rel[0] if len(rel) > 1 else rel[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    """The floors ``path`` imports from (also inside functions)."""
    return _imports_in(path.read_text(), path.relative_to(PKG).parts)


def _imports_in(source: str, rel: tuple[str, ...]) -> set[str]:
    tree = ast.parse(source)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.module == "stencilkit":
                found.add("facade")
            elif node.level == 0 and node.module and node.module.startswith("stencilkit."):
                found.add(node.module.split(".")[1])
            elif node.level > 0:
                base = list(rel[:-1])[: len(rel) - node.level]
                target = [*base, *(node.module.split(".") if node.module else [])]
                if target:
                    found.add(target[0])
                else:  # from .. import config (at the package root)
                    found.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "stencilkit":
                    found.add(parts[1] if len(parts) > 1 else "facade")
    return found


def test_every_floor_is_listed() -> None:
    floors = {_floor(p) for p in PKG.rglob("*.py")} - {"__init__"}
    assert floors <= set(ALLOWED), f"unlisted floors: {sorted(floors - set(ALLOWED))}"
    assert set(ALLOWED) - floors <= {"cartesian"}, f"gone: {sorted(set(ALLOWED) - floors)}"


def test_imports_point_down_the_pipeline() -> None:
    bad = []
    for path in PKG.rglob("*.py"):
        floor = _floor(path)
        if floor == "__init__":
            continue  # the facade re-exports every floor
        for imported in _imports(path) - ALLOWED[floor] - {floor}:
            bad.append(f"{path.relative_to(PKG)} imports {imported}")
    assert not bad, "\n".join(bad)


def test_the_floors_form_no_loop() -> None:
    """No chain of allowed imports leads back to where it started: in particular nothing leads
    from the engine into a frontend (``next``, ``compat``) or the facade."""
    seen: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(floor: str, path: list[str]) -> None:
        if seen.get(floor) == 1:
            raise AssertionError("import loop: " + " -> ".join([*path, floor]))
        if seen.get(floor) == 2 or floor == "facade":
            return
        seen[floor] = 1
        for below in ALLOWED[floor]:
            visit(below, [*path, floor])
        seen[floor] = 2

    for floor in ALLOWED:
        visit(floor, [])
    for floor in ENGINE:
        assert not ALLOWED[floor] & {"next", "compat", "facade", "config"}, floor


def test_a_loop_into_the_engine_is_caught() -> None:
    """The check itself: engine modules importing the floors above them are reported."""
    rel = ("stages", "runner.py")
    assert _imports_in("from ..next.program import Program", rel) == {"next"}
    assert _imports_in("def f():\n    from .. import config", rel) == {"config"}
    assert _imports_in("import stencilkit.compat.gt4py", rel) == {"compat"}
    assert _imports_in("import stencilkit as gtx", rel) == {"facade"}
    assert not {"next", "config", "compat", "facade"} & ALLOWED["stages"]


def test_import_is_fast_and_loads_no_gpu_library() -> None:
    code = (
        "import sys, time; t = time.perf_counter(); import stencilkit; dt = time.perf_counter() - t;"
        "print(dt, any(m.split('.')[0] in ('cupy', 'cuda', 'torch', 'jax') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(PKG.parent), "PATH": "/usr/bin:/bin"},
    ).stdout.split()
    assert out[1] == "False"
    assert (
        float(out[0]) < 2.0
    )  # the 0.3 s target is measured in benchmarks; this catches gross regressions
