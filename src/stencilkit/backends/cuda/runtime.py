"""Loading cubins and launching kernels through the CUDA driver API (cuda-bindings).

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
def driver() -> Any:
    try:
        from cuda.bindings import driver as drv
    except ImportError as err:
        raise cuda_probe.explain(err, "the gpu backend") from err
    return drv


@cache
def cupy() -> Any:
    return cuda_probe.usable_cupy("the gpu backend")


def check(result: Any, what: str) -> Any:
    err = result[0]
    if int(err) != 0:
        drv = driver()
        _, name = drv.cuGetErrorName(err)
        raise CudaLaunchError(f"CUDA driver call {what} failed: {name.decode() if name else err}")
    return result[1] if len(result) == 2 else result[1:]


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
    """A loaded cubin on one device, with its kernels."""

    def __init__(self, cubin: bytes, names: list[str], device_id: int) -> None:
        cp = cupy()
        drv = driver()
        with cp.cuda.Device(device_id):
            cp.cuda.runtime.free(0)  # make sure the primary context exists and is current
            self.module = check(drv.cuModuleLoadData(cubin), "cuModuleLoadData")
            self.functions = {
                n: check(drv.cuModuleGetFunction(self.module, n.encode()), "cuModuleGetFunction")
                for n in names
            }
        self.device_id = device_id


@cache
def _c_launch() -> Any:
    """``cuLaunchKernel`` of the driver library, called through ctypes: about a microsecond per
    launch, several times less than through the Python bindings' argument conversion."""
    lib = ctypes.CDLL(_libcuda_path())
    fn = lib.cuLaunchKernel
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


def _libcuda_path() -> str:
    found = ctypes.util.find_library("cuda")
    return found or "libcuda.so.1"


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
            check((driver().CUresult(err),), "cuLaunchKernel")
