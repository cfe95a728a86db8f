"""The ``gpu`` backend: generated CUDA, compiled with NVRTC or nvcc, launched on CuPy's stream."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...core.device import DeviceType
from ...core.errors import StencilValueError
from ...ir import nodes as ir
from ...toolchain.cache import CacheEntry, cache_key, get_or_build
from ...toolchain.cuda import compile_cubin, find_cuda_compiler
from ..abi import ArgLayout, Specialization
from ..compiled import Plan
from . import grid
from .codegen import PLAIN, chunk_variants, generate_cuda, kernel_name
from .runtime import Launcher, Module, cupy, device_arch, device_name
from .tuning import choose_blocks, table_fingerprint, worth_searching

#: True while a CUDA graph is being captured (see graphs.py): no tuning or first launches then.
CAPTURING = False


@dataclass
class KernelLaunch:
    launcher: Launcher
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    name: str = ""


@dataclass
class LoadedCuda:
    source: str
    module: Module
    names: list[str]
    sprog: ir.StencilProgram
    layout: ArgLayout
    built: bool
    path: Path | None = None
    build_variants: Any = None  # () -> Module with every variant: compiled only when a search needs it
    cupy: Any = field(default_factory=cupy)
    _variants: Module | None = None
    get_device: Any = field(init=False, repr=False)  # cudaGetDevice: checked on every call (~0.1 us)

    def __post_init__(self) -> None:
        self.get_device = self.cupy.cuda.runtime.getDevice

    def _wrong_device(self) -> None:
        """A plan loaded on one GPU called while another is current: refused before launch."""
        here, there = self.get_device(), self.module.device_id
        raise StencilValueError(
            f"{self.sprog.name}(): the fields of this call live on GPU {there}, but the current CUDA"
            f" device is GPU {here}; the gpu backend runs a program on the current device, as CuPy does",
            hint=f"call it under `with cupy.cuda.Device({there}):` (or after cupy.cuda.Device({there}).use())")

    def variant_module(self) -> Module:
        if self._variants is None:
            self._variants = self.build_variants()
        return self._variants

    def launch(self, plan: Plan, buf: np.ndarray) -> None:
        if self.get_device() != self.module.device_id:
            self._wrong_device()
        stream = self.cupy.cuda.get_current_stream().ptr
        launches = plan.extra.get("launches")
        if launches is None and CAPTURING:
            from .graphs import refuse_unconfigured_launch

            refuse_unconfigured_launch(self.sprog.name)
        if launches is None:  # first call of this plan: pick block shapes, bind the argument block
            launches = plan.extra["launches"] = self._configure(plan, buf, stream)
        for kl in launches:
            kl.launcher.launch(kl.grid, kl.block, stream)

    def _configure(self, plan: Plan, buf: np.ndarray, stream: int) -> list[KernelLaunch]:
        result = []
        for ki, k in enumerate(self.sprog.kernels):
            extents = grid.kernel_extents(k, self.layout, plan.domains[ki], buf)
            variants = chunk_variants(k, self.layout)
            search = len(variants) > 1 and worth_searching(k, extents)
            if search:
                module = self.variant_module()
            else:
                module, variants = self.module, (PLAIN,)
            launchers = {v: Launcher(module.functions[kernel_name(self.sprog, ki, v)], buf) for v in variants}
            tables = ""
            if search:
                sigs = plan.extra.get("table_sigs", {})
                tables = table_fingerprint(buf, [(f.ptr, sigs[f.name]) for f in self.layout.fields
                                                 if f.is_table and f.name in sigs])
            variant, blocks = choose_blocks(k, extents, launchers, stream, self.path,
                                            device_name(self.module.device_id), tables,
                                            grid.slowest_bounds(k, self.layout, ki),
                                            grid.device_limits(self.module.device_id))
            result.append(KernelLaunch(launchers[variant], grid_for(extents, blocks, variant.chunk, self.module.device_id), blocks,
                                       kernel_name(self.sprog, ki, variant)))
        return result


def grid_for(extents: list[int], block: tuple[int, int, int], chunk: int = 1,
             device_id: int = 0) -> tuple[int, int, int]:
    """The launch grid for a kernel over ``extents``, within GPU ``device_id``'s grid limits (grid.py)."""
    return grid.grid_for(extents, block, chunk, grid.device_limits(device_id))


class CudaTarget:
    """Builds programs for NVIDIA GPUs and loads them on the GPU that holds a call's fields,
    which must be the current CUDA device (as for a CuPy kernel)."""

    name = "gpu"
    device_type = DeviceType.CUDA

    def __init__(self, device_id: int = 0, arch: str | None = None) -> None:
        self.device_id = device_id  # the device whose architecture ``build`` targets by default
        self.arch = arch  # None: the device's own compute capability
        self._loaded: dict[tuple[str, int], LoadedCuda] = {}

    def current_device(self) -> int:
        """The current CUDA device (CuPy's): where a call runs."""
        return int(cupy().cuda.runtime.getDevice())

    def generate(self, sprog: ir.StencilProgram, layout: ArgLayout, variants: bool = False,
                 narrow_index: bool = False) -> str:
        return generate_cuda(sprog, layout, variants, narrow_index)

    def build(self, sprog: ir.StencilProgram, layout: ArgLayout, variants: bool = False,
              narrow_index: bool = False, device_id: int | None = None) -> tuple[str, str, CacheEntry]:
        """Generate and compile (through the cache); no GPU needed when ``arch`` is given.
        ``variants``: also the z-chunked kernels (several times slower to compile, so built only
        when a block search on a large domain needs them). ``narrow_index``: 32-bit index
        arithmetic, for calls whose indices all fit (``Specialization.narrow_index``).
        ``device_id``: the GPU whose architecture to build for (default ``self.device_id``)."""
        source = self.generate(sprog, layout, variants, narrow_index)
        arch = self.arch or device_arch(self.device_id if device_id is None else device_id)
        compiler = find_cuda_compiler()
        key = cache_key([("ir", str(sprog)), ("source", source), *compiler.key_parts(arch)])

        def build(d: Any) -> None:
            (d / "program.ir").write_text(str(sprog))
            compile_cubin(source, arch, d, "program", compiler)

        return source, key, get_or_build(key, build, {"program": sprog.name, "target": f"cuda sm_{arch}"})

    def compile(self, sprog: ir.StencilProgram, layout: ArgLayout, spec: Specialization) -> LoadedCuda:
        if CAPTURING:  # loading a module is not allowed while a stream is being captured
            from .graphs import refuse_unconfigured_launch

            refuse_unconfigured_launch(sprog.name)
        device = spec.device_id
        source, key, entry = self.build(sprog, layout, narrow_index=spec.narrow_index, device_id=device)
        if (key, device) in self._loaded:
            return self._loaded[key, device]
        names = [kernel_name(sprog, i) for i in range(len(sprog.kernels))]
        module = Module((entry.path / "program.cubin").read_bytes(), names, device)

        def build_variants() -> Module:
            _, _, ventry = self.build(sprog, layout, variants=True, narrow_index=spec.narrow_index, device_id=device)
            vnames = [kernel_name(sprog, i, v) for i, k in enumerate(sprog.kernels) for v in chunk_variants(k, layout)]
            return Module((ventry.path / "program.cubin").read_bytes(), vnames, device)

        loaded = LoadedCuda(source, module, names, sprog, layout, entry.built, entry.path, build_variants)
        self._loaded[key, device] = loaded
        return loaded
