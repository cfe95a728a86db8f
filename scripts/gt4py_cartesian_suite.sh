#!/usr/bin/env bash
# GT4Py's own gt4py.cartesian integration tests with gt4py served by stencilkit's alias.
#
#   GT4PY_SOURCE=/path/to/gt4py scripts/gt4py_cartesian_suite.sh
#
# Runs tests/cartesian_tests/integration_tests of a gt4py checkout (tag v1.2.1 is the one
# measured; its DaCe-only file test_dace_parsing.py is left out) once per backend, with a pytest
# plugin that installs stencilkit's gt4py alias before the tests import gt4py, and keeps per
# backend the items parametrized with that backend (a `backend` parameter, or the `test` case of
# a StencilTestSuite) plus the items that name no backend. It prints passed/failed/errors per
# backend. This checkout's src/ is put first on PYTHONPATH; nothing is installed and nothing is
# written in either repository (pytest's cache is off; Hypothesis keeps its database in
# $GT4PY_SOURCE/tests/.hypothesis).
#
#   GT4PY_BACKENDS  backends to run (default "numpy debug gt:cpu_ifirst"; add gt:gpu on a GPU)
#   GT4PY_TESTS     test paths relative to $GT4PY_SOURCE/tests
#                   (default cartesian_tests/integration_tests)
#   GT4PY_PYTHON    the Python to run (default python3; it needs numpy, pytest, hypothesis and
#                   stencilkit's dependencies, and must not have a real gt4py installed)
#   GT4PY_PYTEST    extra pytest arguments (e.g. "-x", "-k Suite", "-n 2")
#   GT4PY_LOGS      a folder that receives each backend's whole pytest log
set -euo pipefail
: "${GT4PY_SOURCE:?set GT4PY_SOURCE to a checkout of gt4py (e.g. tag v1.2.1)}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GT4PY_SOURCE="$(cd "$GT4PY_SOURCE" && pwd)"
PY="${GT4PY_PYTHON:-python3}"
BACKENDS="${GT4PY_BACKENDS:-numpy debug gt:cpu_ifirst}"
TESTS="${GT4PY_TESTS:-cartesian_tests/integration_tests}"
[ -d "$GT4PY_SOURCE/tests/cartesian_tests" ] || {
    echo "$GT4PY_SOURCE has no tests/cartesian_tests: point GT4PY_SOURCE to a gt4py checkout" >&2
    exit 2
}
if "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('gt4py') is None)"; then
    echo "a real gt4py is importable by $PY: stencilkit must serve gt4py (use another venv)" >&2
    exit 2
fi

PLUGIN_DIR="$(mktemp -d)"
trap 'rm -rf "$PLUGIN_DIR"' EXIT
cat >"$PLUGIN_DIR/stencilkit_gt4py_suite_plugin.py" <<'PY'
"""pytest plugin: stencilkit serves gt4py before the tests import it; only the items of the
backend under test (GT4PY_SUITE_BACKEND) and those naming no backend are kept."""
import os

from stencilkit.compat import install_gt4py_alias

install_gt4py_alias()

TARGET = os.environ.get("GT4PY_SUITE_BACKEND", "")


def _backend_of(item):
    spec = getattr(item, "callspec", None)
    if spec is None:
        return None
    for key, value in spec.params.items():
        if key == "backend" and isinstance(value, str):
            return value
        if key == "test" and isinstance(value, dict) and isinstance(value.get("backend"), str):
            return value["backend"]
    return None


def pytest_collection_modifyitems(config, items):
    if not TARGET:
        return
    keep, drop = [], []
    for item in items:
        backend = _backend_of(item)
        (keep if backend is None or backend == TARGET else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
PY

SUMMARY=()
cd "$GT4PY_SOURCE/tests"
for b in $BACKENDS; do
    echo "== $b"
    log="$PLUGIN_DIR/log-${b//[:]/_}.txt"
    set +e
    PYTHONPATH="$PLUGIN_DIR:$ROOT/src:$GT4PY_SOURCE/tests${PYTHONPATH:+:$PYTHONPATH}" \
        GT4PY_SUITE_BACKEND="$b" STENCILKIT_CACHE_DIR="${STENCILKIT_CACHE_DIR:-/tmp/skcache-gt4py-suite}" \
        "$PY" -m pytest -p stencilkit_gt4py_suite_plugin -p no:cacheprovider -q -rfE \
        --ignore=cartesian_tests/integration_tests/multi_feature_tests/test_dace_parsing.py \
        ${GT4PY_PYTEST:-} $TESTS 2>&1 | tee "$log" | grep -E "^(FAILED|ERROR)"
    set -e
    [ -z "${GT4PY_LOGS:-}" ] || { mkdir -p "$GT4PY_LOGS" && cp "$log" "$GT4PY_LOGS/"; }
    line="$(grep -E "^=* ?[0-9]+ (passed|failed|error|deselected)" "$log" | tail -1 || true)"
    [ -n "$line" ] || line="$(tail -1 "$log")"
    SUMMARY+=("$b: $line")
done
echo
echo "GT4Py's cartesian tests ($(git -C "$GT4PY_SOURCE" describe --tags --always 2>/dev/null || echo unknown))" \
    "with gt4py served by stencilkit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '') ($(date -u +%F)):"
printf '  %s\n' "${SUMMARY[@]}"
