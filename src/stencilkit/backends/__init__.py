"""Backends: ``embedded`` (the default, NumPy/CuPy), ``cpu`` (C++/OpenMP) and ``gpu`` (CUDA)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..core.device import DeviceType
from ..core.records import record
from ..stages.interface import ProgramInterface
from ..stages.runner import Runner


@record
class FieldAllocator:
    """``backend.allocator``: where and how a backend wants its fields; pass it (or the backend)
    as ``allocator=`` to the field constructors."""

    device_type: DeviceType

    @property
    def __gt_allocator__(self) -> FieldAllocator:
        return self

    def __repr__(self) -> str:
        return f"<stencilkit allocator for {self.device_type.name}>"


@record
class Backend:
    """A compiled backend; pass it as ``backend=`` to ``@program`` or as ``allocator=`` to field
    constructors (fields then land on the backend's device in its preferred layout).

    Shaped like a gt4py.next backend: ``.name``, ``.allocator`` (also ``__gt_allocator__``),
    ``.executor``, ``.compile(program, compile_time_args)`` and ``backend(program, *args,
    offset_provider=...)``; gt4py's constructor keywords (``Backend(name=..., executor=...,
    allocator=..., transforms=...)``) are accepted. Programs run through :meth:`runner`, so a
    subclass overriding it (e.g. to refuse running) takes effect; a subclass overriding
    ``__call__`` (gt4py's way) is called for every run of a program on it.
    """

    name: str
    device_type: DeviceType = DeviceType.CPU
    custom_executor: Any = dataclasses.field(default=None, compare=False, repr=False)
    custom_allocator: Any = dataclasses.field(default=None, compare=False, repr=False)

    def __init__(
        self,
        name: str,
        device_type: DeviceType = DeviceType.CPU,
        custom_executor: Any = None,
        custom_allocator: Any = None,
        *,
        executor: Any = None,
        allocator: Any = None,
        transforms: Any = None,
    ) -> None:
        setter = object.__setattr__
        setter(self, "name", name)
        setter(self, "device_type", device_type)
        setter(self, "custom_executor", executor if executor is not None else custom_executor)
        setter(self, "custom_allocator", allocator if allocator is not None else custom_allocator)

    def __repr__(self) -> str:
        return f"<stencilkit backend {self.name}>"

    @property
    def allocator(self) -> Any:
        """Where this backend wants its fields. Pass it (or the backend itself) as
        ``allocator=`` to ``as_field``/``zeros``/...; ``gtx.gpu.allocator`` gives CuPy arrays in
        the GPU layout, ``gtx.cpu.allocator`` NumPy arrays."""
        if self.custom_allocator is not None:
            return self.custom_allocator
        return FieldAllocator(self.device_type)

    @property
    def __gt_allocator__(self) -> Any:
        return self.allocator

    @property
    def executor(self) -> Any:
        """What runs a program, as ``executor(interface)`` -> a runner (``interface``: the
        program's ``stencilkit.stages.interface.ProgramInterface``; the runner follows the
        ``stencilkit.stages.runner.Runner`` protocol)."""
        if self.custom_executor is not None:
            return self.custom_executor
        return self.runner

    def __call__(
        self, program: ProgramInterface, *args: Any, offset_provider: Any = None, **kwargs: Any
    ) -> None:
        """Run ``program`` (its interface) with the flat ``args``: gt4py's way of calling a
        backend. A subclass overriding this is called for every run of a program on it (and may
        end with ``super().__call__(program, *args, offset_provider=offset_provider)``)."""
        self.runner(program)(list(args), offset_provider)

    @property
    def transforms(self) -> tuple[()]:
        """gt4py.next's transformation pipeline of a backend, empty here (stencilkit's is fixed)."""
        return ()

    def compile(self, program: Any, compile_time_args: Any = None) -> Any:
        """Build ``program`` (a ``@program``) for this backend ahead of time. ``compile_time_args``
        is a mapping with ``args`` (a sequence), ``kwargs`` and ``offset_provider``, or a sequence of
        arguments; returns the program bound to this backend."""
        prog = program.with_backend(self)
        spec = compile_time_args or {}
        if isinstance(spec, dict):
            return prog.compile(
                *spec.get("args", ()),
                offset_provider=spec.get("offset_provider"),
                **spec.get("kwargs", {}),
            )
        return prog.compile(*spec)

    def runner(self, interface: ProgramInterface) -> Runner:
        """The runner of one program on this backend (``interface``: what the engine needs of
        the program, from any frontend): it builds (or loads from the build cache) the C++ or
        CUDA code on first use. A subclass may override it, e.g. to refuse running."""
        from .compiled import CompiledRunner

        if self.device_type is DeviceType.CPU:
            from .cpp import CppTarget

            return CompiledRunner(interface, CppTarget())
        from .cuda import CudaTarget

        return CompiledRunner(interface, CudaTarget())


cpu = Backend("cpu", DeviceType.CPU)
gpu = Backend("gpu", DeviceType.CUDA)
gtfn_cpu = cpu
gtfn_gpu = gpu


def embedded_runner(interface: ProgramInterface) -> Runner:
    """The embedded backend's runner of a program (NumPy or CuPy, no compilation)."""
    from .embedded import EmbeddedRunner

    return EmbeddedRunner(interface)


