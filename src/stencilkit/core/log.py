"""Standard-library logging for stencilkit: the logger ``stencilkit`` and its children.

Off by default: the ``stencilkit`` logger has a ``NullHandler`` and no level, so nothing is
printed unless the application configures logging (``logging.basicConfig(level=logging.INFO)``
shows stencilkit's records with everybody else's) or asks for it with one switch:

* ``STENCILKIT_LOG=info`` (or ``debug``, ``warning``, ``error``, ``off``) in the environment, or
* ``stencilkit.set_log_level("info")`` in the program,

which give the ``stencilkit`` logger that level and one handler writing to stderr.

What is logged (children of ``stencilkit``):

============================ ======= =========================================================
logger                       level   records
============================ ======= =========================================================
``stencilkit.build``         INFO    each C++/CUDA build: start, end, seconds, cache entry
``stencilkit.cache``         DEBUG   cache hits (found on disk) and misses (built)
``stencilkit.cuda.tuning``   INFO    GPU block-shape tuning of a kernel: the shape chosen
``stencilkit.toolchain``     WARNING the compiler has no OpenMP: the cpu backend runs serially
============================ ======= =========================================================

Builds and tuning taking longer than :data:`PROGRESS_AFTER_S` show a transient progress line
(``rich``) when stderr is a terminal, whatever the log level; ``STENCILKIT_LOG=off`` or a
non-terminal stderr (CI, pipes) silences it. Nothing is logged on the per-call fast path of a
compiled program: records come only from builds, loads and tuning.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

ROOT = "stencilkit"
#: Work longer than this (seconds) shows a progress line on an interactive terminal.
PROGRESS_AFTER_S = 1.0
LEVELS = {
    "off": logging.CRITICAL + 10,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}

logging.getLogger(ROOT).addHandler(logging.NullHandler())
_handler: logging.Handler | None = None
_progress_enabled = True


def get_logger(name: str) -> logging.Logger:
    """The logger ``stencilkit.<name>``."""
    return logging.getLogger(f"{ROOT}.{name}")


def set_log_level(level: str | int | None) -> None:
    """Show stencilkit's log records of ``level`` and above on stderr (``"info"``, ``"debug"``,
    ``"warning"``, ``"error"``, a ``logging`` level number), or ``"off"``/``None`` to silence them
    and the progress lines again.

    >>> stencilkit.set_log_level("info")   # builds, tuning, OpenMP fallback
    """
    global _handler, _progress_enabled
    root = logging.getLogger(ROOT)
    if _handler is not None:
        root.removeHandler(_handler)
        _handler = None
    if level is None or level == "off":
        root.setLevel(logging.NOTSET)
        _progress_enabled = level is None
        return
    if isinstance(level, str):
        if level.lower() not in LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LEVELS)}")
        level = LEVELS[level.lower()]
    _progress_enabled = True
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(
        logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s", "%H:%M:%S")
    )
    root.addHandler(_handler)
    root.setLevel(level)


def configure_from_environment() -> None:
    """Apply ``STENCILKIT_LOG`` (called once, when stencilkit is imported). Importing never
    fails: a bad value (``verbose``) warns, naming the variable, and logging stays off;
    ``stencilkit info`` lists it too."""
    import os

    raw = os.environ.get("STENCILKIT_LOG")
    value = (raw or "").strip().lower()
    if value in LEVELS:
        set_log_level(value)
    elif value:
        from .errors import warn_configuration

        warn_configuration(
            "STENCILKIT_LOG", str(raw), f"use one of {', '.join(LEVELS)}", "off (no logging)"
        )


def _interactive() -> bool:
    try:
        return _progress_enabled and sys.stderr.isatty()
    except (AttributeError, ValueError):  # stderr replaced or closed
        return False


@contextmanager
def progress(what: str) -> Iterator[None]:
    """A transient ``rich`` status line saying ``what`` if the work inside takes longer than
    :data:`PROGRESS_AFTER_S` on an interactive terminal; nothing otherwise."""
    if not _interactive():
        yield
        return
    done = threading.Event()
    shown: list[object] = []

    def show() -> None:
        if done.wait(PROGRESS_AFTER_S):
            return
        from rich.console import Console

        status = Console(stderr=True).status(f"stencilkit: {what}")
        status.start()
        shown.append(status)

    timer = threading.Thread(target=show, daemon=True)
    timer.start()
    try:
        yield
    finally:
        done.set()
        timer.join()
        for status in shown:
            status.stop()  # type: ignore[attr-defined]


class Work:
    """A piece of slow work begun with :func:`begin` and finished with :meth:`end` (for code that
    cannot be re-indented into ``with timed(...)``); it is ended when dropped, too."""

    def __init__(self, log: logging.Logger, what: str) -> None:
        self.log, self.what = log, what
        self.t0 = time.perf_counter()
        self._progress: Any = progress(what)
        self._progress.__enter__()
        log.info("%s: started", what)

    def end(self, result: str = "") -> None:
        if self._progress is None:
            return
        self._progress.__exit__(None, None, None)
        self._progress = None
        self.log.info(
            "%s: done in %.2f s%s",
            self.what,
            time.perf_counter() - self.t0,
            f" ({result})" if result else "",
        )

    def __del__(self) -> None:
        try:
            self.end("ended early")
        except Exception:
            pass


def begin(log: logging.Logger, what: str) -> Work:
    """Log the start of ``what`` and show a progress line if it takes long; ``.end()`` it."""
    return Work(log, what)


@contextmanager
def timed(log: logging.Logger, what: str) -> Iterator[None]:
    """Log ``what`` at INFO when it starts and when it ends, with the seconds it took, and show
    a progress line if it is slow (see :func:`progress`)."""
    log.info("%s: started", what)
    t0 = time.perf_counter()
    with progress(what):
        yield
    log.info("%s: done in %.2f s", what, time.perf_counter() - t0)
