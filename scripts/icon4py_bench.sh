#!/usr/bin/env bash
# ICON's dycore and diffusion programs at ICON size on a GPU machine, stencilkit beside real gt4py,
# in one call (benchmarks/icon4py_bench.py says what each step does):
#   prepare (specs) -> gt4py's side in the background (12 programs building at once, each timed
#   alone under a GPU lock) -> stencilkit runs (and SK_VARIANTS more) -> GPU_TESTS (optional)
#   -> the side-by-side table ($OUT/comparison.md).
# Wheels are carried in .whl (the device README): icon4py 0.4.1 + pure-Python needs for the
# stencilkit side (gt4py served by stencilkit's alias), and gt4py 1.2.1 + its needs for the other.
#   SK_VARIANTS="vfirst fmad inlined loadsfirst"  extra stencilkit runs: K-contiguous column
#                              fields; --fmad=true; STENCILKIT_NEIGHBOUR_TEMPORARIES=0 (values read
#                              at several neighbours recomputed at each, not hoisted into
#                              temporaries); STENCILKIT_CUDA_LOADS_FIRST=1 (the default since
#                              2026-12-02; "storesinline" runs with =0)
#   GT_NOFMAD="prog ..."       also gt4py built with CUDAFLAGS=--fmad=false (after its main side)
#   PROFILE_FIRST=1            cProfile of each first call (stencilkit side, in its results JSON)
#   ONLY="prog ..."            a subset;   GT4PY=0  no gt4py side;   CELLS=163840 NLEV=80
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./.out}"; mkdir -p "$OUT"
D=/tmp/icon4py-bench; rm -rf "$D"; mkdir -p "$D/logs"
export PYTHONUNBUFFERED=1 STENCILKIT_CACHE_DIR="${STENCILKIT_CACHE_DIR:-$(mktemp -d)}"
PY=python3; T0=$(date +%s)
step() { echo; echo "################ $1  (t=$(( $(date +%s) - T0 )) s)"; }
ONLY_ARGS=(); [ -n "${ONLY:-}" ] && ONLY_ARGS=(--only $ONLY)

