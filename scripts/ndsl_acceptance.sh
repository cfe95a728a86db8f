#!/usr/bin/env bash
# NDSL's offline tests with gt4py served by stencilkit (CARTESIAN.md section 6 item 1).
#
#   NDSL_SOURCE=/path/to/NDSL scripts/ndsl_acceptance.sh
#
# Builds a scratch venv ($NDSL_VENV, default /tmp/ndsl-venv) with stencilkit (editable, this
# checkout) and pytest, installs NDSL from $NDSL_SOURCE with --no-deps (never real gt4py), and
# runs NDSL's offline tests once per backend with a pytest plugin that installs stencilkit's
# gt4py alias before NDSL is imported. It prints passed/failed/skipped/errors per backend.
#
#   NDSL_BACKENDS  NDSL backend strings (default "st:numpy:cpu:IJK st:gt:cpu:IJK st:gt:cpu:KJI")
#   NDSL_TESTS     test paths inside $NDSL_SOURCE (default: tests, as NDSL's CI)
#   NDSL_MARK      pytest's -m selection (default "not parallel and not gpu", NDSL CI's serial run)
#   NDSL_MPI       a number of ranks: run the tests under `mpiexec -np N python -m mpi4py` instead
#                  (NDSL CI's parallel run; NDSL_MARK then defaults to "parallel and not gpu";
#                  mpiexec from $NDSL_MPIEXEC, else the venv's or PATH's)
#   NDSL_PIP       extra PyPI packages NDSL imports (e.g. "f90nml xarray"), installed if given
#   NDSL_STUBS     a folder of stand-in modules (dace, serialbox, ...) put first on PYTHONPATH;
#                  scripts/ndsl_dace_shim lets NDSL 2026.03 import with PyPI's dace 1.0.2
#   NDSL_PYTEST    extra pytest arguments (e.g. "-x" or "-k copy")
#   NDSL_LOGS      a folder that receives each backend's whole pytest log
#   NDSL_VENV=none no venv and no install: the current python3 ($NDSL_PYTHON) runs this checkout's
#                  src/ and $NDSL_SOURCE from PYTHONPATH (the offline GPU machine, where pip cannot
#                  reach an index; stencilkit's own dependencies must already be importable there)
#
# Most NDSL tests name gt4py's "numpy" backend (or NDSL's python default) explicitly; for the
# other backends the plugin sends gtscript.stencil(backend="numpy") to the backend under test
# (so CompareToNumpyStencil compares the backend with itself there). Writes nothing in the repo.
set -euo pipefail
: "${NDSL_SOURCE:?set NDSL_SOURCE to a checkout of NDSL}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${NDSL_VENV:-/tmp/ndsl-venv}"
BACKENDS="${NDSL_BACKENDS:-st:numpy:cpu:IJK st:gt:cpu:IJK st:gt:cpu:KJI}"
TESTS="${NDSL_TESTS:-tests}"
if [ -n "${NDSL_MPI:-}" ]; then
    MARK="${NDSL_MARK:-parallel and not gpu}"
else
    MARK="${NDSL_MARK:-not parallel and not gpu}"
fi

NDSL_SOURCE="$(cd "$NDSL_SOURCE" && pwd)"
[ -z "${NDSL_STUBS:-}" ] || NDSL_STUBS="$(cd "$NDSL_STUBS" && pwd)"
if [ "$VENV" = none ]; then
    PY="${NDSL_PYTHON:-python3}"
    EXTRA_PATH="$ROOT/src:$NDSL_SOURCE"
else
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q -e "$ROOT" pytest
    [ -z "${NDSL_PIP:-}" ] || "$VENV/bin/pip" install -q ${NDSL_PIP}
    # a checkout without .git (worktree-less export) has no version for setuptools-scm
    SETUPTOOLS_SCM_PRETEND_VERSION_FOR_NDSL="${SETUPTOOLS_SCM_PRETEND_VERSION_FOR_NDSL:-0.0.0}" \
        "$VENV/bin/pip" install -q --no-deps -e "$NDSL_SOURCE"
    PY="$VENV/bin/python"
    EXTRA_PATH=""
fi
if "$PY" -m pip show gt4py >/dev/null 2>&1; then
    echo "real gt4py is installed for $PY: stencilkit must serve gt4py (pip uninstall gt4py)" >&2
    exit 2
