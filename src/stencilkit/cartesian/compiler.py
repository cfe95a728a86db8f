"""``gt4py.cartesian.utils.compiler``: the host and GPU compiler settings gt4py.cartesian
reports, filled from stencilkit's toolchain.

NDSL's configuration imports ``cxx_compiler_defaults`` and ``gpu_configuration``. stencilkit
builds with its own flags (``STENCILKIT_CXXFLAGS``, ``STENCILKIT_CUDA_FLAGS``); these objects
describe them in gt4py's terms and are not read back by stencilkit's builds.

>>> gpu_configuration("3").name in (GPUCompilerName.NVCC, GPUCompilerName.NONE)
True
"""

from __future__ import annotations

import dataclasses
import enum
import os
import shutil

from ..core.errors import StencilError

__all__ = [
    "CxxCompilerDefaults",
    "CxxCompilerName",
    "GPUCompilerName",
    "GPUConfiguration",
    "cxx_compiler_defaults",
    "gpu_configuration",
]


class CxxCompilerName(enum.Enum):
    DEFAULT = "unknown"
    GNU = "gcc"
    CLANG = "clang"
    APPLE_CLANG = "apple-clang"
    INTEL = "icx"


@dataclasses.dataclass(frozen=True)
class CxxCompilerDefaults:
    """The C++ compiler: its kind, its OpenMP flag, whether OpenMP is used, the flags."""

    name: CxxCompilerName
    open_mp_flag: str
    enable_openmp: bool
    cxx_compile_flags: str


def _kind(version: str) -> CxxCompilerName:
    text = version.lower()
    if "apple clang" in text:
        return CxxCompilerName.APPLE_CLANG
    if "clang" in text:
        return CxxCompilerName.CLANG
    if "icx" in text or "icpx" in text:
        return CxxCompilerName.INTEL
    if "gcc" in text or "g++" in text:
        return CxxCompilerName.GNU
    return CxxCompilerName.DEFAULT


def cxx_compiler_defaults(optimization_level: str) -> CxxCompilerDefaults:
    """stencilkit's C++ compiler in gt4py's terms; at level ``"0"`` FMA contraction is off
    (stencilkit keeps it off at every level)."""
    try:
        from ..toolchain.cxx import find_cxx

        found = find_cxx()
    except StencilError:  # no C++ compiler: reported, not raised, as gt4py does
        return CxxCompilerDefaults(CxxCompilerName.DEFAULT, "", False, "")
    flags = [f for f in found.flags if f not in ("-shared", "-fPIC", "-fopenmp")]
    if optimization_level == "0" and "-ffp-contract=off" not in flags:
        flags.append("-ffp-contract=off")
    kind = _kind(found.version)
    openmp_flag = "-qopenmp" if kind is CxxCompilerName.INTEL else "-fopenmp"
    return CxxCompilerDefaults(
        kind, openmp_flag if found.openmp else "", found.openmp, " ".join(flags)
    )


class GPUCompilerName(enum.Enum):
    NONE = "none"
    NVCC = "nvcc"
    ROCM = "rocm"


@dataclasses.dataclass(frozen=True)
class GPUConfiguration:
    """Where the CUDA toolkit is and the device flags (gt4py's fields)."""

    name: GPUCompilerName
    gpu_compile_flags: list[str]
    binary_path: str
    include_path: str
    library_path: str
    arch: str | None
    host_compiler: str | None


def gpu_configuration(optimization_level: str) -> GPUConfiguration:
    """The CUDA toolkit under ``$CUDA_HOME`` (or ``$CUDA_PATH``, ``/usr/local/cuda``), the flags
    of ``$GT4PY_CARTESIAN_EXTRA_CUDA_COMPILE_ARGS`` (``-fmad=false`` at level ``"0"``)."""
    root = os.environ.get("CUDA_HOME", os.environ.get("CUDA_PATH", "/usr/local/cuda"))
    default = "-fmad=false" if optimization_level == "0" else ""
    extra = os.environ.get("GT4PY_CARTESIAN_EXTRA_CUDA_COMPILE_ARGS", default)
    has_nvcc = os.path.isfile(os.path.join(root, "bin", "nvcc")) or shutil.which("nvcc")
    return GPUConfiguration(
        name=GPUCompilerName.NVCC if has_nvcc else GPUCompilerName.NONE,
        gpu_compile_flags=extra.split() if extra else [],
        binary_path=os.path.join(root, "bin"),
        include_path=os.path.join(root, "include"),
        library_path=os.path.join(root, "lib64"),
        arch=os.environ.get("CUDA_ARCH"),
        host_compiler=os.environ.get("CUDA_HOST_CXX"),
    )
