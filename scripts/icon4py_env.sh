#!/usr/bin/env bash
# A Python 3.12 virtual environment with stencilkit (editable, test + compat extras) and the
# icon4py 0.4.1 stencil packages installed WITHOUT their dependencies (so gt4py is never
# installed: stencilkit serves `import gt4py.next` through stencilkit.compat's alias).
#
#   scripts/icon4py_env.sh [--suite] [VENV_DIR]          (default: .venv312)
#
# --suite also installs what icon4py's own test suite needs (scripts/icon4py_suite.sh):
# icon4py-testing and icon4py-driver 0.4.1 (--no-deps as well) and their dependencies other than
# gt4py, pinned: pytest-benchmark, pooch, filelock, serialbox4py, DaCe (icon4py's model_options
# imports `dace` itself; gt4py 1.2.3 depends on DaCe 2.0.0a10), and the io extra of
# icon4py-common (uxarray and what it imports), which icon4py.model.testing.fixtures imports;
# devtools and typer (icon4py-driver imports them) and icon-grid-generator (the grid files of
# tests/icon4py/test_icon4py_driver.py and benchmarks/icon4py_driver.py).
#
# icon4py 0.4.1 needs Python >= 3.12 (PEP 695 `type` statements). The interpreter is
# $PYTHON312, else python3.12 on PATH, else the newest pyenv 3.12. ICON4PY_WHEELS=DIR installs
# the icon4py wheels from DIR instead of the package index.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SUITE=0
if [ "${1:-}" = "--suite" ]; then SUITE=1; shift; fi
VENV="${1:-.venv312}"
ICON4PY_VERSION=0.4.1
ICON4PY_PACKAGES=(icon4py-common icon4py-atmosphere-dycore icon4py-atmosphere-diffusion
                  icon4py-atmosphere-tracer-advection icon4py-atmosphere-microphysics
                  icon4py-atmosphere-muphys icon4py-atmosphere-physics-driver)
ICON4PY_SUITE_PACKAGES=(icon4py-testing icon4py-driver)
# pinned to what was installed and run on 2026-12-02 (docs/icon4py.md, "icon4py's own test suite")
SUITE_DEPENDENCIES=(pytest-benchmark==5.3.1 pooch==1.9.0 filelock==3.19.1 serialbox4py==2.6.3
                    dace==2.0.0a10 uxarray==2024.3.0 scipy==1.18.1 numba==0.68.1
                    scikit-learn==1.9.1 holoviews==1.23.2 Cartopy==0.26.0 dask==2026.8.0
                    pyarrow==26.0.1 datashader==0.19.1 zarr==3.4.2 netCDF4==1.7.5.1.post1
                    cftime==1.6.6.1 matplotlib==3.11.2
                    devtools==0.13.0 typer==0.29.3 icon-grid-generator==0.9.0)

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
packages=("${ICON4PY_PACKAGES[@]}")
if [ "$SUITE" = 1 ]; then packages+=("${ICON4PY_SUITE_PACKAGES[@]}"); fi
spec=()
for p in "${packages[@]}"; do spec+=("$p==$ICON4PY_VERSION"); done
if [ -n "${ICON4PY_WHEELS:-}" ]; then
    "$VENV/bin/pip" install -q --no-deps --no-index --find-links "$ICON4PY_WHEELS" "${spec[@]}"
else
    "$VENV/bin/pip" install -q --no-deps "${spec[@]}"
fi
if [ "$SUITE" = 1 ]; then
    "$VENV/bin/pip" install -q "${SUITE_DEPENDENCIES[@]}"
fi
# the point of --no-deps: no real gt4py next to the alias
"$VENV/bin/python" - <<'PY'
import importlib.util, sys
if importlib.util.find_spec("gt4py") is not None:
    sys.exit("icon4py_env.sh: a real gt4py got installed; the icon4py tests need it absent")
import icon4py.model.common  # noqa: F401  (its pure-Python dependencies are there)
if importlib.util.find_spec("icon4py.model.testing") is not None:  # --suite
    import stencilkit.compat
    stencilkit.compat.install_gt4py_alias()
    import icon4py.model.testing.fixtures  # noqa: F401  (what the suite's conftest files import)
    import icon4py.model.testing.pytest_hooks  # noqa: F401
print(f"icon4py environment ready: {sys.executable}")
PY