fi

PLUGIN_DIR="$(mktemp -d)"
trap 'rm -rf "$PLUGIN_DIR"' EXIT
cat >"$PLUGIN_DIR/stencilkit_ndsl_plugin.py" <<'PY'
"""pytest plugin: stencilkit serves gt4py before NDSL is imported; the backend under test
(NDSL_ACCEPTANCE_BACKEND, a gt4py name) replaces gt4py's "numpy" in gtscript.stencil."""
import functools
import os

from stencilkit.compat import install_gt4py_alias

install_gt4py_alias()

import gt4py.cartesian.gtscript as gtscript  # noqa: E402

TARGET = os.environ.get("NDSL_ACCEPTANCE_BACKEND", "numpy")


def _redirect(build):
    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        if kwargs.get("backend") == "numpy":
            kwargs["backend"] = TARGET
        elif args and args[0] == "numpy":
            args = (TARGET, *args[1:])
        return build(*args, **kwargs)

    return wrapper


if TARGET != "numpy":
    gtscript.stencil = _redirect(gtscript.stencil)
    gtscript.lazy_stencil = _redirect(gtscript.lazy_stencil)
PY

declare -A GT4PY=(
    ["st:numpy:cpu:IJK"]=numpy ["st:python:cpu:IJK"]=debug ["st:gt:cpu:IJK"]=gt:cpu_kfirst
    ["st:gt:cpu:KJI"]=gt:cpu_ifirst ["st:gt:gpu:KJI"]=gt:gpu
)
SUMMARY=()
cd "$NDSL_SOURCE"
for b in $BACKENDS; do
    name="${GT4PY[$b]:-}"
    [ -n "$name" ] || { echo "unknown NDSL backend $b" >&2; exit 2; }
    echo "== $b (gt4py name $name)"
    log="$PLUGIN_DIR/log-${name//[:]/_}.txt"
    target="$name" select=() mark="$MARK"
    if [ "$name" = gt:gpu ]; then
        # NDSL's own GPU mode: the tests that name their backend "numpy" hand it NumPy arrays
        # (host memory, which a GPU stencil refuses), so nothing is redirected; NDSL's
        # `--gpu-only` runs the `cupy` parameter of its `backend` fixture (Backend
        # "st:dace:gpu:KJI", CuPy data, stencilkit's gpu backend) and skips the rest
        target=numpy select=(--gpu-only -k cupy)
        [ -n "${NDSL_MARK:-}" ] || mark="${MARK/ and not gpu/}"
    fi
    launch=("$PY")
    if [ -n "${NDSL_MPI:-}" ]; then
        mpiexec="${NDSL_MPIEXEC:-$(dirname "$PY")/mpiexec}"
        [ -x "$mpiexec" ] || mpiexec="$(command -v mpiexec)"
        launch=("$mpiexec" -np "$NDSL_MPI" "$PY" -m mpi4py)
    fi
    set +e
    PYTHONPATH="$PLUGIN_DIR${NDSL_STUBS:+:$NDSL_STUBS}${EXTRA_PATH:+:$EXTRA_PATH}" NDSL_ACCEPTANCE_BACKEND="$target" \
        NDSL_TEST_BACKEND="$b" STENCILKIT_CACHE_DIR="${STENCILKIT_CACHE_DIR:-/tmp/skcache-ndsl}" \
        "${launch[@]}" -m pytest -p stencilkit_ndsl_plugin -p no:cacheprovider -q -rfEs --continue-on-collection-errors \
        -m "$mark" "${select[@]}" ${NDSL_PYTEST:-} $TESTS 2>&1 | tee "$log" | grep -E "^(FAILED|ERROR|SKIPPED)"
    set -e
    [ -z "${NDSL_LOGS:-}" ] || { mkdir -p "$NDSL_LOGS" && cp "$log" "$NDSL_LOGS/"; }
    line="$(grep -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)" "$log" | tail -1 || true)"
    [ -n "$line" ] || line="$(tail -1 "$log")"
    SUMMARY+=("$b: $line")
done
echo
echo "NDSL offline tests with gt4py served by stencilkit ($(date -u +%F), $(uname -m)):"
printf '  %s\n' "${SUMMARY[@]}"
