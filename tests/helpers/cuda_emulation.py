"""The gpu backend's generated CUDA, run on the CPU: a compiled target for ``CompiledRunner`` that
compiles the generated kernels as C++ and launches them serially, block by block and thread by
thread, with the grids ``grid.grid_for`` gives for chosen grid limits. It checks, without a GPU,
that the generated indexing and the grid mapping cover every point exactly as a GPU would run
them (small limits force folded grids). A locality-ordered variant (``Variant(..., ordered=True)``)
visits the points in the order ``order.order_for`` gives for the call's table, computed in the
``tune`` stage as on the GPU."""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from stencilkit.backends.cuda.codegen import (
    PLAIN,
    Variant,
    chunk_variants,
    generate_cuda,
    kernel_name,
    ordered_dim,
)
from stencilkit.backends.cuda.grid import (
    DEFAULT_LIMITS,
    GridLimits,
    grid_for,
    kernel_extents,
    needed_blocks,
)
from stencilkit.backends.cuda.order import LocalityOrder, order_for
from stencilkit.core.device import DeviceType
from stencilkit.ir import nodes as ir
from stencilkit.stages.abi import ArgLayout
from stencilkit.stages.artefacts import Built, Launches, Planned, Source
from stencilkit.toolchain.config import require

_PRELUDE = r"""
#include <cstdint>
#include <cstring>
struct sk_dim3 { unsigned x, y, z; };
static sk_dim3 blockIdx, threadIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
template <class T> static inline void __stcs(T* p, T v) { *p = v; }
"""


def _driver(name: str, nslots: int) -> str:
    ordered = name.endswith("_ord")
    extra, arg = (", const int32_t* ord", ", ord") if ordered else ("", "")
    return f"""
extern "C" void emu_{name}(const int64_t* args, const unsigned* g, const unsigned* b{extra}) {{
    SkArgs s; std::memcpy(s.v, args, sizeof(int64_t) * {max(nslots, 1)});
    gridDim = {{g[0], g[1], g[2]}}; blockDim = {{b[0], b[1], b[2]}};
    for (unsigned bz = 0; bz < g[2]; ++bz) for (unsigned by = 0; by < g[1]; ++by)
    for (unsigned bx = 0; bx < g[0]; ++bx) {{
        blockIdx = {{bx, by, bz}};
        for (unsigned tz = 0; tz < b[2]; ++tz) for (unsigned ty = 0; ty < b[1]; ++ty)
        for (unsigned tx = 0; tx < b[0]; ++tx) {{ threadIdx = {{tx, ty, tz}}; {name}(s{arg}); }}
    }}
}}
"""


class EmulatedCuda:
    """Runs a program's generated kernels on the CPU (see the module docstring); the ``load``
    stage's artefact of ``EmulatedCudaTarget``."""

    def __init__(self, built: Built, lib: Any, target: EmulatedCudaTarget) -> None:
        self.built, self.lib, self.target = built, lib, target
        planned = built.source.planned
        assert planned.layout is not None
        self.sprog: ir.StencilProgram = planned.sprog
        self.layout: ArgLayout = planned.layout
        self.domains = planned.domains
        self.source = built.source.text
        self.grids: list[tuple[tuple[int, int, int], tuple[int, int, int]]] = []
        self.folded = 0  # launches whose grid was folded to fit the limits
        self.orders: dict[int, LocalityOrder] = {}  # per kernel: the order ordered variants visit
        self.variants: list[Variant] = []  # the variant each launch ran

    def bind(self, launches: Launches, block: np.ndarray) -> Callable[[], None]:
        return lambda: self.launch(block)

    def launch(self, buf: np.ndarray) -> None:
        for ki, k in enumerate(self.sprog.kernels):
            extents = kernel_extents(k, self.layout, self.domains[ki], buf)
            own = chunk_variants(k, self.layout, ki in self.orders)
            wanted = self.target.variant
            fallback = Variant(1, False, wanted.ordered)
            variant = wanted if wanted in own else fallback if fallback in own else PLAIN
            self.variants.append(variant)
            block = self.target.block
            grid = grid_for(extents, block, variant.chunk, self.target.limits)
            assert grid[0] <= self.target.limits.x and grid[1] <= self.target.limits.y
            assert grid[2] <= self.target.limits.z
            self.grids.append((grid, block))
            self.folded += grid != needed_blocks(extents, block, variant.chunk)
            fn = getattr(self.lib, "emu_" + kernel_name(self.sprog, ki, variant))
            extra = [ctypes.c_void_p(self.orders[ki].pointer)] if variant.ordered else []
            fn(
                ctypes.c_void_p(buf.ctypes.data),
                (ctypes.c_uint * 3)(*grid),
                (ctypes.c_uint * 3)(*block),
                *extra,
            )


