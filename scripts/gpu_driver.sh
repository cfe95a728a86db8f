#!/usr/bin/env bash
# icon4py's own model driver (icon4py-driver 0.4.1, unchanged) on a lent GPU machine, through
# benchmarks/icon4py_driver.py: the same experiment on stencilkit's gtfn_gpu and gtfn_cpu
# backends (the device's 16 cores), then their fields compared step by step and the step times.
#
#   scripts/gpu_driver.sh install      # the wheels carried in .whl-driver/ into .devsite/ (may be
#                                      # run once per carried part: the folder is kept while the
#                                      # machine stays warm)
#   GRIDS="R2B4:80 R2B5:80" STEPS=5 scripts/gpu_driver.sh run
#
# The wheels are the driver's pure-Python needs the device image lacks (icon4py packages,
# icon-grid-generator, devtools, ...): scripts/gpu_driver.sh never downloads anything.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./.out}"
SITE="${DRIVER_SITE:-.devsite}"
PY="${PY:-python3}"
mkdir -p "$OUT" "$SITE"
case "${1:-run}" in
install)
    shopt -s nullglob
    wheels=(.whl-driver/*.whl)
    [ "${#wheels[@]}" -gt 0 ] || { echo "gpu_driver.sh: no wheels in .whl-driver/" >&2; exit 2; }
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
        "${wheels[@]}" > "$OUT/driver_install.log" 2>&1 || { tail -20 "$OUT/driver_install.log"; exit 1; }
    echo "installed ${#wheels[@]} wheels into $SITE ($(du -sm "$SITE" | cut -f1) MB)"
    ;;
run)
    export PYTHONPATH="$PWD/$SITE:$PWD/src" PYTHONUNBUFFERED=1
    export STENCILKIT_CACHE_DIR="${STENCILKIT_CACHE_DIR:-$(mktemp -d)}"
    status=0
    for spec in ${GRIDS:-R2B4:80}; do
        grid="${spec%%:*}" levels="${spec##*:}"
        dir="$OUT/driver-$grid-$levels"
        for backend in ${BACKENDS:-gtfn_gpu gtfn_cpu}; do
            echo "== $grid, $levels levels, ${STEPS:-5} steps, $backend"
            timeout "${RUN_LIMIT:-300}" $PY -W ignore benchmarks/icon4py_driver.py run --backend "$backend" \
                --grid "$grid" --levels "$levels" --steps "${STEPS:-5}" --dtime "${DTIME:-300}" --dir "$dir" \
                > "$dir-$backend.log" 2>&1 || { status=1; echo "failed: $dir-$backend.log"; }
            grep -v "^WARN" "$dir-$backend.log" | tail -4
        done
        set -- ${BACKENDS:-gtfn_gpu gtfn_cpu}
        if [ "$#" -ge 2 ]; then
            $PY benchmarks/icon4py_driver.py compare --dir "$dir" "stencilkit-$1" "stencilkit-$2" \
                > "$dir-compare.log" 2>&1 || status=1
            cat "$dir-compare.log"
        fi
        rm -rf "$dir"/*/output "$dir/grids"  # the per-step fields stay (npz), the driver's output goes
    done
    exit "$status"
    ;;
*)
    echo "usage: scripts/gpu_driver.sh install|run" >&2; exit 2 ;;
esac
