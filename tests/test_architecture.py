"""The shape of the house: imports point down the pipeline; importing is quick and GPU-free."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).parents[1] / "src" / "stencilkit"

# A package may import only from the packages listed for it (and itself).
ALLOWED = {
    "core": set(),
    "storage": {"core"},
    "fields": {"core", "storage"},
    "ir": {"core"},
    "next": {"core", "ir", "fields", "stages", "backends", "config", "instrumentation"},
    "toolchain": {"core"},
    "stages": {"core", "ir", "fields"},
    "backends": {"core", "ir", "toolchain", "storage", "fields", "stages"},
    "distributed": {
        "core",
        "storage",
        "fields",
        "ir",
        "stages",
        "meshes",
    },  # halos from read extents
    "meshes": {"core", "fields"},
    "io": {"core", "fields", "meshes"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    rel = path.relative_to(PKG).parts
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and node.module.startswith("stencilkit."):
                found.add(node.module.split(".")[1])
            elif node.level > 0:
                base = list(rel[:-1])[: len(rel) - node.level]
                target = [*base, *(node.module.split(".") if node.module else [])]
                if target:
                    found.add(target[0])
    return found


def test_imports_point_down_the_pipeline() -> None:
    bad = []
    for package, allowed in ALLOWED.items():
        for path in (PKG / package).rglob("*.py"):
            for imported in _imports(path) - allowed - {package, "_version"}:
                bad.append(f"{path.relative_to(PKG)} imports {imported}")
    assert not bad, "\n".join(bad)


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
