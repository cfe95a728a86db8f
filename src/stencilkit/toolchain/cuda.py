"""The CUDA toolchain: NVRTC (default) or nvcc, toolkit discovery, target architecture."""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from ..core.cuda_probe import explain
from ..core.errors import BackendUnavailableError, BuildError
from ..core.log import get_logger, timed
from ..core.records import record
from .cache import read_record, record_path, write_record
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


@record
class CudaCompiler:
    """NVRTC or nvcc, with what identifies it in the build cache key."""

    kind: str  # "nvrtc" | "nvcc"
    path: str
    version: str
    #: NVRTC: the absolute path of the ``libnvrtc`` whose version this is, compiled through with
    #: ctypes (``toolchain/nvrtc.py``); "" where it is not known (cuda-bindings compiles then)
    library: str = ""

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
    """NVRTC (found through cuda-bindings), or nvcc from ``$CUDA_HOME``, ``$PATH`` or the wheel.

    Whatever stops it (cuda-bindings missing, ``libnvrtc.so.13`` not found: cuda-pathfinder's
    ``DynamicLibNotFoundError``) raises :class:`BackendUnavailableError` naming what to install.

    NVRTC's version (part of every build's cache key) is kept in the cache directory, keyed by
    :func:`nvrtc_files`, with the library's path: a process whose programs are all built then
    neither imports NVRTC's bindings nor loads the library (about 15-30 ms), and one that builds
    compiles through the library's C API (``toolchain/nvrtc.py``) without the bindings. Any
    change to a file NVRTC could be loaded from, or to the settings that choose it, makes the
    key miss and NVRTC is asked again."""
    kind = kind or require("STENCILKIT_CUDA_COMPILER").cuda_compiler
    if kind == "nvrtc":
        files = nvrtc_files()
        record = record_path("nvrtc", files[1]) if files is not None else None
        known = read_record(record) if record is not None else None
        if files is not None and known is not None and known.get("path") == files[0]:
            library = str(known.get("library") or "")
            return CudaCompiler("nvrtc", files[0], str(known.get("version")), library)
        try:
            from cuda.bindings import nvrtc

            status, major, minor = (
                nvrtc.nvrtcVersion()
            )  # loads libnvrtc: the first place it can fail
        except Exception as err:  # ImportError, DynamicLibNotFoundError (a RuntimeError), OSError
            raise explain(err, "compiling CUDA with NVRTC") from err
        _check_nvrtc(status, "nvrtcVersion")
        found = CudaCompiler("nvrtc", nvrtc.__file__, f"{major}.{minor}", _loaded_nvrtc())
        if record is not None and files is not None and files[0] == found.path:
            write_record(
                record, {"path": found.path, "version": found.version, "library": found.library}
            )
        return found
    path = _find_nvcc()
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
    return CudaCompiler("nvcc", path, out.strip().splitlines()[-1] if out.strip() else "unknown")


