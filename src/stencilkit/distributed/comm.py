"""MPI through mpi4py: the communicator, agreement on errors, abort on error, one GPU per rank.

Every check that one rank could fail alone goes through :func:`agree`: each rank says what went
wrong for it, all ranks learn every message, and all of them raise the same error naming the
ranks. A rank never waits for a partner that already gave up. An unhandled exception outside
such a check aborts the whole communicator with the message (:func:`install_abort_hook`).
"""

from __future__ import annotations

import ctypes
import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from ..core.errors import StencilError, StencilValueError
from ..core.install import install_hint


class DistributedError(StencilValueError):
    """A decomposed run cannot go on: mismatched decompositions, a halo too narrow or stale, a
    field on the wrong GPU, a rank count that cannot split the grid. The message names the
    fields and the ranks; every rank of the communicator raises it."""


_MPI: Any = None


def mpi() -> Any:
    """The ``mpi4py.MPI`` module, or a clear error saying how to install it."""
    if _MPI is not None:
        return _MPI
    return _load_mpi()


def _load_mpi() -> Any:
    global _MPI
    try:
        from mpi4py import MPI
    except ImportError as err:  # pragma: no cover - the mpi extra is installed in CI
        raise DistributedError(
            f"stencilkit.distributed needs mpi4py and an MPI library ({err})",
            hint=install_hint("mpi"),
        ) from None
    _MPI = MPI
    return MPI


def world() -> Any:
    """``MPI.COMM_WORLD``."""
    return mpi().COMM_WORLD


def agree(comm: Any, error: str | None) -> None:
    """Collective: raise :class:`DistributedError` on every rank if any rank passes an error.

    >>> agree(comm, None if ok else "field 'h' has halo 1, the program reads 2")
    """
    errors = comm.allgather(error)
    failed = [(r, e) for r, e in enumerate(errors) if e is not None]
    if not failed:
        return
    ranks = ", ".join(str(r) for r, _ in failed)
    lines = "\n".join(f"  rank {r}: {e}" for r, e in failed)
    raise DistributedError(
        f"on rank{'s' if len(failed) > 1 else ''} {ranks} of {comm.Get_size()}:\n{lines}"
    )


# --------------------------------------------------------------------------- abort on error
_HOOKED = False


def install_abort_hook() -> None:
    """Make an unhandled exception on any rank abort every rank of the job (``MPI_Abort`` on
    the world) with the exception's message, instead of leaving the others waiting in a
    collective forever. Installed by every decomposition; safe to call more than once."""
    global _HOOKED
    if _HOOKED:
        return
    _HOOKED = True
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        c = world()
        text = "".join(traceback.format_exception(kind, value, tb))
        sys.stderr.write(
            f"[rank {c.Get_rank()} of {c.Get_size()}] {text}"
            f"[rank {c.Get_rank()}] aborting all ranks\n"
        )
        sys.stderr.flush()
        if c.Get_size() > 1:
            c.Abort(1)
        previous(kind, value, tb)

    sys.excepthook = hook


@contextmanager
def abort_on_error() -> Iterator[None]:
    """``with abort_on_error(): ...``: an exception inside aborts every rank with its message."""
    try:
        yield
    except BaseException as err:
        c = world()
        detail = str(err) if isinstance(err, StencilError) else traceback.format_exc()
        sys.stderr.write(
            f"[rank {c.Get_rank()} of {c.Get_size()}] {type(err).__name__}: {detail}\n"
        )
        sys.stderr.flush()
        c.Abort(1)
        raise


# --------------------------------------------------------------------------- GPUs
def local_rank(comm: Any) -> int:
    """This rank's index among the ranks on the same host (shared-memory node)."""
    MPI = mpi()
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    try:
        return int(node.Get_rank())
    finally:
        node.Free()


def select_device(comm: Any) -> int:
    """Make GPU ``local_rank % count`` current for this rank (one GPU per rank); return its id."""
    import cupy

    n = cupy.cuda.runtime.getDeviceCount()
    if n < 1:
        raise DistributedError(f"rank {comm.Get_rank()}: no CUDA device visible")
    dev = local_rank(comm) % int(n)
    cupy.cuda.Device(dev).use()
    return dev


def _mpi_library() -> Any:
    """The MPI shared library that mpi4py loaded (it is not loaded with global symbols)."""
    mpi()
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "libmpi" in line and ".so" in line}
    except OSError:
        paths = set()
    for path in sorted(paths):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


def cuda_aware() -> bool:
    """Whether the MPI library takes GPU buffers directly (``MPIX_Query_cuda_support``).

    ``STENCILKIT_MPI_CUDA=1``/``0`` overrides the query (e.g. for an MPI whose CUDA support is
    known but not reported). Without the query function, the answer is no: halos then go
    through pinned host buffers, which works with every MPI."""
    env = os.environ.get("STENCILKIT_MPI_CUDA")
    if env is not None and env.strip():
        from ..core.env import yes_no
        from ..core.errors import ConfigurationError

        try:
            return yes_no(env)
        except ValueError as err:
            raise ConfigurationError("STENCILKIT_MPI_CUDA", env, str(err)) from None
    lib = _mpi_library()
    if lib is None:
        return False
    for name in ("MPIX_Query_cuda_support",):  # Open MPI, MPICH >= 4 (when built with CUDA)
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = ctypes.c_int
            return bool(fn())
    query = getattr(lib, "MPIX_GPU_query_support", None)  # MPICH 4.1+: (gpu_type, *is_supported)
    if query is not None:
        flag = ctypes.c_int(0)
        if query(ctypes.c_int(1), ctypes.byref(flag)) == 0:  # MPIX_GPU_SUPPORT_CUDA = 1
            return bool(flag.value)
    return False
