"""The C++ toolchain: compiler discovery, OpenMP detection, building a shared library."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from ..core.errors import BackendUnavailableError, BuildError
from ..core.log import get_logger, timed
from ..core.records import record
from .cache import read_record, record_path, write_record
from .config import require

_log = get_logger("build")
_toolchain_log = get_logger("toolchain")


@record
class CxxCompiler:
    """The C++ compiler of the cpu backend: path, version, flags, OpenMP."""

    path: str
    version: str
    flags: tuple[str, ...]
    openmp: bool

    @property
    def is_gcc(self) -> bool:
        """GCC (whose ``--version`` names no other compiler): it takes GCC-only flags."""
        first = self.version.lower()
        return not any(other in first for other in ("clang", "intel", "icx", "nvc++"))

    def key_parts(self) -> list[tuple[str, str]]:
        return [
            ("cxx", self.path),
            ("cxx-version", self.version),
            ("cxx-flags", " ".join(self.flags)),
            ("machine", _cpu_identity()),
        ]


def _cpu_identity() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "flags")):
                model += line
    except OSError:
        pass
    return platform.machine() + model


_CANDIDATES = ("g++", "clang++", "c++")


@cache
def find_cxx() -> CxxCompiler:
    """The C++ compiler: ``$CXX``, then g++, clang++, c++; flags and OpenMP detected.

    Detection runs the compiler twice (about 40 ms); its result is kept in the cache directory,
    keyed by the compiler binary's path, size and modification time, so that a new process
    with its programs already built reaches its first result without starting a compiler."""
    cfg = require("STENCILKIT_CACHE_DIR", "STENCILKIT_SANITIZE")
    candidates = [cfg.cxx] if cfg.cxx else list(_CANDIDATES)
    for name in candidates:
        path = shutil.which(name) if name else None
        if path is None:
            continue
        record = _record_path(path)
        known = _read_record(record, path)
        own = any(f.startswith("-ffp-contract") for f in cfg.cxxflags)
        contract = () if own else (NO_CONTRACTION,)
        if known is not None:
            _warn_if_serial(known)
            return CxxCompiler(
                path,
                known.version,
                known.flags + contract + sanitizer_flags() + cfg.cxxflags,
                known.openmp,
            )
        version = subprocess.run(
            [path, "--version"], capture_output=True, text=True, check=False
        ).stdout.splitlines()
        base = ("-std=c++17", "-O3", "-march=native", "-fPIC", "-shared", "-fno-math-errno")
        openmp = _probe(path, (*base, "-fopenmp"))
        flags = (*base, "-fopenmp") if openmp else base
        found = CxxCompiler(path, version[0] if version else "unknown", flags, openmp)
        _write_record(record, found)
        _warn_if_serial(found)
        return CxxCompiler(
            path, found.version, flags + contract + sanitizer_flags() + cfg.cxxflags, openmp
        )
    wanted = f"$CXX={cfg.cxx}" if cfg.cxx else "g++, clang++ or c++"
    raise BackendUnavailableError(
        f"no C++ compiler found (looked for {wanted}) for the cpu backend",
        hint="install one (Debian/Ubuntu: apt-get install g++; conda: conda install gxx) or set CXX",
    )


def _warn_if_serial(found: CxxCompiler) -> None:
    if not found.openmp:
        _toolchain_log.warning(
            "%s (%s) cannot build OpenMP code (-fopenmp failed): the cpu backend runs on one thread."
            " Install OpenMP support (Debian/Ubuntu: libgomp1 with g++; clang: libomp-dev) and run"
            " `stencilkit cache clear`.",
            found.path,
            found.version,
        )


def sanitizer_flags() -> tuple[str, ...]:
    """``STENCILKIT_SANITIZE=address,undefined``: instrumented builds (part of the cache key, as
    every flag is) that stop at the first error. Loading them into Python needs the sanitizer's
    runtime first: ``LD_PRELOAD=$(g++ -print-file-name=libasan.so)``."""
    sanitize = require("STENCILKIT_SANITIZE").sanitize
    if not sanitize:
        return ()
    return (
        f"-fsanitize={','.join(sanitize)}",
        "-fno-omit-frame-pointer",
        "-fno-sanitize-recover=all",
        "-g",
    )


def _record_path(path: str) -> Path | None:
    try:
        st = os.stat(path)  # follows links: the real compiler binary
    except OSError:
        return None
    ident = f"{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}|{platform.machine()}"
    return record_path("cxx", ident)


def _read_record(record: Path | None, path: str) -> CxxCompiler | None:
    data = read_record(record) if record is not None else None
    if data is None or not isinstance(data.get("flags"), list) or "version" not in data:
        return None
    flags = tuple(str(f) for f in data["flags"])  # type: ignore[attr-defined]
    return CxxCompiler(path, str(data["version"]), flags, bool(data.get("openmp")))


def _write_record(record: Path | None, found: CxxCompiler) -> None:
    if record is not None:
        write_record(
            record, {"version": found.version, "flags": list(found.flags), "openmp": found.openmp}
        )


def _probe(path: str, flags: tuple[str, ...]) -> bool:
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "probe.cpp"
        src.write_text('#include <omp.h>\nextern "C" int f() { return omp_get_max_threads(); }\n')
        r = subprocess.run(
            [path, *flags, str(src), "-o", str(Path(d) / "probe.so")],
            capture_output=True,
            check=False,
        )
        return r.returncode == 0


#: Sources longer than this are built with ``-O1`` instead of ``-O3``. GCC's time at ``-O3`` grows
#: much faster than the size of one huge function: ICON's graupel microphysics (one scan, 52,000
#: lines of generated C++) did not finish in 10 minutes at ``-O3`` and builds in 35 s of CPU at
#: ``-O1``. The flags follow from the source, so the cache key (which holds the source) still
#: names one build.
LARGE_SOURCE_LINES = 20_000


#: No fused multiply-add contraction unless STENCILKIT_CXXFLAGS names an -ffp-contract setting:
#: with -march=native GCC fuses ``a*b + c`` where it finds it, so a cpu result could differ from
#: NumPy's (icon4py's _muphys by 3.1e293 after an overflow-sensitive product) and from the gpu
#: backend's, which builds with --fmad=false for the same reason (toolchain/cuda.py).
NO_CONTRACTION = "-ffp-contract=off"


#: GCC sources longer than this are built without jump threading (``-fno-thread-jumps``). In a
#: long straight-line kernel GCC's RTL CFG cleanup after jump threading grows far faster than the
#: code (2-core build machine, 2026-12-03): a 100-deep chain of shifted operators (4,968 lines, one
#: loop body of ~4,850 values) took 243-254 s at ``-O3`` and builds in 16 s without it; 85 deep
#: (3,603 lines) at ``-O2`` 54 s against 6.5 s, 86 % of it "cfg cleanup" (``-ftime-report``); 70
#: deep (2,463 lines) at ``-O3`` 5.2 against 3.8 s. The 100-deep chain also runs faster than its
#: ``-O1`` build did (5.9-6.8 against 7.6-8.2 ms per call). ICON's largest measured program, the
#: graupel scan, is 1,196 lines and keeps GCC's full ``-O3``.
JUMP_THREADING_LINES = 2_000


def build_flags(flags: tuple[str, ...], source: str, *, gcc: bool) -> tuple[str, ...]:
    """The compiler flags for ``source``: no jump threading in GCC for long sources (``gcc``:
    the compiler is GCC), ``-O3`` lowered to ``-O1`` for very large ones."""
    lines = source.count("\n")
    if gcc and lines > JUMP_THREADING_LINES:
        flags = (*flags, "-fno-thread-jumps")
    if lines <= LARGE_SOURCE_LINES:
        return flags
    return tuple("-O1" if f == "-O3" else f for f in flags)


def build_shared_library(source: str, out_dir: Path, name: str) -> Path:
    """Compile ``source`` into ``out_dir/name.so``; the source is kept beside it."""
    cxx = find_cxx()
    src = out_dir / f"{name}.cpp"
    src.write_text(source)
    lib = out_dir / f"{name}.so"
    cmd = [cxx.path, *build_flags(cxx.flags, source, gcc=cxx.is_gcc), str(src), "-o", str(lib)]
    with timed(
        _log, f"C++ build of {name}.so ({source.count(chr(10))} lines, entry {out_dir.name[1:13]})"
    ):
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        kept = Path(tempfile.mkdtemp(prefix="stencilkit-failed-")) / src.name
        kept.write_text(source)
        raise BuildError("the C++ build of a stencilkit program failed", cmd, r.stderr, str(kept))
    return lib
