"""The pipeline every program call goes through, one stage per function (``pipeline.py``):

    bind(program, args, offset_provider)  -> Bound      checked arguments, typed field signatures
    lower(program, bound)                 -> Lowered    stencil IR, before and after fusion
    plan(lowered, bound, target)          -> Planned    domains, argument block layout, constants
    generate(planned, target)             -> Source     C++ or CUDA
    build(source, target)                 -> Built      the build cache entry
    load(built, target)                   -> Loaded     the program in this process
    tune(loaded, planned, bound, target)  -> Launches   GPU block shapes (nothing on the CPU)

``run_stages`` runs them in order (``until=`` stops early); ``Program.inspect(...)`` returns
their artefacts, each printable with ``as_text()``. A frontend hands the engine an ``ir.Program``;
``interface_of(program)`` (``interface.py``) is what the engine reads of it, and a backend's
``Runner`` (``runner.py``) keeps one plan per argument signature in a ``PlanCache``.
"""

from ..fields.signature import FieldSignature
from .artefacts import Built, KernelLaunch, Launches, Loaded, Lowered, Planned, Source, Target
from .binding import Bound
from .interface import ProgramInterface, interface_of
from .pipeline import (
    Stages,
    argument_block,
    bind,
    build,
    check_device_of,
    generate,
    load,
    lower,
    memory_order,
    plan,
    run_stages,
    tune,
    unit_axis,
    with_scratch_outputs,
)
from .runner import PlanCache, Runner, Until

__all__ = [
    "Bound",
    "Built",
    "FieldSignature",
    "KernelLaunch",
    "Launches",
    "Loaded",
    "Lowered",
    "PlanCache",
    "Planned",
    "ProgramInterface",
    "Runner",
    "Source",
    "Stages",
    "Target",
    "Until",
    "argument_block",
    "bind",
    "build",
    "check_device_of",
    "generate",
    "interface_of",
    "load",
    "lower",
    "memory_order",
    "plan",
    "run_stages",
    "tune",
    "unit_axis",
    "with_scratch_outputs",
]
