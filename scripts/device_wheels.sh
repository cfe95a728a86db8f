#!/usr/bin/env bash
# Download the wheels the device runs need into .whl/ (git-ignored; carried with `carry: [".whl"]`):
# icon4py 0.4.1 (common, dycore, diffusion) and the pure-Python packages its stencils import, for
# the stencilkit side of scripts/icon4py_bench.sh and gpu_check.sh ICON4PY=1; real gt4py 1.2.1
# and what its gtfn_gpu backend imports and builds with, for the gt4py side (never a stencilkit
# dependency). The device (Python 3.12, offline) already has numpy, cupy, cmake, ninja and
# nanobind; DaCe is left out (gtfn does not need it). About 17 MB.
#
#   scripts/device_wheels.sh [DIR]      (default .whl)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DIR="${1:-.whl}"
mkdir -p "$DIR"
get() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    --platform any -d "$DIR" "$@"
}
# icon4py and what its stencil modules import (the stencilkit side)
get icon4py-common==0.4.1 icon4py-atmosphere-dycore==0.4.1 icon4py-atmosphere-diffusion==0.4.1 \
    attrs cattrs array_api_compat pyyaml typing_extensions packaging filelock platformdirs
# gt4py 1.2.1 and its requirements but DaCe, NumPy, CMake, ninja, nanobind (on the device)
get gt4py==1.2.1 black click mypy_extensions pathspec pytokens boltons cached-property cytoolz toolz \
    'deepdiff<9' orderly-set devtools asttokens executing pygments factory-boy faker tzdata \
    frozendict 'gridtools-cpp>=2.3.9,<3' jinja2 markupsafe lark mako ordered-set pybind11 setuptools \
    tabulate versioningit xxhash
du -sh "$DIR"
