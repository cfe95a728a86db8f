"""DSL errors at decoration, as gt4py.next 1.2.3 raises them, at a cost an import does not notice.

gt4py parses every operator and program when it is decorated, so ``with pytest.raises(DSLError):
@field_operator def f(...)`` holds there: an ``if`` on a field or on a float, ``if`` branches of
two types, tuple unpacking with too many or too few names, a module's function called inside an
operator. Parsing at every import costs: icon4py's 97 dycore and diffusion stencil modules take
0.31 s to import with every operator parsed, 0.07-0.12 s without (2-core VM).

What a decoration-time check needs is the verdict "this definition parses", and that verdict
depends on the definition's source. So, by default (``config.PARSE_AT_DECORATION`` None):

* a definition whose verdict is not on record is parsed at decoration (gt4py's behaviour: a DSL
  error is raised there); one that parses is put on record;
* a definition on record is not parsed again at decoration (it is parsed at first use, as
  before), so an import of unchanged model code parses nothing.

The record is kept across processes in the build cache directory (``decoration/``, one small
JSON file per source file, named by the SHA-256 of the file's bytes and stencilkit's version):
an edited file is a new file. A definition is named in it by qualified name, first line and the
values of its closure (a factory's operators differ by them). What the record cannot see is a
change of another module that makes a recorded definition wrong (say, an operator it calls
changed its signature): that error is then raised at first use, as without the record, with the
same message and location. ``PARSE_AT_DECORATION = True`` parses every definition at decoration
(no record), ``False`` none (errors at first use).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import config
from .._version import __version__
from ..toolchain.config import config as toolchain_config

_FOLDER = "decoration"
_lock = threading.Lock()
#: source file -> (its record file, the definitions on record, whether it changed this process)
_records: dict[str, tuple[Path | None, set[str], list[bool]]] = {}


def check_at_decoration(fn: Callable[..., Any], parse: Callable[[], object]) -> None:
    """Run ``parse`` (which raises the definition's DSL error) now, unless the definition ``fn``
    is on record as parsing (module docstring)."""
    mode = config.PARSE_AT_DECORATION
    if mode is False:
        return
    if mode:
        parse()
        return
    code = getattr(fn, "__code__", None)
    if code is None:
        parse()
        return
    entry = _entry_for(code.co_filename)
    if entry is None:  # not a file (<string>, a notebook cell): gt4py's behaviour
        parse()
        return
    name = _identity(fn, code)
    if name in entry[1]:
        return
    parse()
    with _lock:
        entry[1].add(name)
        entry[2][0] = True


def _identity(fn: Callable[..., Any], code: Any) -> str:
    parts = [getattr(fn, "__qualname__", code.co_name), str(code.co_firstlineno)]
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            parts.append("-")
            continue
        parts.append(_fingerprint(value))
    return ":".join(parts)


def _fingerprint(value: Any) -> str:
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    name = getattr(value, "value", None)  # a Dimension / FieldOffset: its name and kind
    kind = getattr(value, "kind", None)
    if isinstance(name, str):
        return f"{type(value).__name__}({name},{kind})"
    return type(value).__qualname__


def _entry_for(filename: str) -> tuple[Path | None, set[str], list[bool]] | None:
    entry = _records.get(filename)
    if entry is not None:
        return entry
    try:
        data = Path(filename).read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(data + __version__.encode()).hexdigest()[:32]
    folder = _record_dir()
    record = folder / f"{digest}.json" if folder is not None else None
    known: set[str] = set()
    if record is not None:
        try:
            loaded = json.loads(record.read_text())
            if isinstance(loaded, list):
                known = {str(x) for x in loaded}
        except (OSError, ValueError):
            pass
    entry = (record, known, [False])
    with _lock:
        _records.setdefault(filename, entry)
    return _records[filename]


_DIR: list[Path | None] = []


def _record_dir() -> Path | None:
    if not _DIR:
        cfg = toolchain_config()
        bad = "STENCILKIT_CACHE_DIR" in cfg.problems
        _DIR.append(None if bad else cfg.cache_dir / _FOLDER)
    return _DIR[0]


def flush() -> None:
    """Write the records that changed in this process (at exit; atomic, one file each; a cache
    directory that cannot be written only costs the parse next time)."""
    with _lock:
        changed = [(r, sorted(k)) for r, k, dirty in _records.values() if dirty[0] and r]
        for _, _, dirty in _records.values():
            dirty[0] = False
    for record, names in changed:
        try:
            record.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=record.parent, prefix=".decoration-")
            with os.fdopen(fd, "w") as f:
                json.dump(names, f)
            os.replace(tmp, record)
        except OSError:
            pass


def forget() -> None:
    """Forget what this process read of the records (tests change the cache directory)."""
    with _lock:
        _records.clear()
        _DIR.clear()


atexit.register(flush)
