"""gt4py.next's backend runners: ``gtfn`` (stencilkit's ``cpu`` and ``gpu``) and ``dace`` (not
available: importable, its backends refuse with a clear error)."""

from . import dace, gtfn

__all__ = ["dace", "gtfn"]
