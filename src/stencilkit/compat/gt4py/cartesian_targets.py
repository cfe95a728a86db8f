"""What the gt4py alias serves for ``gt4py.cartesian`` (GTScript) and ``gt4py.storage``.

Kept apart from the alias's finder so that the gt4py.next table and this one change
independently:

=========================================  ====================================================
``gt4py.cartesian``                        ``stencilkit.compat.gt4py.cartesian_package`` (submodules
                                           load on first access)
``gt4py.cartesian.<a>``                    ``stencilkit.cartesian.<a>`` (``gtscript``,
                                           ``config``, ``backend``, ``definitions``, ...)
``gt4py.cartesian.gtc.passes.oir_pipeline``  ``stencilkit.cartesian.oir_pipeline``
``...passes.oir_optimizations.<module>``    ``stencilkit.cartesian.oir_pipeline`` (the pass names)
``gt4py.cartesian.utils``                  ``stencilkit.compat.gt4py.cartesian_utils``
``gt4py.cartesian.utils.compiler``         ``stencilkit.cartesian.compiler``
``...frontend.exceptions``, ``...frontend.gtscript_frontend``  ``...compat.gt4py.cartesian_frontend``
``gt4py.storage.cartesian.utils``          ``stencilkit.cartesian.storage_utils``
``gt4py.storage`` (and ``.cartesian``)     ``stencilkit.cartesian.storage``
``gt4py.storage.cartesian.layout``         ``stencilkit.cartesian.layout_registry``
=========================================  ====================================================
"""

from __future__ import annotations

import importlib
import types

__all__ = ["EMPTY_PACKAGES", "TARGETS", "prefix_target", "top_level_attribute"]

#: gt4py.cartesian packages with no stencilkit module of their own: empty packages
EMPTY_PACKAGES = (
    "gt4py.cartesian.gtc",
    "gt4py.cartesian.gtc.passes",
    "gt4py.cartesian.gtc.passes.oir_optimizations",
    "gt4py.cartesian.frontend",
)

#: gt4py's modules of the OIR passes (``from ...oir_optimizations.horizontal_execution_merging
#: import HorizontalExecutionMerging``, as NDSL's tests do): each serves every pass stand-in
_PASS_MODULES = (
    "caches", "horizontal_execution_merging", "inlining", "mask_stmt_merging", "pruning",
    "temporaries", "vertical_loop_merging",
)  # fmt: skip

#: explicit targets
TARGETS = {
    "gt4py.cartesian": "stencilkit.compat.gt4py.cartesian_package",
    "gt4py.cartesian.gtc.passes.oir_pipeline": "stencilkit.cartesian.oir_pipeline",
    "gt4py.cartesian.utils": "stencilkit.compat.gt4py.cartesian_utils",
    "gt4py.cartesian.utils.compiler": "stencilkit.cartesian.compiler",
    "gt4py.cartesian.frontend.exceptions": "stencilkit.compat.gt4py.cartesian_frontend",
    "gt4py.cartesian.frontend.gtscript_frontend": "stencilkit.compat.gt4py.cartesian_frontend",
    "gt4py.storage.cartesian.utils": "stencilkit.cartesian.storage_utils",
    "gt4py.storage": "stencilkit.cartesian.storage",
    "gt4py.storage.cartesian": "stencilkit.cartesian.storage",
    "gt4py.storage.cartesian.interface": "stencilkit.cartesian.storage",
    "gt4py.storage.cartesian.layout": "stencilkit.cartesian.layout_registry",
    "gt4py.storage.cartesian.layout_registry": "stencilkit.cartesian.layout_registry",
    **{
        f"gt4py.cartesian.gtc.passes.oir_optimizations.{m}": "stencilkit.cartesian.oir_pipeline"
        for m in _PASS_MODULES
    },
}

_PREFIX = "gt4py.cartesian."


def prefix_target(fullname: str) -> str | None:
    """``stencilkit.cartesian.<a>`` for ``gt4py.cartesian.<a>``, else None.

    >>> prefix_target("gt4py.cartesian.gtscript")
    'stencilkit.cartesian.gtscript'
    """
    if fullname.startswith(_PREFIX):
        return "stencilkit.cartesian." + fullname[len(_PREFIX) :]
    return None


# what a bare ``import gt4py`` makes reachable as attributes, as NDSL uses them
# (``gt4py.storage.zeros(...)``, ``gt4py.cartesian.backend.from_name(...)``)
_TOP_LEVEL = ("cartesian", "eve", "next", "storage")


def top_level_attribute(name: str) -> types.ModuleType:
    """The ``__getattr__`` (PEP 562) of the alias's stand-in ``gt4py`` package."""
    if name not in _TOP_LEVEL:
        raise AttributeError(f"module 'gt4py' has no attribute {name!r}")
    return importlib.import_module(f"gt4py.{name}")
