#!/usr/bin/env bash
# The one script run on a lent GPU machine (H200) in a single call:
#   environment -> GPU tests -> the rest of the test suite -> gpu_bench -> cpu_bench -> summary.
# Everything lands under $OUT (default ./.out); the end of stdout is a short summary.
# Each step has its own time limit; the limits add up to under 9 minutes (typical run: ~4).
# gpu_bench = `stencilkit bench --gpu -v`: copy, Laplacian, tridiagonal scan, E2C/C2E/V2E
# neighbour sums (each beside hand-written CUDA and the embedded backend), overhead, compile.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./.out}"
mkdir -p "$OUT"
export STENCILKIT_CACHE_DIR="$(mktemp -d)"
export PYTHONPATH=src:benchmarks  # the library and its benchmark suite (stencilkit_benchmarks), no install
export PYTHONUNBUFFERED=1
PY=python3
T0=$(date +%s)

step() {  # step NAME: prints a banner with the elapsed time
  echo
  echo "################ $1  (t=$(( $(date +%s) - T0 )) s)"
}

# ---------------------------------------------------------------- environment
step env
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  echo "repo: $(pwd)"
  echo "STENCILKIT_CACHE_DIR=$STENCILKIT_CACHE_DIR"
  nvidia-smi 2>&1 || echo "nvidia-smi failed"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv 2>&1 || true
  command -v nvcc >/dev/null && nvcc --version 2>&1 | tail -2
  $PY - <<'EOF' 2>&1
import sys, platform
print("python", sys.version.split()[0], platform.platform())
for m in ("numpy", "cupy", "cuda.bindings", "torch", "triton", "pytest", "filelock", "platformdirs"):
    try:
        mod = __import__(m, fromlist=["_"])
        print(f"{m:14s}", getattr(mod, "__version__", "?"))
    except Exception as e:
        print(f"{m:14s} NOT AVAILABLE: {type(e).__name__}: {e}")
try:
    import cupy as cp
    print("cupy devices:", cp.cuda.runtime.getDeviceCount(), "runtime", cp.cuda.runtime.runtimeGetVersion(),
          "driver", cp.cuda.runtime.driverGetVersion())
    print("device 0:", cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
except Exception as e:
    print("cupy GPU check failed:", type(e).__name__, e)
try:
    from cuda.bindings import nvrtc
    print("nvrtc", nvrtc.nvrtcVersion())
except Exception as e:
    print("nvrtc not available:", type(e).__name__, e)
EOF
} > "$OUT/env.txt" 2>&1
# where import time goes (the bench reports the total); the second run is the warm one
$PY -X importtime -c "import stencilkit" 2>/dev/null; $PY -X importtime -c "import stencilkit" 2> "$OUT/importtime.txt"
head -c 4000 "$OUT/env.txt" | grep -E "NVIDIA H|Driver Version|python|cupy|numpy|nvrtc|device 0|FAIL|NOT AVAIL" | head -20

# ---------------------------------------------------------------- GPU tests
step "pytest -m gpu"
STENCILKIT_REQUIRE_GPU=1 timeout "${GPU_TESTS_LIMIT:-330}" $PY -m pytest -m gpu -q -p no:cacheprovider --timeout 90 2>&1 | tee "$OUT/gpu_tests.log" | tail -40
RC_GPU_TESTS=${PIPESTATUS[0]}

# ---------------------------------------------------------------- the rest of the suite
step "pytest (not gpu)"
[ "${SKIP_OTHER_TESTS:-0}" = 1 ] && echo "skipped (SKIP_OTHER_TESTS=1)" > "$OUT/all_tests.log"
[ "${SKIP_OTHER_TESTS:-0}" = 1 ] || timeout 60 $PY -m pytest -q -x -p no:cacheprovider -m "not gpu and not slow" --timeout 50 2>&1 | tee "$OUT/all_tests.log" | tail -25
RC_ALL_TESTS=${PIPESTATUS[0]}
[ "${SKIP_OTHER_TESTS:-0}" = 1 ] && RC_ALL_TESTS=0

# ---------------------------------------------------------------- GPU benchmarks
step gpu_bench
timeout 200 $PY benchmarks/gpu_bench.py --json "$OUT/gpu_bench.json" 2>&1 | tee "$OUT/gpu_bench.log"
RC_GPU_BENCH=${PIPESTATUS[0]}

# ---------------------------------------------------------------- CPU benchmarks
step cpu_bench
if [ "${SKIP_CPU_BENCH:-0}" = 1 ]; then
  echo "skipped (SKIP_CPU_BENCH=1)" > "$OUT/cpu_bench.log"; RC_CPU_BENCH=0
else
  timeout 40 $PY benchmarks/cpu_bench.py --json "$OUT/cpu_bench.json" > "$OUT/cpu_bench.log" 2>&1
  RC_CPU_BENCH=$?
fi
tail -5 "$OUT/cpu_bench.log"

# ---------------------------------------------------------------- summary (the reply shows the end)
step summary
echo "--- gpu tests:  $(grep -E '(passed|failed|error|skipped)' "$OUT/gpu_tests.log" | tail -1)"
echo "--- other tests: $(grep -E '(passed|failed|error|skipped)' "$OUT/all_tests.log" | tail -1)"
echo "--- FAILED tests (first 15):"
grep -h -E "^(FAILED|ERROR) " "$OUT/gpu_tests.log" "$OUT/all_tests.log" | head -15
echo
for b in gpu cpu; do
  log="$OUT/${b}_bench.log"
  echo "--- ${b}_bench: sections that failed:"
  grep -E "^!!! section" "$log" | head -10
  grep -E "check FAIL" "$log" | head -10
  if grep -q "^---- stencilkit" "$log"; then
    sed -n '/^---- stencilkit/,$p' "$log" | head -90
  else
    echo "(no table: the last lines of $log)"; tail -30 "$log"
  fi
  echo
done
echo
echo "exit codes (124 = timed out): gpu_tests=$RC_GPU_TESTS other_tests=$RC_ALL_TESTS gpu_bench=$RC_GPU_BENCH cpu_bench=$RC_CPU_BENCH"
echo "total $(( $(date +%s) - T0 )) s; logs and JSON in $OUT: $(ls "$OUT" | tr '\n' ' ')"
[ "$RC_GPU_TESTS" = 0 ] && [ "$RC_ALL_TESTS" = 0 ] && [ "$RC_GPU_BENCH" = 0 ] && [ "$RC_CPU_BENCH" = 0 ]
