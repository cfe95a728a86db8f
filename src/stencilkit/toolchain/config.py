"""Configuration read once from the environment into a frozen object (environment overrides only)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SANITIZERS = ("address", "undefined", "leak", "thread")


@dataclass(frozen=True, slots=True)
class Config:
    cache_dir: Path
    cxx: str | None
    cxxflags: tuple[str, ...]
    cuda_compiler: str  # "nvrtc" or "nvcc"
    cuda_home: str | None
    keep_going_without_openmp: bool
    sanitize: tuple[str, ...] = ()  # e.g. ("address", "undefined"): sanitizer builds of the cpu backend


@cache
def config() -> Config:
    """The configuration of this process: ``STENCILKIT_CACHE_DIR``, ``CXX``, ``STENCILKIT_CXXFLAGS``,
    ``STENCILKIT_CUDA_COMPILER`` (nvrtc|nvcc), ``CUDA_HOME``, ``STENCILKIT_SANITIZE``
    (comma-separated: address, undefined, leak, thread)."""
    env = os.environ
    if "STENCILKIT_CACHE_DIR" in env:
        cache_dir = Path(env["STENCILKIT_CACHE_DIR"]).expanduser()
    else:
        import platformdirs

        cache_dir = Path(platformdirs.user_cache_dir("stencilkit"))
    compiler = env.get("STENCILKIT_CUDA_COMPILER", "nvrtc").lower()
    if compiler not in ("nvrtc", "nvcc"):
        raise ValueError(f"STENCILKIT_CUDA_COMPILER must be nvrtc or nvcc, not {compiler!r}")
    sanitize = tuple(s.strip().lower() for s in env.get("STENCILKIT_SANITIZE", "").split(",") if s.strip())
    unknown = [s for s in sanitize if s not in SANITIZERS]
    if unknown:
        raise ValueError(f"STENCILKIT_SANITIZE: unknown sanitizer(s) {', '.join(unknown)};"
                         f" use a comma-separated list of {', '.join(SANITIZERS)}")
    return Config(
        cache_dir=cache_dir,
        cxx=env.get("CXX"),
        cxxflags=tuple(env.get("STENCILKIT_CXXFLAGS", "").split()),
        cuda_compiler=compiler,
        cuda_home=env.get("CUDA_HOME") or env.get("CUDA_PATH"),
        keep_going_without_openmp=True,
        sanitize=sanitize,
    )


def reset_config() -> None:
    """Forget the cached configuration (tests change the environment)."""
    config.cache_clear()