def runner_for(backend: Backend | None, interface: ProgramInterface) -> Runner:
    """The runner of a program (its ``stages.interface_of(program)``) on ``backend``: ``None``
    is the embedded backend; the one way every frontend reaches the engine.

    >>> run = runner_for(gtx.cpu, interface_of(program))
    >>> run(args_in_flat_order, offset_provider)
    """
    if backend is None:
        return embedded_runner(interface)
    if not isinstance(backend, Backend):
        from ..core.errors import StencilTypeError

        raise StencilTypeError(f"backend must be None, gtx.cpu or gtx.gpu, got {backend!r}")
    if type(backend).__call__ is not Backend.__call__:
        return _CallingRunner(backend, interface)  # the user's backend object decides
    return backend.runner(interface)


class _CallingRunner:
    """The runner of a program on a backend whose class overrides ``__call__``: each run calls
    ``backend(interface, *args, offset_provider=...)``, as gt4py calls its backends."""

    __slots__ = ("backend", "interface")

    def __init__(self, backend: Backend, interface: ProgramInterface) -> None:
        self.backend = backend
        self.interface = interface

    def __call__(self, args: list[Any], offset_provider: Any) -> None:
        self.backend(self.interface, *args, offset_provider=offset_provider)

    def stages_for(self, args: list[Any], offset_provider: Any) -> Any:
        """Ahead-of-time stages (``compile``): the backend's own runner's."""
        return self.backend.runner(self.interface).stages_for(args, offset_provider)

    def stages(self, *args: Any, **kwargs: Any) -> Any:
        return self.backend.runner(self.interface).stages(*args, **kwargs)


def wait_for_tuning(timeout: float | None = None) -> bool:
    """Wait until the GPU kernel variants that first calls started building in the background
    are built (``STENCILKIT_TUNE=background``, the default); each program's next call then makes
    its final choice of variant and block shape. Returns True when nothing is left building.

    >>> stencilkit.wait_for_tuning()   # e.g. before timing the steady state of a time loop
    True
    """
    import sys

    cuda = sys.modules.get(f"{__name__}.cuda.backend")
    return True if cuda is None else bool(cuda.wait_for_tuning(timeout))


def capture_cuda_graph(body: Any, stream: Any = None) -> Any:
    """Capture the GPU program calls made by ``body()`` into a CUDA graph, without running
    them; ``graph.replay(n)`` then runs the captured sequence ``n`` times with one launch each,
    which removes the per-call launch cost of time loops of small kernels.

    Call each program once (or ``program.compile(...)`` it) with the same arguments before
    capturing it: a first call compiles and tunes, which cannot happen during a capture.
    ``stream`` is the CuPy stream to capture on (default: a new non-blocking one);
    ``graph.synchronize()`` waits for the replays. Needs the gpu backend (CuPy, a GPU).

    >>> step(u, v, offset_provider={})             # first call: compile and tune
    >>> graph = gtx.capture_cuda_graph(lambda: [step(u, v, offset_provider={}) for _ in range(10)])
    >>> graph.replay(100)                          # 1000 steps
    >>> graph.synchronize()
    """
    from .cuda.graphs import capture_cuda_graph as capture

    return capture(body, stream)