step install
SK_WHEELS=$(ls .whl/icon4py_*.whl .whl/attrs-*.whl .whl/cattrs-*.whl .whl/array_api_compat-*.whl .whl/pyyaml-*.whl .whl/typing_extensions-*.whl .whl/packaging-*.whl .whl/filelock-*.whl .whl/platformdirs-*.whl 2>/dev/null)
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/sksite $SK_WHEELS > "$D/logs/install_sk.log" 2>&1 || { echo "stencilkit-side install failed"; tail "$D/logs/install_sk.log"; }
if [ "${GT4PY:-1}" = 1 ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/gtsite .whl/*.whl > "$D/logs/install_gt.log" 2>&1 || { echo "gt4py-side install failed"; tail "$D/logs/install_gt.log"; }
fi
SK="env PYTHONPATH=/tmp/sksite:src"
GT="env PYTHONPATH=/tmp/gtsite:src GT4PY_BUILD_CACHE_LIFETIME=persistent GT4PY_BUILD_CACHE_DIR=/tmp/gt4py-cache"

step prepare
$SK $PY benchmarks/icon4py_bench.py prepare --dir "$D" --cells "${CELLS:-163840}" --nlev "${NLEV:-80}" "${ONLY_ARGS[@]}" 2>&1 | tail -16

GT_PID=""
LOCK="$D/gpu.lock"
if [ "${GT4PY:-1}" = 1 ]; then
  # gt4py's builds take minutes each (nvcc, one core each): 12 programs build at once on cores
  # 4-15, each process then times its program holding $LOCK, never beside another's kernels
  step "gt4py: build and time each program (background, 12 at a time, cores 4-15)"
  names=$($PY -c "import json; print(' '.join(p['name'] for p in json.load(open('$D/specs.json'))['programs']))")
  ( T1=$(date +%s)
    printf '%s\n' $names | taskset -c 4-15 xargs -P 12 -I{} sh -c \
      "timeout ${GT_LIMIT:-420} $GT $PY -W ignore benchmarks/icon4py_bench.py run --dir $D --impl gt4py --only {} --lock $LOCK > $D/logs/gt_{}.log 2>&1"
    echo "gt4py side done in $(( $(date +%s) - T1 )) s" > "$D/logs/gt_done.txt"
    if [ -n "${GT_NOFMAD:-}" ]; then
      # gt4py built without fused multiply-add contraction (CMake takes CUDAFLAGS on its first
      # configure; a build cache of its own): classifies a difference as contraction or not
      printf '%s\n' $GT_NOFMAD | taskset -c 4-15 xargs -P 12 -I{} sh -c \
        "CUDAFLAGS=--fmad=false timeout ${GT_LIMIT:-420} env PYTHONPATH=/tmp/gtsite:src GT4PY_BUILD_CACHE_LIFETIME=persistent GT4PY_BUILD_CACHE_DIR=/tmp/gt4py-cache-nofmad $PY -W ignore benchmarks/icon4py_bench.py run --dir $D --impl gt4py-nofmad --only {} --lock $LOCK > $D/logs/gtnofmad_{}.log 2>&1"
    fi ) &
  GT_PID=$!
fi

for v in default ${SK_VARIANTS:-}; do
  case $v in
    default) impl=stencilkit; extra=() ;;
    vfirst)  impl=stencilkit-vfirst; extra=(--column-layout vertical-contiguous) ;;
    fmad)    impl=stencilkit-fmad; extra=() ;;
    inlined) impl=stencilkit-inlined; extra=() ;;
    loadsfirst) impl=stencilkit-loadsfirst; extra=() ;;
    storesinline) impl=stencilkit-storesinline; extra=() ;;
  esac
  hoist=1; [ "$v" = inlined ] && hoist=0
  step "stencilkit run: $impl (cores 0-3)"
  flags=""; [ "$v" = fmad ] && flags="--fmad=true"
  # loads first: set only for its two variants (an empty value would read as "no"), else the
  # library's default or what the caller exported
  lf=(); [ "$v" = loadsfirst ] && lf=(STENCILKIT_CUDA_LOADS_FIRST=1); [ "$v" = storesinline ] && lf=(STENCILKIT_CUDA_LOADS_FIRST=0)
  env "${lf[@]}" STENCILKIT_NEIGHBOUR_TEMPORARIES=$hoist STENCILKIT_CUDAFLAGS="$flags" timeout "${SK_LIMIT:-240}" taskset -c 0-3 $SK $PY benchmarks/icon4py_bench.py run --dir "$D" --impl "$impl" --lock "$LOCK" ${PROFILE_FIRST:+--profile-first} "${extra[@]}" "${ONLY_ARGS[@]}" 2>&1 | grep -v " INFO" | tee "$D/logs/run_$impl.log" | tail -16
done

if [ -n "${GPU_TESTS:-}" ]; then
  step "gpu tests (holding the GPU lock): $GPU_TESTS"
  STENCILKIT_REQUIRE_GPU=1 timeout "${GPU_TESTS_LIMIT:-240}" taskset -c 0-3 flock "$LOCK" env PYTHONPATH=src $PY -m pytest -q -m gpu -p no:cacheprovider $GPU_TESTS 2>&1 | tee "$OUT/gpu_tests.log" | tail -15
fi

if [ -n "$GT_PID" ]; then
  step "waiting for the gt4py side"
  wait "$GT_PID"; cat "$D/logs/gt_done.txt" 2>/dev/null
  grep -h -E "FAILED|first" "$D"/logs/gt_*.log | cut -c1-220 | head -20
  step compare
  others=""; for v in ${SK_VARIANTS:-}; do [ "$v" = fmad ] && others="$others stencilkit-fmad"; done
  $SK $PY benchmarks/icon4py_bench.py compare --dir "$D" stencilkit gt4py $others 2>&1 | tee "$OUT/comparison.md"
  [ -n "${GT_NOFMAD:-}" ] && $SK $PY benchmarks/icon4py_bench.py compare --dir "$D" stencilkit gt4py-nofmad 2>&1 | tee "$OUT/comparison-gt4py-nofmad.md"
  for v in ${SK_VARIANTS:-}; do
    [ "$v" = vfirst ] && $SK $PY benchmarks/icon4py_bench.py compare --dir "$D" stencilkit-vfirst gt4py 2>&1 | tee "$OUT/comparison-vfirst.md"
    [ "$v" = inlined ] && $SK $PY benchmarks/icon4py_bench.py compare --dir "$D" stencilkit-inlined gt4py 2>&1 | tee "$OUT/comparison-inlined.md"
    [ "$v" = loadsfirst ] && $SK $PY benchmarks/icon4py_bench.py compare --dir "$D" stencilkit-loadsfirst gt4py 2>&1 | tee "$OUT/comparison-loadsfirst.md"
    [ "$v" = storesinline ] && $SK $PY benchmarks/icon4py_bench.py compare --dir "$D" stencilkit-storesinline gt4py 2>&1 | tee "$OUT/comparison-storesinline.md"
  done
fi
step done
for f in "$D"/*/results*.json; do cp "$f" "$D/logs/$(basename "$(dirname "$f")")-$(basename "$f")"; done
cp "$D/comparison.json" "$D/logs/" 2>/dev/null
tar czf "$OUT/icon4py-bench-logs.tgz" -C "$D" logs specs.json 2>/dev/null
echo "total $(( $(date +%s) - T0 )) s"
