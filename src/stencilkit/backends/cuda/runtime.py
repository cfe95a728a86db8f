"""Loading cubins and launching kernels through the CUDA driver API, called through ctypes.

The driver library is the one CuPy has loaded (``libcuda.so.1``). Calling it directly costs
nothing to set up, where importing cuda-bindings' driver module takes 40-60 ms (it imports
cuda-pathfinder): a process whose programs are all built needs no cuda-bindings at all.

Arguments travel as one struct passed by value, so a launch costs one driver call whatever the
number of fields. Kernels run on the caller's current CuPy stream.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from typing import Any

import numpy as np

from ...core import cuda_probe
from ...core.errors import StencilError


class CudaLaunchError(StencilError, RuntimeError):
    """A CUDA driver call failed."""


@cache
def cupy() -> Any:
    return cuda_probe.usable_cupy("the gpu backend")


@cache
def _libcuda() -> ctypes.CDLL:
    """The CUDA driver library, with the argument types of the calls made here."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        found = ctypes.util.find_library("cuda")
        if found is None:
            raise
        lib = ctypes.CDLL(found)
    void_p = ctypes.c_void_p
    lib.cuModuleLoadData.argtypes = [ctypes.POINTER(void_p), ctypes.c_char_p]
    lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(void_p), void_p, ctypes.c_char_p]
    lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    for fn in (lib.cuModuleLoadData, lib.cuModuleGetFunction, lib.cuGetErrorName):
        fn.restype = ctypes.c_int
    return lib


def _error_name(err: int) -> str:
    name = ctypes.c_char_p()
    if _libcuda().cuGetErrorName(err, ctypes.byref(name)) == 0 and name.value:
        return name.value.decode()
    return str(err)


def check(err: int, what: str) -> None:
    """Raise :class:`CudaLaunchError` where the driver call ``what`` returned ``err`` != 0."""
    if err != 0:
        raise CudaLaunchError(f"CUDA driver call {what} failed: {_error_name(err)}")


@cache
def device_name(device_id: int) -> str:
    props = cupy().cuda.runtime.getDeviceProperties(device_id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def device_arch(device_id: int) -> str:
    cp = cupy()
    return str(cp.cuda.Device(device_id).compute_capability)


def mapped_host_words(n: int) -> np.ndarray:
    """``n`` int64 zeros in pinned host memory mapped into every GPU's address space (with
    unified addressing, the one address serves host and device); the array keeps it alive."""
    cp = cupy()
    flags = cp.cuda.runtime.hostAllocMapped | cp.cuda.runtime.hostAllocPortable
    mem = cp.cuda.PinnedMemoryPointer(cp.cuda.PinnedMemory(8 * n, flags), 0)
    words = np.frombuffer(mem, dtype=np.int64, count=n)
    words[:] = 0
    return words


class Module:
    """A loaded cubin on one device, with its kernels (``functions``: name to ``CUfunction``
    handle, an int)."""

    def __init__(self, cubin: bytes, names: list[str], device_id: int) -> None:
        cp = cupy()
        lib = _libcuda()
        with cp.cuda.Device(device_id):
            cp.cuda.runtime.free(0)  # make sure the primary context exists and is current
            module = ctypes.c_void_p()
            check(lib.cuModuleLoadData(ctypes.byref(module), cubin), "cuModuleLoadData")
            self.module = module
            self.functions: dict[str, int] = {}
            for n in names:
                fn = ctypes.c_void_p()
                check(
                    lib.cuModuleGetFunction(ctypes.byref(fn), module, n.encode()),
                    "cuModuleGetFunction",
                )
                self.functions[n] = int(fn.value or 0)
        self.device_id = device_id


@cache
def _c_launch() -> Any:
    """``cuLaunchKernel`` of the driver library: about a microsecond per launch, several times
    less than through the Python bindings' argument conversion."""
    fn = _libcuda().cuLaunchKernel
    fn.argtypes = [
        ctypes.c_void_p,
        *([ctypes.c_uint] * 6),
        ctypes.c_uint,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    fn.restype = ctypes.c_int
    return fn


class Launcher:
    """Launches one kernel with the argument block ``buf`` (passed by value) and the 64-bit
    ``extra`` arguments after it (an ordered variant's order pointer)."""

    def __init__(self, function: Any, buf: np.ndarray, extra: tuple[int, ...] = ()) -> None:
        self.function = function
        self.handle = int(function)
        self.buf = buf
        self.extra = np.array(extra, dtype=np.uint64)
        # kernelParams: one pointer per argument, to the argument block and to each extra value
        self.params = np.array(
            [buf.ctypes.data, *(self.extra.ctypes.data + 8 * i for i in range(len(extra)))],
            dtype=np.uint64,
        )
        self.params_ptr = int(self.params.ctypes.data)
        self.c_launch = _c_launch()

    def launch(self, grid: tuple[int, int, int], block: tuple[int, int, int], stream: int) -> None:
        err = self.c_launch(
            self.handle,
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            0,
            stream,
            self.params_ptr,
            None,
        )
        if err != 0:
            check(err, "cuLaunchKernel")
