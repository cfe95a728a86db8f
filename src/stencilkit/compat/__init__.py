"""Running code written for gt4py unchanged on stencilkit: ``gt4py/`` (what the gt4py alias serves)
and ``icon4py/`` (the icon4py acceptance run, ``python -m stencilkit.compat.icon4py``).

>>> from stencilkit.compat import install_gt4py_alias
>>> install_gt4py_alias()            # from now on, ``import gt4py.next as gtx`` is stencilkit

Or, without touching the script: ``python -m stencilkit.gt4py_run script.py [args]``.
"""

from .gt4py.alias import (
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
