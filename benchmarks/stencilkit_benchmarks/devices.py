"""Where a suite runs (:class:`Dev`), array helpers and the library's launch internals."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from typing import Any

from .cuda_sources import CUDA_OPTIONS
from .emulation import EmulatedKernel
from .timing import host_time


class Dev:
    """Where a suite runs: array module, allocator, backends, clock, hand-written kernels."""

    def __init__(self, gpu: bool, emulate_cuda: bool = False) -> None:
        import stencilkit as gtx

        self.gpu = gpu
        self.gtx = gtx
        self.emulate_cuda = emulate_cuda
        self.cp: Any = None
        if gpu:
            import cupy as cp

            self.cp = cp
            self.xp: Any = cp
            self.alloc: Any = gtx.gpu
            self.compiled: Any = gtx.gpu
            self.compiled_name = "stencilkit gtx.gpu"
            self.embedded_name = "embedded CuPy"
        else:
            import numpy as np

            self.xp = np
            self.alloc = gtx.cpu
            self.compiled = gtx.cpu
            self.compiled_name = "stencilkit gtx.cpu"
            self.embedded_name = "embedded NumPy"
        self._emu_dir = tempfile.mkdtemp(prefix="sk-bench-emu-") if emulate_cuda else ""

    @property
    def has_cuda_kernels(self) -> bool:
        return self.gpu or self.emulate_cuda

    def cuda_label(self, what: str) -> str:
        return f"hand CUDA {what}" + ("" if self.gpu else " [CPU emulation]")

    def stream_ptr(self) -> int:
        return int(self.cp.cuda.get_current_stream().ptr)

    def sync(self) -> None:
        if self.gpu:
            self.cp.cuda.get_current_stream().synchronize()

    def time(self, fn: Callable[[], Any], reps: int, warmup: int = 2) -> list[float]:
        """Per-call times in ms: CUDA events around each call queued back to back on the
        current stream (one synchronize at the end) on the GPU, the host clock on the CPU."""
        if not self.gpu:
            return host_time(fn, reps, warmup)
        cp = self.cp
        for _ in range(warmup):
            fn()
        s = cp.cuda.get_current_stream()
        s.synchronize()
        pairs = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
        for e0, e1 in pairs:
            e0.record(s)
            fn()
            e1.record(s)
        pairs[-1][1].synchronize()
        return [float(cp.cuda.get_elapsed_time(e0, e1)) for e0, e1 in pairs]

    def to_host(self, a: Any) -> Any:
        import numpy as np

        return self.cp.asnumpy(a) if self.gpu else np.asarray(a)

    def kernel(self, source: str, name: str) -> Any:
        if self.gpu:
            return self.cp.RawKernel(source, name, options=CUDA_OPTIONS)
        return EmulatedKernel(source, name, self._emu_dir)

    def copier(self, dst: Any, src: Any) -> Callable[[], Any]:
        """A device-to-device copy of ``src`` into ``dst`` (same shape and layout)."""
        if self.gpu:
            rt = self.cp.cuda.runtime
            assert dst.nbytes == src.nbytes
            return lambda: rt.memcpyAsync(
                dst.data.ptr, src.data.ptr, src.nbytes, rt.memcpyDeviceToDevice, self.stream_ptr()
            )
        import numpy as np

        return lambda: np.copyto(dst, src)

    def free(self) -> None:
        if self.gpu:
            self.sync()
            self.cp.get_default_memory_pool().free_all_blocks()


def elem_strides(a: Any) -> tuple[int, ...]:
    st = tuple(int(s) // int(a.itemsize) for s in a.strides)
    assert all(s * int(a.itemsize) == int(t) for s, t in zip(st, a.strides)), (
        f"odd strides {a.strides}"
    )
    return st


def maxdiff(xp: Any, u: Any, v: Any) -> float:
    return float(xp.abs(u - v).max())


def finite(xp: Any, a: Any) -> bool:
    return bool(xp.isfinite(a).all())


def launches(plan: Any) -> list[Any]:
    """The kernel launches the library configured for a plan (internals: may change)."""
    return list(plan.launches.kernels)


def kernel_names(plan: Any, kls: list[Any]) -> list[str]:
    """The names of the launched kernels (their variant suffix says the chunking chosen)."""
    return [getattr(kl, "name", "") or "?" for kl in kls]
