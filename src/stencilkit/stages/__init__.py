"""The pipeline every program call goes through, one stage per function (``pipeline.py``):

    bind(program, args, offset_provider)  -> Bound      checked arguments, typed field signatures
    lower(program, bound)                 -> Lowered    stencil IR, before and after fusion
    plan(lowered, bound, target)          -> Planned    domains, argument block layout, constants
    generate(planned, target)             -> Source     C++ or CUDA
    build(source, target)                 -> Built      the build cache entry
    load(built, target)                   -> Loaded     the program in this process
    tune(loaded, planned, bound, target)  -> Launches   GPU block shapes (nothing on the CPU)

``run_stages`` runs them in order; ``Program.inspect(...)`` returns their artefacts, each
printable with ``as_text()``.
"""

from ..fields.signature import FieldSignature
from .artefacts import Built, KernelLaunch, Launches, Loaded, Lowered, Planned, Source, Target
from .binding import Bound
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

__all__ = [
    "Bound",
    "Built",
    "FieldSignature",
    "KernelLaunch",
    "Launches",
    "Loaded",
    "Lowered",
    "Planned",
    "Source",
    "Stages",
    "Target",
    "argument_block",
    "bind",
    "build",
    "check_device_of",
    "generate",
    "load",
    "lower",
    "memory_order",
    "plan",
    "run_stages",
    "tune",
    "unit_axis",
    "with_scratch_outputs",
]
