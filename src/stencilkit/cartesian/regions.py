"""Region-restricted read extents: a read inside ``horizontal(region[...])`` needs a halo only
where the region is.

A region's statements are lowered as ``concat_where(mask, new, old)`` (``lower_exprs.select``),
its mask a conjunction of ``index >= bound`` and ``index < bound`` along I and J, each bound
``c`` (from the compute domain's first point) or ``__nI + c`` (from its end). Walking a value,
every memory read is found with its offset and the *guard* the masks above it put on the
output points: per axis a lower and an upper side, each ``(from_end, c)``. :func:`halo` then
intersects the guard with the domain the output is computed on (the compute domain grown by
the output's extent) and says how far the read leaves the compute domain: nothing where the
region lies inside it, the region's reach where it lies in the halo, and no read at all where
the region misses the computed domain (gt4py's extent analysis does the same per horizontal
execution).

Sides from the start and from the end are compared as if the domain were infinite, as gt4py
does: a region near one edge never reaches the other. The engine checks each call again on its
concrete domain (``ir/extents.py`` reads the same masks), so a domain too small for that is
still refused before anything runs.
"""

from __future__ import annotations

import numpy as np

from ..core.types import FieldType
from ..ir import nodes as ir
from ..ir.visit import children

#: one side of a guard: ``(from_end, c)`` is the index ``c``, or ``n + c`` (n the domain's size);
#: tuples order as the indices do on an infinite domain (False < True)
Side = tuple[bool, int]
#: per axis (I, J): the lowest guarded point (inclusive) and the end (exclusive), None: open
Guard = tuple[tuple[Side | None, Side | None], tuple[Side | None, Side | None]]
Offset = tuple[int, int, int]
OPEN: Guard = ((None, None), (None, None))
_AXES = {"I": 0, "J": 1, "K": 2}


def guarded_reads(e: ir.Expr) -> set[tuple[str, Offset, Guard]]:
    """Every field read of ``e`` from memory: name, offset (I, J, K) and guard."""
    out: set[tuple[str, Offset, Guard]] = set()
    seen: set[tuple[int, Offset, Guard]] = set()
    stack: list[tuple[ir.Node, Offset, Guard]] = [(e, (0, 0, 0), OPEN)]
    while stack:
        x, off, guard = stack.pop()
        key = (id(x), off, guard)
        if key in seen:
            continue
        seen.add(key)
        if isinstance(x, ir.Shift) and isinstance(x.by, ir.CartesianShift):
            o = list(off)
            o[_AXES[x.by.dim.value]] += x.by.amount
            stack.append((x.expr, (o[0], o[1], o[2]), guard))
        elif isinstance(x, ir.Ref) and isinstance(x.type, FieldType):
            out.add((x.name, off, guard))
        elif isinstance(x, ir.Call) and x.fn == "concat_where":
            cond, t, f = x.args
            stack.append((cond, off, guard))
            inside = _mask(cond, off)
            if inside is not None:
                stack.append((t, off, _intersect(guard, inside)))
            else:
                stack.append((t, off, guard))
            stack.append((f, off, guard))  # outside a rectangle: not a rectangle, left open
        else:
            stack.extend((c, off, guard) for c in children(x))
    return out


def halo(guard: Guard, extent: tuple[int, ...], offset: Offset) -> tuple[int, ...] | None:
    """How far a read at ``offset`` under ``guard`` reaches beyond the compute domain, (I-, I+,
    J-, J+), for an output computed on the compute domain grown by ``extent`` (I-, I+, J-, J+);
    None if the guard selects none of those points (nothing is read)."""
    out: list[int] = []
    for a in range(2):
        lo: Side = (False, -extent[2 * a])
        hi: Side = (True, extent[2 * a + 1])
        g_lo, g_hi = guard[a]
        if g_lo is not None:
            lo = max(lo, g_lo)
        if g_hi is not None:
            hi = min(hi, g_hi)
        if lo >= hi:
            return None
        d = offset[a]
        out.append(0 if lo[0] else max(0, -(lo[1] + d)))
        out.append(max(0, hi[1] + d) if hi[0] else 0)
    return tuple(out)


def _intersect(a: Guard, b: Guard) -> Guard:
    def lower(x: Side | None, y: Side | None) -> Side | None:
        return y if x is None else x if y is None else max(x, y)

    def upper(x: Side | None, y: Side | None) -> Side | None:
        return y if x is None else x if y is None else min(x, y)

    return (
        (lower(a[0][0], b[0][0]), upper(a[0][1], b[0][1])),
        (lower(a[1][0], b[1][0]), upper(a[1][1], b[1][1])),
    )


def _mask(cond: ir.Node, off: Offset) -> Guard | None:
    """The output points where ``cond``, evaluated ``off`` away from them, holds; None if it
    is not a region mask (a conjunction of index comparisons with bounds)."""
    if isinstance(cond, ir.BinOp) and cond.op in ("and", "&"):
        a, b = _mask(cond.left, off), _mask(cond.right, off)
        return None if a is None or b is None else _intersect(a, b)
    if not (isinstance(cond, ir.BinOp) and cond.op in (">=", "<")):
        return None
    idx, shift = cond.left, 0
    while isinstance(idx, ir.Shift) and isinstance(idx.by, ir.CartesianShift):
        if idx.by.dim == getattr(idx.expr, "dim", None):
            shift += idx.by.amount
        idx = idx.expr
    if not isinstance(idx, ir.DimIndex) or idx.dim.value not in ("I", "J"):
        return None
    bound = _side(cond.right, f"__n{idx.dim.value}")
    if bound is None:
        return None
    axis = _AXES[idx.dim.value]
    # index + off[axis] + shift >= c  <=>  index >= c - off[a] - shift (likewise for <)
    moved = (bound[0], bound[1] - off[axis] - shift)
    sides: tuple[Side | None, Side | None] = (moved, None) if cond.op == ">=" else (None, moved)
    return (sides, (None, None)) if axis == 0 else ((None, None), sides)


def _side(e: ir.Node, size: str) -> Side | None:
    """``e`` as a side: a literal, or the axis' size (``size``) plus a literal."""
    c = _integer(e)
    if c is not None:
        return (False, c)
    if isinstance(e, ir.Ref) and e.name == size:
        return (True, 0)
    if isinstance(e, ir.BinOp) and e.op == "+" and isinstance(e.left, ir.Ref):
        d = _integer(e.right)
        if e.left.name == size and d is not None:
            return (True, d)
    return None


def _integer(e: ir.Node) -> int | None:
    if isinstance(e, ir.Literal) and isinstance(e.value, int | np.integer):
        return None if isinstance(e.value, bool) else int(e.value)
    return None
