#!/usr/bin/env bash
# GTScript on the GPU, stencilkit beside a real gt4py 1.2.1 `gt:gpu` (issue 24, CARTESIAN.md 5.1),
# in one device call, offline:
#   GPU check -> venv (--system-site-packages: the machine's NumPy/CuPy) + gt4py from .whl-cart
#   -> first builds (gt4py's nvcc builds, one process per stencil, in parallel; stencilkit's NVRTC)
#   -> one process measuring both libraries on the same CuPy arrays (copy ceiling, PARALLEL and
#      FORWARD bandwidth, per-call Python part) -> report.md.
#
#   OUT=/some/dir bash scripts/cartesian_gpu_bench.sh        # needs .whl-cart/ (benchmarks/README.md)
#
# Everything lands in $OUT/cartesian_gpu/: result*.json, builds-*.json, report.md, steps.json,
# logs/. A failing step is recorded in steps.json and the later steps still run (without gt4py if
# gt4py could not be installed or built). Exit status: 2 when CuPy sees no GPU (nothing measured),
# else 0 when every step passed, 1 otherwise. The whole run stays under CARTGPU_LIMIT (330 s).
# Overrides: CARTGPU_SIZES (every stencil; default 256x256x80,512x512x80,512x512x128),
# CARTGPU_LAP_SIZES (the PARALLEL stencil only; default 512x512x512), CARTGPU_ROUNDS (5),
# CARTGPU_REPS (10), CARTGPU_CALLS (2000), PYTHON (python3), CUDA_HOME (else from nvcc's path);
# for a plumbing test without a GPU: CARTGPU_BACKEND=gt:cpu_ifirst (no GPU check),
# CARTGPU_PYTHONPATH=dir-with-numpy (default: the folder $PYTHON imports NumPy from).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
T0=$(date +%s)
LIMIT="${CARTGPU_LIMIT:-330}"
OUT="${OUT:-./.out}"
D="$OUT/cartesian_gpu"
mkdir -p "$D/logs"
D="$(cd "$D" && pwd)"
W="$(mktemp -d /tmp/cartgpu-XXXXXX)"   # venv and build caches (not brought back; removed at exit)
[ "${CARTGPU_KEEP_WORK:-0}" = 1 ] || trap 'rm -rf "$W"' EXIT
PY="${PYTHON:-python3}"
BACKEND="${CARTGPU_BACKEND:-gt:gpu}"
SIZES="${CARTGPU_SIZES:-256x256x80,512x512x80,512x512x128}"
LAP_SIZES="${CARTGPU_LAP_SIZES-512x512x512}"
export PYTHONUNBUFFERED=1
export STENCILKIT_CACHE_DIR="$W/sk_cache"
export GT_CACHE_ROOT="$W/gt_cache"
# the lent H200's NumPy and CuPy live in a venv of their own (/opt/torch/.venv): a venv made
# with --system-site-packages from its python3 does not see them, so name their folder
if [ -z "${CARTGPU_PYTHONPATH:-}" ]; then
  CARTGPU_PYTHONPATH="$("${PYTHON:-python3}" -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))' 2>/dev/null || true)"
fi
SRC_PATH="$PWD/src${CARTGPU_PYTHONPATH:+:$CARTGPU_PYTHONPATH}"
BENCH="$PWD/benchmarks/cartesian_gpu_vs_gt4py.py"
STEPS=()

elapsed() { echo $(( $(date +%s) - T0 )); }
left() {  # left DEFAULT: seconds for the next step: DEFAULT, or what is left of LIMIT (>= 10)
  local rest=$(( LIMIT - $(elapsed) ))
  [ "$rest" -lt "$1" ] && echo $(( rest > 10 ? rest : 10 )) || echo "$1"
}
record() {  # record NAME RC: one entry of steps.json
  STEPS+=("{\"step\": \"$1\", \"rc\": $2, \"t_s\": $(elapsed)}")
  echo "   -> $1: rc=$2 (t=$(elapsed) s)"
  write_steps
}
write_steps() {
  local IFS=,
  echo "{\"backend\": \"$BACKEND\", \"sizes\": \"$SIZES\", \"lap_sizes\": \"$LAP_SIZES\", \"work_dir\": \"$W\", \"steps\": [${STEPS[*]}]}" > "$D/steps.json"
}
step() { echo; echo "######## $1  (t=$(elapsed) s)"; }

