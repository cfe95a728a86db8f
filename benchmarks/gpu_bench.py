"""GPU benchmarks of stencilkit, side by side in one process (see benchmarks/README.md).

    PYTHONPATH=src python benchmarks/gpu_bench.py [--json out.json] [--quick] [--only scan,e2c]

A thin wrapper around the package ``benchmarks/stencilkit_benchmarks/``, so that the command
``stencilkit bench --gpu`` runs the same code. This script adds ``--gpu --verbose`` (every
check and row printed as it runs) to the options given; ``--help`` lists them all.
Exit status: 0 all sections ran and all checks passed, 1 otherwise, 2 no usable GPU/CuPy.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # stencilkit_benchmarks

from stencilkit_benchmarks import main

if __name__ == "__main__":
    sys.exit(main(["--gpu", "--verbose", *sys.argv[1:]]))
