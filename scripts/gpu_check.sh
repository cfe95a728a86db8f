#!/usr/bin/env bash
# The one script run on a lent GPU machine (H200) in a single call:
#   environment -> GPU tests -> [sanitizers, icon4py, fuzzing: opt-in] -> the rest of the test suite
#   -> gpu_bench -> cpu_bench -> summary.  Opt-in: SANITIZE=1, ICON4PY=1 (wheels in .whl), FUZZ_PROGRAMS=N;
#   ICON4PY_BENCH=1 (icon4py_bench.sh, GT4PY=0 unless set; wheels in .whl); NDSL=1 (NDSL's tests on
#   gt:gpu, NDSL carried in .ndsl/);
#   opt-out: SKIP_OTHER_TESTS=1, SKIP_GPU_BENCH=1, SKIP_CPU_BENCH=1; GPU_TESTS_PATHS="tests/x.py ..." narrows the GPU tests.
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
# The lent machine sets PYTHONDONTWRITEBYTECODE=1 and the tree comes without .pyc files: every
# import would compile the package's sources again (alias import 0.6-0.97 s instead of 0.32-0.39 s,
# 2026-12-03). An installed wheel has them (pip compiles at install): compile them once here.
echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-} (the .pyc files are compiled here)" >> "$OUT/env.txt"
$PY -m compileall -q src benchmarks > /dev/null 2>&1 || echo "compileall failed" >> "$OUT/env.txt"
# The same for the installed packages the library imports (numpy: 0.2 s of the alias import
# compiled from its sources there; filelock: 0.16 s of a GTScript first call, 2026-12-03): a pip
# install has their .pyc files; best effort (site-packages may be read-only)
for pkg in numpy filelock; do
  $PY -m compileall -q "$($PY -c "import $pkg, os; print(os.path.dirname($pkg.__file__))" 2>/dev/null)" > /dev/null 2>&1 \
    || echo "$pkg's .pyc files could not be written (its first import compiles it)" >> "$OUT/env.txt"
done
# where import time goes (the bench reports the total); the second run is the warm one
$PY -X importtime -c "import stencilkit" 2>/dev/null; $PY -X importtime -c "import stencilkit" 2> "$OUT/importtime.txt"
head -c 4000 "$OUT/env.txt" | grep -E "NVIDIA H|Driver Version|python|cupy|numpy|nvrtc|device 0|FAIL|NOT AVAIL" | head -20

# ---------------------------------------------------------------- GPU tests
step "pytest -m gpu"
STENCILKIT_REQUIRE_GPU=1 timeout "${GPU_TESTS_LIMIT:-330}" $PY -m pytest -m gpu -q -p no:cacheprovider --timeout 90 ${GPU_TESTS_PATHS:-} 2>&1 | tee "$OUT/gpu_tests.log" | tail -40
RC_GPU_TESTS=${PIPESTATUS[0]}

# ---------------------------------------------------------------- optional: sanitizers (SANITIZE=1)
RC_SAN=0
if [ "${SANITIZE:-0}" = 1 ]; then
  SANITIZE_KERNELS="${SANITIZE_KERNELS-sk_}"
  step "compute-sanitizer memcheck + racecheck"
  SAN_TESTS="${SANITIZE_TESTS:-tests/backends/test_gpu_launch.py tests/backends/test_language_compat_cuda.py tests/test_reliability.py tests/compat/test_inplace_compat.py tests/backends/test_cuda_graph.py}"
  export STENCILKIT_TEST_NO_CUPY_POOL=1
  for tool in memcheck racecheck; do
    [ "$tool" = racecheck ] && SAN_TESTS="${RACECHECK_TESTS:-tests/backends/test_gpu_launch.py tests/backends/test_language_compat_cuda.py}"
    echo "== $tool on: $SAN_TESTS"
    # only stencilkit's kernels (sk_*) are instrumented: CuPy's own (its sort and scan, which the
    # locality order uses) would make the run many times slower, and they are not ours to check
    STENCILKIT_REQUIRE_GPU=1 timeout "${SANITIZE_LIMIT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 99 --report-api-errors no \
      ${SANITIZE_KERNELS:+--kernel-name kns=$SANITIZE_KERNELS} --print-limit 20 $PY -m pytest -m gpu -q -p no:cacheprovider $SAN_TESTS 2>&1 | tee "$OUT/sanitizer_$tool.log" | tail -8
    rc=${PIPESTATUS[0]}; echo "$tool exit code: $rc"; [ "$rc" = 0 ] || RC_SAN=$rc
    grep -E "ERROR SUMMARY|========= (Invalid|Race|Error)" "$OUT/sanitizer_$tool.log" | sort | uniq -c | head -10
    # the first reports in full (kernel, address, host back trace), and the tests they came from
    grep -E "^=========" "$OUT/sanitizer_$tool.log" | grep -v -E "^=========\s*$" | head -"${SANITIZE_SHOW:-40}"
  done
  unset STENCILKIT_TEST_NO_CUPY_POOL
