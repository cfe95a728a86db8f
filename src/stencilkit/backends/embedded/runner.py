"""The embedded backend: checks arguments and evaluates kernels with NumPy or CuPy arrays."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.errors import StencilTypeError, StencilValueError
from ...core.types import FieldType, ScalarType
from ...ir import nodes as ir
from ...ir.lower import lower_program
from ...ir.visit import walk
from ..binding import (
    check_field,
    check_kernel_bounds,
    check_scalar,
    kernel_domain,
    table_infos,
    wrap_arrays,
)
from .evaluate import run_kernel


class EmbeddedRunner:
    """Runs a program on the arrays its fields hold; no compilation."""

    def __init__(self, program: ir.Program, flat: tuple[ir.Param, ...]) -> None:
        self.program = program
        self.flat = flat
        self.lowered: dict[Any, ir.StencilProgram] = {}
        self.table_names = tuple(sorted({x.by.offset for s in program.body for x in walk(s)
                                         if isinstance(x, ir.Shift) and isinstance(x.by, ir.NeighborShift)}))

    def __call__(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> None:
        name = self.program.name
        args = wrap_arrays(self.flat, args)
        fields: dict[str, Any] = {}
        scalars: dict[str, Any] = {}
        for p, a in zip(self.flat, args):
            if isinstance(p.type, FieldType):
                check_field(p.name, p.type, a, name)
                fields[p.name] = a
            elif isinstance(p.type, ScalarType):
                scalars[p.name] = check_scalar(p.name, p.type, a, name)
        provider = dict(offset_provider or {})
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
        plan = []
        for k in sprog.kernels:
            dom = kernel_domain(k, fields, scalars)
            check_kernel_bounds(k, dom, fields, tables, scalars)
            plan.append((k, dom))
        for k, dom in plan:
            run_kernel(xp, k, dom, fields, scalars, tables)
