"""CPU threads of the cpu backend: how many, and from how much work on.

Every generated C++ library reads two numbers from one block of memory this module owns (see
``backends/cpp/omp.py``): the thread count and the least work for a kernel to run in parallel.
The block is handed to each library when it loads, so :func:`set_num_threads` acts at once on
every program, already built or not, without a rebuild.

Defaults: ``STENCILKIT_NUM_THREADS`` (else OpenMP's own default: ``OMP_NUM_THREADS``, else one
thread per core; one thread on a machine of fewer than ``MIN_CPUS_FOR_THREADS`` usable CPUs) and ``STENCILKIT_PARALLEL_MIN_WORK``. Before the first library loads, and only
if it is not set then, ``OMP_WAIT_POLICY`` is set to ``passive`` (idle threads sleep rather
than spin; see docs/configuration.md for the measurements).

Fork: libgomp's thread pool belongs to the process that started it, and a child made by
``os.fork()`` (multiprocessing's default start method on Linux) that starts a parallel region
hangs. So a child forked after any cpu kernel ran in parallel runs every kernel on one thread,
and refuses :func:`set_num_threads` with more; a child forked before, or a spawned process,
has its threads as usual.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..core.errors import ConfigurationError, StencilValueError
from ..core.log import get_logger
from .config import require

_log = get_logger("toolchain")

_VARIABLES = ("STENCILKIT_NUM_THREADS", "STENCILKIT_PARALLEL_MIN_WORK")
#: [0] threads (0: OpenMP's default), [1] least work (points x operations) to go parallel,
#: [2] 1 once a kernel ran in parallel (written by the generated code, backends/cpp/omp.py).
_settings: Any = None
_forked_after_parallel = False  # this process is a fork of one whose OpenMP pool was started
_first_load = True
_lock = threading.Lock()
_chose_passive = False  # stencilkit set OMP_WAIT_POLICY (the user had not)


def wait_policy() -> str:
    """``OMP_WAIT_POLICY`` of the cpu backend's threads, and who chose it."""
    value = os.environ.get("OMP_WAIT_POLICY")
    if value is None:
        return "passive (stencilkit's default, set when the first cpu program loads)"
    return "passive (stencilkit's default)" if _chose_passive else f"{value} (set by the user)"


def _block() -> Any:
    global _settings
    if _settings is None:
        with _lock:  # one block for the process, also when threads build programs at once (aot)
            if _settings is None:
                cfg = require(*_VARIABLES)
                _settings = (ctypes.c_int64 * 3)(
                    cfg.num_threads or default_threads(), cfg.parallel_min_work, 0
                )
    return _settings


#: Below this many usable CPUs the default is one thread: on the 2-vCPU machines of the
#: development VM and CI, threads lost to serial at every size of three of four kernel shapes
#: (`stencilkit bench --cpu --only threads`, 2026-12-02: the demo step 128x128 ran 0.139 ms on
#: 2 threads above the work threshold against 0.066 ms on one; docs/configuration.md).
MIN_CPUS_FOR_THREADS = 4


def default_threads() -> int:
    """The thread count when neither STENCILKIT_NUM_THREADS nor set_num_threads chose one: 0
    (OpenMP's default: OMP_NUM_THREADS, else one per CPU) where at least
    ``MIN_CPUS_FOR_THREADS`` CPUs are usable or OMP_NUM_THREADS is set, else 1."""
    if omp_num_threads():
        return 0
    return 0 if usable_cpus() >= MIN_CPUS_FOR_THREADS else 1


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _after_fork_in_child() -> None:
    """A forked child of a process whose kernels ran in parallel: one thread from now on."""
    global _forked_after_parallel, _lock
    _lock = threading.Lock()  # another thread of the parent may have held it at the fork
    if _settings is not None and _settings[2]:
        _forked_after_parallel = True
        _settings[0] = 1
        _log.info(
            "forked after OpenMP ran: cpu kernels run on one thread in this process"
            " (libgomp's thread pool does not survive fork)"
        )


os.register_at_fork(after_in_child=_after_fork_in_child)


