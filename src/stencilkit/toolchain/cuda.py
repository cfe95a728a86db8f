"""The CUDA toolchain: NVRTC (default) or nvcc, toolkit discovery, target architecture."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..core.cuda_probe import explain
from ..core.errors import BackendUnavailableError, BuildError
from ..core.log import get_logger, timed
from .config import require

_log = get_logger("build")

FLAGS = ("-std=c++17",)
#: No fused multiply-add contraction unless a build asks for it (``STENCILKIT_CUDAFLAGS=
#: --fmad=true``). nvcc fuses ``a*b + c`` wherever its optimiser meets the pattern, and it meets
#: it differently in the variants of one kernel (a z-chunked loop shares products between its
#: points): results would then depend on which variant the tune stage timed fastest, and on how
#: a domain is split across ranks (a rank's smaller domain is tuned apart). Without it every
#: ``+ - *`` is rounded as IEEE 754 says, the same in every variant, as in NumPy. Stencils are
#: memory-bound: the cost is nil there (benchmarks/RESULTS.md, 2026-12-01).
NO_CONTRACTION = "--fmad=false"


def build_flags() -> tuple[str, ...]:
    """The flags of every CUDA build: ours, ``--fmad=false`` unless ``STENCILKIT_CUDAFLAGS``
    names an ``fmad`` setting itself (``--fmad=true``: contraction, results that may differ
    between kernel variants in the last bits), then ``STENCILKIT_CUDAFLAGS``."""
    user = require("STENCILKIT_CUDAFLAGS").cudaflags
    own_fmad = any(f.lstrip("-").startswith("fmad") for f in user)
    return FLAGS + (() if own_fmad else (NO_CONTRACTION,)) + user


@dataclass(frozen=True, slots=True)
class CudaCompiler:
    """NVRTC or nvcc, with what identifies it in the build cache key."""

    kind: str  # "nvrtc" | "nvcc"
    path: str
    version: str

    def key_parts(self, arch: str) -> list[tuple[str, str]]:
        return [
            ("cuda-compiler", self.kind),
            ("cuda-compiler-path", self.path),
            ("cuda-version", self.version),
            ("cuda-flags", " ".join(build_flags())),
            ("arch", arch),
        ]


@cache
def find_cuda_compiler(kind: str | None = None) -> CudaCompiler:
    """NVRTC through cuda-bindings, or nvcc from ``$CUDA_HOME``, ``$PATH`` or the pip wheel.

    Whatever stops it (cuda-bindings missing, ``libnvrtc.so.13`` not found: cuda-pathfinder's
    ``DynamicLibNotFoundError``) raises :class:`BackendUnavailableError` naming what to install."""
    kind = kind or require("STENCILKIT_CUDA_COMPILER").cuda_compiler
    if kind == "nvrtc":
        try:
            from cuda.bindings import nvrtc

            status, major, minor = (
                nvrtc.nvrtcVersion()
            )  # loads libnvrtc: the first place it can fail
        except Exception as err:  # ImportError, DynamicLibNotFoundError (a RuntimeError), OSError
            raise explain(err, "compiling CUDA with NVRTC") from err
        _check_nvrtc(status, "nvrtcVersion")
        return CudaCompiler("nvrtc", nvrtc.__file__, f"{major}.{minor}")
    path = _find_nvcc()
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
    return CudaCompiler("nvcc", path, out.strip().splitlines()[-1] if out.strip() else "unknown")


def _find_nvcc() -> str:
    home = require().cuda_home
    candidates = [os.path.join(home, "bin", "nvcc")] if home else []
    which = shutil.which("nvcc")
    if which:
        candidates.append(which)
    try:
        import nvidia.cuda_nvcc as wheel  # type: ignore[import-not-found]

        candidates.append(os.path.join(os.path.dirname(wheel.__file__), "bin", "nvcc"))
    except ImportError:
        pass
    candidates.append("/usr/local/cuda/bin/nvcc")
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise BackendUnavailableError(
        "nvcc was not found (looked in $CUDA_HOME/bin, $PATH, the nvidia-cuda-nvcc wheel, /usr/local/cuda)",
        hint="install the CUDA toolkit and set CUDA_HOME, or use the default NVRTC compiler",
    )


def _check_nvrtc(err: object, what: str) -> None:
    if int(err) != 0:  # type: ignore[call-overload]
        raise BackendUnavailableError(f"NVRTC call {what} failed with {err}")


def compile_cubin(source: str, arch: str, out_dir: Path, name: str, compiler: CudaCompiler) -> Path:
    """Compile ``source`` for ``sm_<arch>`` into ``out_dir/name.cubin``; the source is kept beside it."""
    src = out_dir / f"{name}.cu"
    src.write_text(source)
    cubin = out_dir / f"{name}.cubin"
    if compiler.kind == "nvcc":
        cmd = [
            compiler.path,
            "-cubin",
            f"-arch=sm_{arch}",
            "-O3",
            *build_flags(),
            str(src),
            "-o",
            str(cubin),
        ]
        with timed(_log, f"nvcc build of {name}.cu ({source.count(chr(10))} lines, sm_{arch})"):
            r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise BuildError(
                "the CUDA build (nvcc) of a stencilkit program failed",
                cmd,
                r.stderr,
                _keep(source, name),
            )
        return cubin
    from cuda.bindings import nvrtc

    opts = [f"-arch=sm_{arch}".encode(), *(f.encode() for f in build_flags())]
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], [])
    _check_nvrtc(err, "nvrtcCreateProgram")
    try:
        with timed(_log, f"NVRTC build of {name}.cu ({source.count(chr(10))} lines, sm_{arch})"):
            (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if int(err) != 0:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            # Writable buffers must be fresh objects: b" " * 1 is CPython's shared one-byte
            # object, and NVRTC writing into it would corrupt every b" " in the process.
            log = bytearray(size)
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise BuildError(
                "the CUDA build (NVRTC) of a stencilkit program failed",
                ["nvrtc", *(o.decode() for o in opts)],
                log.decode(errors="replace").rstrip("\x00"),
                _keep(source, name),
            )
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        _check_nvrtc(err, "nvrtcGetCUBINSize")
        data = bytearray(size)
        (err,) = nvrtc.nvrtcGetCUBIN(prog, data)
        _check_nvrtc(err, "nvrtcGetCUBIN")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    cubin.write_bytes(bytes(data))
    return cubin


def _keep(source: str, name: str) -> str:
    kept = Path(tempfile.mkdtemp(prefix="stencilkit-failed-")) / f"{name}.cu"
    kept.write_text(source)
    return str(kept)
