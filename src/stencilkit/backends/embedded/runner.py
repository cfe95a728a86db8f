"""The embedded backend: checks arguments and evaluates kernels with NumPy or CuPy arrays."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.errors import StencilTypeError, StencilValueError
from ...core.types import FieldType, ScalarType
from ...ir import nodes as ir
from ...ir.extents import bound_scalars
from ...ir.lower import lower_program
from ...ir.visit import walk
from ..binding import (
    as_declared,
    check_field,
    check_kernel_bounds,
    check_scalar,
    kernel_domain,
    table_infos,
    wrap_arrays,
)
from .evaluate import run_kernel

#: Checked plans kept per runner; beyond this (e.g. a loop counter used in domain bounds) the
#: oldest are dropped, and a call that misses is simply checked again.
MAX_PLANS = 64


class EmbeddedRunner:
    """Runs a program on the arrays its fields hold; no compilation.

    The checks (dimensions, dtypes, devices, domains, bounds) and the lowering are done once per
    argument signature and kept, as on the compiled backends; later calls only evaluate."""

    def __init__(self, program: ir.Program, flat: tuple[ir.Param, ...]) -> None:
        self.program = program
        self.flat = flat
        self.lowered: dict[Any, ir.StencilProgram] = {}
        self.table_names = tuple(sorted({x.by.offset for s in program.body for x in walk(s)
                                         if isinstance(x, ir.Shift) and isinstance(x.by, ir.NeighborShift)}))
        bound = bound_scalars(program)
        self.field_idx = tuple(i for i, p in enumerate(flat) if isinstance(p.type, FieldType))
        self.bound_idx = tuple(i for i, p in enumerate(flat) if isinstance(p.type, ScalarType) and p.name in bound)
        self.plans: dict[Any, tuple[Any, list[tuple[ir.Kernel, Any]]]] = {}

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
        if cached is None:
            args = wrap_arrays(self.flat, args)
            cached = self._plan(args, provider)
            if key is not None:
                if len(self.plans) >= MAX_PLANS:
                    self.plans.pop(next(iter(self.plans)))
                self.plans[key] = cached
        xp, kernels = cached
        fields: dict[str, Any] = {}
        scalars: dict[str, Any] = {}
        for p, a in zip(self.flat, args):
            if isinstance(p.type, FieldType):
                fields[p.name] = as_declared(a, p.type.dims)
            elif isinstance(p.type, ScalarType):
                scalars[p.name] = check_scalar(p.name, p.type, a, self.program.name)
        tables = {t: provider[t] for t in self.table_names}
        for k, dom in kernels:
            run_kernel(xp, k, dom, fields, scalars, tables)

    def _plan(self, args: list[Any], offset_provider: Mapping[str, Any]) -> tuple[Any, list[tuple[ir.Kernel, Any]]]:
        """Check everything about these arguments; return the array namespace and the kernels
        with their concrete domains."""
        name = self.program.name
        fields: dict[str, Any] = {}
        scalars: dict[str, Any] = {}
        for p, a in zip(self.flat, args):
            if isinstance(p.type, FieldType):
                check_field(p.name, p.type, a, name)
                fields[p.name] = as_declared(a, p.type.dims)
            elif isinstance(p.type, ScalarType):
                scalars[p.name] = check_scalar(p.name, p.type, a, name)
        provider = dict(offset_provider)
        tables = {}
        for t in self.table_names:
            if t not in provider:
                raise StencilValueError(f"{name}(): offset_provider has no entry for '{t}'",
                                        hint=f"pass offset_provider={{'{t}': connectivity}}")
            tables[t] = provider[t]
        infos = {k: v for k, v in table_infos(provider, self.program).items() if k in tables}
        key = tuple(sorted(infos.items()))
        sprog = self.lowered.get(key)
        if sprog is None:
            sprog = self.lowered[key] = lower_program(self.program, infos)
        xps = {f.xp for f in fields.values()} | {t.xp for t in tables.values()}
        if len(xps) > 1:
            raise StencilTypeError(f"{name}(): fields live on different devices (host and GPU)",
                                   hint="move them to one device with field.to(...) first")
        xp = xps.pop() if xps else __import__("numpy")
        kernels = []
        for k in sprog.kernels:
            dom = kernel_domain(k, fields, scalars)
            check_kernel_bounds(k, dom, fields, tables, scalars)
            kernels.append((k, dom))
        return xp, kernels
