"""Bounds checks of reads whose position is data (``as_offset``): run on every call, before any
kernel of the call writes, because the offsets are field values.

The index arrays are computed with the embedded evaluator on the fields' own device (NumPy or
CuPy); a read that would leave its field raises ``StencilValueError`` naming the field and the
indices. Reads whose offsets depend on a scan's carry cannot be checked ahead and are left to the
kernel; so are, on compiled backends, reads whose offsets depend on a field the same call writes
(pyFV3's remapping carries its level offset in an IJ field): there the first call's probe runs
the kernels on copies of the written fields (backends/compiled.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.domain import UnitRange
from ..core.types import FieldType, ScalarType
from ..ir import nodes as ir
from ..ir.visit import children, walk
from ..stages.binding import as_declared


def has_dynamic_reads(sprog: ir.StencilProgram) -> bool:
    """Whether any kernel of ``sprog`` reads at a data-dependent position (guarded in compiled
    kernels; see ``stale_dynamic_read`` for those no check before the call can see)."""
    return any(has_dynamic_reads_kernel(k) for k in sprog.kernels)


def stale_dynamic_read(kernels: Sequence[ir.Kernel]) -> tuple[ir.Kernel, str] | None:
    """A kernel whose dynamic reads involve a field written by it or an earlier kernel, and that
    field's name (a check before the call would see the old values); None if there is none."""
    written: set[str] = set()
    for k in kernels:
        written.update(k.outs)
        for v in k.values:
            for x in walk(v):
                if isinstance(x, ir.Access) and any(isinstance(y, ir.DynIndex) for y in walk(x)):
                    for y in walk(x):
                        if isinstance(y, ir.Access) and y.field in written:
                            return k, y.field
    return None


def uses_as_offset(program: ir.Program) -> bool:
    """Whether ``program`` shifts by ``as_offset`` anywhere (decided once per program)."""
    return any(
        isinstance(x, ir.Shift) and isinstance(x.by, ir.DynamicShift)
        for s in program.body
        for x in walk(s)
    )


def has_dynamic_reads_kernel(k: ir.Kernel) -> bool:
    return any(isinstance(x, ir.DynIndex) for v in k.values for x in walk(v))


def check_dynamic_reads(
    kernels: Sequence[tuple[ir.Kernel, tuple[UnitRange, ...]]],
    fields: Mapping[str, Any],
    scalars: Mapping[str, Any],
    tables: Mapping[str, Any],
    xp: Any,
) -> None:
    """Raise if a dynamic read of any kernel leaves its field (over the kernel's domain)."""
    from .embedded.evaluate import KernelEvaluator  # here: the embedded runner imports this module

    for k, dom in kernels:
        if any(len(r) == 0 for r in dom):
            continue
        carries = set(k.scan.carries) if k.scan is not None else set()
        ev = KernelEvaluator(xp, k.dims, dom, fields, scalars, tables)
        for v in k.values:
            _visit(ev, v, carries)


def _visit(ev: Any, e: ir.Node, carries: set[str]) -> None:
    if isinstance(e, ir.While):  # reads in the loop depend on its variables: checked as it runs
        for x in e.inits:
            _visit(ev, x, carries)
        inner = carries | set(e.names)
        for x in (e.cond, *e.body):
            _visit(ev, x, inner)
        return
    if isinstance(e, ir.LocalReduce):
        key = (e.dim, e.var)
        ev.axes.append(key)
        ev.local_sizes[key] = e.size
        try:
            for c in children(e):
                _visit(ev, c, carries)
        finally:
            ev.axes.pop()
            del ev.local_sizes[key]
        return
    if (
        isinstance(e, ir.Call)
        and e.fn == "where"
        and not any(isinstance(x, ir.Ref) and x.name in carries for x in walk(e.args[0]))
    ):  # each branch checked where it is chosen (a condition on a loop's values: checked as it runs)
        _visit(ev, e.args[0], carries)
        cond = ev.eval(e.args[0])
        if getattr(cond, "ndim", 0) > 0:
            with ev.masked(cond):
                _visit(ev, e.args[1], carries)
            with ev.masked(cond, negate=True):
                _visit(ev, e.args[2], carries)
            return
    if isinstance(e, ir.Access) and any(isinstance(x, ir.DynIndex) for x in walk(e)):
        if not any(isinstance(x, ir.Ref) and x.name in carries for x in walk(e)):
            ev.eval(e)  # raises on a read outside the field
    for c in children(e):
        _visit(ev, c, carries)


def check_call(
    sprog: ir.StencilProgram,
    domains: Sequence[tuple[UnitRange, ...]],
    flat: Sequence[ir.Param],
    args: Sequence[Any],
    tables: Mapping[str, Any],
) -> None:
    """``check_dynamic_reads`` for one call of a compiled program with positional ``args``."""
    fields: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    for p, a in zip(flat, args):
        if isinstance(p.type, FieldType):
            fields[p.name] = as_declared(a, p.type.dims)
        elif isinstance(p.type, ScalarType):
            scalars[p.name] = a
    xp = next((f.xp for f in fields.values()), None) or __import__("numpy")
    check_dynamic_reads(list(zip(sprog.kernels, domains)), fields, scalars, tables, xp)
