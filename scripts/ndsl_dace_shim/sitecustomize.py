"""Lets NDSL 2026.03 import with PyPI's DaCe 1.0.2 (NDSL pins a DaCe 2 development commit
that is not on PyPI). Put this folder first on PYTHONPATH (``NDSL_STUBS`` of
``scripts/ndsl_acceptance.sh``); Python imports ``sitecustomize`` at start-up.

Two differences NDSL meets at import time, none when it runs stencils without orchestration:
- DaCe 2 splits ``dace.frontend.python.replacements`` into a package; NDSL imports its
  ``array_manipulation`` submodule. Here the 1.0.2 module becomes a package whose
  ``array_manipulation`` is the module itself (``_datatype_converter`` lives there in 1.0.2).
- NDSL's schedule-tree passes name DaCe 2 classes of ``treenodes`` (``MemletSet``,
  ``ScheduleTreeRoot``, ...) in class bodies and annotations; missing names become empty
  placeholder classes, so those modules import (orchestrated runs that use them still fail:
  NDSL's DaCe orchestration is outside what stencilkit serves).
"""

import importlib.abc
import importlib.machinery
import importlib.util
import sys

_REPLACEMENTS = "dace.frontend.python.replacements"
_ARRAY_MANIPULATION = _REPLACEMENTS + ".array_manipulation"
_PLACEHOLDERS = {"dace.sdfg.analysis.schedule_tree.treenodes": {"MemletSet": set}}
_MADE: dict = {}


def _placeholder(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _MADE.setdefault(name, type(name, (), {}))


def _wrapped(spec, after):
    real = spec.loader

    class Loader(importlib.abc.Loader):
        def create_module(self, s):
            return real.create_module(s)

        def exec_module(self, module):
            real.exec_module(module)
            after(module)

    spec.loader = Loader()
    return spec


def _as_package(module):
    if not hasattr(module, "__path__"):
        module.__path__ = []


def _with_placeholders(module):
    for key, value in _PLACEHOLDERS[module.__name__].items():
        if not hasattr(module, key):
            setattr(module, key, value)
    module.__getattr__ = _placeholder


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == _ARRAY_MANIPULATION:
            return importlib.util.spec_from_loader(name, self)
        if name == _REPLACEMENTS or name in _PLACEHOLDERS:
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None:
                return None
            return _wrapped(spec, _as_package if name == _REPLACEMENTS else _with_placeholders)
        return None

    def create_module(self, spec):
        return sys.modules[_REPLACEMENTS]

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Finder())
