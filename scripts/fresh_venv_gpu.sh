#!/usr/bin/env bash
# The GPU backend from a FRESH virtual environment, installed from the stencilkit wheel and the
# wheels of its `cuda` extra alone (no PYTHONPATH=src, no system site-packages): what a user gets
# from `pip install 'stencilkit[cuda]'` on a machine with only an NVIDIA driver. Issue 14.
#
# The wheels (about 150 MiB: CuPy 66, NVRTC 56, NumPy 16, cuda-bindings 8, the rest small) are
# more than one device call carries (64 MiB), so they travel as one tar cut into parts of at most
# 55 MiB, one part per call, staged on the machine between calls (it stays warm for 30 s after a
# call: make the calls back to back).
#
# ---- 1. here, in /work/main (network; Python 3.12 wheels for the GPU machine) ------------------
#   grep -qx '/.whl/' .git/info/exclude || echo /.whl/ >> .git/info/exclude
#   rm -rf .whl/fresh && mkdir -p .whl/fresh/wheels
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
#     --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_12_x86_64 \
#     --platform manylinux2010_x86_64 --platform manylinux1_x86_64 -d .whl/fresh/wheels \
#     cupy-cuda13x==14.2.0 cuda-bindings==13.5.0 cuda-pathfinder==1.9.1 nvidia-cuda-nvrtc==13.5.37 \
#     nvidia-cuda-runtime==13.5.37 numpy==2.4.6 filelock==4.3.1 platformdirs==4.14.9 rich==15.0.0 \
#     markdown-it-py==4.3.0 mdurl==0.1.2 pygments==2.21.0
#   python3 -m pip wheel -q --no-deps -w .whl/fresh/wheels .      # stencilkit itself (pure Python)
#   scripts/fresh_venv_gpu.sh pack        # -> .whl/fresh/part-00, part-01, part-02 and SHA256SUMS
#   (`scripts/fresh_venv_gpu.sh download` runs the four commands above.)
#
# ---- 2. on the GPU machine: three `run` calls, back to back ---------------------------------------
#   run(carry=[".whl/fresh/part-00", ".whl/fresh/SHA256SUMS"], command="scripts/fresh_venv_gpu.sh stage")
#   run(carry=[".whl/fresh/part-01"],                          command="scripts/fresh_venv_gpu.sh stage")
#   run(carry=[".whl/fresh/part-02"], timeout_s=400,
#       command="scripts/fresh_venv_gpu.sh stage check")
#   `stage` copies the parts it finds into $SK_FRESH (default /tmp/sk-fresh), which outlives the
#   call while the machine stays warm; `check` says which parts are missing if the machine was
#   given back in between (then start again from the first call).
#
# `check` (exit 0 only if everything holds; logs also in $OUT/fresh_venv.log when $OUT is set):
#   - assembles the wheels and verifies their SHA-256;
#   - python3 -m venv (no system site-packages), pip install --no-index 'stencilkit[cuda]' from
#     the wheels alone: the extra's requirements must resolve from what was carried;
#   - from a directory outside the repository: stencilkit comes from the venv, NVRTC
#     (libnvrtc.so.13) is loaded from the venv's nvidia-cuda-nvrtc wheel;
#   - `stencilkit info` shows a GPU and "CUDA compiler nvrtc";
#   - a Laplacian on gtx.gpu against NumPy, on CuPy fields; `stencilkit demo --backend gpu`.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FRESH=${SK_FRESH:-/tmp/sk-fresh}
PART_MIB=55
LOG=${OUT:+$OUT/fresh_venv.log}

say() { echo "fresh_venv_gpu: $*" | tee -a "${LOG:-/dev/null}"; }
fail() { say "FAILED: $*"; exit 1; }

download() {
  cd "$ROOT" || exit 1
  local exclude
  exclude=$(git rev-parse --git-path info/exclude 2>/dev/null || echo .git/info/exclude)
  grep -qx '/.whl/' "$exclude" 2>/dev/null || echo /.whl/ >> "$exclude"
  rm -rf .whl/fresh && mkdir -p .whl/fresh/wheels
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_12_x86_64 \
    --platform manylinux2010_x86_64 --platform manylinux1_x86_64 -d .whl/fresh/wheels \
    cupy-cuda13x==14.2.0 cuda-bindings==13.5.0 cuda-pathfinder==1.9.1 nvidia-cuda-nvrtc==13.5.37 \
    nvidia-cuda-runtime==13.5.37 numpy==2.4.6 filelock==4.3.1 platformdirs==4.14.9 rich==15.0.0 \
    markdown-it-py==4.3.0 mdurl==0.1.2 pygments==2.21.0 || fail "pip download"
  python3 -m pip wheel -q --no-deps -w .whl/fresh/wheels . || fail "building the stencilkit wheel"
  pack
}

pack() {
  cd "$ROOT/.whl/fresh" || fail "no .whl/fresh (run the download commands first)"
  ls wheels/stencilkit-*.whl >/dev/null 2>&1 || fail "no stencilkit wheel in .whl/fresh/wheels"
  rm -f part-* SHA256SUMS wheels.tar
  tar -cf wheels.tar wheels || fail "tar"
  split -b "${PART_MIB}M" -d -a 2 wheels.tar part- || fail "split"
  sha256sum wheels.tar part-* > SHA256SUMS
  rm -f wheels.tar
  say "packed $(ls wheels | wc -l) wheels into $(ls part-* | wc -l) parts:"
  ls -l part-* SHA256SUMS | tee -a "${LOG:-/dev/null}"
}

