"""The embedded backend: checks arguments and evaluates kernels with NumPy or CuPy arrays."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import stages
from ...core.errors import StencilTypeError
from ...core.types import FieldType, ScalarType
from ...ir import nodes as ir
from ...ir.extents import bound_scalars
from ...stages.binding import as_declared, check_scalar, used_tables, wrap_arrays, written_params
from ...stages.plancache import PlanCache
from ...toolchain.config import require
from ..dynamic_reads import check_dynamic_reads, stale_dynamic_read, uses_as_offset
from .evaluate import run_kernel


class EmbeddedRunner:
    """Runs a program on the arrays its fields hold; no compilation.

    The stages ``bind``, ``lower`` and ``plan`` (``stencilkit.stages``: the checks of dimensions,
    dtypes, devices, domains, bounds; the lowering) run once per argument signature and are
    kept, as on the compiled backends; later calls only evaluate the planned kernels."""

    def __init__(self, program: ir.Program, flat: tuple[ir.Param, ...]) -> None:
        self.program = program
        self.flat = flat
        self.table_names = used_tables(program)
        self.written = written_params(program)
        bound = bound_scalars(program)
        self.field_idx = tuple(i for i, p in enumerate(flat) if isinstance(p.type, FieldType))
        self.bound_idx = tuple(
            i for i, p in enumerate(flat) if isinstance(p.type, ScalarType) and p.name in bound
        )
        # checked plans, least recently used dropped beyond the size (STENCILKIT_PLAN_CACHE_SIZE)
        self.plans: PlanCache[tuple[Any, list[tuple[ir.Kernel, Any]], dict[str, Any]]] = PlanCache(
            require("STENCILKIT_PLAN_CACHE_SIZE").plan_cache_size
        )
        self.dynamic = uses_as_offset(program)

    def _key(self, args: list[Any], provider: Mapping[str, Any]) -> Any:
        key: list[Any] = [args[i]._key for i in self.field_idx]
        key.extend((type(args[i]), args[i]) for i in self.bound_idx)
        key.extend(provider[t]._key for t in self.table_names)
        return tuple(key)

    def __call__(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> None:
        provider = offset_provider or {}
        try:
            key = self._key(args, provider)
            cached = self.plans.get(key)
        except (AttributeError, KeyError, TypeError):
            key, cached = None, None
        if cached is not None and any(provider[t] is not c for t, c in cached[2].items()):
            cached = None  # another table object: its entries must be checked (the plan holds the old one)
        if cached is None:
            args = wrap_arrays(self.flat, args, self.written)
            cached = self._plan(args, provider)
            if key is not None:
                self.plans.put(key, cached)
        xp, kernels, _ = cached
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

    def stages_for(
        self, args: list[Any], offset_provider: Mapping[str, Any] | None
    ) -> stages.Stages:
        """The stages for these arguments (``Program.compile`` and ``.inspect``), kept for the
        calls that follow."""
        provider = offset_provider or {}
        args = wrap_arrays(self.flat, list(args), self.written)
        done = self._stages(args, provider)
        try:
            key = self._key(args, provider)
        except (AttributeError, KeyError, TypeError):
            return done
        self.plans.put(key, self._evaluation_plan(done))
        return done

    def _plan(
        self, args: list[Any], offset_provider: Mapping[str, Any]
    ) -> tuple[Any, list[tuple[ir.Kernel, Any]], dict[str, Any]]:
        """Check everything about these arguments; return the array namespace, the kernels
        with their concrete domains, and the tables checked."""
        return self._evaluation_plan(self._stages(args, offset_provider))

    def _stages(self, args: list[Any], offset_provider: Mapping[str, Any]) -> stages.Stages:
        bound = stages.bind(self.program, args, offset_provider)
        lowered = stages.lower(self.program, bound)
        return stages.Stages(self.program, bound, lowered, stages.plan(lowered, bound, None))

    def _evaluation_plan(
        self, done: stages.Stages
    ) -> tuple[Any, list[tuple[ir.Kernel, Any]], dict[str, Any]]:
        bound = done.bound
        xps = {f.xp for f in bound.fields.values()} | {t.xp for t in bound.tables.values()}
        if len(xps) > 1:
            raise StencilTypeError(
                f"{self.program.name}(): fields live on different devices (host and GPU)",
                hint="move them to one device with field.to(...) first",
            )
        xp = xps.pop() if xps else __import__("numpy")
        return xp, done.planned.kernels(), dict(bound.tables)
