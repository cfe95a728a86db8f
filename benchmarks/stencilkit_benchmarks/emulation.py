"""A CPU emulation of a CUDA launch, so that the hand-written kernels are checked without a GPU."""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_EMU_PRELUDE = r"""
// Minimal CPU emulation of a CUDA launch: no shared memory, no __syncthreads, one thread.
#include <cstdint>
struct sk_dim3 { unsigned x, y, z; };
static sk_dim3 blockIdx, threadIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
"""

_CTYPES_OF = {
    "int32": ("int", ctypes.c_int32),
    "int64": ("long long", ctypes.c_int64),
    "float64": ("double", ctypes.c_double),
}
_POINTEE = {"float64": "double", "int32": "int", "int64": "long long", "float32": "float"}


class EmulatedKernel:
    """A CUDA kernel of ``source`` compiled as C++ for the CPU and launched serially.

    Called like ``cupy.RawKernel``: ``kernel(grid, block, args)`` with NumPy arrays and NumPy
    scalars (``np.int32``, ``np.int64``, ``np.float64``). Used to check the hand-written kernels
    and the launch arguments computed for them where there is no GPU."""

    def __init__(self, source: str, name: str, workdir: str | Path) -> None:
        self.source, self.name, self.workdir = source, name, Path(workdir)
        self._libs: dict[tuple[str, ...], Any] = {}

    def _signature(self, args: Sequence[Any]) -> tuple[str, ...]:
        sig = []
        for a in args:
            if hasattr(a, "ctypes") and hasattr(a, "strides") and getattr(a, "ndim", 0) > 0:
                sig.append(_POINTEE[str(a.dtype)] + "*")
            else:
                sig.append(_CTYPES_OF[str(a.dtype)][0])
        return tuple(sig)

    def _lib(self, sig: tuple[str, ...]) -> Any:
        if sig in self._libs:
            return self._libs[sig]
        call = ", ".join(f"*({t}*)args[{i}]" for i, t in enumerate(sig))
        wrapper = f"""
extern "C" void sk_emu_launch(const unsigned* g, const unsigned* b, void** args) {{
    gridDim = {{g[0], g[1], g[2]}};
    blockDim = {{b[0], b[1], b[2]}};
    for (unsigned bz = 0; bz < g[2]; ++bz) for (unsigned by = 0; by < g[1]; ++by)
    for (unsigned bx = 0; bx < g[0]; ++bx) {{
        blockIdx = {{bx, by, bz}};
        for (unsigned tz = 0; tz < b[2]; ++tz) for (unsigned ty = 0; ty < b[1]; ++ty)
        for (unsigned tx = 0; tx < b[0]; ++tx) {{
            threadIdx = {{tx, ty, tz}};
            {self.name}({call});
        }}
    }}
}}
"""
        code = _EMU_PRELUDE + self.source + wrapper
        key = hashlib.sha256(code.encode()).hexdigest()[:16]
        src = self.workdir / f"emu_{self.name}_{key}.cpp"
        so = src.with_suffix(".so")
        if not so.exists():
            src.write_text(code)
            cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or "c++"
            cmd = [cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-o", str(so), str(src)]
            p = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if p.returncode != 0:
                raise RuntimeError(
                    f"emulation build of {self.name} failed: {' '.join(cmd)}\n{p.stderr}"
                )
        lib = ctypes.CDLL(str(so))
        lib.sk_emu_launch.restype = None
        lib.sk_emu_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self._libs[sig] = lib
        return lib

    def __call__(self, grid: Sequence[int], block: Sequence[int], args: Sequence[Any]) -> None:
        sig = self._signature(args)
        lib = self._lib(sig)
        keep: list[Any] = []
        for a, t in zip(args, sig):
            if t.endswith("*"):
                keep.append(ctypes.c_void_p(a.ctypes.data))
            else:
                keep.append(_CTYPES_OF[str(a.dtype)][1](a.item()))
        argv = (ctypes.c_void_p * len(keep))(*[ctypes.addressof(x) for x in keep])
        g = (ctypes.c_uint * 3)(*[int(x) for x in (*grid, 1, 1)][:3])
        b = (ctypes.c_uint * 3)(*[int(x) for x in (*block, 1, 1)][:3])
        lib.sk_emu_launch(g, b, argv)
