"""Short tracebacks for user errors: a DSL error shows the user's frames, not stencilkit's.

A :class:`~stencilkit.core.errors.DSLError` (every stencilkit user error: an undefined name in
an operator, a wrong argument, a bad configuration value) already says where in the user's
source it is, what is wrong and how to fix it. The 20-40 frames of stencilkit's own parser,
type checker and call path above it only bury that message, so an uncaught one is printed with
the frames of files inside the stencilkit package left out and a line saying how many::

    Traceback (most recent call last):
      File "model.py", line 20, in main
        run(a, out, offset_provider={})
    (24 frames inside stencilkit hidden: STENCILKIT_TRACEBACK=full shows them)
    stencilkit.core.errors.UndefinedNameError: model.py:10:16: Undeclared symbol 'undefined_name'.

``STENCILKIT_TRACEBACK=full`` (or ``STENCILKIT_LOG=debug``) prints the whole traceback, as does
any exception that is not a user error (a bug in stencilkit shows everything, for its report).
It works through :data:`sys.excepthook` (scripts, ``python -m``) and, where IPython or Jupyter
runs, IPython's custom exception handler. It is installed when stencilkit is imported, only
where nobody else replaced the hook; :func:`uninstall` restores the previous one.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

#: The stencilkit package directory: frames of files under it are the library's.
PACKAGE = str(Path(__file__).resolve().parents[1]) + os.sep
MODES = ("short", "full")

_previous: Any = None


def full_tracebacks() -> bool:
    """Whether user errors show every frame: STENCILKIT_TRACEBACK=full or STENCILKIT_LOG=debug."""
    if os.environ.get("STENCILKIT_LOG", "").strip().lower() == "debug":
        return True
    return os.environ.get("STENCILKIT_TRACEBACK", "short").strip().lower() == "full"


def is_user_error(err: BaseException) -> bool:
    """A DSL error a user caused (not a failed C++/CUDA build, whose frames help a bug report)."""
    from .errors import BuildError, DSLError

    return isinstance(err, DSLError) and not isinstance(err, BuildError)


def _library(frame: traceback.FrameSummary) -> bool:
    try:
        return str(Path(frame.filename).resolve()).startswith(PACKAGE)
    except (OSError, ValueError):
        return False


def short_traceback(err: BaseException) -> str:
    """``err`` printed with the frames inside stencilkit left out (and counted)."""
    frames = traceback.extract_tb(err.__traceback__)
    user = [f for f in frames if not _library(f)]
    hidden = len(frames) - len(user)
    lines = []
    if user:
        lines.append("Traceback (most recent call last):\n")
        lines.extend(traceback.format_list(user))
    if hidden:
        lines.append(
            f"({hidden} frame{'s' if hidden != 1 else ''} inside stencilkit hidden: "
            "STENCILKIT_TRACEBACK=full shows them)\n"
        )
    lines.extend(traceback.format_exception_only(type(err), err))
    return "".join(lines)


def _mode_problem() -> str:
    value = os.environ.get("STENCILKIT_TRACEBACK")
    if value is None or value.strip().lower() in MODES:
        return ""
    return (
        f"(the environment variable STENCILKIT_TRACEBACK={value!r} is not valid: use one of "
        f"{', '.join(MODES)}; printing the short form)\n"
    )


def _hook(kind: type[BaseException], err: BaseException, tb: TracebackType | None) -> None:
    if is_user_error(err) and not full_tracebacks():
        sys.stderr.write(short_traceback(err.with_traceback(tb)) + _mode_problem())
        return
    (_previous or sys.__excepthook__)(kind, err, tb)


def _ipython_handler(
    shell: Any, kind: Any, err: BaseException, tb: Any, tb_offset: Any = None
) -> Any:
    if full_tracebacks():
        return shell.showtraceback((kind, err, tb), tb_offset=tb_offset)
    sys.stderr.write(short_traceback(err.with_traceback(tb)))
    return None


def install() -> None:
    """Print uncaught user errors short (called when stencilkit is imported). Leaves a hook
    that somebody else installed alone; STENCILKIT_TRACEBACK=full turns the short form off."""
    global _previous
    if sys.excepthook is sys.__excepthook__:
        _previous = sys.excepthook
        sys.excepthook = _hook
    shell = _ipython()
    if shell is not None:
        from .errors import DSLError

        shell.set_custom_exc((DSLError,), _ipython_handler)


def uninstall() -> None:
    """Restore the hook that was there before :func:`install`."""
    global _previous
    if sys.excepthook is _hook:
        sys.excepthook = _previous or sys.__excepthook__
        _previous = None
    shell = _ipython()
    if shell is not None:
        shell.set_custom_exc((), None)


def _ipython() -> Any:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    try:
        return ipython.get_ipython()
    except Exception:
        return None
