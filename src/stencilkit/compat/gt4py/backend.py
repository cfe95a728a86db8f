"""gt4py.next's ``backend`` module: the ``Backend`` class and the backends stencilkit offers."""

from typing import Final

from ...backends import Backend, FieldAllocator, cpu, gpu, gtfn_cpu, gtfn_gpu

#: gt4py.next's default transformation pipeline of a backend; stencilkit's is fixed (empty here,
#: accepted as ``Backend(..., transforms=DEFAULT_TRANSFORMS)``).
DEFAULT_TRANSFORMS: Final = ()

__all__ = ["DEFAULT_TRANSFORMS", "Backend", "FieldAllocator", "cpu", "gpu", "gtfn_cpu", "gtfn_gpu"]
