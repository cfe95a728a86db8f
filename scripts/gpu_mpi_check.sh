#!/usr/bin/env bash
# Every GPU check of stencilkit.distributed in one call, on a host with two GPUs (nvidia-h200-x2):
#   environment -> distributed tests on 2 ranks (GPU tests required) -> shallow water on 1 and 2
#   GPUs, bitwise against one process -> mesh diffusion on 2 ranks -> weak scaling, exchange
#   bandwidth vs a CuPy peer copy, and the CPU exchange vs plain Sendrecv.
#   On a host with one GPU both ranks share it: the GPU exchange across ranks is checked and its
#   path timed, but the weak-scaling lines are no scaling figure (the benchmark says so).
# Logs and JSON land under $OUT (default ./.out); the end of stdout is a summary.
#
# The device machine reaches no package index: carry the wheels of mpi4py and mpich for its
# Python in .whl/ (an ignored folder), made here with
#   pip download --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
#       --platform manylinux_2_28_x86_64 -d .whl mpi4py mpich
# and pass carry=[".whl"]; the script installs them (--no-index) when mpi4py is missing.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./.out}"
mkdir -p "$OUT"
export STENCILKIT_CACHE_DIR="${STENCILKIT_CACHE_DIR:-$(mktemp -d)}"
export PYTHONPATH=src
export PYTHONUNBUFFERED=1
# Open MPI refuses to start as root unless told (the device runs commands as root), and its
# single-copy shared-memory path (CMA) is often not permitted in containers
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
# the interpreter by its full path: mpiexec (Open MPI) may start "python3" from another PATH
PY="${PY:-$(python3 -c 'import sys; print(sys.executable)')}"
T0=$(date +%s)
step() { echo; echo "################ $1  (t=$(( $(date +%s) - T0 )) s)"; }

step env
if ! $PY -c "import mpi4py.MPI" 2>/dev/null; then
  $PY -m pip install -q --no-index --find-links "${WHEELS:-.whl}" mpi4py mpich 2>&1 | tail -3
fi
BIN="$($PY -c 'import sys, os; print(os.path.dirname(sys.executable))')"
MPIEXEC="$BIN/mpiexec"; [ -x "$MPIEXEC" ] || MPIEXEC="$(command -v mpiexec)"
{
  date -u +%FT%TZ; hostname
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv 2>&1
  nvidia-smi topo -m 2>&1 | head -8
  $PY - <<'PYEOF'
import sys
print("python", sys.version.split()[0])
import numpy, cupy
print("numpy", numpy.__version__, "cupy", cupy.__version__, "devices", cupy.cuda.runtime.getDeviceCount())
from mpi4py import MPI
import mpi4py
print("mpi4py", mpi4py.__version__, "|", MPI.Get_library_version().splitlines()[0])
from stencilkit.distributed import cuda_aware
print("MPI takes CUDA buffers (MPIX query / STENCILKIT_MPI_CUDA):", cuda_aware())
PYEOF
  echo "mpiexec: $MPIEXEC"
} > "$OUT/mpi_env.txt" 2>&1
cat "$OUT/mpi_env.txt"

step "distributed tests, 2 ranks, one GPU each (both on one GPU where the host has one)"
STENCILKIT_REQUIRE_GPU=1 timeout 240 "$MPIEXEC" -n 2 $PY -m pytest -q -p no:cacheprovider -rs tests/distributed \
  > "$OUT/mpi_tests.log" 2>&1
RC_TESTS=$?
tail -15 "$OUT/mpi_tests.log"

step "shallow water on GPUs, bitwise vs one process"
RC_SW=0
for n in 1 2; do
  timeout 120 "$MPIEXEC" -n $n $PY -m stencilkit.models.shallow_water_mpi --backend gpu --steps 100 --size 512 \
    2>&1 | tee -a "$OUT/shallow_water_gpu.log" | tail -5 || RC_SW=1
  grep -q "check passed" <(tail -1 "$OUT/shallow_water_gpu.log") || RC_SW=1
done
# the staged path forced, and the device path where the MPI library supports CUDA
STENCILKIT_MPI_CUDA=0 timeout 120 "$MPIEXEC" -n 2 $PY -m stencilkit.models.shallow_water_mpi --backend gpu \
  --steps 50 --size 256 --method staged 2>&1 | tee -a "$OUT/shallow_water_gpu.log" | tail -2
grep -q "check passed" <(tail -1 "$OUT/shallow_water_gpu.log") || RC_SW=1

step "mesh diffusion, 2 ranks (embedded on CPU; the example's check)"
timeout 120 "$MPIEXEC" -n 2 $PY -m stencilkit.models.mesh_diffusion_mpi cpu 2>&1 | tee "$OUT/mesh_diffusion.log" | tail -3
RC_MESH=${PIPESTATUS[0]}

step "benchmarks: weak scaling 1 -> 2 GPUs, exchange bandwidth, CPU exchange"
timeout 240 "$MPIEXEC" -n 2 $PY benchmarks/distributed_exchange.py --gpu --cpu --size ${SIZE:-2048 2048 128} \
  --steps 40 --repeats 100 --json "$OUT/distributed_bench.json" 2>&1 | tee "$OUT/distributed_bench.log" | tail -30
RC_BENCH=${PIPESTATUS[0]}

step summary
echo "distributed tests rc=$RC_TESTS  shallow water rc=$RC_SW  mesh rc=$RC_MESH  bench rc=$RC_BENCH"
grep -E "passed|failed" "$OUT/mpi_tests.log" | tail -2
grep -E "rank|bitwise|DIFFERENT" "$OUT/shallow_water_gpu.log"
grep -E "efficiency|GB/s|ratio" "$OUT/distributed_bench.log"
[ $RC_TESTS -eq 0 ] && [ $RC_SW -eq 0 ] && [ $RC_MESH -eq 0 ] && [ $RC_BENCH -eq 0 ]
