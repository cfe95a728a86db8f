"""CPU benchmarks of stencilkit, side by side in one process (see benchmarks/README.md).

    PYTHONPATH=src python benchmarks/cpu_bench.py [--json out.json] [--quick] [--check-cuda-sources]

A thin wrapper around the package ``benchmarks/stencilkit_benchmarks/``, so that the command
``stencilkit bench --cpu`` runs the same code. This script adds ``--cpu --verbose`` to the
options given; ``--help`` lists them all. Exit status: 0 all sections ran and all checks
passed, 1 otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # stencilkit_benchmarks

from stencilkit_benchmarks import main

if __name__ == "__main__":
    sys.exit(main(["--cpu", "--verbose", *sys.argv[1:]]))
