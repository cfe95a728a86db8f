"""The domain of a kernel that writes only a program's temporaries (a scan inside an operator):
where the later kernels read them. A read in a ``concat_where`` branch counts where the branch
is selected, so the scan starts at the branch's first level; shifted reads widen the range."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.dims import Dimension
from ..core.domain import UnitRange
from ..core.errors import StencilValueError
from ..ir import nodes as ir
from ..ir.extents import read_extents


def read_domain(
    k: ir.Kernel,
    later: Sequence[tuple[ir.Kernel, tuple[UnitRange, ...]]],
    fields: Mapping[str, Any],
    tables: Mapping[str, Any],
    scalars: Mapping[str, Any],
) -> tuple[UnitRange, ...]:
    """Where the kernels ``later`` (with their domains) read the outputs of ``k``: the domain of
    a statement writing only temporaries (a scan inside an operator). Reads in a ``concat_where``
    branch count where the branch is selected; shifted reads widen the range."""
    dims_of = {n: tuple(f.domain.dims) for n, f in fields.items() if hasattr(f, "domain")}
    dims_of.update({n: tuple(t.domain.dims) for n, t in tables.items() if hasattr(t, "domain")})
    lo: dict[Dimension, int] = {}
    hi: dict[Dimension, int] = {}
    for k2, dom in later:
        if any(len(r) == 0 for r in dom):
            continue
        where = dict(zip(k2.dims, dom))
        extents = read_extents(k2, dims_of, where, scalars)
        for name in k.outs:
            ext = extents.get(name)
            if ext is None:
                continue
            for d in k.dims:
                if d in ext.indirect or d not in where:
                    a, b = fields[name].domain[d].start, fields[name].domain[d].stop
                elif d in ext.offsets:
                    a, b = where[d].start + ext.offsets[d][0], where[d].stop + ext.offsets[d][1]
                else:
                    continue
                lo[d], hi[d] = min(lo.get(d, a), a), max(hi.get(d, b), b)
    if any(d not in lo for d in k.dims):
        return tuple(UnitRange(0, 0) for _ in k.dims)  # never read
    return tuple(UnitRange(lo[d], hi[d]) for d in k.dims)


def check_temporary_domain(
    k: ir.Kernel, dom: tuple[UnitRange, ...], fields: Mapping[str, Any]
) -> None:
    """Refuse a domain beyond the temporaries (allocated like the output that reads them)."""
    if any(len(r) == 0 for r in dom):
        return
    have = fields[k.outs[0]].domain
    where = f"{k.where}: in {k.name}(): " if k.where else f"{k.name}(): "
    for d, r in zip(k.dims, dom):
        if r not in have[d]:
            raise StencilValueError(
                f"{where}the result of {k.name} is read along {d} over {r} (shifted reads widen the range),"
                f" beyond {have[d]}, the range of the output it is computed for",
                hint="shrink domain= so that the shifted reads stay inside the output's domain, or"
                " write the scan's result to a field in its own program statement",
            )
