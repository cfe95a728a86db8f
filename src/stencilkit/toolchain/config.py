"""Configuration read once from the environment into a frozen object (environment overrides only).

Every variable has one parser in :data:`VARIABLES`. A bad value does not make the whole
configuration unusable: the variable keeps its default in :class:`Config`, the problem is kept in
``Config.problems``, and only the code that needs that variable raises, with
:func:`require`, a :class:`~stencilkit.core.errors.ConfigurationError` naming it. So
``STENCILKIT_CUDA_COMPILER=nvvc`` stops a GPU build with a message about that variable, while the
cpu backend and ``stencilkit info`` keep working (``info`` lists the problem).
``docs/configuration.md`` documents every variable.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import field
from functools import cache
from pathlib import Path
from typing import Any

from ..core.env import yes_no
from ..core.errors import ConfigurationError
from ..core.records import record

SANITIZERS = ("address", "undefined", "leak", "thread")
CUDA_COMPILERS = ("nvrtc", "nvcc")
LOG_LEVELS = ("off", "error", "warning", "info", "debug")
#: When compiled backends check as_offset reads before running: on a plan's first call only
#: (later calls guard each read in the kernel) or before every call.
OFFSET_CHECKS = ("first", "every")
#: How the gpu backend's tune stage treats a kernel's z-chunk variants on a plan's first call:
#: build them in the background and search once built (the first call runs the plain kernel
#: with a searched block shape), or build and search them before the first call.
TUNE_MODES = ("background", "first-call")

#: The least work (points x operations per point) for which a kernel of the cpu backend runs
#: on several threads; below it, one thread. Measured with `stencilkit bench --cpu --only
#: threads` on the 2-core development VM (docs/configuration.md): below 10^6 operation-points,
#: threads lost to serial at 18 of 20 sizes over four kernel shapes; they first won by 10% at
#: 0.36-7 x 10^6. Serial code does 1-2 x 10^10 operation-points a second there, so 10^6 is
#: 50-100 us of work, several times the cost of waking and joining a sleeping thread.
PARALLEL_MIN_WORK = 1_000_000

#: Plans (one per argument signature: shapes, strides, domain-bound scalars, tables) kept per
#: program and backend; the least recently used is dropped beyond it. A time loop calls one or
#: two signatures; a loop counter used in a domain bound makes one per value.
PLAN_CACHE_SIZE = 64

#: The build cache's size limit by default (bytes). A cpu entry is about 0.1 MB (69 entries of
#: a development cache took 7 MB), so 2 GiB holds well over ten thousand programs while staying
#: inside the home or scratch quotas of HPC systems. ``STENCILKIT_CACHE_MAX_SIZE`` or
#: ``stencilkit.config.BUILD_CACHE_MAX_SIZE`` change it; ``0`` or ``unlimited`` turns eviction off.
CACHE_MAX_SIZE = 2 * 1024**3

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1000,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1000**3,
    "gib": 1024**3,
    "t": 1024**4,
    "tb": 1000**4,
    "tib": 1024**4,
}


def parse_size(value: str) -> int:
    """A size in bytes from ``"2GiB"``, ``"500M"``, ``"1.5 GB"``, ``"1000000"``; ``0``, ``"unlimited"``
    and ``"none"`` are 0 (no limit)."""
    import re

    v = value.strip().lower()
    if v in ("unlimited", "none", "off"):
        return 0
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]*)", v)
    if match is None or match.group(2) not in _SIZE_UNITS:
        raise ValueError(
            "expected a size such as 2GiB, 500MB, 1000000 (bytes), or 0/unlimited for no limit"
        )
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2)])


@record
class Config:
    """The process's configuration, read from the environment (see :func:`config`)."""

    cache_dir: Path
    cxx: str | None
    cxxflags: tuple[str, ...]
    cuda_compiler: str  # "nvrtc" or "nvcc"
    cuda_home: str | None
    keep_going_without_openmp: bool
    sanitize: tuple[
        str, ...
    ] = ()  # e.g. ("address", "undefined"): sanitizer builds of the cpu backend
    num_threads: int = 0  # 0: OpenMP's default (OMP_NUM_THREADS, else one per core)
    parallel_min_work: int = PARALLEL_MIN_WORK
    log: str = "off"
    parse_at_decoration: bool = False
    neighbour_temporaries: bool = True
    cudaflags: tuple[str, ...] = ()  # added to every NVRTC/nvcc build, e.g. ("--fmad=false",)
    #: the streaming-store z-chunk variants compute every point of a chunk before storing any
    #: (codegen.py, ``Variant``; on the H200 the tuned Laplacian 0.617 -> 0.602 ms, RESULTS.md)
    cuda_loads_first: bool = True
    plan_cache_size: int = PLAN_CACHE_SIZE  # argument signatures kept per program (LRU)
    offset_checks: str = "first"  # as_offset reads checked before the first call, or every call
    tune: str = "background"  # gpu variants built in the background, or before the first call
    cache_max_size: int = CACHE_MAX_SIZE  # bytes; 0: no limit (least recently used evicted)
    #: Variables whose value was refused: name -> the error (the field kept its default).
    problems: Mapping[str, ConfigurationError] = field(default_factory=dict)


def _cache_dir(value: str) -> Path:
    path = Path(value).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path} exists and is not a directory")
    return path


