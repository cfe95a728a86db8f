#!/usr/bin/env bash
# The user's path, as a new user takes it: build the wheel, install it into a fresh virtual
# environment with only the README's user line (no extras, nothing from the checkout), then run
# the README's quick example and `stencilkit demo` from a directory outside the checkout.
# Usage: scripts/user_path_check.sh [PYTHON]   (PYTHON builds the wheel; default python3)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
python=${1:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/stencilkit-user-path.XXXXXX")
trap 'rm -rf "$work"' EXIT

t0=$(date +%s)
"$python" -m pip wheel -q --no-deps . -w "$work/dist"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$work"/dist/stencilkit-*.whl      # the README's `pip install .`, as a wheel
t1=$(date +%s)
echo "user path: wheel built and installed in $((t1 - t0)) s, $(du -sm "$work/venv" | cut -f1) MB"

# the README's quick example: its first ```python block, run from outside the checkout
"$work/venv/bin/python" - "$root/README.md" > "$work/example.py" <<'PY'
import re, sys
print(re.search(r"```python\n(.*?)```", open(sys.argv[1]).read(), re.S).group(1))
PY
mkdir "$work/elsewhere"
cd "$work/elsewhere"
STENCILKIT_CACHE_DIR="$work/cache" "$work/venv/bin/python" -c 'import stencilkit, sys; sys.exit(stencilkit.__file__.startswith(sys.argv[1]))' "$root"
STENCILKIT_CACHE_DIR="$work/cache" "$work/venv/bin/python" "$work/example.py"
STENCILKIT_CACHE_DIR="$work/cache" "$work/venv/bin/stencilkit" demo --steps 20 --size 64 --quiet
# the pages the hints name ship in the wheel (stencilkit help TOPIC)
"$work/venv/bin/stencilkit" help configuration | grep -q '^# Configuration'
t2=$(date +%s)
echo "user path: example and demo ran in $((t2 - t1)) s"
