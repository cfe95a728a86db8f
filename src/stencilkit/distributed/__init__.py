"""Decomposed fields and halo exchange over MPI (mpi4py), on CPUs and one GPU per rank.

>>> from stencilkit import distributed as dist
>>> d = dist.decompose({I: 256, J: 256}, periodic=True)
>>> h = dist.scatter(d, [I, J], h0, halo=1, name="h")     # rank 0's global array
>>> step = dist.distribute(my_program)                     # checks halos, tracks staleness
>>> step(h, ..., offset_provider={}); dist.exchange(h)
>>> h_all = dist.gather(h)                                 # on rank 0

See docs/distributed.md. Needs the ``mpi`` extra (mpi4py and an MPI library).
"""

from .base import Decomposition, exchange, exchange_start
from .cartesian import CartesianDecomposition, decompose
from .collectives import gather, global_max, global_min, global_sum, scatter
from .comm import (
    DistributedError,
    abort_on_error,
    agree,
    cuda_aware,
    install_abort_hook,
    select_device,
    world,
)
from .field import DecomposedField
from .plans import Exchange
from .program import DistributedProgram, HaloNeed, distribute, halo_requirements
from .unstructured import MeshDecomposition, decompose_mesh, partition_cells

__all__ = [
    "CartesianDecomposition",
    "DecomposedField",
    "Decomposition",
    "DistributedError",
    "DistributedProgram",
    "Exchange",
    "HaloNeed",
    "MeshDecomposition",
    "decompose_mesh",
    "partition_cells",
    "distribute",
    "halo_requirements",
    "abort_on_error",
    "agree",
    "cuda_aware",
    "decompose",
    "exchange",
    "exchange_start",
    "gather",
    "global_max",
    "global_min",
    "global_sum",
    "install_abort_hook",
    "scatter",
    "select_device",
    "world",
]