def load_library(path: Path) -> ctypes.CDLL:
    """``ctypes.CDLL(path)`` of a generated C++ library, bound to the thread settings."""
    global _first_load, _chose_passive
    if _first_load:
        check_wait_policy()
    block = _block()
    with _lock:
        # libgomp reads its environment once, when the first library that needs it loads.
        if _first_load and "OMP_WAIT_POLICY" not in os.environ:
            os.environ["OMP_WAIT_POLICY"] = "passive"
            _chose_passive = True
            _log.debug("OMP_WAIT_POLICY=passive (unset by the user): idle OpenMP threads sleep")
        _first_load = False
    lib = ctypes.CDLL(str(path))
    bind = getattr(lib, "sk_bind_settings", None)
    if bind is not None:  # libraries of older stencilkit versions have no settings
        bind.argtypes = [ctypes.c_void_p]
        bind.restype = None
        bind(ctypes.addressof(block))
    return lib


def set_num_threads(n: int | None) -> None:
    """Run the cpu backend's kernels on ``n`` threads (``None``: OpenMP's default again).

    Applies at once to every program, built or not. Small kernels still run on one thread
    (see :func:`set_parallel_min_work`).

    >>> stencilkit.set_num_threads(1)   # serial: e.g. one MPI rank per core
    """
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise ValueError(f"set_num_threads() takes a whole number >= 1 or None, not {n!r}")
    if _forked_after_parallel:
        if n != 1:
            raise StencilValueError(
                f"set_num_threads({n!r}) in a process forked after the cpu backend ran OpenMP"
                " threads: libgomp's thread pool does not survive fork, and a parallel kernel"
                " would hang; this process runs its kernels on one thread",
                hint="start worker processes with multiprocessing.get_context('spawn') (or"
                " 'forkserver') to give them threads of their own",
            )
        return
    _block()[0] = n or default_threads()


def get_num_threads() -> int:
    """The number of threads the cpu backend's parallel kernels use."""
    n = int(_block()[0])
    return n if n > 0 else _openmp_default()


def set_parallel_min_work(work: int) -> None:
    """Kernels with fewer than ``work`` operation-points (points x operations per point) run on
    one thread; 0 runs every kernel in parallel. Default ``STENCILKIT_PARALLEL_MIN_WORK``."""
    if not isinstance(work, int) or isinstance(work, bool) or work < 0:
        raise ValueError(f"set_parallel_min_work() takes a whole number >= 0, not {work!r}")
    _block()[1] = work


def get_parallel_min_work() -> int:
    """The least work (points x operations) for which a cpu kernel runs on several threads (see
    :func:`set_parallel_min_work`)."""
    return int(_block()[1])


@contextmanager
def threads(n: int | None, min_work: int | None = None) -> Iterator[None]:
    """Within the block, ``n`` threads (and, if given, that ``min_work``); restored after.

    >>> with stencilkit.threads(1):
    ...     step(state, offset_provider={})
    """
    block = _block()
    saved = (int(block[0]), int(block[1]))
    try:
        set_num_threads(n)
        if min_work is not None:
            set_parallel_min_work(min_work)
        yield
    finally:
        if not _forked_after_parallel:  # forked inside the block: the child stays serial
            block[0] = saved[0]
        block[1] = saved[1]


def _openmp_default() -> int:
    value = omp_num_threads()
    return value if value else usable_cpus()


def omp_num_threads() -> int:
    """OMP_NUM_THREADS's first level (``"4"``, ``"4,2"``), 0 where unset; a value OpenMP would
    not take is a :class:`ConfigurationError` naming it."""
    raw = os.environ.get("OMP_NUM_THREADS", "")
    first = raw.split(",")[0].strip()
    if not raw.strip():
        return 0
    if not first.isdigit() or int(first) < 1:
        raise ConfigurationError(
            "OMP_NUM_THREADS", raw, "expected a whole number >= 1 (or a list: 4,2)"
        )
    return int(first)


def check_wait_policy() -> None:
    """A user's OMP_WAIT_POLICY must be one OpenMP knows (libgomp ignores others silently)."""
    value = os.environ.get("OMP_WAIT_POLICY")
    if value is not None and value.strip().lower() not in ("active", "passive"):
        raise ConfigurationError("OMP_WAIT_POLICY", value, "use active or passive")
