"""NVRTC through its C API with ctypes, from the library's absolute path.

cuda-bindings finds and loads ``libnvrtc`` (through cuda-pathfinder) and wraps it; importing the
two costs 70-100 ms per process (2026-12-03, the 2-core build machine: ``find_cuda_compiler`` 98
ms of a 241 ms first build, NVRTC itself 109 ms). Once a process has found the library, its
path is remembered with NVRTC's version (``cuda.find_cuda_compiler``), and a later process
compiles through the eight C functions here without importing either. The options, the log and
the cubin are those of the bindings' calls: the same bytes for the same source.
"""

from __future__ import annotations

import ctypes
import threading
from functools import cache

_ptr = ctypes.c_void_p
_size = ctypes.c_size_t
_strs = ctypes.POINTER(ctypes.c_char_p)

_SIGNATURES: dict[str, list[object]] = {
    "nvrtcCreateProgram": [
        ctypes.POINTER(_ptr),
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_int,
        _strs,
        _strs,
    ],
    "nvrtcCompileProgram": [_ptr, ctypes.c_int, _strs],
    "nvrtcGetProgramLogSize": [_ptr, ctypes.POINTER(_size)],
    "nvrtcGetProgramLog": [_ptr, ctypes.c_char_p],
    "nvrtcGetCUBINSize": [_ptr, ctypes.POINTER(_size)],
    "nvrtcGetCUBIN": [_ptr, ctypes.c_char_p],
    "nvrtcDestroyProgram": [ctypes.POINTER(_ptr)],
}
_LOCK = threading.Lock()


class NvrtcError(Exception):
    """An NVRTC call returned an error code other than a failed compilation."""


@cache
def library(path: str) -> ctypes.CDLL:
    """``libnvrtc`` at ``path`` with the argument types of the functions used here (OSError if it
    cannot be loaded; AttributeError if it lacks one)."""
    with _LOCK:
        lib = ctypes.CDLL(path)
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
        lib.nvrtcGetErrorString.argtypes = [ctypes.c_int]
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        return lib


def compile_program(path: str, source: str, name: str, options: list[str]) -> tuple[bytes, str]:
    """``source`` compiled by the NVRTC at ``path``: (cubin, "") on success, (b"", log) when the
    compilation fails; NvrtcError for any other failing call."""
    lib = library(path)
    prog = _ptr()
    _check(
        lib,
        lib.nvrtcCreateProgram(
            ctypes.byref(prog), source.encode(), f"{name}.cu".encode(), 0, None, None
        ),
        "nvrtcCreateProgram",
    )
    try:
        opts = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
        status = lib.nvrtcCompileProgram(prog, len(options), opts)
        if status != 0:
            size = _size()
            _check(lib, lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)), "log size")
            log = ctypes.create_string_buffer(max(size.value, 1))
            _check(lib, lib.nvrtcGetProgramLog(prog, log), "nvrtcGetProgramLog")
            text = log.raw[: size.value].decode(errors="replace").rstrip("\x00")
            return b"", text or _error(lib, status)
        size = _size()
        _check(lib, lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
        cubin = ctypes.create_string_buffer(size.value)
        _check(lib, lib.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        return cubin.raw[: size.value], ""
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _error(lib: ctypes.CDLL, status: int) -> str:
    name = lib.nvrtcGetErrorString(status)
    return name.decode() if name else f"NVRTC error {status}"


def _check(lib: ctypes.CDLL, status: int, what: str) -> None:
    if status != 0:
        raise NvrtcError(f"NVRTC call {what} failed: {_error(lib, status)}")
