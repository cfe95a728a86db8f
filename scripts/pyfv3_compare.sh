#!/usr/bin/env bash
# pyFV3's dycore stencils on a baroclinic state: real gt4py 1.2.1 (numpy backend, scratch
# Python 3.12 venv) against stencilkit's backends (benchmarks/pyfv3_compare.py).
#
#   PYFV3_SOURCE=/path/to/pyFV3 [PYFV3_NDSL=/path/to/ndsl-parent] scripts/pyfv3_compare.sh
#
#   PYFV3_VENV      the gt4py venv (default /tmp/pyfv3-gt4py-venv; made if missing: gt4py 1.2.1
#                   --no-deps and its pure-Python dependencies, no dace)
#   PYFV3_OUT       where the runs go (default /tmp/pyfv3-runs)
#   PYFV3_BACKENDS  stencilkit backends (default "numpy gt:cpu_ifirst gt:cpu_kfirst")
#   PYFV3_PYTHON    stencilkit's Python (default: python3 with PYTHONPATH=src)
set -euo pipefail
: "${PYFV3_SOURCE:?set PYFV3_SOURCE to a pyFV3 checkout (the folder holding pyFV3/)}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${PYFV3_VENV:-/tmp/pyfv3-gt4py-venv}"
OUT="${PYFV3_OUT:-/tmp/pyfv3-runs}"
SK_PY="${PYFV3_PYTHON:-python3}"
case "$(realpath -m "$VENV")/" in "$ROOT"/*) echo "put the venv outside the repository" >&2; exit 2 ;; esac
if [ ! -x "$VENV/bin/python" ]; then
    PY312="$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python 2>/dev/null | sort -rV | head -1)"
    "${PY312:-python3.12}" -m venv "$VENV"
    "$VENV/bin/pip" install -q --no-deps gt4py==1.2.1 "gridtools-cpp>=2.3.9,<3" "pybind11>=3.0.3" "nanobind>=1.9"
    "$VENV/bin/pip" install -q attrs array-api-compat black boltons cached-property click cytoolz \
        deepdiff devtools factory-boy filelock frozendict jinja2 lark mako "numpy>=2" ordered-set \
        packaging setuptools tabulate toolz typing-extensions versioningit xxhash
fi
rm -rf "$OUT"
mkdir -p "$OUT"
export PYFV3_SOURCE
cd "$ROOT"
"$VENV/bin/python" -W ignore benchmarks/pyfv3_compare.py run --impl gt4py --backend numpy --out "$OUT/gt4py-numpy" >"$OUT/gt4py-numpy.log" 2>&1
tail -1 "$OUT/gt4py-numpy.log"
for b in ${PYFV3_BACKENDS:-numpy gt:cpu_ifirst gt:cpu_kfirst}; do
    d="$OUT/stencilkit-${b//:/_}"
    PYTHONPATH="$ROOT/src" STENCILKIT_CACHE_DIR="${STENCILKIT_CACHE_DIR:-/tmp/pyfv3-skcache}" \
        "$SK_PY" benchmarks/pyfv3_compare.py run --impl stencilkit --backend "$b" --out "$d" >"$d.log" 2>&1
    tail -1 "$d.log"
    "$SK_PY" benchmarks/pyfv3_compare.py compare "$OUT/gt4py-numpy" "$d" >"$d.compare.txt"
    echo "gt4py numpy vs stencilkit $b: $(tail -1 "$d.compare.txt")   (details: $d.compare.txt)"
done
