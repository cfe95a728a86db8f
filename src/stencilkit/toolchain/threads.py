"""CPU threads of the cpu backend: how many, and from how much work on.

Every generated C++ library reads two numbers from one block of memory this module owns (see
``backends/cpp/omp.py``): the thread count and the least work for a kernel to run in parallel.
The block is handed to each library when it loads, so :func:`set_num_threads` acts at once on
every program, already built or not, without a rebuild.

Defaults: ``STENCILKIT_NUM_THREADS`` (else OpenMP's own default: ``OMP_NUM_THREADS``, else one
thread per core; one thread on a machine of fewer than ``MIN_CPUS_FOR_THREADS`` usable CPUs) and ``STENCILKIT_PARALLEL_MIN_WORK``. Idle threads sleep rather than spin
(OpenMP's ``passive`` wait policy; see docs/configuration.md for the measurements) unless the
user set ``OMP_WAIT_POLICY``: OpenMP has no call for the wait policy and libgomp reads it only
from the C environment, once, when it loads, so the first cpu library is loaded with
``OMP_WAIT_POLICY=passive`` in the C environment and the variable is removed again right
after. ``os.environ`` is never changed and processes started later do not inherit it.

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
_chose_passive = False  # libgomp was loaded with stencilkit's passive policy
_chosen_by_call = False  # set_num_threads(n) chose the count
_gomp_was_loaded = False  # libgomp was in the process before the first cpu library (its policy)


def wait_policy() -> str:
    """``OMP_WAIT_POLICY`` of the cpu backend's threads, and who chose it."""
    value = os.environ.get("OMP_WAIT_POLICY")
    if value is not None:
        return f"{value} (set by the user)"
    if _chose_passive:
        return "passive (stencilkit's default, given to OpenMP when the first cpu program loaded)"
    if _gomp_was_loaded:
        return "OpenMP's default (another library loaded OpenMP first)"
    return "passive (stencilkit's default, given to OpenMP when the first cpu program loads)"


def threads_source() -> str:
    """Who chose the thread count of the cpu backend, in words (``stencilkit info``)."""
    if _chosen_by_call:
        return "set_num_threads()"
    if require(*_VARIABLES).num_threads:
        return "STENCILKIT_NUM_THREADS"
    if omp_num_threads():
        return "OMP_NUM_THREADS"
    cpus = usable_cpus()
    if cpus < MIN_CPUS_FOR_THREADS:
        return (
            f"stencilkit's default: one thread below {MIN_CPUS_FOR_THREADS} usable CPUs, "
            f"{cpus} here; STENCILKIT_NUM_THREADS or set_num_threads() choose more"
        )
    return "OpenMP's default: one per usable CPU"


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
    global _first_load
    if _first_load:
        check_wait_policy()
    block = _block()
    with _lock:
        first, _first_load = _first_load, False
        lib = _load_passive(path) if first else ctypes.CDLL(str(path))
    bind = getattr(lib, "sk_bind_settings", None)
    if bind is not None:  # libraries of older stencilkit versions have no settings
        bind.argtypes = [ctypes.c_void_p]
        bind.restype = None
        bind(ctypes.addressof(block))
    return lib


def _load_passive(path: Path) -> ctypes.CDLL:
    """Load the first cpu library with OpenMP's passive wait policy, unless the user chose one.

    libgomp reads OMP_WAIT_POLICY from the C environment in its constructor, when the first
    library that needs it loads, and has no call to set it later. The variable is put into the
    C environment (``setenv``, not ``os.environ``) for that load only and removed after it."""
    global _chose_passive, _gomp_was_loaded
    if "OMP_WAIT_POLICY" in os.environ or os.environ.get("GOMP_SPINCOUNT"):
        return ctypes.CDLL(str(path))
    if _gomp_loaded():
        _gomp_was_loaded = True
        return ctypes.CDLL(str(path))
    libc = ctypes.CDLL(None)
    libc.setenv.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    libc.unsetenv.argtypes = [ctypes.c_char_p]
    libc.setenv(b"OMP_WAIT_POLICY", b"passive", 0)
    try:
        lib = ctypes.CDLL(str(path))
    finally:
        libc.unsetenv(b"OMP_WAIT_POLICY")
    _chose_passive = _gomp_loaded()
    if _chose_passive:
        _log.debug("OpenMP loaded with the passive wait policy: idle threads sleep")
    return lib


def _gomp_loaded() -> bool:
    """Whether libgomp is already in the process (its environment has been read)."""
    try:
        ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD)
    except OSError:
        return False
    return True


def set_num_threads(n: int | None) -> None:
    """Run the cpu backend's kernels on ``n`` threads (``None``: OpenMP's default again).

    Applies at once to every program, built or not. Small kernels still run on one thread
    (see :func:`set_parallel_min_work`).

    >>> stencilkit.set_num_threads(1)   # serial: e.g. one MPI rank per core
    """
    global _chosen_by_call
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
    _chosen_by_call = n is not None
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
