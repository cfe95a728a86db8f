"""gt4py.next's ``backend`` module: the ``Backend`` class and the backends stencilkit offers."""

from ...backends import Backend, FieldAllocator, cpu, gpu, gtfn_cpu, gtfn_gpu

__all__ = ["Backend", "FieldAllocator", "cpu", "gpu", "gtfn_cpu", "gtfn_gpu"]
