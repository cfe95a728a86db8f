"""gt4py.next's ``ffront`` layout: ``decorator``, ``fbuiltins`` and ``experimental``."""

from . import decorator, experimental, fbuiltins

__all__ = ["decorator", "experimental", "fbuiltins"]
