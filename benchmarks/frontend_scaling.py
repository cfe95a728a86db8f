"""How parse, lowering, code generation and build scale with the source (see benchmarks/README.md).

    PYTHONPATH=src python benchmarks/frontend_scaling.py [--cases chain,shifted,ifs] [--n 6,8,10]
        [--timeout 120] [--json out.json]

A thin wrapper around ``stencilkit_benchmarks.frontend`` (also ``python -m stencilkit_benchmarks.frontend``): each
case is a generated module, decorated, lowered, generated and built for the cpu backend in a new
process with a cold build cache, its results checked against NumPy, and the time of each stage
printed. Cases: ``chain`` (``g(x) = x * x + x`` applied n times; default n = 6, 8, 10, 12, 20,
100), ``shifted`` (``g(x) = x(I + 1) * 0.5 + x`` applied n times over a bounded domain; n = 100),
``ifs`` (a scan body of n sequential if statements, some without else; n = 40).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # stencilkit_benchmarks

from stencilkit_benchmarks.frontend import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
