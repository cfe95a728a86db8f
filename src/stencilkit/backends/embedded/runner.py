"""The embedded backend: checks arguments and evaluates kernels with NumPy or CuPy arrays."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...core.errors import StencilTypeError
from ...core.types import FieldType, ScalarType
from ...ir import nodes as ir
from ...stages import Stages, run_stages
from ...stages.binding import as_declared, check_scalar, wrap_arrays
from ...stages.interface import ProgramInterface
from ...stages.runner import PlanCache, Until
from ...toolchain.config import require
from ..dynamic_reads import check_dynamic_reads, stale_dynamic_read, uses_as_offset
from .evaluate import run_kernel


@dataclass(frozen=True, slots=True)
class EvaluationPlan:
    """The checked plan of one argument signature: the array namespace of the fields, the
    kernels with their concrete domains, the neighbour tables checked."""

    xp: Any
    kernels: list[tuple[ir.Kernel, Any]]
    tables: dict[str, Any]


class EmbeddedRunner:
    """Runs a program on the arrays its fields hold; no compilation.

    A :class:`~stencilkit.stages.runner.Runner`. The stages ``bind``, ``lower`` and ``plan``
    (``stencilkit.stages``: the checks of dimensions, dtypes, devices, domains, bounds; the
    lowering) run once per argument signature and are kept in a
    :class:`~stencilkit.stages.runner.PlanCache`, as on the compiled backends; later calls only
    evaluate the planned kernels."""

    def __init__(self, interface: ProgramInterface) -> None:
        self.interface = interface
        self.program = interface.program
        self.flat = interface.flat
        self.table_names = interface.tables
        self.written = interface.written
        self.plans: PlanCache[EvaluationPlan] = PlanCache(
            require("STENCILKIT_PLAN_CACHE_SIZE").plan_cache_size
        )
        self.dynamic = uses_as_offset(self.program)

    def __call__(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> None:
        provider = offset_provider or {}
        try:
            key = self.interface.key(args, provider)
            cached = self.plans.find(key, provider)
        except (AttributeError, KeyError, TypeError):
            key, cached = None, None
        if cached is None:
            args = wrap_arrays(self.flat, args, self.written)
            cached = self._evaluation_plan(self.stages(args, provider))
            if key is not None:
                self.plans.put(key, cached)
        xp, kernels = cached.xp, cached.kernels
        fields: dict[str, Any] = {}
        scalars: dict[str, Any] = {}
        for p, a in zip(self.flat, args):
            if isinstance(p.type, FieldType):
                fields[p.name] = as_declared(a, p.type.dims)
            elif isinstance(p.type, ScalarType):
                scalars[p.name] = check_scalar(p.name, p.type, a, self.program.name)
        tables = {t: provider[t] for t in self.table_names}
        if self.dynamic and stale_dynamic_read([k for k, _ in kernels]) is None:
            # as_offset: check before any write (else each kernel checks its reads before its own writes)
            check_dynamic_reads(kernels, fields, scalars, tables, xp)
        for k, dom in kernels:
            run_kernel(xp, k, dom, fields, scalars, tables)

    def stages_for(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> Stages:
        """The stages for these arguments (``Program.compile``), kept for the calls that follow."""
        provider = offset_provider or {}
        args = wrap_arrays(self.flat, list(args), self.written)
        done = self.stages(args, provider)
        try:
            key = self.interface.key(args, provider)
        except (AttributeError, KeyError, TypeError):
            return done
        self.plans.put(key, self._evaluation_plan(done))
        return done

    def stages(
        self,
        args: list[Any],
        offset_provider: Mapping[str, Any] | None,
        check_device: bool = True,
        until: Until = "tune",
    ) -> Stages:
        """bind, lower and plan (the embedded backend generates nothing); nothing kept."""
        return run_stages(self.program, args, offset_provider or {}, None)

    def _evaluation_plan(self, done: Stages) -> EvaluationPlan:
        bound = done.bound
        xps = {f.xp for f in bound.fields.values()} | {t.xp for t in bound.tables.values()}
        if len(xps) > 1:
            raise StencilTypeError(
                f"{self.program.name}(): fields live on different devices (host and GPU)",
                hint="move them to one device with field.to(...) first",
            )
        xp = xps.pop() if xps else __import__("numpy")
        return EvaluationPlan(xp, done.planned.kernels(), dict(bound.tables))