def _loaded_nvrtc() -> str:
    """The absolute path of the one ``libnvrtc`` mapped into this process (cuda-bindings has just
    loaded it), from ``/proc/self/maps``; "" where that cannot tell (no such file, or two)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return ""
    found = {
        line.split(maxsplit=5)[5]
        for line in maps.splitlines()
        if line.count(" ") >= 5
        and os.path.basename(line.rsplit(" ", 1)[-1]).startswith("libnvrtc.so")
    }
    return found.pop() if len(found) == 1 else ""


def _stamp(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:-"
    return f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"


#: Settings that choose where cuda-pathfinder (and the dynamic loader) finds ``libnvrtc``.
_NVRTC_SETTINGS = ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX")
#: Where a system's CUDA libraries are, besides those the settings name.
_SYSTEM_LIB_DIRS = (
    "/usr/local/cuda/lib64",
    "/usr/local/cuda/lib",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/lib64",
    "/lib/x86_64-linux-gnu",
)


#: The file names of cuda-bindings' NVRTC module this Python imports, in its order of preference.
_NVRTC_MODULES = [f"nvrtc{suffix}" for suffix in importlib.machinery.EXTENSION_SUFFIXES]


def nvrtc_files() -> tuple[str, str] | None:
    """cuda-bindings' NVRTC module as Python would import it, and a string naming everything
    NVRTC's version depends on: that module's file, every ``libnvrtc*`` where cuda-pathfinder
    or the dynamic loader looks (the NVIDIA wheels on ``sys.path``, ``$CONDA_PREFIX``,
    ``$CUDA_HOME``/``$CUDA_PATH``, ``$LD_LIBRARY_PATH``, the system's library folders, the
    loader's cache ``/etc/ld.so.cache``), each with its size and modification time, and the
    settings themselves. Found by listing folders, without importing or loading anything
    (about a millisecond); None where no ``cuda/bindings`` package is on ``sys.path``."""
    module = None
    parts: list[str] = [f"{v}={os.environ.get(v, '')}" for v in _NVRTC_SETTINGS]
    lib_dirs: list[str] = []
    for entry in sys.path:
        base = entry or os.getcwd()
        package = os.path.join(base, "cuda", "bindings")
        if module is None and os.path.isfile(os.path.join(package, "__init__.py")):
            names = [n for n in _listdir(package) if n in _NVRTC_MODULES]
            if not names:
                return None  # the package Python imports has no NVRTC module
            module = os.path.join(package, min(names, key=_NVRTC_MODULES.index))
            parts += [_stamp(module), _stamp(os.path.join(package, "_version.py"))]
        wheels = os.path.join(base, "nvidia")
        lib_dirs += [os.path.join(wheels, d, "lib") for d in sorted(_listdir(wheels))]
    if module is None:
        return None
    for setting in ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX"):
        home = os.environ.get(setting)
        if home:
            lib_dirs += [os.path.join(home, "lib64"), os.path.join(home, "lib")]
    lib_dirs += [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if d]
    lib_dirs += _SYSTEM_LIB_DIRS
    for d in lib_dirs:
        parts += [
            _stamp(os.path.join(d, n)) for n in sorted(_listdir(d)) if n.startswith("libnvrtc")
        ]
    parts.append(_stamp("/etc/ld.so.cache"))
    return module, "|".join(parts)


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


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
    if compiler.library:
        return _compile_with_ctypes(source, arch, cubin, name, compiler.library)
    opts = [f"-arch=sm_{arch}".encode(), *(f.encode() for f in build_flags())]
    try:  # the version may have come from the record: this is then the first use of NVRTC
        from cuda.bindings import nvrtc

        err, prog = nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], [])
    except Exception as exc:  # ImportError, DynamicLibNotFoundError (a RuntimeError), OSError
        raise explain(exc, "compiling CUDA with NVRTC") from exc
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


def _compile_with_ctypes(source: str, arch: str, cubin: Path, name: str, library: str) -> Path:
    """NVRTC's C API at ``library`` (``toolchain/nvrtc.py``): no cuda-bindings import."""
    from . import nvrtc

    opts = [f"-arch=sm_{arch}", *build_flags()]
    try:
        with timed(_log, f"NVRTC build of {name}.cu ({source.count(chr(10))} lines, sm_{arch})"):
            data, log = nvrtc.compile_program(library, source, name, opts)
    except (OSError, AttributeError) as exc:  # the library cannot be loaded, or lacks a function
        raise explain(exc, "compiling CUDA with NVRTC") from exc
    except nvrtc.NvrtcError as exc:
        raise BackendUnavailableError(str(exc)) from exc
    if not data:
        raise BuildError(
            "the CUDA build (NVRTC) of a stencilkit program failed",
            ["nvrtc", *opts],
            log,
            _keep(source, name),
        )
    cubin.write_bytes(data)
    return cubin


def _keep(source: str, name: str) -> str:
    kept = Path(tempfile.mkdtemp(prefix="stencilkit-failed-")) / f"{name}.cu"
    kept.write_text(source)
    return str(kept)
