#!/usr/bin/env bash
# The 7-point Laplacian's kernel shapes on a lent GPU, in one call (issue 21): the hand-written
# candidates of benchmarks/laplacian_variants.py beside the copy, the bench's Laplacian section
# (stencilkit's tuned choice; again with STENCILKIT_CUDA_LOADS_FIRST=0, the default before 2026-12-02), and ncu's DRAM/L2 bytes for both where the profiler works.
#   OUT=/some/dir bash scripts/lap_probe.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./.out}"; mkdir -p "$OUT"
export STENCILKIT_CACHE_DIR="$(mktemp -d)" PYTHONPATH=src:benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt" 2>&1
timeout 240 python3 benchmarks/laplacian_variants.py --json "$OUT/lapvar.json" > "$OUT/lapvar.log" 2>&1
echo "laplacian_variants rc=$?"; tail -30 "$OUT/lapvar.log"
timeout 150 python3 benchmarks/gpu_bench.py --only copy,laplacian --json "$OUT/gpu_lap.json" > "$OUT/gpu_lap.log" 2>&1
echo "gpu_bench rc=$?"; grep -i -E "laplacian|copy" "$OUT/gpu_lap.log" | tail -20
# the same section with the streaming chunk variants storing point by point (the old default)
STENCILKIT_CUDA_LOADS_FIRST=0 timeout 150 python3 benchmarks/gpu_bench.py --only copy,laplacian --json "$OUT/gpu_lap_stores_inline.json" > "$OUT/gpu_lap_stores_inline.log" 2>&1
echo "gpu_bench (STENCILKIT_CUDA_LOADS_FIRST=0) rc=$?"; grep -i -E "laplacian|copy" "$OUT/gpu_lap_stores_inline.log" | tail -20
cat > /tmp/lap_ncu.py <<'PY'
import sys; sys.path.insert(0, "benchmarks")
import cupy as cp, numpy as np
import laplacian_variants as lv
n = 512
x = cp.asfortranarray(cp.random.standard_normal((n, n, n)))
o = cp.empty_like(x)
mod = cp.RawModule(code=lv.SRC, options=("-std=c++17", "--fmad=false"))
sj, sk = x.strides[1] // 8, x.strides[2] // 8
for name, blk, chunk in (("lap_rq", (64, 2), 16), ("lap_rq", (32, 4), 64), ("lap_smem", (64, 4), 32)):
    f = mod.get_function(name)
    f((n // blk[0], -(-(n - 2) // blk[1]), -(-(n - 2) // chunk)), (*blk, 1), (x, o, np.int32(n), np.int64(sj), np.int64(sk), np.int32(chunk)), shared_mem=8 * (blk[0] + 2) * (blk[1] + 2))
cp.cuda.Device().synchronize()
try:
    import stencilkit as gtx
    import tempfile
    from stencilkit_benchmarks.programs import import_programs
    PP = import_programs(tempfile.mkdtemp())
    a = gtx.as_field([PP.I, PP.J, PP.K], x)
    out = gtx.as_field([PP.I, PP.J, PP.K], o)
    run = PP.run_lap.with_backend(gtx.gpu)
    for _ in range(4):
        run(a, out, n, offset_provider={})
    gtx.wait_for_tuning()
    for _ in range(3):
        run(a, out, n, offset_provider={})
    cp.cuda.Device().synchronize()
except Exception as e:
    print("stencilkit part failed:", repr(e))
PY
timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
   -k regex:"lap_|sk_" python3 /tmp/lap_ncu.py > "$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "lap_|sk_|dram__|gpu__time|lts__t|l1tex|warps_active|inst_exec|==ERR|failed" "$OUT/ncu.log" | head -80
