"""Short tracebacks for user errors, cut at the API boundary: the user's frames, not stencilkit's.

A :class:`~stencilkit.core.errors.DSLError` (every stencilkit user error: an undefined name in
an operator, a wrong argument, a bad configuration value) already says where in the user's
source it is, what is wrong and how to fix it. The 20-40 frames of stencilkit's own parser,
type checker and call path above it only bury that message, so when one leaves stencilkit's
public entry points (the decorators, a program's or stencil's call, ``compile``, the field
constructors) the frames of files inside the stencilkit package are taken out of its
traceback, and a note says how many::

    Traceback (most recent call last):
      File "model.py", line 20, in main
        run(a, out, offset_provider={})
    stencilkit.core.errors.UndefinedNameError: model.py:10:16: Undeclared symbol 'undefined_name'.
    (24 frames inside stencilkit hidden: STENCILKIT_TRACEBACK=full shows them)

This is the exception itself, as every handler sees it (Python's own printing, IPython and
Jupyter, pytest, a ``sys.excepthook`` of the user's): nothing of the interpreter's is replaced,
and importing stencilkit changes no global state (JAX filters its tracebacks the same way).
``STENCILKIT_TRACEBACK=full`` (or ``STENCILKIT_LOG=debug``) keeps every frame, as does any
exception that is not a user error (a bug in stencilkit shows everything, for its report).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from .errors import BuildError, DSLError

#: The stencilkit package directory: frames of files under it are the library's.
PACKAGE = str(Path(__file__).resolve().parents[1]) + os.sep
MODES = ("short", "full")

F = TypeVar("F", bound=Callable[..., Any])


def full_tracebacks() -> bool:
    """Whether user errors show every frame: STENCILKIT_TRACEBACK=full or STENCILKIT_LOG=debug."""
    if os.environ.get("STENCILKIT_LOG", "").strip().lower() == "debug":
        return True
    return os.environ.get("STENCILKIT_TRACEBACK", "short").strip().lower() == "full"


def is_user_error(err: BaseException) -> bool:
    """A DSL error a user caused (not a failed C++/CUDA build, whose frames help a bug report)."""
    return isinstance(err, DSLError) and not isinstance(err, BuildError)


@functools.cache
def _library_file(filename: str) -> bool:
    try:
        return str(Path(filename).resolve()).startswith(PACKAGE)
    except (OSError, ValueError):
        return False


def _user_frames(tb: TracebackType | None) -> tuple[TracebackType | None, int]:
    """``tb`` without the entries of stencilkit's files (a new chain), and how many went."""
    kept: list[TracebackType] = []
    hidden = 0
    while tb is not None:
        if _library_file(tb.tb_frame.f_code.co_filename):
            hidden += 1
        else:
            kept.append(tb)
        tb = tb.tb_next
    head: TracebackType | None = None
    for entry in reversed(kept):
        head = TracebackType(head, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return head, hidden


def shorten(err: BaseException) -> None:
    """Take stencilkit's frames out of a user error's traceback, in place (called where it
    leaves an entry point; its caller then re-raises it with a bare ``raise``, which adds no
    frame of its own). Other exceptions, and every one under STENCILKIT_TRACEBACK=full, are
    left as they are. Safe to call again on the way out of nested entry points."""
    if not is_user_error(err) or full_tracebacks():
        return
    tb, hidden = _user_frames(err.__traceback__)
    if not hidden:
        return
    err.with_traceback(tb)
    total = getattr(err, "_stencilkit_hidden", 0) + hidden
    notes: list[str] = getattr(err, "__notes__", [])
    old = getattr(err, "_stencilkit_note", None)
    if old is not None and old in notes:
        notes.remove(old)
    note = (
        f"({total} frame{'s' if total != 1 else ''} inside stencilkit hidden: "
        "STENCILKIT_TRACEBACK=full shows them)" + _mode_problem()
    )
    err.add_note(note)
    err._stencilkit_hidden = total  # type: ignore[attr-defined]
    err._stencilkit_note = note  # type: ignore[attr-defined]


def api_boundary(fn: F) -> F:
    """Decorate a public entry point: a user error leaving it has stencilkit's frames taken
    out of its traceback (:func:`shorten`). Costs nothing until an exception passes."""

    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DSLError as err:
            shorten(err)
            raise

    return entry  # type: ignore[return-value]


def _mode_problem() -> str:
    value = os.environ.get("STENCILKIT_TRACEBACK")
    if value is None or value.strip().lower() in MODES:
        return ""
    return (
        f"\n(the environment variable STENCILKIT_TRACEBACK={value!r} is not valid: use one of "
        f"{', '.join(MODES)}; printing the short form)"
    )
