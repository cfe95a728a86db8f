"""What the gt4py alias serves as the package ``gt4py.cartesian``.

Its submodules (``gtscript``, ``config``, ``backend``, ...) load on first access, as attributes
or by import, each through the alias (``gt4py.cartesian.<name>`` is stencilkit's
``stencilkit.cartesian.<name>``). So ``import gt4py; gt4py.cartesian.config.cache_settings``
works as NDSL writes it, and the package imports before every part of the language exists.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

#: the submodules gt4py.cartesian's own ``__init__`` imports, and those NDSL reaches as
#: attributes
SUBMODULES = (
    "backend",
    "config",
    "definitions",
    "gtc",
    "gtscript",
    "stencil_object",
    "testing",
    "utils",
)

__path__: list[str] = []  # a package: its submodules are found by the alias


def __getattr__(name: str) -> ModuleType:
    if name not in SUBMODULES:
        raise AttributeError(f"module 'gt4py.cartesian' has no attribute {name!r}")
    from .alias import gt4py_alias_installed, target_of

    full = f"gt4py.cartesian.{name}"
    target = full if gt4py_alias_installed() else target_of(full)
    if target is None:
        raise AttributeError(f"module 'gt4py.cartesian' has no attribute {name!r}")
    try:
        module = importlib.import_module(target)
    except ModuleNotFoundError as err:
        raise AttributeError(
            f"module 'gt4py.cartesian' has no attribute {name!r}: stencilkit does not serve"
            f" {full} yet ({err})"
        ) from None
    setattr(sys.modules[__name__], name, module)
    return module
