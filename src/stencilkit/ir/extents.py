"""Read extents: how far from the output point each field is read, per dimension.

A read inside a ``concat_where`` branch happens only where the branch's condition selects it.
Given the kernel's concrete domain (and the scalars the conditions use), such a read is
counted only over the part of the domain its guard selects: ``concat_where(K == 0, a, a(K - 1))``
over ``K: [0, n)`` reads ``a`` over ``[0, n - 1)``, not ``[-1, n - 1)``. Extents stay relative
to the domain, so a caller checks ``[start + lo, stop + hi)`` either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.dims import Dimension
from ..core.domain import UnitRange
from ..core.types import FieldType, ScalarType
from . import nodes as n
from .visit import children, deep, postorder, walk

#: The functions a sliced ``out=`` uses in domain bounds: ``__field_start(f, I)`` is where the
#: field ``f`` starts along ``I`` (when the program is called), ``__field_stop`` where it stops.
FIELD_START, FIELD_STOP = "__field_start", "__field_stop"


def field_bound(ref: n.Ref, dim: Dimension, which: str, offset: int) -> n.Expr:
    """``start``/``stop`` (``which``: FIELD_START, FIELD_STOP) of the field ``ref`` along ``dim``,
    plus ``offset``: a domain bound that follows the field the call passes."""
    int64 = ScalarType("int64")
    e: n.Expr = n.Call(which, (ref, n.DimIndex(dim, FieldType((dim,), "int64"))), int64)
    return n.BinOp("+", e, n.Literal(offset, int64), int64) if offset else e


Intervals = list[tuple[int, int]]  # sorted, disjoint, half-open
#: Per dimension, where a guard lets a read happen; a dimension not listed is unrestricted.
Region = dict[Dimension, Intervals]


@dataclass
class FieldExtent:
    """Offsets read along each dimension (``lo <= 0 <= hi`` not required); ``indirect`` lists
    dimensions indexed through a neighbour table, and ``tables`` the tables read at the rows."""

    offsets: dict[Dimension, tuple[int, int]] = field(default_factory=dict)
    indirect: dict[Dimension, set[str]] = field(default_factory=dict)
    #: per table read here: the (row dimension, row offset, slot) of each read, where the row is
    #: the output index plus an offset and the slot a constant; None where any other (all rows
    #: and slots count)
    lookups: dict[str, set[tuple[Dimension, int, int | None]] | None] = field(default_factory=dict)


def _widen(ext: FieldExtent, d: Dimension, lo: int, hi: int) -> None:
    old = ext.offsets.get(d)
    ext.offsets[d] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))


class _Extents:
    def __init__(
        self,
        dims_of: Mapping[str, tuple[Dimension, ...]],
        domain: Mapping[Dimension, UnitRange] | None,
        scalars: Mapping[str, Any],
    ) -> None:
        self.dims_of = dims_of
        self.domain = domain
        self.scalars = scalars
        self.result: dict[str, FieldExtent] = {}
        self.seen: set[tuple[int, Any]] = (
            set()
        )  # (node id, guard): a shared value is visited once per guard

    def note(self, ext: FieldExtent, d: Dimension, idx: n.Index, guard: Region) -> None:
        if isinstance(idx, n.Pos):
            if self.domain is not None and idx.dim in guard and idx.dim in self.domain:
                ivs, r = guard[idx.dim], self.domain[idx.dim]
                # read over [first + offset, last + offset]: relative to the whole domain
                _widen(ext, d, ivs[0][0] + idx.offset - r.start, ivs[-1][1] + idx.offset - r.stop)
            else:
                _widen(ext, d, idx.offset, idx.offset)
        elif isinstance(idx, n.Lookup):
            ext.indirect.setdefault(d, set()).add(idx.table)
            known = ext.lookups.setdefault(idx.table, set())
            if known is not None and isinstance(idx.source, n.Pos) and not guard:
                slot = idx.neighbor.value if isinstance(idx.neighbor, n.ConstIndex) else None
                known.add((idx.source.dim, idx.source.offset, slot))
            else:
                ext.lookups[idx.table] = None

    def visit(self, e: n.Node, guard: Region) -> None:
        if any(not ivs for ivs in guard.values()):
            return  # the guard selects no point: nothing here is read
        key = (id(e), tuple((d, tuple(ivs)) for d, ivs in guard.items()))
        if key in self.seen:
            return
        self.seen.add(key)
        if isinstance(e, n.Access):
            ext = self.result.setdefault(e.field, FieldExtent())
            for d, idx in zip(self.dims_of[e.field], e.index):
                self.note(ext, d, idx, guard)
        if isinstance(e, n.Lookup | n.Valid):
            ext = self.result.setdefault(e.table, FieldExtent())
            self.note(ext, self.dims_of[e.table][0], e.source, guard)
        if isinstance(e, n.Call) and e.fn == "concat_where" and self.domain is not None:
            cond, t, f = e.args
            self.visit(cond, guard)
            self.visit(t, _intersect(guard, self.region(cond, False)))
            self.visit(f, _intersect(guard, self.region(cond, True)))
            return
        for c in children(e):
            self.visit(c, guard)

    # ------------------------------------------------------------ conditions -> regions
    def region(self, cond: n.Node, negate: bool) -> Region:
        """Where ``cond`` (or its negation) holds, within the domain; conservative (a superset)."""
        if isinstance(cond, n.UnaryOp) and cond.op in ("~", "not"):
            return self.region(cond.operand, not negate)
        if isinstance(cond, n.BinOp) and cond.op in ("&", "and", "|", "or"):
            conj = (cond.op in ("&", "and")) != negate
            a, b = self.region(cond.left, negate), self.region(cond.right, negate)
            return _intersect(a, b) if conj else _union(a, b)
        if isinstance(cond, n.BinOp) and cond.op in _FLIP:
            op, idx, other = cond.op, cond.left, cond.right
            if isinstance(other, n.IndexValue):
                op, idx, other = _MIRROR[op], other, idx
            value = self.integer(other)
            if (
                not (isinstance(idx, n.IndexValue) and isinstance(idx.index, n.Pos))
                or value is None
            ):
                return {}
            pos = idx.index
            if negate:
                op = _FLIP[op]
            ivs = _compare(op, value - pos.offset)
            if self.domain is not None and pos.dim in self.domain:
                r = self.domain[pos.dim]
                ivs = _clip(ivs, r.start, r.stop)
            return {pos.dim: ivs}
        return {}

    def integer(self, e: n.Node) -> int | None:
        if isinstance(e, n.Literal) and not isinstance(e.value, bool) and isinstance(e.value, int):
            return e.value
        if isinstance(e, n.Ref) and e.name in self.scalars:
            return int(self.scalars[e.name])
        if isinstance(e, n.Call) and e.fn == "astype":
            return self.integer(e.args[0])
        if isinstance(e, n.Call) and e.fn in _INT_CALLS:
            args = [self.integer(a) for a in e.args]
            return None if any(a is None for a in args) else _INT_CALLS[e.fn](*args)
        if isinstance(e, n.UnaryOp) and e.op == "-":
            v = self.integer(e.operand)
            return None if v is None else -v
        if isinstance(e, n.BinOp) and e.op in _INT_OPS:
            a, b = self.integer(e.left), self.integer(e.right)
            if a is None or b is None or (b == 0 and e.op in ("//", "%")):
                return None
            return int(_INT_OPS[e.op](a, b))
        return None


_INT_CALLS: dict[str, Any] = {"minimum": min, "maximum": max, "abs": abs}
_INT_OPS: dict[str, Any] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
}
_FLIP = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}
_MIRROR = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}
_INF = 1 << 62


def _compare(op: str, v: int) -> Intervals:
    """Indices ``i`` with ``i op v``."""
    return {
        "<": [(-_INF, v)],
        "<=": [(-_INF, v + 1)],
        ">": [(v + 1, _INF)],
        ">=": [(v, _INF)],
        "==": [(v, v + 1)],
        "!=": [(-_INF, v), (v + 1, _INF)],
    }[op]


def _clip(ivs: Intervals, lo: int, hi: int) -> Intervals:
    out = [(max(a, lo), min(b, hi)) for a, b in ivs]
    return [(a, b) for a, b in out if a < b]


def _intersect(a: Region, b: Region) -> Region:
    out = dict(a)
    for d, ivs in b.items():
        if d not in out:
            out[d] = ivs
            continue
        out[d] = sorted(
            (max(x0, y0), min(x1, y1))
            for x0, x1 in out[d]
            for y0, y1 in ivs
            if max(x0, y0) < min(x1, y1)
        )
    return out


def _union(a: Region, b: Region) -> Region:
    """A superset of the union: dimensions restricted on one side only become unrestricted."""
    out: Region = {}
    for d in a.keys() & b.keys():
        merged: Intervals = []
        for lo, hi in sorted(a[d] + b[d]):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        out[d] = merged
    return out


@deep
def read_extents(
    kernel: n.Kernel,
    dims_of: Mapping[str, tuple[Dimension, ...]],
    domain: Mapping[Dimension, UnitRange] | None = None,
    scalars: Mapping[str, Any] | None = None,
) -> dict[str, FieldExtent]:
    """Extents of every field and neighbour table read by ``kernel``.

    ``dims_of`` maps field and table names to their dimensions; tables are indexed by
    (row dimension, local dimension). With the kernel's concrete ``domain`` (and the values of
    the ``scalars`` its conditions use), reads guarded by ``concat_where`` conditions count only
    where they happen; without it, every read counts over the whole domain."""
    ex = _Extents(dims_of, domain, scalars or {})
    for value in kernel.values:
        ex.visit(value, {})
    return ex.result


def output_domain(
    kernels: tuple[n.Kernel, ...],
    dims: tuple[Dimension, ...],
    have: Mapping[str, Mapping[Dimension, UnitRange]],
    dims_of: Mapping[str, tuple[Dimension, ...]],
) -> dict[Dimension, UnitRange]:
    """The largest domain over ``dims`` on which every read of the fields and tables in ``have``
    (name -> its ranges) stays inside them; dimensions no read constrains are left out."""
    result: dict[Dimension, UnitRange] = {}
    for k in kernels:
        for name, ext in read_extents(k, dims_of).items():
            if name not in have:
                continue
            for d, (lo, hi) in ext.offsets.items():
                if d in dims and d in have[name]:
                    r = have[name][d]
                    cand = UnitRange(r.start - lo, r.stop - hi)
                    result[d] = result[d] & cand if d in result else cand
    return result


def bound_scalars(prog: n.Program) -> set[str]:
    """Names of the scalar parameters that decide which points are read or written: those in
    domain bounds and those compared with an index (``concat_where(K < n, ...)``). A cached
    bounds check is valid only while these keep their values."""
    names: set[str] = set()
    for stmt in prog.body:
        for r in stmt.domain:
            names.update(x.name for b in (r.start, r.stop) for x in walk(b) if isinstance(x, n.Ref))
        # the scalars under a BinOp that has an index under it (each node looked at once)
        order = postorder(stmt)
        has_index: dict[int, bool] = {}
        for x in order:
            has_index[id(x)] = isinstance(x, n.DimIndex) or any(
                has_index[id(c)] for c in children(x)
            )
        tops = [x for x in order if isinstance(x, n.BinOp) and has_index[id(x)]]
        if tops:
            names.update(
                y.name
                for y in postorder(*tops)
                if isinstance(y, n.Ref) and isinstance(y.type, ScalarType)
            )
    return names
