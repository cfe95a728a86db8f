#!/usr/bin/env bash
# GT4Py's own gt4py.next feature tests (tests/next_tests/integration_tests/feature_tests/ffront_tests
# of a gt4py checkout), run unchanged with gt4py served by stencilkit (the `gt4py` alias,
# `python -m stencilkit.gt4py_run`), one run per backend.
#
#   GT4PY_SOURCE=/path/to/gt4py scripts/gt4py_next_suite.sh [BACKEND ...]
#
# BACKEND: embedded (default), cpu, gpu, embedded-cupy. GT4Py's test helpers
# (next_tests/definitions.py, integration_tests/cases_utils.py) parametrize every feature test
# by gt4py's backend ids; the harness plugin (scripts/gt4py_next_harness/sk_gt4py_next_plugin.py)
# keeps one id per run and maps it to stencilkit's backend:
#   embedded       EmbeddedIds.NUMPY_EXECUTION   stencilkit's embedded backend, NumPy fields
#   embedded-cupy  EmbeddedIds.CUPY_EXECUTION    embedded, CuPy fields (needs a GPU)
#   cpu            ProgramBackendId.GTFN_CPU     stencilkit.cpu (gtx.gtfn_cpu)
#   gpu            ProgramBackendId.GTFN_GPU     stencilkit.gpu (gtx.gtfn_gpu; needs a GPU)
# gt4py's own skip/xfail matrix (BACKEND_SKIP_TEST_MATRIX, xfail_strict) applies unchanged.
#
# GT4PY_SOURCE: a gt4py checkout (a tag of the 1.2 series, e.g. v1.2.1) or an extracted archive
# of one, holding tests/next_tests; nothing is downloaded. Left out, as files that test gt4py's
# internals (its IR, its compilation stages) and import modules stencilkit does not serve:
# test_compiled_program.py (otf.compiled_program), test_foast_pretty_printer.py (the FOAST
# printer), test_math_builtin_execution.py (FOAST type deduction), test_temporaries_with_sizes.py
# (GTIR transforms); and test_decorator.py::test_program_gtir_regression (`.gtir`; the
# plugin's DESELECT).
#
# Environment: PYTHON (default: the venv of this checkout, .venv/bin/python, else python3);
# GT4PY_SUITE_OUT (default .gt4py-next-suite/) for the logs; GT4PY_SUITE_TIMEOUT seconds per
# backend (default 1800); extra pytest arguments in GT4PY_SUITE_PYTEST_ARGS (e.g. "-x").
# Prints per backend: passed / failed / errors / xfailed / skipped of the selected tests.
# Status: 0 when nothing failed or errored on any backend, else 1; 3 without GT4PY_SOURCE.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO="$PWD"
if [ -z "${GT4PY_SOURCE:-}" ] || [ ! -d "${GT4PY_SOURCE}/tests/next_tests" ]; then
    echo "gt4py_next_suite.sh: set GT4PY_SOURCE to a gt4py checkout (holding tests/next_tests)," \
         "e.g. git --git-dir=<gt4py.git> --work-tree=DIR checkout v1.2.1 -- ." >&2
    exit 3
fi
SRC="$(realpath "$GT4PY_SOURCE")"
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
    if [ -x "$REPO/.venv/bin/python" ]; then PY="$REPO/.venv/bin/python"; else PY=python3; fi
fi
OUT="$(realpath -m "${GT4PY_SUITE_OUT:-.gt4py-next-suite}")"
TIMEOUT="${GT4PY_SUITE_TIMEOUT:-1800}"
BACKENDS=("$@")
[ ${#BACKENDS[@]} -gt 0 ] || BACKENDS=(embedded)
TESTS=next_tests/integration_tests/feature_tests/ffront_tests
IGNORE=(
    --ignore="$TESTS/test_compiled_program.py"
    --ignore="$TESTS/test_foast_pretty_printer.py"
    --ignore="$TESTS/test_math_builtin_execution.py"
    --ignore="$TESTS/test_temporaries_with_sizes.py"
)
mkdir -p "$OUT"
export PYTHONPATH="$REPO/src:$REPO/scripts/gt4py_next_harness:$SRC/tests${PYTHONPATH:+:$PYTHONPATH}"
status=0
for backend in "${BACKENDS[@]}"; do
    log="$OUT/$backend.log"
    start=$SECONDS
    # shellcheck disable=SC2086
    (cd "$SRC/tests" && timeout --kill-after=30 "$TIMEOUT" "$PY" -m stencilkit.gt4py_run --force \
        -m pytest -q -p no:cacheprovider -p sk_gt4py_next_plugin --sk-backend="$backend" \
        -c "$SRC/pyproject.toml" --rootdir "$SRC" -rfE --tb=short "${IGNORE[@]}" \
        ${GT4PY_SUITE_PYTEST_ARGS:-} "$TESTS" > "$log" 2>&1)
    rc=$?
    "$PY" - "$backend" "$log" "$((SECONDS - start))" "$rc" <<'EOF' || status=1
import re, sys
backend, log, seconds, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = open(log, errors="replace").read()
lines = [l for l in text.splitlines() if re.search(r"\d+ (passed|failed|error)", l)]
summary = lines[-1] if lines else ""
n = {k: int(m.group(1)) if (m := re.search(rf"(\d+) {k}", summary)) else 0
     for k in ("passed", "failed", "errors?", "xfailed", "xpassed", "skipped", "deselected")}
err = n.pop("errors?")
selected = n["passed"] + n["failed"] + err + n["xfailed"] + n["xpassed"] + n["skipped"]
print(f"gt4py.next feature tests on {backend}: {n['passed']} passed, {n['failed']} failed,"
      f" {err} errors, {n['xfailed']} xfailed (gt4py's own), {n['skipped']} skipped, of"
      f" {selected} selected; {n['passed'] + n['xfailed']}/{selected} pass or are gt4py's xfails"
      f" ({seconds} s, log {log})")
if rc in (124, 137):
    print(f"  timed out", file=sys.stderr)
sys.exit(0 if rc == 0 else 1)
EOF
done
exit "$status"
