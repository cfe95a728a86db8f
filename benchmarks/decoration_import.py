"""Importing icon4py's dycore and diffusion stencil modules, with DSL errors at decoration or not.

    PYTHON=/path/to/venv-with-icon4py/bin/python python benchmarks/decoration_import.py [--repeat 5]

Each measurement is a new process (``PYTHON``, a venv with icon4py installed, e.g. 0.4.1
``--no-deps``; stencilkit from this checkout's ``src``, serving ``gt4py`` through
``install_gt4py_alias``) that imports every module of ``icon4py.model.atmosphere.dycore.stencils``
and ``...diffusion.stencils`` and prints the time of those imports alone (stencilkit, numpy and
the alias imported before the clock starts). Side by side, in one run:

* ``lazy``: ``STENCILKIT_PARSE_AT_DECORATION=0`` (nothing parsed at decoration);
* ``default, cold``: the default (``stencilkit/next/decoration.py``) with an empty build cache
  directory: every definition parsed at decoration, and put on record;
* ``default, warm``: the default again, with that record (an import of unchanged code);
* ``always``: ``STENCILKIT_PARSE_AT_DECORATION=1`` (every definition parsed, no record).

The medians over ``--repeat`` processes are printed (cold: each repeat in a fresh directory).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
CHILD = r"""
import importlib, pkgutil, sys, time
import numpy
import stencilkit
from stencilkit.compat import install_gt4py_alias
install_gt4py_alias(force=True)
import gt4py.next
names = []
for pkg in ("icon4py.model.atmosphere.dycore.stencils", "icon4py.model.atmosphere.diffusion.stencils"):
    spec = importlib.util.find_spec(pkg)
    names += [f"{pkg}.{m.name}" for m in pkgutil.iter_modules(spec.submodule_search_locations)]
t0 = time.perf_counter()
for name in names:
    importlib.import_module(name)
print(len(names), time.perf_counter() - t0)
"""


def measure(python: str, env: dict[str, str]) -> tuple[int, float]:
    out = subprocess.run(
        [python, "-c", CHILD], env=env, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"import failed:\n{out.stderr[-3000:]}")
    n, seconds = out.stdout.split()[-2:]
    return int(n), float(seconds)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    python = os.environ.get("PYTHON", sys.executable)
    base = {**os.environ, "PYTHONPATH": str(SRC)}
    base.pop("STENCILKIT_PARSE_AT_DECORATION", None)
    results: dict[str, list[float]] = {"lazy": [], "default, cold": [], "default, warm": []}
    results["always"] = []
    count = 0
    with tempfile.TemporaryDirectory(prefix="sk-decoration-") as tmp:
        for i in range(args.repeat):
            cache = str(Path(tmp) / f"cache{i}")
            env = {**base, "STENCILKIT_CACHE_DIR": cache}
            count, t = measure(python, {**env, "STENCILKIT_PARSE_AT_DECORATION": "0"})
            results["lazy"].append(t)
            results["default, cold"].append(measure(python, env)[1])
            results["default, warm"].append(measure(python, env)[1])
            results["always"].append(
                measure(python, {**env, "STENCILKIT_PARSE_AT_DECORATION": "1"})[1]
            )
    print(f"importing {count} icon4py stencil modules ({python}), median of {args.repeat}:")
    for name, times in results.items():
        print(
            f"  {name:15s} {statistics.median(times):.3f} s"
            f"  (min {min(times):.3f}, max {max(times):.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
