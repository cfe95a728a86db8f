"""Backends: ``embedded`` (the default, NumPy/CuPy), ``cpu`` (C++/OpenMP) and ``gpu`` (CUDA)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.device import DeviceType
from ..ir import nodes as ir


@dataclass(frozen=True, slots=True)
class Backend:
    """A compiled backend; pass it as ``backend=`` to ``@program`` or as ``allocator=`` to field
    constructors (fields then land on the backend's device in its preferred layout)."""

    name: str
    device_type: DeviceType

    def __repr__(self) -> str:
        return f"<stencilkit backend {self.name}>"

    def runner(self, program: ir.Program, flat: tuple[ir.Param, ...]) -> Any:
        from .compiled import CompiledRunner

        if self.name == "cpu":
            from .cpp import CppTarget

            return CompiledRunner(program, flat, CppTarget())
        from .cuda import CudaTarget

        return CompiledRunner(program, flat, CudaTarget())


cpu = Backend("cpu", DeviceType.CPU)
gpu = Backend("gpu", DeviceType.CUDA)
gtfn_cpu = cpu
gtfn_gpu = gpu


def embedded_runner(program: ir.Program, flat: tuple[ir.Param, ...]) -> Any:
    from .embedded import EmbeddedRunner

    return EmbeddedRunner(program, flat)


def capture_cuda_graph(body: Any, stream: Any = None) -> Any:
    """Capture the GPU program calls made by ``body()`` into a CUDA graph to replay (see
    ``backends/cuda/graphs.py``); call each program once before capturing it."""
    from .cuda.graphs import capture_cuda_graph as capture

    return capture(body, stream)
