"""gt4py.next's backend runners: ``gtfn.run_gtfn`` (= ``stencilkit.cpu``), ``gtfn.run_gtfn_gpu``."""

from . import gtfn

__all__ = ["gtfn"]
