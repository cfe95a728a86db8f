"""Which program fields a statement reads, at which offsets: the legal domain and in-place outputs.

A read is ``(program field, {dim: offset}, through_table)``. Locals are followed (a shifted local
shifts everything it reads), scan calls count their arguments, and both branches of a
``concat_where`` count everywhere (a superset of what the backends need: always legal).
"""

from __future__ import annotations

from collections.abc import Iterator

from .model import (
    Bin,
    Cmp,
    ConcatWhere,
    Local,
    Nb,
    Program,
    Reduce,
    Ref,
    Shift,
    Statement,
    TupleGet,
    Un,
    Where,
)

Read = tuple[str, tuple[tuple[str, int], ...], bool]


def _shifted(off: tuple[tuple[str, int], ...], dim: str, by: int) -> tuple[tuple[str, int], ...]:
    d = dict(off)
    d[dim] = d.get(dim, 0) + by
    return tuple(sorted(d.items()))


def reads(st: Statement) -> Iterator[Read]:
    """Every read of a program field by ``st``: the field, its offsets, and whether through a table."""
    params = dict(zip(st.params, st.args))
    local_of: dict[str, tuple[Local, int]] = {}
    for loc in st.locals:
        for i, n in enumerate(loc.names):
            local_of[n] = (loc, i)

    def name_reads(name: str, off: tuple[tuple[str, int], ...], nb: bool) -> Iterator[Read]:
        if name in params:
            yield params[name], off, nb
            return
        loc, i = local_of[name]
        if loc.scan is not None:  # every column value depends on all arguments
            for e in loc.exprs:
                yield from walk(e, off)
        elif loc.is_tuple:
            for e in loc.exprs:
                yield from walk(e, off)
        else:
            yield from walk(loc.exprs[i], off)

    def walk(e: object, off: tuple[tuple[str, int], ...]) -> Iterator[Read]:
        match e:
            case Ref(name):
                yield from name_reads(name, off, False)
            case Shift(name, dim, by):
                yield from name_reads(name, _shifted(off, dim, by), False)
            case Nb(name, _, _):
                yield from name_reads(name, off, True)
            case TupleGet(name, index):
                loc, _ = local_of[name]
                yield from walk(loc.exprs[index], off)
            case Bin(_, a, b) | Cmp(_, a, b):
                yield from walk(a, off)
                yield from walk(b, off)
            case Un(_, a) | Reduce(_, a, _):
                yield from walk(a, off)
            case Where(c, a, b):
                yield from walk(c, off)
                yield from walk(a, off)
                yield from walk(b, off)
            case ConcatWhere(_, a, b):
                yield from walk(a, off)
                yield from walk(b, off)

    for r in st.results:
        yield from walk(r, ())
    for loc in st.locals:  # unused locals too: a backend may check their reads as well
        for e in loc.exprs:
            yield from walk(e, ())


def allowed_range(p: Program, st: Statement, dim: str, size: int) -> tuple[int, int]:
    """The points along ``dim`` where every read of ``st`` stays inside its field."""
    lo, hi = 0, size
    for name, off, through_table in reads(st):
        if p.is_scalar(name):
            continue
        f = p.field(name)
        if dim not in f.dims or (through_table and dim != "K"):
            continue
        d = f.dims.index(dim)
        by = dict(off).get(dim, 0)
        lo = max(lo, f.origin[d] - by)
        hi = min(hi, f.origin[d] + f.shape[d] - by)
    return lo, hi


def writable_in_place(p: Program, st: Statement, name: str) -> bool:
    """Whether ``st`` may write ``name``: it reads it only at the point it writes, never via a table."""
    for f, off, through_table in reads(st):
        if f == name and (through_table or any(v != 0 for _, v in off)):
            return False
    return True