fi

# ---------------------------------------------------------------- optional: icon4py on the gpu (ICON4PY=1)
RC_ICON=0
if [ "${ICON4PY:-0}" = 1 ]; then
  step "icon4py acceptance, embedded vs gpu"
  # the icon4py 0.4.1 wheels and their pure-Python needs are carried in .whl (see the device README)
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/icon4py-site .whl/*.whl \
    > "$OUT/icon4py_install.log" 2>&1 || echo "icon4py wheel install failed (see icon4py_install.log)"
  PYTHONPATH=/tmp/icon4py-site:src timeout "${ICON4PY_LIMIT:-240}" $PY -m stencilkit.compat.icon4py --backend gpu --progress \
    --jobs "${ICON4PY_JOBS:-16}" --timeout 120 ${ICON4PY_MODULES_FILE:+--modules-file "$ICON4PY_MODULES_FILE"} --json "$OUT/icon4py-gpu.json" --markdown "$OUT/icon4py-gpu.md" \
    > "$OUT/icon4py-gpu.log" 2>&1
  RC_ICON=$?
  tail -25 "$OUT/icon4py-gpu.md" 2>/dev/null || tail -25 "$OUT/icon4py-gpu.log"
  grep -c ": ok$" "$OUT/icon4py-gpu.log" | sed 's/^/stencils ok so far: /'; grep -v ": ok$" "$OUT/icon4py-gpu.log" | tail -15
fi

# ---------------------------------------------------------------- optional: NDSL's tests on gt:gpu (NDSL=1)
RC_NDSL=0
if [ "${NDSL:-0}" = 1 ]; then
  step "NDSL's offline tests, ${NDSL_BACKENDS:-st:gt:gpu:KJI st:numpy:cpu:IJK}"
  # NDSL is not on PyPI: carry a checkout (or the stand-in docs/cartesian-validation.md describes) in .ndsl/ndsl,
  # stand-in modules for what it imports and the machine lacks (dace) in .ndsl/stubs
  NDSL_VENV=none NDSL_SOURCE="${NDSL_SOURCE:-.ndsl/ndsl}" NDSL_STUBS="${NDSL_STUBS:-.ndsl/stubs}" \
    NDSL_BACKENDS="${NDSL_BACKENDS:-st:gt:gpu:KJI st:numpy:cpu:IJK}" STENCILKIT_REQUIRE_GPU=1 NDSL_LOGS="$OUT/ndsl" \
    timeout "${NDSL_LIMIT:-150}" bash scripts/ndsl_acceptance.sh > "$OUT/ndsl.log" 2>&1
  RC_NDSL=$?
  grep -E "^(==|FAILED|ERROR)|passed|failed" "$OUT/ndsl.log" | tail -20
fi

# ---------------------------------------------------------------- optional: long differential fuzzing (FUZZ_PROGRAMS=N)
RC_FUZZ=0
if [ "${FUZZ_PROGRAMS:-0}" != 0 ]; then
  step "fuzz $FUZZ_PROGRAMS programs on ${FUZZ_BACKENDS:-embedded,cpu,gpu,embedded-cupy}"
  timeout "${FUZZ_LIMIT:-480}" $PY scripts/fuzz.py --backends "${FUZZ_BACKENDS:-embedded,cpu,gpu,embedded-cupy}" \
    --programs "$FUZZ_PROGRAMS" --seed "${FUZZ_SEED:-20261201}" --jobs "${FUZZ_JOBS:-16}" --json "$OUT/fuzz.json" \
    --log "$OUT/fuzz.jsonl" --save "$OUT/fuzz-failures" 2>&1 | tee "$OUT/fuzz.log" | tail -12
  RC_FUZZ=${PIPESTATUS[0]}
fi

# ---------------------------------------------------------------- the rest of the suite
step "pytest (not gpu)"
[ "${SKIP_OTHER_TESTS:-0}" = 1 ] && echo "skipped (SKIP_OTHER_TESTS=1)" > "$OUT/all_tests.log"
[ "${SKIP_OTHER_TESTS:-0}" = 1 ] || timeout 60 $PY -m pytest -q -x -p no:cacheprovider -m "not gpu and not slow" --timeout 50 2>&1 | tee "$OUT/all_tests.log" | tail -25
RC_ALL_TESTS=${PIPESTATUS[0]}
[ "${SKIP_OTHER_TESTS:-0}" = 1 ] && RC_ALL_TESTS=0

# ---------------------------------------------------------------- GPU benchmarks
step gpu_bench
if [ "${SKIP_GPU_BENCH:-0}" = 1 ]; then
  echo "skipped (SKIP_GPU_BENCH=1)" > "$OUT/gpu_bench.log"; RC_GPU_BENCH=0
else
  timeout "${GPU_BENCH_LIMIT:-200}" $PY benchmarks/gpu_bench.py --json "$OUT/gpu_bench.json" ${GPU_BENCH_ARGS:-} 2>&1 | tee "$OUT/gpu_bench.log"
  RC_GPU_BENCH=${PIPESTATUS[0]}
fi

# GTScript run() on gt:gpu taken apart (benchmarks/cartesian_call_breakdown.py): where the
# per-call Python goes, beside the bench's whole-call figures
if [ "${SKIP_GPU_BENCH:-0}" != 1 ]; then
  timeout 120 $PY benchmarks/cartesian_call_breakdown.py gt:gpu --json "$OUT/call_breakdown.json" > "$OUT/call_breakdown.log" 2>&1
  echo "call breakdown (rc $?):"; grep -E "fields on|run\(\)|for_run|same|  go|launch" "$OUT/call_breakdown.log" | head -16
fi

# ---------------------------------------------------------------- CPU benchmarks
step cpu_bench
if [ "${SKIP_CPU_BENCH:-0}" = 1 ]; then
  echo "skipped (SKIP_CPU_BENCH=1)" > "$OUT/cpu_bench.log"; RC_CPU_BENCH=0
else
  timeout 40 $PY benchmarks/cpu_bench.py --json "$OUT/cpu_bench.json" > "$OUT/cpu_bench.log" 2>&1
  RC_CPU_BENCH=$?
fi
tail -5 "$OUT/cpu_bench.log"

# ---------------------------------------------------------------- optional: ICON's programs at ICON size (ICON4PY_BENCH=1)
RC_ICON_BENCH=0
if [ "${ICON4PY_BENCH:-0}" = 1 ]; then
  step "icon4py bench (scripts/icon4py_bench.sh, GT4PY=${GT4PY:-0})"
  STENCILKIT_CACHE_DIR="$(mktemp -d)" GT4PY="${GT4PY:-0}" OUT="$OUT/icon4py-bench" timeout "${ICON4PY_BENCH_LIMIT:-300}" bash scripts/icon4py_bench.sh > "$OUT/icon4py_bench.log" 2>&1
  RC_ICON_BENCH=$?
  grep -E " first |FAILED|^\| |total" "$OUT/icon4py_bench.log" | cut -c1-200 | tail -40
fi

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
echo "exit codes (124 = timed out): gpu_tests=$RC_GPU_TESTS other_tests=$RC_ALL_TESTS gpu_bench=$RC_GPU_BENCH cpu_bench=$RC_CPU_BENCH sanitizers=$RC_SAN icon4py=$RC_ICON ndsl=$RC_NDSL fuzz=$RC_FUZZ icon4py_bench=$RC_ICON_BENCH"
echo "total $(( $(date +%s) - T0 )) s; logs and JSON in $OUT: $(ls "$OUT" | tr '\n' ' ')"
# only a few files come back from the device: everything also goes into one archive, sorted first
tar czf "$OUT/0-all-logs.tgz" -C "$OUT" --exclude=0-all-logs.tgz . 2>/dev/null || true
[ "$RC_ICON_BENCH" = 0 ] && [ "$RC_SAN" = 0 ] && [ "$RC_ICON" = 0 ] && [ "$RC_NDSL" = 0 ] && [ "$RC_FUZZ" = 0 ] && [ "$RC_GPU_TESTS" = 0 ] && [ "$RC_ALL_TESTS" = 0 ] && [ "$RC_GPU_BENCH" = 0 ] && [ "$RC_CPU_BENCH" = 0 ]
