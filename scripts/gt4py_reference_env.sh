#!/usr/bin/env bash
# A scratch Python 3.12 venv OUTSIDE the repository with the real gt4py 1.2.3, icon4py 0.4.1
# (--no-deps) and the dependencies of icon4py's own test suite: the reference for
# scripts/icon4py_suite.sh's counts (gt4py is never a dependency of stencilkit).
#
#   scripts/gt4py_reference_env.sh /tmp/gt4py-venv
#   ICON4PY_SUITE_PYTHON=/tmp/gt4py-venv/bin/python ICON4PY_SUITE_OUT=/tmp/suite-gt4py \
#       scripts/icon4py_suite.sh embedded
#
# icon4py 0.4.1 pins gt4py==1.2.1; GT4PY_VERSION=1.2.1 makes that venv instead (gt4py 1.2.3 has
# no GTFNBackendFactory, so icon4py's --backend=gtfn_cpu fails there at fixture setup).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${1:?usage: scripts/gt4py_reference_env.sh VENV_DIR (outside the repository)}"
case "$(realpath -m "$VENV")/" in
    "$PWD"/*) echo "gt4py_reference_env.sh: $VENV is inside the repository; use e.g. /tmp/gt4py-venv" >&2; exit 2 ;;
esac
PY="${PYTHON312:-$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python 2>/dev/null | sort -rV | head -1)}"
[ -x "$PY" ] || PY="$(command -v python3.12)"
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q "gt4py==${GT4PY_VERSION:-1.2.3}"
# the same icon4py packages, suite dependencies and pins as scripts/icon4py_env.sh --suite
eval "$(sed -n '/^ICON4PY_PACKAGES=/,/)$/p; /^ICON4PY_SUITE_PACKAGES=/p; /^SUITE_DEPENDENCIES=/,/)$/p' scripts/icon4py_env.sh)"
spec=()
for p in "${ICON4PY_PACKAGES[@]}" "${ICON4PY_SUITE_PACKAGES[@]}"; do spec+=("$p==0.4.1"); done
"$VENV/bin/pip" install -q --no-deps "${spec[@]}"
# icon4py's stencil modules' own dependencies: stencilkit's compat extra (pyproject.toml)
read -r -a compat < <("$VENV/bin/python" -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["compat"]))')
"$VENV/bin/pip" install -q "${SUITE_DEPENDENCIES[@]}" "${compat[@]}" pytest
"$VENV/bin/python" -c 'import gt4py, icon4py.model.testing.fixtures; print("gt4py", gt4py.__version__, "reference environment ready")'