stage() {
  mkdir -p "$FRESH/parts"
  local found=0
  for f in "$ROOT"/.whl/fresh/part-* "$ROOT"/.whl/fresh/SHA256SUMS; do
    [ -f "$f" ] || continue
    cp "$f" "$FRESH/parts/" && found=$((found + 1))
  done
  say "staged $found file(s); $FRESH/parts now holds: $(cd "$FRESH/parts" && ls | tr '\n' ' ')"
}

check() {
  cd "$FRESH/parts" 2>/dev/null || fail "nothing staged in $FRESH/parts (run stage with each part)"
  [ -f SHA256SUMS ] || fail "SHA256SUMS not staged (it travels with part-00)"
  local missing=""
  for p in $(awk '{print $2}' SHA256SUMS | grep '^part-'); do [ -f "$p" ] || missing="$missing $p"; done
  [ -z "$missing" ] || fail "parts missing:$missing (the machine was given back between calls? start again)"
  grep '^[0-9a-f]* *part-' SHA256SUMS | sha256sum -c --quiet || fail "a part is corrupted"
  rm -rf "$FRESH/wheels" "$FRESH/venv" "$FRESH/work"
  cat $(awk '{print $2}' SHA256SUMS | grep '^part-') > "$FRESH/wheels.tar"
  (cd "$FRESH" && echo "$(grep ' wheels.tar$' parts/SHA256SUMS | awk '{print $1}')  wheels.tar" | sha256sum -c --quiet) \
    || fail "the assembled tar does not match its checksum"
  tar -xf "$FRESH/wheels.tar" -C "$FRESH" && rm -f "$FRESH/wheels.tar"
  say "wheels: $(ls "$FRESH/wheels" | tr '\n' ' ')"

  python3 -m venv "$FRESH/venv" || fail "python3 -m venv"
  local PY="$FRESH/venv/bin/python"
  say "venv: $($PY --version) at $FRESH/venv (no system site-packages)"
  "$PY" -m pip install -q --no-index --find-links "$FRESH/wheels" --no-cache-dir \
    "stencilkit[cuda]" 2>&1 | tee -a "${LOG:-/dev/null}"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "pip install 'stencilkit[cuda]' from the carried wheels"
  "$PY" -m pip list 2>/dev/null | tee -a "${LOG:-/dev/null}"

  mkdir -p "$FRESH/work" && cd "$FRESH/work" || exit 1   # away from the repository: no src/ on sys.path
  export STENCILKIT_CACHE_DIR="$FRESH/work/cache"
  unset PYTHONPATH
  say "stencilkit info:"
  "$FRESH/venv/bin/stencilkit" info 2>&1 | tee info.txt | tee -a "${LOG:-/dev/null}"
  grep -q '^CUDA compiler *nvrtc' info.txt || fail "stencilkit info shows no NVRTC compiler"
  grep -q '^GPU *[1-9][0-9]* visible' info.txt || fail "stencilkit info shows no usable GPU"

  say "a Laplacian on gtx.gpu against NumPy:"
  cat > lap_check.py <<'EOF'  # a file: stencilkit reads the stencil's source, which `python -` has not
import os, sys
import numpy as np
import cupy
import stencilkit as gtx
from stencilkit import Dims, Field, float64
from cuda import pathfinder

venv = sys.prefix
assert gtx.__file__.startswith(venv), f"stencilkit from {gtx.__file__}, not the venv {venv}"
nvrtc = pathfinder.load_nvidia_dynamic_lib("nvrtc")
print("stencilkit:", gtx.__file__)
print("libnvrtc:  ", nvrtc.abs_path, f"(found via {nvrtc.found_via})")
assert nvrtc.abs_path.startswith(venv), "NVRTC was not loaded from the venv's nvidia-cuda-nvrtc wheel"

I, J, K = gtx.Dimension("I"), gtx.Dimension("J"), gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
F = Field[Dims[I, J, K], float64]

@gtx.field_operator
def lap(a: F) -> F:
    return -4.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)

@gtx.program(backend=gtx.gpu)
def run_lap(a: F, out: F):
    lap(a, out=out, domain={I: (1, 63), J: (1, 47), K: (0, 20)})

host = np.random.default_rng(14).standard_normal((64, 48, 20))
a = gtx.as_field([I, J, K], host, allocator=gtx.gpu)
out = gtx.full({I: 64, J: 48, K: 20}, -7.0, allocator=gtx.gpu)
run_lap(a, out, offset_provider={})
got = out.asnumpy()
ref = -4.0 * host[1:-1, 1:-1] + host[2:, 1:-1] + host[:-2, 1:-1] + host[1:-1, 2:] + host[1:-1, :-2]
assert isinstance(out.ndarray, cupy.ndarray), type(out.ndarray)
err = float(np.max(np.abs(got[1:-1, 1:-1] - ref)))
assert err < 1e-12, err
assert (got[0] == -7.0).all() and (got[-1] == -7.0).all() and (got[:, 0] == -7.0).all()
print(f"Laplacian on {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}: max error {err:.1e}, boundary untouched: ok")
EOF
  "$PY" lap_check.py 2>&1 | tee -a "${LOG:-/dev/null}"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "the GPU program"

  say "stencilkit demo --backend gpu:"
  "$FRESH/venv/bin/stencilkit" demo --backend gpu --steps 50 --quiet 2>&1 | tee -a "${LOG:-/dev/null}"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "stencilkit demo --backend gpu"
  say "ALL OK: a fresh venv with stencilkit[cuda] from wheels runs the GPU backend"
}

[ $# -gt 0 ] || { sed -n '2,45p' "$0"; exit 2; }
for step in "$@"; do
  case "$step" in
    download) download ;;
    pack) pack ;;
    stage) stage ;;
    check) check ;;
    *) echo "unknown step $step (download | pack | stage | check)"; exit 2 ;;
  esac
done
