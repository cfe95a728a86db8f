"""Process-wide settings, as module variables in the style of gt4py.next's ``config`` module.

Set them before decorating (``stencilkit.config.PARSE_AT_DECORATION = True``); environment
variables give the defaults. Build settings (compilers, cache directory) are read from the
environment by ``stencilkit.toolchain.config``; the gt4py names below that concern gt4py's own
build system are accepted and have no effect.
"""

from __future__ import annotations

import enum
import os
from typing import Any

from .core.env import YES, yes_no
from .core.errors import warn_configuration
from .toolchain.cache import register_limit_source


def _flag(name: str, default: bool) -> bool:
    """A yes/no variable. Read at import, where an error would make stencilkit unusable: a value
    that is neither warns, naming the variable, and keeps the default (``stencilkit info`` lists
    the problem for the ``STENCILKIT_*`` ones)."""
    value = os.environ.get(name)
    if value is None:
        return default
    if name.startswith("GT4PY_"):  # gt4py's own reading: anything but a yes is no
        return value.strip().lower() in YES
    try:
        return yes_no(value)
    except ValueError as err:
        warn_configuration(name, value, str(err), "yes" if default else "no")
        return default


def _one_of(name: str, options: tuple[str, ...], default: str) -> str:
    """A variable of gt4py's with a fixed set of values (accepted, no effect here)."""
    value = os.environ.get(name)
    if value is None:
        return default
    if value.strip().lower() not in options:
        warn_configuration(name, value, f"use one of {', '.join(options)}", repr(default))
        return default
    return value.strip().lower()


def _level(name: str) -> int:
    value = os.environ.get(name, "0")
    if not value.strip().isdigit():
        warn_configuration(name, value, "expected a whole number >= 0", "0")
        return 0
    return int(value)


def _tri_state(name: str) -> bool | None:
    """A yes/no variable whose absence means "the default" (None)."""
    if os.environ.get(name) is None:
        return None
    return _flag(name, False) if os.environ[name].strip() else None


#: When operators and programs are parsed (their DSL errors raised): ``None``, the default, at
#: decoration unless the definition is on record as parsing (a record across processes, so that
#: importing unchanged model code parses nothing: ``stencilkit/next/decoration.py``), i.e. gt4py's
#: errors at decoration at the cost of a lazy import; ``True`` every definition at decoration;
#: ``False`` none (at first use: a call, ``.compile()``, ``.ir_text()``).
PARSE_AT_DECORATION: bool | None = _tri_state("STENCILKIT_PARSE_AT_DECORATION")

#: Compute a value that a program statement reads at several neighbours of each point (ICON's
#: vorticity at vertices, read from edges through E2V) once per point of its own location, into
#: a temporary, instead of at every reading point (``ir/neighbour_values.py``). Read when a
#: program is parsed.
NEIGHBOUR_TEMPORARIES: bool = _flag("STENCILKIT_NEIGHBOUR_TEMPORARIES", True)

#: The backend of ``@field_operator``, ``@scan_operator`` and ``@program`` without ``backend=``,
#: read at decoration; ``None`` is embedded. gt4py's spelling,
#: ``gt4py.next.ffront.decorator.DEFAULT_BACKEND = gtx.cpu``, reads and sets this one.
DEFAULT_BACKEND: Any = None


class BuildCacheLifetime(enum.Enum):
    """gt4py.next's ``config.BuildCacheLifetime`` (the type of ``BUILD_CACHE_LIFETIME``)."""

    SESSION = 1
    PERSISTENT = 2


class CMakeBuildType(enum.Enum):
    """gt4py.next's ``config.CMakeBuildType`` (the type of ``CMAKE_BUILD_TYPE``)."""

    DEBUG = "Debug"
    RELEASE = "Release"
    REL_WITH_DEB_INFO = "RelWithDebInfo"
    MIN_SIZE_REL = "MinSizeRel"


#: gt4py.next names, accepted for compatibility.
DEBUG: bool = _flag("GT4PY_DEBUG", False)
VERBOSE_EXCEPTIONS: bool = _flag("GT4PY_VERBOSE_EXCEPTIONS", DEBUG)
BUILD_CACHE_LIFETIME: BuildCacheLifetime = BuildCacheLifetime[
    _one_of("GT4PY_BUILD_CACHE_LIFETIME", ("persistent", "session"), "persistent").upper()
]
BUILD_CACHE_DIR: str | None = os.environ.get("STENCILKIT_CACHE_DIR", "").strip() or None
#: The build cache's size limit: bytes (an int) or a size such as ``"500MiB"``; 0 for no limit;
#: ``None`` (the default) takes ``STENCILKIT_CACHE_MAX_SIZE``, else 2 GiB. Least recently used
#: entries are evicted after a build that takes the cache over it.
BUILD_CACHE_MAX_SIZE: int | str | None = None
CMAKE_BUILD_TYPE: CMakeBuildType = CMakeBuildType[
    _one_of(
        "GT4PY_CMAKE_BUILD_TYPE",
        ("debug", "release", "min_size_rel", "rel_with_deb_info"),
        "release",
    ).upper()
]
#: gt4py.next's metrics level (``stencilkit.instrumentation.metrics``): 0 collects nothing.
COLLECT_METRICS_LEVEL: int = _level("GT4PY_COLLECT_METRICS_LEVEL")
UNSTRUCTURED_HORIZONTAL_HAS_UNIT_STRIDE: bool = _flag(
    "GT4PY_UNSTRUCTURED_HORIZONTAL_HAS_UNIT_STRIDE", False
)

# the build cache reads BUILD_CACHE_MAX_SIZE here when it evicts (an assignment after import
# counts); the toolchain floor does not import this module
register_limit_source(lambda: BUILD_CACHE_MAX_SIZE)
