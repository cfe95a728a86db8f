#!/usr/bin/env bash
# Every GPU check in one call on a host with two GPUs (nvidia-h200-x2; on one GPU the MPI parts are
# left out), in parallel where the work allows it, for a session with little device time left:
#   A (together): the GPU tests on GPU 0 | icon4py on GPU 1 | the distributed tests and the
#                 shallow-water model on 2 ranks, one GPU each
#   B: stencilkit bench --gpu on GPU 0: gathers (both layouts), first call, Laplacian, scan, overhead
#   C: the distributed benchmark (weak scaling, exchange bandwidth) if time is left
#   D: differential fuzzing on the GPU (FUZZ_PROGRAMS=N programs; FUZZ_BACKENDS, FUZZ_LIMIT)
# Logs land under $OUT; everything is also packed into $OUT/0-all-logs.tgz (few files come back).
# Carry .whl (icon4py 0.4.1 wheels, cattrs, array-api-compat; mpi4py and mpich if the machine's
# mpi4py cannot load). Options: ICON4PY_MODULES_FILE (only these modules), GPU_TESTS_LIMIT,
# BENCH_LIMIT, ICON4PY_LIMIT, C_BEFORE (start C only before this many seconds).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./.out}"
mkdir -p "$OUT"
export STENCILKIT_CACHE_DIR="$(mktemp -d)"
export PYTHONPATH=src:benchmarks
export PYTHONUNBUFFERED=1
# Open MPI refuses to start as root unless told (the device runs commands as root), and its
# single-copy shared-memory path (CMA) is often not permitted in containers
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
# the interpreter by its full path: mpiexec (Open MPI) may start "python3" from another PATH
PY="$(python3 -c 'import sys; print(sys.executable)')"
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }

{
  date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=index,name,driver_version --format=csv
  $PY -c "import sys, numpy, cupy; print(sys.version.split()[0], numpy.__version__, cupy.__version__, cupy.cuda.runtime.getDeviceCount())"
} > "$OUT/env.txt" 2>&1
if ! $PY -c "import mpi4py.MPI" 2>/dev/null; then
  $PY -m pip install -q --no-index --find-links .whl mpi4py mpich >> "$OUT/env.txt" 2>&1
fi
$PY -c "from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0])" >> "$OUT/env.txt" 2>&1
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/icon4py-site \
  .whl/icon4py_*.whl .whl/cattrs-*.whl .whl/array_api_compat-*.whl >> "$OUT/env.txt" 2>&1
BIN="$($PY -c 'import sys, os; print(os.path.dirname(sys.executable))')"
MPIEXEC="$BIN/mpiexec"; [ -x "$MPIEXEC" ] || MPIEXEC="$(command -v mpiexec)"
echo "mpiexec: $MPIEXEC" >> "$OUT/env.txt"
tail -4 "$OUT/env.txt"

NGPU=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
# one GPU: icon4py shares it with the tests, the distributed tests run on one rank inside the GPU
# tests, and the benchmark waits for both (so that it measures an idle GPU)
ICON_DEV=$([ "$NGPU" -ge 2 ] && echo 1 || echo 0)
IGNORE=$([ "$NGPU" -ge 2 ] && echo "--ignore=tests/distributed" || echo "")

# ------------------------------------------------------------------ A
echo "== A (t=$(el) s, $NGPU GPUs): GPU tests | icon4py on GPU $ICON_DEV | distributed on 2 GPUs (if 2)"
( CUDA_VISIBLE_DEVICES=$ICON_DEV PYTHONPATH=/tmp/icon4py-site:src timeout "${ICON4PY_LIMIT:-240}" \
    $PY -m stencilkit.compat.icon4py --backend gpu --jobs "${ICON4PY_JOBS:-10}" --timeout 120 --progress \
    ${ICON4PY_MODULES_FILE:+--modules-file "$ICON4PY_MODULES_FILE"} \
    --json "$OUT/icon4py.json" --markdown "$OUT/icon4py.md" > "$OUT/icon4py.log" 2>&1
  echo "icon4py exit code $?" >> "$OUT/icon4py.log" ) &