def _choice(options: tuple[str, ...]) -> Callable[[str], str]:
    def parse(value: str) -> str:
        v = value.strip().lower()
        if v not in options:
            raise ValueError(f"use one of {', '.join(options)}")
        return v

    return parse


def _sanitize(value: str) -> tuple[str, ...]:
    names = tuple(s.strip().lower() for s in value.split(",") if s.strip())
    unknown = [s for s in names if s not in SANITIZERS]
    if unknown:
        raise ValueError(
            f"unknown sanitizer(s) {', '.join(unknown)}; use a comma-separated list of"
            f" {', '.join(SANITIZERS)}"
        )
    return names


def _count(least: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        try:
            n = int(value.strip())
        except ValueError:
            raise ValueError(f"expected a whole number >= {least}") from None
        if n < least:
            raise ValueError(f"expected a whole number >= {least}")
        return n

    return parse


#: variable -> (Config field, parser). Variables not listed (CXX, CUDA_HOME) are taken as they are.
VARIABLES: dict[str, tuple[str, Callable[[str], Any]]] = {
    "STENCILKIT_CACHE_DIR": ("cache_dir", _cache_dir),
    "STENCILKIT_CXXFLAGS": ("cxxflags", lambda v: tuple(v.split())),
    "STENCILKIT_CUDA_COMPILER": ("cuda_compiler", _choice(CUDA_COMPILERS)),
    "STENCILKIT_CUDAFLAGS": ("cudaflags", lambda v: tuple(v.split())),
    "STENCILKIT_CUDA_LOADS_FIRST": ("cuda_loads_first", yes_no),
    "STENCILKIT_SANITIZE": ("sanitize", _sanitize),
    "STENCILKIT_NUM_THREADS": ("num_threads", _count(1)),
    "STENCILKIT_PARALLEL_MIN_WORK": ("parallel_min_work", _count(0)),
    "STENCILKIT_LOG": ("log", _choice(LOG_LEVELS)),
    "STENCILKIT_PLAN_CACHE_SIZE": ("plan_cache_size", _count(1)),
    "STENCILKIT_OFFSET_CHECKS": ("offset_checks", _choice(OFFSET_CHECKS)),
    "STENCILKIT_TUNE": ("tune", _choice(TUNE_MODES)),
    "STENCILKIT_CACHE_MAX_SIZE": ("cache_max_size", parse_size),
    # read by stencilkit.config at import (stencilkit.config.PARSE_AT_DECORATION); listed here so
    # that `stencilkit info` reports a bad value
    "STENCILKIT_PARSE_AT_DECORATION": ("parse_at_decoration", yes_no),
    "STENCILKIT_NEIGHBOUR_TEMPORARIES": ("neighbour_temporaries", yes_no),
}


def _default_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("stencilkit"))


@cache
def config() -> Config:
    """The configuration of this process (read once; :func:`reset_config` forgets it).

    ``STENCILKIT_CACHE_DIR``, ``CXX``, ``STENCILKIT_CXXFLAGS``, ``STENCILKIT_CUDA_COMPILER``
    (nvrtc|nvcc), ``STENCILKIT_CUDAFLAGS``, ``STENCILKIT_CUDA_LOADS_FIRST`` (yes|no), ``CUDA_HOME``/``CUDA_PATH``, ``STENCILKIT_SANITIZE`` (comma-separated: address,
    undefined, leak, thread), ``STENCILKIT_NUM_THREADS``, ``STENCILKIT_PARALLEL_MIN_WORK``,
    ``STENCILKIT_LOG`` (off|error|warning|info|debug), ``STENCILKIT_PLAN_CACHE_SIZE``, ``STENCILKIT_OFFSET_CHECKS`` (first|every), ``STENCILKIT_TUNE`` (background|first-call), ``STENCILKIT_CACHE_MAX_SIZE`` (e.g. 2GiB, 0: no limit). Never raises: see :func:`require`."""
    env = os.environ
    values: dict[str, Any] = {
        "cxx": env.get("CXX") or None,
        "cuda_home": env.get("CUDA_HOME") or env.get("CUDA_PATH") or None,
        "keep_going_without_openmp": True,
    }
    problems: dict[str, ConfigurationError] = {}
    for name, (attr, parse) in VARIABLES.items():
        if name not in env:
            continue
        if name == "STENCILKIT_CACHE_DIR" and not env[name].strip():
            continue  # set but empty: unset (the XDG rule for XDG_CACHE_HOME), not the cwd
        try:
            values[attr] = parse(env[name])
        except ValueError as err:
            problems[name] = ConfigurationError(name, env[name], str(err))
    if "cache_dir" not in values:
        values["cache_dir"] = _default_cache_dir()
    values.setdefault("cxxflags", ())
    values.setdefault("cuda_compiler", "nvrtc")
    return Config(**values, problems=problems)


def require(*variables: str) -> Config:
    """The configuration, after checking that ``variables`` hold valid values (else raises the
    :class:`ConfigurationError` of the first bad one)."""
    cfg = config()
    for name in variables:
        if name in cfg.problems:
            raise cfg.problems[name]
    return cfg


def reset_config() -> None:
    """Forget the cached configuration (tests change the environment)."""
    config.cache_clear()
