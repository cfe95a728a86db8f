"""Tests of stencilkit.distributed: they run on however many ranks pytest was started on.

CI runs them under ``mpiexec -n 2``; ``mpiexec -n 4 python -m pytest tests/distributed`` locally;
the plain test run (one process) runs them on one rank. Every rank runs every test in the same
order, so collectives match; checks that fail on one rank only go through ``agree``.
"""

from __future__ import annotations

from typing import Any

import pytest

MPI = pytest.importorskip("mpi4py.MPI", reason="needs the mpi extra: pip install -e '.[mpi]'")


@pytest.fixture
def comm() -> Any:
    return MPI.COMM_WORLD


@pytest.fixture
def gpu_buffers_for(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``gpu_buffers_for(method)``, called first in a GPU test: for ``"packed"`` (CuPy buffers
    handed to MPI) on an MPI library that takes no GPU buffers, CuPy's allocations of the rest of
    the test go to managed memory, which the library can read and write from the host, and
    ``STENCILKIT_MPI_CUDA=1`` makes the exchange use that path. So the packed path (device
    packing, the stream synchronised before MPI reads, unpacking what MPI wrote) runs on every
    GPU machine; on a CUDA-aware MPI, it runs on plain device memory."""
    import cupy

    from stencilkit import distributed as dist

    previous = cupy.cuda.get_allocator()
    pool = None

    def use(method: str) -> str:
        nonlocal pool
        if method == "packed" and not dist.cuda_aware():
            monkeypatch.setenv("STENCILKIT_MPI_CUDA", "1")
            pool = cupy.cuda.MemoryPool(cupy.cuda.malloc_managed)
            cupy.cuda.set_allocator(pool.malloc)
            return "managed memory"
        return "device memory"

    yield use
    cupy.cuda.get_current_stream().synchronize()
    cupy.cuda.set_allocator(previous)
    if pool is not None:
        pool.free_all_blocks()