ICON_PID=$!
MPI_PID=""
[ "$NGPU" -ge 2 ] && ( STENCILKIT_REQUIRE_GPU=1 timeout "${MPI_TESTS_LIMIT:-120}" "$MPIEXEC" -n 2 $PY -m pytest -q -p no:cacheprovider \
    -rs tests/distributed > "$OUT/mpi_tests.log" 2>&1
  echo "distributed tests exit code $?" >> "$OUT/mpi_tests.log"
  timeout 60 "$MPIEXEC" -n 2 $PY -m stencilkit.models.shallow_water_mpi --backend gpu --steps 100 --size 512 \
    > "$OUT/shallow_water_gpu.log" 2>&1
  echo "shallow water (2 GPUs) exit code $?" >> "$OUT/shallow_water_gpu.log"
  STENCILKIT_MPI_CUDA=0 timeout 60 "$MPIEXEC" -n 2 $PY -m stencilkit.models.shallow_water_mpi --backend gpu \
    --steps 50 --size 256 --method staged >> "$OUT/shallow_water_gpu.log" 2>&1
  echo "shallow water (2 GPUs, staged through the host) exit code $?" >> "$OUT/shallow_water_gpu.log" ) &
[ "$NGPU" -ge 2 ] && MPI_PID=$!
CUDA_VISIBLE_DEVICES=0 STENCILKIT_REQUIRE_GPU=1 timeout "${GPU_TESTS_LIMIT:-170}" $PY -m pytest -m gpu -q \
  -p no:cacheprovider --timeout 90 $IGNORE > "$OUT/gpu_tests.log" 2>&1
RC_TESTS=$?
echo "GPU tests exit code $RC_TESTS (t=$(el) s): $(tail -1 "$OUT/gpu_tests.log")"
if [ -n "$MPI_PID" ]; then
  wait $MPI_PID
  echo "distributed (t=$(el) s): $(grep -E 'passed|failed' "$OUT/mpi_tests.log" | tail -2 | tr '\n' ' ')"
  grep -E "exit code|check|bitwise|DIFFER" "$OUT/shallow_water_gpu.log" | tail -6
else
  wait $ICON_PID  # one GPU: the benchmark runs alone
fi

# ------------------------------------------------------------------ B
echo "== B (t=$(el) s): stencilkit bench --gpu"
CUDA_VISIBLE_DEVICES=0 timeout "${BENCH_LIMIT:-130}" $PY -c "import sys; from stencilkit.cli import main; sys.exit(main(sys.argv[1:]))" \
  bench --gpu -v --skip-compile --only "${BENCH_ONLY:-gathers,first_call,laplacian,scan,overhead}" \
  --json "$OUT/gpu_bench.json" > "$OUT/gpu_bench.log" 2>&1
RC_BENCH=$?
echo "bench exit code $RC_BENCH"
if grep -q "^---- stencilkit" "$OUT/gpu_bench.log"; then sed -n '/^---- stencilkit/,$p' "$OUT/gpu_bench.log" | head -70
else tail -30 "$OUT/gpu_bench.log"; fi
grep -E "check FAIL|^!!! section" "$OUT/gpu_bench.log" | head

wait $ICON_PID
echo "icon4py (t=$(el) s): $(grep -c ': ok$' "$OUT/icon4py.log") ok; not ok:"
grep -E "^\[" "$OUT/icon4py.log" | grep -v ": ok$" | head -10
tail -2 "$OUT/icon4py.log"

# ------------------------------------------------------------------ C
if [ "$NGPU" -ge 2 ] && [ "$(el)" -lt "${C_BEFORE:-330}" ]; then
  echo "== C (t=$(el) s): distributed benchmark"
  timeout "${C_LIMIT:-60}" "$MPIEXEC" -n 2 $PY benchmarks/distributed_exchange.py --gpu --size 2048 2048 128 \
    --steps 20 --repeats 30 --json "$OUT/distributed_bench.json" > "$OUT/distributed_bench.log" 2>&1
  echo "distributed bench exit code $?"; tail -25 "$OUT/distributed_bench.log"
else
  echo "== C skipped: one GPU, or no time left (t=$(el) s)"
fi

# ------------------------------------------------------------------ D (FUZZ_PROGRAMS=N)
if [ "${FUZZ_PROGRAMS:-0}" != 0 ]; then
  echo "== D (t=$(el) s): fuzz $FUZZ_PROGRAMS programs on ${FUZZ_BACKENDS:-embedded,gpu,embedded-cupy}"
  timeout "${FUZZ_LIMIT:-150}" $PY scripts/fuzz.py --backends "${FUZZ_BACKENDS:-embedded,gpu,embedded-cupy}" \
    --programs "$FUZZ_PROGRAMS" --seed "${FUZZ_SEED:-20261201}" --jobs "${FUZZ_JOBS:-16}" --json "$OUT/fuzz.json" \
    --save "$OUT/fuzz-failures" > "$OUT/fuzz.log" 2>&1
  echo "fuzz exit code $? (124 = cut by its time limit)"; tail -4 "$OUT/fuzz.log"
fi

echo "total $(el) s"
tar czf "$OUT/0-all-logs.tgz" -C "$OUT" --exclude=0-all-logs.tgz . 2>/dev/null || true
