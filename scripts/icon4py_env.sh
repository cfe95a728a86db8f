#!/usr/bin/env bash
# A Python 3.12 virtual environment with stencilkit (editable, test + compat extras) and the
# icon4py 0.4.1 stencil packages installed WITHOUT their dependencies (so gt4py is never
# installed: stencilkit serves `import gt4py.next` through stencilkit.compat's alias).
#
#   scripts/icon4py_env.sh [VENV_DIR]          (default: .venv312)
#
# icon4py 0.4.1 needs Python >= 3.12 (PEP 695 `type` statements). The interpreter is
# $PYTHON312, else python3.12 on PATH, else the newest pyenv 3.12. ICON4PY_WHEELS=DIR installs
# the icon4py wheels from DIR instead of the package index.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

VENV="${1:-.venv312}"
ICON4PY_VERSION=0.4.1
ICON4PY_PACKAGES=(icon4py-common icon4py-atmosphere-dycore icon4py-atmosphere-diffusion
                  icon4py-atmosphere-tracer-advection icon4py-atmosphere-microphysics
                  icon4py-atmosphere-muphys icon4py-atmosphere-physics-driver)

ok312() { [ -n "$1" ] && "$1" -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; }
PY=""
for candidate in "${PYTHON312:-}" "$(command -v python3.12 || true)" \
        $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python 2>/dev/null | sort -rV); do
    if ok312 "$candidate"; then PY="$candidate"; break; fi
done
if [ -z "$PY" ]; then
    echo "icon4py_env.sh: no Python >= 3.12 found (set PYTHON312=/path/to/python3.12)" >&2
    exit 1
fi

rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q -e '.[test,compat]'
spec=()
for p in "${ICON4PY_PACKAGES[@]}"; do spec+=("$p==$ICON4PY_VERSION"); done
if [ -n "${ICON4PY_WHEELS:-}" ]; then
    "$VENV/bin/pip" install -q --no-deps --no-index --find-links "$ICON4PY_WHEELS" "${spec[@]}"
else
    "$VENV/bin/pip" install -q --no-deps "${spec[@]}"
fi
# the point of --no-deps: no real gt4py next to the alias
"$VENV/bin/python" - <<'PY'
import importlib.util, sys
if importlib.util.find_spec("gt4py") is not None:
    sys.exit("icon4py_env.sh: a real gt4py got installed; the icon4py tests need it absent")
import icon4py.model.common  # noqa: F401  (its pure-Python dependencies are there)
print(f"icon4py environment ready: {sys.executable}")
PY
