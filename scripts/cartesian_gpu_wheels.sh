#!/usr/bin/env bash
# Makes .whl-cart/ (not tracked by git): the wheels scripts/cartesian_gpu_bench.sh installs
# offline on the GPU machine (CPython 3.12, x86_64): gt4py 1.2.1 and every package its `gt:gpu`
# backend imports or builds with, pinned in scripts/cartesian_gpu_wheels.txt, without NumPy and
# CuPy (the machine's own). Then checks them here in a scratch venv, offline: install from the
# folder alone and import gt4py.cartesian.
#
#   scripts/cartesian_gpu_wheels.sh            # needs PyPI and a python3.12 (pyenv or PATH)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON312:-$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python 2> /dev/null | sort -rV | head -1)}"
[ -x "$PY" ] || PY="$(command -v python3.12)"
rm -rf .whl-cart
"$PY" -m pip download -q -d .whl-cart --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --abi cp312 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform any -r scripts/cartesian_gpu_wheels.txt
echo ".whl-cart: $(ls .whl-cart/*.whl | wc -l) wheels, $(du -sh .whl-cart | cut -f1)"
VENV="$(mktemp -d /tmp/cartgpu-wheels-XXXXXX)"
trap 'rm -rf "$VENV"' EXIT
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q "numpy>=2"  # the device's own
"$VENV/bin/pip" install -q --no-index --no-deps --no-compile .whl-cart/*.whl
"$VENV/bin/python" -W ignore -c 'import gt4py, gt4py.cartesian.gtscript, gt4py.cartesian.backend.pyext_builder; print("gt4py", gt4py.__version__, "imports from .whl-cart alone")'
