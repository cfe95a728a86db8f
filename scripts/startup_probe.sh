#!/usr/bin/env bash
# One device call that measures what a fresh GPU machine pays before and in a first call:
#   1. whether Python writes bytecode here (PYTHONDONTWRITEBYTECODE), and the alias import
#      (`import gt4py.cartesian.gtscript`) without and with the package's .pyc files;
#   2. `gpu_bench.py --only first_call` twice: on the fresh machine, then again (warm disk,
#      CuPy's kernel cache filled), with each compilation's lines and time;
#   3. the GTScript per-call breakdown on gt:gpu (benchmarks/cartesian_call_breakdown.py).
#   4. with GPU_TESTS="paths", those GPU tests (after the first calls: they warm the machine).
# Logs under $OUT. Usage: OUT=/tmp/x bash scripts/startup_probe.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./.out}"
mkdir -p "$OUT"
export PYTHONPATH=src:benchmarks PYTHONUNBUFFERED=1
export STENCILKIT_CACHE_DIR="${STENCILKIT_CACHE_DIR:-$(mktemp -d)}"
PY=python3
# first touch of memory: a fresh VM may back its pages slowly (three processes, 4 GiB each)
for i in 1 2 3; do
  $PY -c "import time, numpy as np; t = time.perf_counter(); a = np.ones(1 << 29); dt = time.perf_counter() - t
print(f'first touch, process $i: 4 GiB in {dt:.2f} s ({4 / dt:.1f} GiB/s)')"
done
alias_import() {
  for i in 1 2 3; do
    $PY -c "import time; t = time.perf_counter()
from stencilkit.compat import install_gt4py_alias; install_gt4py_alias()
import gt4py.cartesian.gtscript
print(f'alias import {time.perf_counter() - t:.3f} s')"
  done
}
{
  echo "date: $(date -u +%FT%TZ) host: $(hostname) nproc: $(nproc)"
  $PY -c "import os, sys; print('python', sys.version.split()[0], 'dont_write_bytecode', sys.flags.dont_write_bytecode, 'PYTHONDONTWRITEBYTECODE', os.environ.get('PYTHONDONTWRITEBYTECODE'))"
  echo "pyc files in src before: $(find src -name '*.pyc' | wc -l)"
  echo "CuPy kernel cache entries before: $(ls "${CUPY_CACHE_DIR:-$HOME/.cupy/kernel_cache}" 2>/dev/null | wc -l)"
  echo "--- alias import, as the tree came (bytecode as Python finds it)"
  alias_import
  $PY -m compileall -q src benchmarks > /dev/null
  echo "pyc files in src after compileall: $(find src -name '*.pyc' | wc -l)"
  echo "--- alias import with the .pyc files (as an installed wheel has them)"
  alias_import
  $PY -X importtime -c "from stencilkit.compat import install_gt4py_alias; install_gt4py_alias()
import gt4py.cartesian.gtscript" 2> "$OUT/importtime_alias.txt"
  $PY -c "import time; t = time.perf_counter(); import numpy; print(f'import numpy {time.perf_counter() - t:.3f} s')"
} > "$OUT/startup.log" 2>&1
cat "$OUT/startup.log"
for run in 1 2; do
  timeout 200 $PY benchmarks/gpu_bench.py --only first_call > "$OUT/first_call_$run.log" 2>&1
  echo "--- first_call run $run (rc $?) at $(date -u +%T)"
  grep -E "first call|compilations|last search" "$OUT/first_call_$run.log" | head -20
  echo "CuPy kernel cache entries: $(ls "${CUPY_CACHE_DIR:-$HOME/.cupy/kernel_cache}" 2>/dev/null | wc -l)"
done
if [ -n "${GPU_TESTS:-}" ]; then
  STENCILKIT_REQUIRE_GPU=1 timeout 200 $PY -m pytest -m gpu -q -p no:cacheprovider $GPU_TESTS > "$OUT/gpu_tests.log" 2>&1
  echo "--- GPU tests (rc $?): $(tail -1 "$OUT/gpu_tests.log")"
fi
timeout 200 $PY benchmarks/cartesian_call_breakdown.py gt:gpu --profile --json "$OUT/breakdown.json" > "$OUT/breakdown.log" 2>&1
echo "--- breakdown (rc $?)"
head -60 "$OUT/breakdown.log"
