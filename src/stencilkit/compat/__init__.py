"""Running gt4py.next code unchanged on stencilkit.

>>> from stencilkit.compat import install_gt4py_alias
>>> install_gt4py_alias()            # from now on, ``import gt4py.next as gtx`` is stencilkit

Or, without touching the script: ``python -m stencilkit.gt4py_run script.py [args]``.
"""

from .alias import (
    GT4PyAliasError,
    gt4py_alias_installed,
    install_gt4py_alias,
    real_gt4py_location,
    uninstall_gt4py_alias,
)

__all__ = [
    "GT4PyAliasError",
    "gt4py_alias_installed",
    "install_gt4py_alias",
    "real_gt4py_location",
    "uninstall_gt4py_alias",
]