# ------------------------------------------------------------------ the GPU, loudly
step "GPU check"
case "$BACKEND" in
  *gpu*)
    if ! "$PY" - > "$D/logs/gpu_check.log" 2>&1 <<'EOF'
import cupy as cp
n = cp.cuda.runtime.getDeviceCount()
assert n > 0, "CuPy sees no GPU"
print("cupy", cp.__version__, "devices", n, cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
      "cc", cp.cuda.Device(0).compute_capability)
x = cp.arange(10.0); assert float(x.sum()) == 45.0
EOF
    then
      cat "$D/logs/gpu_check.log"
      echo "FATAL: CuPy cannot use a GPU here ($PY); nothing measured" | tee "$D/FATAL.txt" >&2
      record gpu_check 2
      exit 2
    fi
    cat "$D/logs/gpu_check.log"; record gpu_check 0 ;;
  *) echo "backend $BACKEND: no GPU check (plumbing run)"; record gpu_check 0 ;;
esac

# ------------------------------------------------------------------ environment, CUDA for gt4py
step "environment"
# gt4py runs $CUDA_HOME/bin/nvcc and links $CUDA_HOME/lib64; nvcc may be a wrapper script
# (/usr/local/bin/nvcc -> exec /usr/local/cuda-13.0/bin/nvcc): ask nvcc where its toolkit is
if [ -z "${CUDA_HOME:-}" ] && command -v nvcc > /dev/null; then
  CUDA_HOME="$(nvcc --dryrun -x cu -c /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -1)"
  CUDA_HOME="${CUDA_HOME:+$(readlink -f "$CUDA_HOME")}"
  [ -x "${CUDA_HOME:-/nonexistent}/bin/nvcc" ] || CUDA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
fi
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
# gt4py's gt:gpu modules link libcudart.so.13 without an rpath: make the loader find it
if ! ldconfig -p 2> /dev/null | grep -q "libcudart.so.13"; then
  for d in "$CUDA_HOME/lib64" "$CUDA_HOME/targets/x86_64-linux/lib" \
           $("$PY" -c 'import glob, site; print(" ".join(sorted({p.rsplit("/", 1)[0] for s in site.getsitepackages() for p in glob.glob(s + "/nvidia/*/lib/libcudart.so.13*")})))' 2> /dev/null); do
    if ls "$d"/libcudart.so.13* > /dev/null 2>&1; then export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; break; fi
  done
fi
{
  echo "date: $(date -u +%FT%TZ)  host: $(hostname)  repo: $PWD  commit: $(git rev-parse --short HEAD 2> /dev/null)"
  echo "PYTHON=$PY ($("$PY" --version 2>&1))  BACKEND=$BACKEND  SIZES=$SIZES"
  echo "CUDA_HOME=$CUDA_HOME  LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  echo "nvcc: $(command -v nvcc) $(nvcc --version 2>&1 | tail -1)"
  ls -la "$CUDA_HOME"/lib64/libcudart* 2>&1 | head -5
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1
  echo "nproc: $(nproc)  .whl-cart: $(ls .whl-cart/*.whl 2> /dev/null | wc -l) wheels"
} 2>&1 | tee "$D/logs/env.txt"

