"""Serve ``import gt4py.next`` (and its submodules) from stencilkit, on request; also
``gt4py.cartesian`` and ``gt4py.storage`` (their table: ``cartesian_targets.py``).

``install_gt4py_alias()`` puts a finder first on ``sys.meta_path`` that answers every import of
a ``gt4py`` module with the stencilkit module it stands for:

===================================  =======================================================
``gt4py``                            an empty package holding ``next``, ``eve`` and ``_core``
``gt4py.next``                       ``stencilkit``
``gt4py.next.<a>.<b>``               ``stencilkit.compat.gt4py.<a>.<b>`` for the modules that
                                     mirror gt4py's layout (``MIRRORS``), else
                                     ``stencilkit.<a>.<b>`` (``config``, ``instrumentation``);
                                     the same module object
``gt4py.eve``                        ``stencilkit.compat.gt4py.eve`` (``StrEnum``, ``NOTHING``)
``gt4py.eve.utils``                  ``stencilkit.compat.gt4py.utils``
``gt4py._core.definitions``          ``stencilkit.compat.gt4py.core_definitions``
===================================  =======================================================

The alias refuses to shadow a real gt4py (one importable from ``sys.path`` or already imported)
unless ``force=True``. A ``gt4py`` module that stencilkit does not provide is not found
(``ModuleNotFoundError``; ``importlib.util.find_spec`` gives None, as for any missing module).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence

from . import MIRRORS, cartesian_targets

__all__ = [
    "GT4PyAliasError",
    "gt4py_alias_installed",
    "install_gt4py_alias",
    "real_gt4py_location",
    "target_of",
    "uninstall_gt4py_alias",
]

# gt4py packages that have no stencilkit counterpart: served as empty packages
_EMPTY_PACKAGES = ("gt4py", "gt4py._core", *cartesian_targets.EMPTY_PACKAGES)
# explicit targets; every other ``gt4py.next.<sub>`` maps to ``stencilkit.<sub>``
_TARGETS = {
    "gt4py.next": "stencilkit",
    "gt4py.eve": "stencilkit.compat.gt4py.eve",
    "gt4py.eve.utils": "stencilkit.compat.gt4py.utils",
    "gt4py._core.definitions": "stencilkit.compat.gt4py.core_definitions",
    **cartesian_targets.TARGETS,
}
_MIRRORED = frozenset(m.split(".")[0] for m in MIRRORS)


class GT4PyAliasError(ImportError):
    """The alias would shadow a real gt4py, or cannot be installed."""


def target_of(fullname: str) -> str | None:
    """The stencilkit module that serves ``fullname`` (None for the empty packages).

    >>> target_of("gt4py.next.ffront.decorator")
    'stencilkit.compat.gt4py.ffront.decorator'
    >>> target_of("gt4py.next.config")
    'stencilkit.config'
    """
    if fullname in _TARGETS:
        return _TARGETS[fullname]
    if fullname.startswith("gt4py.next."):
        sub = fullname[len("gt4py.next.") :]
        if sub.split(".")[0] in _MIRRORED:
            return "stencilkit.compat.gt4py." + sub
        return "stencilkit." + sub
    if fullname in _EMPTY_PACKAGES:
        return None
    if (cartesian := cartesian_targets.prefix_target(fullname)) is not None:
        return cartesian
    raise ModuleNotFoundError(
        f"No module named '{fullname}': stencilkit serves gt4py.next, gt4py.cartesian,"
        " gt4py.storage, gt4py.eve, gt4py.eve.utils and gt4py._core.definitions only",
        name=fullname,
    )


class _AliasLoader(importlib.abc.Loader):
    """Hands out the stencilkit module itself, so that both names share one module object."""

    def __init__(self, fullname: str) -> None:
        self.fullname = fullname
        self.original_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        target = target_of(self.fullname)
        if target is None:
            module = types.ModuleType(self.fullname, f"stencilkit's stand-in for {self.fullname}")
            module.__path__ = []
            module.__stencilkit_alias__ = True  # type: ignore[attr-defined]
            if self.fullname == "gt4py":  # PEP 562: gt4py.storage etc. after a bare import
                setattr(module, "__getattr__", cartesian_targets.top_level_attribute)  # noqa: B010
            return module
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as err:
            if err.name is not None and target.startswith(err.name):
                raise ModuleNotFoundError(
                    f"No module named '{self.fullname}': stencilkit has no module '{target}'"
                    " to serve it",
                    name=self.fullname,
                ) from None
            raise
        self.original_spec = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the stencilkit module was executed when it was imported. The import
        system has just set ``__spec__`` to the alias's spec: give the module its own back."""
        if self.original_spec is not None:
            module.__spec__ = self.original_spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: claims every ``gt4py`` module name."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gt4py" and not fullname.startswith("gt4py."):
            return None
        try:
            served = target_of(fullname)
            if served is not None and importlib.util.find_spec(served) is None:
                return None
        except ImportError:  # not served, or a parent of the target is missing
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(fullname), is_package=True)


_FINDER = _AliasFinder()


def real_gt4py_location() -> str | None:
    """Where a real gt4py is (importable from ``sys.path`` or imported), else None."""
    loaded = sys.modules.get("gt4py")
    if loaded is not None and not getattr(loaded, "__stencilkit_alias__", False):
        return str(getattr(loaded, "__file__", None) or getattr(loaded, "__path__", "<loaded>"))
    spec = importlib.machinery.PathFinder.find_spec("gt4py")
    if spec is None:
        return None
    return str(spec.origin or list(spec.submodule_search_locations or []))


def gt4py_alias_installed() -> bool:
    return _FINDER in sys.meta_path


def install_gt4py_alias(force: bool = False) -> None:
    """Serve ``import gt4py.next ...`` from stencilkit from now on (idempotent).

    Refuses with :class:`GT4PyAliasError` if a real gt4py can be imported, unless ``force=True``
    (then the alias wins for every later import; a real gt4py already imported is never
    replaced).

    >>> from stencilkit.compat import install_gt4py_alias
    >>> install_gt4py_alias()
    >>> import gt4py.next as gtx
    >>> gtx.field_operator is stencilkit.field_operator
    True
    """
    if gt4py_alias_installed():
        return
    loaded = sys.modules.get("gt4py")
    if loaded is not None and not getattr(loaded, "__stencilkit_alias__", False):
        raise GT4PyAliasError(
            f"a real gt4py is already imported ({real_gt4py_location()}); the stencilkit alias"
            " cannot replace it: install the alias before anything imports gt4py"
        )
    real = real_gt4py_location()
    if real is not None and not force:
        raise GT4PyAliasError(
            f"a real gt4py is installed ({real}); refusing to shadow it with stencilkit."
            " Pass force=True (python -m stencilkit.gt4py_run --force) to use stencilkit anyway"
        )
    sys.meta_path.insert(0, _FINDER)


def uninstall_gt4py_alias() -> None:
    """Remove the finder and forget the ``gt4py`` modules it served (stencilkit stays loaded)."""
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == "gt4py" or n.startswith("gt4py.")]:
        del sys.modules[name]
