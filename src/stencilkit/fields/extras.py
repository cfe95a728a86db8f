"""Optional dependencies, imported on first use with a message naming the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..core.install import install_hint


def require(module: str, extra: str, what: str) -> ModuleType:
    """``module``, or an ``ImportError`` saying which stencilkit extra provides it.

    >>> xr = require("xarray", "xarray", "Field.to_xarray()")
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"{what} needs the optional package {module!r} ({err});"
            f" install it with: {install_hint(extra)}"
        ) from None
