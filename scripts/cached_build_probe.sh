#!/usr/bin/env bash
# A new process's build of a GTScript stencil on gt:gpu whose cubin is already in the cache
# (CARTESIAN.md §5: <= 50 ms): the bench's build child (benchmarks/stencilkit_benchmarks/
# cartesian_calls.py) three times per stencil on one cache (the first builds, the next two find
# it), each first call profiled (cProfile, 40 lines) into $OUT/profile_<stencil>.txt; each
# child's JSON (decoration, first call, whether cuda-bindings was imported) into
# $OUT/cached_build.log. Usage: OUT=/tmp/x [BACKEND=gt:gpu] bash scripts/cached_build_probe.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./.out}"
mkdir -p "$OUT"
export PYTHONPATH=src:benchmarks PYTHONUNBUFFERED=1
export STENCILKIT_CACHE_DIR="${STENCILKIT_CACHE_DIR:-$(mktemp -d)}"
python3 -m compileall -q src benchmarks > /dev/null 2>&1  # as an installed wheel has them
for kind in lap fwdbwd; do
  for i in 1 2 3; do
    echo "--- $kind run $i ($([ "$i" = 1 ] && echo "builds" || echo "cached"))"
    SKBENCH_PROFILE_FIRST_CALL="$OUT/profile_$kind.txt" GT_CACHE_ROOT="$STENCILKIT_CACHE_DIR" \
      python3 benchmarks/stencilkit_benchmarks/cartesian_calls.py build "$kind" "${BACKEND:-gt:gpu}" --alias
  done
done 2>&1 | tee "$OUT/cached_build.log"
