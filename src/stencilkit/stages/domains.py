"""The domains of a bound call: each kernel's index ranges, with every write checked against
the outputs and every read against the inputs and neighbour tables (the ``plan`` stage).

A kernel's ``domain=`` bounds are integer expressions of scalar arguments and field ends; a
kernel that writes only temporaries runs where the later kernels read them (``inferred.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..core.dims import Dimension
from ..core.domain import UnitRange
from ..core.errors import StencilTypeError, StencilValueError
from ..core.staggered import flip_staggered
from ..ir import nodes as ir
from ..ir.extents import FIELD_START, FIELD_STOP, read_extents
from ..ir.visit import walk
from .binding import Bound
from .inferred import check_temporary_domain, read_domain

#: Builtins allowed in domain bounds, evaluated on integers.
_BOUND_CALLS: dict[str, Callable[..., int]] = {
    "minimum": min,
    "maximum": max,
    "abs": abs,
    "neg": lambda a: -a,
    "floor": lambda a: a,
    "ceil": lambda a: a,
    "trunc": lambda a: a,
    "power": lambda a, b: a**b,
    "fmod": lambda a, b: int(np.fmod(a, b)),
}
_BOUND_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b if b else 0,
    "%": lambda a, b: a % b if b else 0,
    "**": lambda a, b: a**b,
}


def _eval_bound(
    e: ir.Expr, scalars: Mapping[str, Any], fields: Mapping[str, Any] | None = None
) -> int:
    """A domain bound's value: integer arithmetic and builtins on literals and scalar
    arguments, and the ends of fields (a sliced ``out=``)."""
    if isinstance(e, ir.Literal):
        return int(e.value)
    if isinstance(e, ir.Ref):
        return int(scalars[e.name])
    if isinstance(e, ir.BinOp) and e.op in _BOUND_OPS:
        return _BOUND_OPS[e.op](
            _eval_bound(e.left, scalars, fields), _eval_bound(e.right, scalars, fields)
        )
    if isinstance(e, ir.UnaryOp) and e.op in ("-", "+"):
        v = _eval_bound(e.operand, scalars, fields)
        return -v if e.op == "-" else v
    if isinstance(e, ir.Call) and e.fn in (FIELD_START, FIELD_STOP) and fields is not None:
        ref, dim = e.args
        r = fields[ref.name].domain[dim.dim]  # type: ignore[union-attr]
        return int(r.start if e.fn == FIELD_START else r.stop)
    if isinstance(e, ir.Call) and e.fn == "astype":
        return _eval_bound(e.args[0], scalars, fields)
    if isinstance(e, ir.Call) and e.fn in _BOUND_CALLS:
        return int(_BOUND_CALLS[e.fn](*(_eval_bound(a, scalars, fields) for a in e.args)))
    raise StencilTypeError(
        f"domain bound {e} is not a simple integer expression of scalar arguments",
        hint="use + - * // %, minimum, maximum, abs on integer literals and scalar parameters",
    )


def kernel_domain(
    k: ir.Kernel, fields: Mapping[str, Any], scalars: Mapping[str, Any]
) -> tuple[UnitRange, ...]:
    """The concrete index ranges of ``k``, in the order of ``k.dims``."""
    out = fields[k.outs[0]]
    if not k.domain:
        return tuple(out.domain.range_of(d) for d in k.dims)
    given = {
        r.dim: UnitRange(
            _eval_bound(r.start, scalars, fields), _eval_bound(r.stop, scalars, fields)
        )
        for r in k.domain
    }
    extra = [d for d in given if d not in k.dims]
    if extra:
        raise StencilValueError(
            f"{_where(k)}domain= names {', '.join(map(str, extra))}, which the output"
            f" [{', '.join(map(str, k.dims))}] does not have"
        )
    # a dimension left out of domain= spans the output's whole range along it, as in gt4py
    return tuple(given[d] if d in given else out.domain.range_of(d) for d in k.dims)


def check_kernel_bounds(
    k: ir.Kernel,
    dom: tuple[UnitRange, ...],
    fields: Mapping[str, Any],
    tables: Mapping[str, Any],
    scalars: Mapping[str, Any] | None = None,
) -> None:
    """Refuse writes outside an output and reads outside an input, before anything runs."""
    where = dict(zip(k.dims, dom))
    if any(len(r) == 0 for r in dom):
        return
    _check_no_missing_neighbours(k, where, tables)
    _check_fixed_slots(k, fields)
    for name in k.outs:
        f = fields[name]
        for d, r in where.items():
            if r not in f.domain.range_of(d):
                raise StencilValueError(
                    f"{_where(k)}the domain {d}: {r} lies outside the output '{name}', whose {d} range"
                    f" is {f.domain.range_of(d)}",
                    hint="shrink domain= or allocate a larger output field",
                )
    dims_of = {n: tuple(f.domain.dims) for n, f in fields.items() if hasattr(f, "domain")}
    dims_of.update({n: tuple(t.domain.dims) for n, t in tables.items() if hasattr(t, "domain")})
    # reads guarded by concat_where conditions count only where their condition selects them
    for name, ext in read_extents(k, dims_of, where, scalars).items():
        f = fields.get(name, tables.get(name))
        if f is None or not hasattr(f, "domain"):
            continue
        for d, (lo, hi) in ext.offsets.items():
            dd = (
                d if d in where else flip_staggered(d)
            )  # a staggered read: indexed by the base's loop
            if dd not in where:
                continue
            need = UnitRange(where[dd].start + lo, where[dd].stop + hi)
            have = f.domain.range_of(d)
            if need not in have:
                what = "neighbour table" if name in tables else "field"
                raise StencilValueError(
                    f"{_where(k)}reads {what} '{name}' along {d} over {need} (offsets {lo:+d}..{hi:+d}"
                    f" around the domain {where[dd]}), but '{name}' is defined only on {have}",
                    hint=f"shrink domain= along {d}, or give '{name}' a halo of"
                    f" {max(0, have.start - need.start)} below and {max(0, need.stop - have.stop)} above",
                )
        for d, table_names in ext.indirect.items():
            for t in table_names:
                reads = ext.lookups.get(t)
                _check_table_targets(t, tables[t], name, f, d, _rows_read(tables[t], reads, where))


def _rows_read(
    table: Any, reads: set[tuple[Dimension, int, int | None]] | None, where: Mapping[Any, Any]
) -> list[tuple[slice, slice]] | None:
    """The parts of ``table`` (row range, slots) the kernel reads over ``where``: the rows of the
    domain (shifted by the read's offset) and, for ``c(E2V[0])``, one slot; None for all of it."""
    if not reads or not hasattr(table, "domain"):
        return None
    row_dim = table.domain.dims[0]
    first = table.domain.ranges[0].start
    parts = []
    for d, offset, slot in reads:
        if d != row_dim or d not in where:
            return None
        r = where[d]
        rows = slice(r.start + offset - first, r.stop + offset - first)
        parts.append((rows, slice(None) if slot is None else slice(slot, slot + 1)))
    return parts


def _check_table_targets(
    tname: str,
    table: Any,
    fname: str,
    f: Any,
    d: Dimension,
    parts: list[tuple[slice, slice]] | None = None,
) -> None:
    # Not cached by table identity: ids are reused after a table is freed. Compiled backends
    # run this once per argument signature anyway. Only what the kernel reads counts: a field
    # that starts at 2 may be read through the rows of a table that point at 2 and above.
    whole = table.asnumpy()
    data = whole if parts is None else np.concatenate([whole[p].ravel() for p in parts])
    skip = table.skip_value
    valid = data[data != skip] if skip is not None else data
    rng = f.domain.range_of(d)
    if valid.size and (valid.min() < rng.start or valid.max() >= rng.stop):
        raise StencilValueError(
            f"neighbour table '{tname}' holds indices {valid.min()}..{valid.max()}, but '{fname}' is"
            f" defined on {d}: {rng}",
            hint="check that the table matches the mesh of the field",
        )
    if skip is None and (data < 0).any():
        raise StencilValueError(
            f"neighbour table '{tname}' holds negative indices but no skip_value",
            hint="pass skip_value=-1 to as_connectivity",
        )


def _where(k: ir.Kernel) -> str:
    return f"{k.where}: in {k.name}(): " if k.where else f"{k.name}(): "


def _check_no_missing_neighbours(
    k: ir.Kernel, where: Mapping[Dimension, UnitRange], tables: Mapping[str, Any]
) -> None:
    """A read through one chosen neighbour (``c(E2C[1])``) outside a reduction has no value where
    the table holds its skip value: refuse the call if that happens inside the domain."""
    for value in k.values:
        for x in walk(value):
            if not (
                isinstance(x, ir.Lookup)
                and isinstance(x.neighbor, ir.ConstIndex)
                and isinstance(x.source, ir.Pos)
            ):
                continue
            table = tables[x.table]
            if table.skip_value is None or x.source.dim not in where:
                continue
            rows = where[x.source.dim].shifted(x.source.offset)
            start = rows.start - table.domain.ranges[0].start
            column = table.asnumpy()[start : start + len(rows), x.neighbor.value]
            missing = (column == table.skip_value).nonzero()[0]
            if missing.size:
                first = rows.start + int(missing[0])
                raise StencilValueError(
                    f"{_where(k)}reads through {x.table}[{x.neighbor.value}], but the table has no"
                    f" neighbour there (skip value {table.skip_value}) at {missing.size} of the"
                    f" {len(rows)} points of the domain along {x.source.dim}, the first at {first}",
                    hint="restrict domain= to points that have this neighbour, or use a reduction"
                    " (neighbor_sum, max_over, min_over), which skips missing neighbours",
                )


def _check_fixed_slots(k: ir.Kernel, fields: Mapping[str, Any]) -> None:
    """A fixed neighbour slot of a field over a local dimension (``w[C2EDim(3)]``) must exist."""
    for value in k.values:
        for x in walk(value):
            if not isinstance(x, ir.Access) or not hasattr(fields.get(x.field), "domain"):
                continue
            domain = fields[x.field].domain
            for d, idx in zip(domain.dims, x.index):
                if isinstance(idx, ir.ConstIndex) and idx.value not in domain.range_of(d):
                    raise StencilValueError(
                        f"{_where(k)}reads slot {idx.value} of '{x.field}' along {d}, but"
                        f" '{x.field}' has slots {domain.range_of(d)} there",
                        hint=f"select a slot that exists, e.g. {x.field}[{d}(0)]",
                    )


def checked_domains(
    sprog: ir.StencilProgram, bound: Bound
) -> list[tuple[ir.Kernel, tuple[UnitRange, ...]]]:
    """Each kernel with its concrete domain, after refusing writes and reads out of bounds. A
    kernel without a domain that writes only temporaries runs where later kernels read them."""
    doms: list[tuple[UnitRange, ...]] = []
    kernels = sprog.kernels
    for i in reversed(range(len(kernels))):
        k = kernels[i]
        if not k.domain and bound.temps and all(o in bound.temps for o in k.outs):
            later = list(zip(kernels[i + 1 :], reversed(doms)))
            dom = read_domain(k, later, bound.fields, bound.tables, bound.scalars)
            check_temporary_domain(k, dom, bound.fields)
        else:
            dom = kernel_domain(k, bound.fields, bound.scalars)
        doms.append(dom)
    doms.reverse()
    for k, dom in zip(kernels, doms):
        check_kernel_bounds(k, dom, bound.fields, bound.tables, bound.scalars)
    return list(zip(kernels, doms))
