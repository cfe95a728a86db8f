"""When the icon4py tests can run: Python >= 3.12 with icon4py installed.

``STENCILKIT_REQUIRE_ICON4PY=1`` (set by the icon4py stage of ``.ci/run``) turns a missing
icon4py into failures instead of skips, so that stage can never pass vacuously.
"""

from __future__ import annotations

import importlib.util
import os
import sys


def icon4py_skip_reason() -> str | None:
    """Why the icon4py tests cannot run here, or None."""
    if os.environ.get("STENCILKIT_REQUIRE_ICON4PY") == "1":
        return None
    if sys.version_info < (3, 12):
        return (
            "icon4py 0.4.1 needs Python >= 3.12 (it uses PEP 695 'type' statements): run"
            " scripts/icon4py_env.sh, then .venv312/bin/python -m pytest tests/icon4py"
        )
    if not module_exists("icon4py.model.common"):
        return "icon4py is not installed here: run scripts/icon4py_env.sh"
    return None


def module_exists(name: str) -> bool:
    """Whether ``name`` can be imported. This folder is called ``icon4py`` too: where it is on
    ``sys.path`` and icon4py is not installed, ``icon4py`` is this folder (a namespace package)
    and looking up ``icon4py.model...`` raises instead of answering None."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
