#!/usr/bin/env bash
# Run every icon4py stencil through the gt4py alias on embedded and compiled backends and
# write the report: the JSON records and the results section of docs/icon4py.md.
#
#   scripts/icon4py_acceptance.sh [--backend cpu] [--backend gpu] [--jobs N] [...]
#
# Needs the environment of scripts/icon4py_env.sh ($VENV, default .venv312). Extra arguments go
# to `python -m stencilkit.compat.icon4py`. Writes icon4py-results.json (or $ICON4PY_JSON)
# and, unless ICON4PY_NO_DOC=1, replaces the results in docs/icon4py.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${VENV:-.venv312}"
JSON="${ICON4PY_JSON:-icon4py-results.json}"
MD="$(mktemp)"
trap 'rm -f "$MD"' EXIT
"$VENV/bin/python" -m stencilkit.compat.icon4py --json "$JSON" --markdown "$MD" "$@"
if [ "${ICON4PY_NO_DOC:-0}" != 1 ]; then
    "$VENV/bin/python" - "$MD" <<'PY'
import sys
from pathlib import Path
from stencilkit.compat.icon4py.report import splice
doc = Path("docs/icon4py.md")
doc.write_text(splice(doc.read_text(), Path(sys.argv[1]).read_text()))
print(f"updated {doc}")
PY
fi