# ------------------------------------------------------------------ gt4py in a venv, offline
step "venv + gt4py from .whl-cart"
VPY=""
install() {  # install TARGET-ARGS...: every wheel of .whl-cart, else one by one (a bad one skipped)
  "$@" -q --no-index --no-deps --no-compile --no-cache-dir .whl-cart/*.whl >> "$D/logs/venv.log" 2>&1 && return 0
  echo "installing all at once failed: one by one" >> "$D/logs/venv.log"
  for w in .whl-cart/*.whl; do "$@" -q --no-index --no-deps --no-compile --no-cache-dir "$w" >> "$D/logs/venv.log" 2>&1 || echo "FAILED: $w" >> "$D/logs/venv.log"; done
}
if ls .whl-cart/*.whl > /dev/null 2>&1; then
  if "$PY" -m venv --system-site-packages "$W/venv" > "$D/logs/venv.log" 2>&1; then
    VPY="$W/venv/bin/python"; install "$VPY" -m pip install
  else  # no venv module: the same wheels into a target folder on PYTHONPATH
    echo "venv failed, falling back to pip --target" >> "$D/logs/venv.log"
    VPY="$PY"; SRC_PATH="$SRC_PATH:$W/site"; install "$PY" -m pip install --target "$W/site"
  fi
else
  echo "no .whl-cart/*.whl: carry .whl-cart (scripts/cartesian_gpu_wheels.sh makes it)" | tee "$D/logs/venv.log"
fi
GT_OK=0
if [ -n "$VPY" ] && PYTHONPATH="$SRC_PATH" "$VPY" -W ignore -c 'import gt4py, gt4py.cartesian.gtscript; assert not getattr(gt4py, "__stencilkit_alias__", False); print("gt4py", gt4py.__version__, gt4py.__file__)' >> "$D/logs/venv.log" 2>&1; then
  GT_OK=1
else
  echo "gt4py not importable: the run goes on with stencilkit only" | tee -a "$D/logs/venv.log"
fi
tail -3 "$D/logs/venv.log"
VPY="${VPY:-$PY}"
record install_gt4py $(( 1 - GT_OK ))

# ------------------------------------------------------------------ first builds, in parallel
step "first builds (gt4py nvcc, stencilkit NVRTC), one process per stencil"
IMPLS=stencilkit
if [ "$GT_OK" = 1 ]; then
  T=$(left 170)
  PYTHONPATH="$SRC_PATH" timeout "$T" "$VPY" -W ignore "$BENCH" build --impl gt4py --backend "$BACKEND" --dir "$D" --timeout $(( T - 5 )) > "$D/logs/build_gt4py.log" 2>&1
  RC=$?; tail -6 "$D/logs/build_gt4py.log"; record build_gt4py $RC
  IMPLS=stencilkit,gt4py  # a stencil whose build failed is built (or fails) again in the run, recorded there
fi
PYTHONPATH="$SRC_PATH" timeout "$(left 60)" "$VPY" -W ignore "$BENCH" build --impl stencilkit --backend "$BACKEND" --dir "$D" > "$D/logs/build_stencilkit.log" 2>&1
RC=$?; tail -5 "$D/logs/build_stencilkit.log"; record build_stencilkit $RC

# ------------------------------------------------------------------ the measurement, one process
step "run: $IMPLS on $BACKEND, sizes $SIZES (+ $LAP_SIZES PARALLEL only)"
ARGS=(--backend "$BACKEND" --dir "$D" --sizes "$SIZES" --lap-sizes "$LAP_SIZES" --rounds "${CARTGPU_ROUNDS:-5}" --reps "${CARTGPU_REPS:-10}" --calls "${CARTGPU_CALLS:-2000}")
PYTHONPATH="$SRC_PATH" timeout "$(left 170)" "$VPY" -W ignore "$BENCH" run --impls "$IMPLS" "${ARGS[@]}" > "$D/logs/run.log" 2>&1
RC=$?; grep -v "^   File\|^    " "$D/logs/run.log" | tail -45; record run $RC
if [ "$RC" -gt 1 ] && [ "$IMPLS" != stencilkit ]; then
  # killed (time limit, crash) with both libraries in it: each alone, so one cannot hide the other
  for impl in stencilkit gt4py; do
    step "run: $impl alone (the joint run exited $RC)"
    PYTHONPATH="$SRC_PATH" timeout "$(left 90)" "$VPY" -W ignore "$BENCH" run --impls "$impl" --tag "result-$impl" "${ARGS[@]}" > "$D/logs/run_$impl.log" 2>&1
    R2=$?; tail -20 "$D/logs/run_$impl.log"; record "run_$impl" $R2
  done
fi

# ------------------------------------------------------------------ the report
step report
PYTHONPATH="$SRC_PATH" "$VPY" "$BENCH" report --dir "$D" > "$D/report.md" 2>&1
RC=$?; cat "$D/report.md"; record report $RC
write_steps
echo
echo "cartesian_gpu_bench: $(elapsed) s; steps: $(IFS=' '; for s in "${STEPS[@]}"; do printf '%s ' "$(echo "$s" | sed 's/.*"step": "\([^"]*\)", "rc": \([0-9]*\).*/\1=\2/')"; done)"
grep -q '"rc": [1-9]' "$D/steps.json" && exit 1
exit 0