class EmulatedCudaTarget:
    """A ``CompiledRunner`` target (the stages after ``plan``): host fields, CUDA code
    generation, a C++ build of the kernels with a serial launch driver, serial CPU launches."""

    name = "gpu-emulated"
    device_type = DeviceType.CPU

    def __init__(
        self,
        limits: GridLimits = DEFAULT_LIMITS,
        block: tuple[int, int, int] = (32, 4, 1),
        variant: Variant = PLAIN,
        workdir: Path | None = None,
        loads_first: bool | None = None,
    ) -> None:
        self.limits, self.block, self.variant = limits, block, variant
        # generate_cuda's: streaming chunks computed, then stored (None: as the gpu backend)
        if loads_first is None:
            loads_first = require("STENCILKIT_CUDA_LOADS_FIRST").cuda_loads_first
        self.loads_first = loads_first
        self.workdir = (
            workdir or Path(os.environ.get("STENCILKIT_CACHE_DIR", "/tmp")) / "cuda-emulation"
        )
        self.loaded: list[EmulatedCuda] = []

    def generate(self, planned: Planned) -> Source:
        assert planned.layout is not None and planned.spec is not None
        text = generate_cuda(
            planned.sprog,
            planned.layout,
            variants=True,
            narrow_index=planned.spec.narrow_index,
            ordered=self.variant.ordered,
            loads_first=self.loads_first,
        )
        return Source(planned, "cuda", text, True)

    def build(self, source: Source) -> Built:
        sprog, layout = source.planned.sprog, source.planned.layout
        assert layout is not None
        names = [
            kernel_name(sprog, ki, v)
            for ki, k in enumerate(sprog.kernels)
            for v in chunk_variants(k, layout, self.variant.ordered)
        ]
        code = _PRELUDE + source.text + "".join(_driver(n, layout.size) for n in names)
        key = hashlib.sha256(code.encode()).hexdigest()[:20]
        self.workdir.mkdir(parents=True, exist_ok=True)
        src = self.workdir / f"emu_{key}.cpp"
        so = src.with_suffix(".so")
        built = not so.exists()
        if built:
            src.write_text(code)
            cxx = os.environ.get("CXX") or shutil.which("g++") or "c++"
            tmp = so.with_suffix(f".{os.getpid()}.so")
            cmd = [cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-w", "-o", str(tmp), str(src)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"emulation build failed: {' '.join(cmd)}\n{done.stderr}")
            os.replace(tmp, so)
        return Built(source, key, self.workdir, built, so.name)

    def load(self, built: Built) -> EmulatedCuda:
        sprog, layout = built.source.planned.sprog, built.source.planned.layout
        assert layout is not None
        lib = ctypes.CDLL(str(built.path / built.binary))
        for ki, k in enumerate(sprog.kernels):
            for v in chunk_variants(k, layout, self.variant.ordered):
                getattr(lib, "emu_" + kernel_name(sprog, ki, v)).restype = None
        loaded = EmulatedCuda(built, lib, self)
        self.loaded.append(loaded)
        return loaded

    def tune(self, loaded: EmulatedCuda, planned: Planned, bound: Any) -> Launches:
        """The block and variant are the target's, fixed by the test; an ordered variant gets
        the locality order of each kernel that gathers (whatever the table's numbering)."""
        assert planned.layout is not None
        if self.variant.ordered:
            for ki, k in enumerate(planned.sprog.kernels):
                found = ordered_dim(k, planned.layout)
                if found is not None:
                    rng = planned.domains[ki][k.dims.index(found[0])]
                    table = bound.tables[found[1]]
                    loaded.orders[ki] = order_for(table, found[0].value, rng.start, rng.stop)
        return Launches(self.name)
