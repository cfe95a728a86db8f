#!/usr/bin/env bash
# icon4py 0.4.1's own test suite, run the way ICON's developers run it (icon4py's pytest plugin
# icon4py.model.testing.pytest_hooks, its StencilTest suites with NumPy references and its unit
# tests, --backend=embedded / --backend=gtfn_cpu), with gt4py served by stencilkit.
#
#   scripts/icon4py_suite.sh [BACKEND ...]        (default: embedded gtfn_cpu)
#
# The test folders are not in icon4py's sdists or wheels: they are taken from the source tree
# of the v0.4.1 tag, in this order:
#   ICON4PY_SOURCE=DIR        an icon4py checkout or extracted archive (holding model/)
#   ICON4PY_SOURCE=FILE.tar.gz   an archive of one
#   otherwise                 https://codeload.github.com/C2SM/icon4py/tar.gz/refs/tags/v0.4.1,
#                             kept in .icon4py-src/ (git-ignored); ICON4PY_SHA256 pins it
# A source that cannot be had ends the script with status 3 and says why.
#
# Selection: every */tests/*/stencil_tests and */tests/*/unit_tests folder of the component
# test trees (model/**/tests), --datatest-skip (no downloaded serialized data), the grid
# "simple" (icon4py's default, built in memory); mpi_tests and integration_tests are left out
# (MPI ranks, or serialized data). Tests listed in scripts/icon4py_suite_deselect.txt are
# deselected, each with its reason there. The run passes where every test that fails or errors
# is listed in scripts/icon4py_suite_known.txt (with the reason: e.g. it fails on gt4py too).
#
# Environment: VENV (default .venv312, made by `scripts/icon4py_env.sh --suite`);
# ICON4PY_SUITE_PYTHON runs another interpreter instead, without the alias (e.g. a scratch venv
# with the real gt4py 1.2.3, for the reference counts: scripts/gt4py_reference_env.sh);
# ICON4PY_SUITE_TIMEOUT seconds per backend (default 900); ICON4PY_SUITE_CPU_PATHS limits the
# gtfn_cpu run to these test folders (space-separated, relative to the source root);
# ICON4PY_SUITE_OUT directory for the junit files (default .icon4py-suite/).
# Prints, per backend, the counts (passed, failed, errors, skipped, deselected).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO="$PWD"
TAG=v0.4.1
VENV="$(realpath -m "${VENV:-.venv312}")"
OUT="$(realpath -m "${ICON4PY_SUITE_OUT:-.icon4py-suite}")"
TIMEOUT="${ICON4PY_SUITE_TIMEOUT:-900}"
BACKENDS=("$@")
[ ${#BACKENDS[@]} -gt 0 ] || BACKENDS=(embedded gtfn_cpu)

# ---------------------------------------------------------------- the v0.4.1 source tree
source_tree() {
    local src="${ICON4PY_SOURCE:-}" archive
    if [ -n "$src" ] && [ -d "$src" ]; then realpath "$src"; return; fi
    mkdir -p .icon4py-src
    if [ -n "$src" ]; then
        archive="$(realpath "$src")"
    else
        archive=".icon4py-src/icon4py-$TAG.tar.gz"
        if [ ! -s "$archive" ]; then
            if ! curl -fsSL --max-time 120 -o "$archive.part" \
                    "https://codeload.github.com/C2SM/icon4py/tar.gz/refs/tags/$TAG"; then
                rm -f "$archive.part"
                echo "icon4py_suite.sh: cannot download icon4py $TAG from github.com; set" \
                     "ICON4PY_SOURCE to a checkout or an archive of the tag" >&2
                return 3
            fi
            mv "$archive.part" "$archive"
        fi
    fi
    local sum
    sum="$(sha256sum "$archive" | cut -d' ' -f1)"
    if [ -n "${ICON4PY_SHA256:-}" ] && [ "$sum" != "$ICON4PY_SHA256" ]; then
        echo "icon4py_suite.sh: $archive has sha256 $sum, not ICON4PY_SHA256=$ICON4PY_SHA256" >&2
        return 3
    fi
    echo "icon4py_suite.sh: icon4py $TAG source: $archive (sha256 $sum)" >&2
    local dest=".icon4py-src/$TAG-$sum"
    if [ ! -d "$dest" ]; then
        mkdir -p "$dest.part"
        tar -xzf "$archive" -C "$dest.part" --strip-components=1
        mv "$dest.part" "$dest"
    fi
    realpath "$dest"
}
SRC="$(source_tree)" || exit 3
[ -d "$SRC/model" ] || { echo "icon4py_suite.sh: $SRC has no model/ folder" >&2; exit 3; }

mapfile -t FOLDERS < <(cd "$SRC" && find model -path '*/tests/*' -type d \
    \( -name stencil_tests -o -name unit_tests \) -not -path '*/mpi_tests/*' | sort)
DESELECT=()
while read -r nodeid _; do
    [ -n "$nodeid" ] && DESELECT+=(--deselect "$nodeid")
done < <(grep -v '^\s*#' scripts/icon4py_suite_deselect.txt || true)

if [ -n "${ICON4PY_SUITE_PYTHON:-}" ]; then
    RUN=("$ICON4PY_SUITE_PYTHON" -m pytest)           # e.g. the real gt4py, for reference counts
else
    RUN=("$VENV/bin/python" -m stencilkit.gt4py_run -m pytest)  # gt4py served by stencilkit
fi
mkdir -p "$OUT"
status=0
for backend in "${BACKENDS[@]}"; do
    folders=("${FOLDERS[@]}")
    if [ "$backend" != embedded ] && [ -n "${ICON4PY_SUITE_CPU_PATHS:-}" ]; then
        read -r -a folders <<< "$ICON4PY_SUITE_CPU_PATHS"
    fi
    junit="$OUT/$backend.xml"
    rm -f "$junit"
    start=$SECONDS
    rc=0
    (cd "$SRC" && timeout --kill-after=30 "$TIMEOUT" "${RUN[@]}" -q -p no:cacheprovider \
        -p icon4py.model.testing.pytest_hooks --backend="$backend" --datatest-skip \
        --benchmark-disable -rfE --tb=line --junitxml="$junit" "${DESELECT[@]}" "${folders[@]}" \
        > "$OUT/$backend.log" 2>&1) || rc=$?
    tail -n 30 "$OUT/$backend.log"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "icon4py suite on $backend: timed out after ${TIMEOUT}s" >&2
    fi
    "$VENV/bin/python" scripts/icon4py_suite_counts.py "$backend" "$junit" \
        "$OUT/$backend.log" "$((SECONDS - start))" || true
    # pass: every test that fails or errors is listed in icon4py_suite_known.txt with its reason
    # (tests that do not pass on gt4py either); a timeout or a crash of pytest fails
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] || [ "$rc" -gt 1 ]; then
        [ "$status" -eq 0 ] && status=$rc
    elif ! "$VENV/bin/python" scripts/icon4py_suite_counts.py --check "$backend" "$junit" \
            scripts/icon4py_suite_known.txt; then
        [ "$status" -eq 0 ] && status=1
    fi
done
exit "$status"
