"""A NumPy interpreter of the model, written from the DSL's semantics (not from stencilkit's code).

Each statement is evaluated over its domain (a box of absolute indices): a field read at a box
slices the field's array at the box minus the field's origin, a shift moves the box, a local is
re-evaluated at the box it is read at, ``E2C[i]`` gathers rows through the table, ``C2E`` makes a
local axis (after the horizontal one) that reductions fold, leaving skipped neighbours out.
All results of a statement are computed before any is written (tuple outputs, in-place updates).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .model import (
    NEIGHBOURS,
    Bin,
    Cmp,
    ConcatWhere,
    CondOp,
    IdxCond,
    Lit,
    Local,
    Nb,
    Program,
    Reduce,
    Ref,
    Scan,
    Shift,
    Statement,
    TupleGet,
    Un,
    Where,
)

Box = tuple[tuple[str, int, int], ...]

BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
    "//": np.floor_divide,
    "%": np.remainder,
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "^": np.bitwise_xor,
    "min": np.minimum,
    "max": np.maximum,
}
UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": np.negative,
    "abs": np.abs,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "sqrt": np.sqrt,
    "floor": np.floor,
}
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


def point(e: object, env: dict[str, Any]) -> Any:
    """A scan body at one level: names are carries and level arguments."""
    match e:
        case Ref(name):
            return env[name]
        case Lit(value):
            return value
        case Bin(op, a, b):
            return BINARY[op](point(a, env), point(b, env))
        case Un(fn, a):
            return UNARY[fn](point(a, env))
    raise TypeError(f"not a scan body expression: {e!r}")


def run_scan(
    scan: Scan, args: list[Any], shape: tuple[int, ...], dtype: np.dtype
) -> list[np.ndarray]:
    """The scan over the last axis (K) of ``shape``; ``args`` broadcast to ``shape``."""
    cols = [np.broadcast_to(np.asarray(a, dtype=dtype), shape) for a in args]
    carry = [np.full(shape[:-1], v, dtype=dtype) for v in scan.init]
    outs = [np.empty(shape, dtype=dtype) for _ in scan.init]
    names = ("carry",) if len(scan.init) == 1 else tuple(f"c{i}" for i in range(len(scan.init)))
    levels = range(shape[-1]) if scan.forward else reversed(range(shape[-1]))
    for k in levels:
        env = dict(zip(names, carry))
        env.update(zip(scan.args, (c[..., k] for c in cols)))
        carry = [
            np.asarray(point(b, env), dtype=dtype) * np.ones(shape[:-1], dtype=dtype)
            for b in scan.body
        ]
        for o, c in zip(outs, carry):
            o[..., k] = c
    return outs


class StatementEval:
    def __init__(
        self,
        p: Program,
        st: Statement,
        arrays: dict[str, np.ndarray],
        tables: dict[str, np.ndarray],
    ) -> None:
        self.p, self.st, self.arrays, self.tables = p, st, arrays, tables
        self.dtype = arrays[st.outs[0]].dtype
        self.params = dict(zip(st.params, st.args))
        self.locals: dict[str, tuple[Local, int]] = {
            n: (loc, i) for loc in st.locals for i, n in enumerate(loc.names)
        }
        self.scans = {s.name: s for s in p.scans}
        # a scan call's values over the box where they are used (see plan_scans), keyed by the
        # call's first local name (one scan operator may be called twice in a statement)
        self.scan_values: dict[str, list[np.ndarray]] = {}
        self.scan_boxes: dict[str, Box] = {}

    # ------------------------------------------------------------------ where scans run
    def plan_scans(self, box: Box) -> None:
        """The box each scan call runs over: the bounding box of the points where its value is
        used. A use inside a ``concat_where`` branch counts only where the branch is selected, a
        shifted use moves the points; so the scan's ``init`` applies at the first level where
        its value is used (gt4py's domain inference), not at the statement's first level."""
        needs: dict[str, list[tuple[Box, np.ndarray]]] = {}

        def need(e: object, box: Box, mask: np.ndarray) -> None:
            if not mask.any():
                return
            match e:
                case Ref(name) | Shift(name, _, _):
                    if isinstance(e, Shift):
                        box = _shifted(box, e.dim, e.off)
                    if name in self.params:
                        return
                    loc, i = self.locals[name]
                    if loc.scan is not None:
                        needs.setdefault(loc.names[0], []).append((box, mask))
                    else:
                        need(loc.exprs[i], box, mask)
                case TupleGet(name, index):
                    need(self.locals[name][0].exprs[index], box, mask)
                case Bin(_, a, b) | Cmp(_, a, b):
                    need(a, box, mask)
                    need(b, box, mask)
                case Un(_, a) | Reduce(_, a, _):
                    need(a, box, mask)
                case Where(c, a, b):
                    for x in (c, a, b):
                        need(x, box, mask)
                case ConcatWhere(c, a, b):
                    cond = np.broadcast_to(self.condition(c, box), mask.shape)
                    need(a, box, mask & cond)
                    need(b, box, mask & ~cond)

        full = np.ones(tuple(hi - lo for _, lo, hi in box), dtype=bool)
        for r in self.st.results:
            need(r, box, full)
        for loc in reversed(self.st.locals):  # a scan's arguments use only earlier locals
            uses = needs.get(loc.names[0]) if loc.scan is not None else None
            if not uses:
                continue
            hull = _hull(uses)
            self.scan_boxes[loc.names[0]] = hull
            every = np.ones(tuple(hi - lo for _, lo, hi in hull), dtype=bool)
            for e in loc.exprs:
                need(e, hull, every)

    # ------------------------------------------------------------------ reads
    def field_at(self, name: str, box: Box) -> np.ndarray:
        f = self.p.field(name)
        index = []
        for d, o in zip(f.dims, f.origin):
            lo, hi = next((lo, hi) for bd, lo, hi in box if bd == d)
            assert f.origin[f.dims.index(d)] <= lo and hi - o <= f.shape[f.dims.index(d)], (
                name,
                d,
                lo,
                hi,
            )
            index.append(slice(lo - o, hi - o))
        return self.arrays[name][tuple(index)]

    def name_at(self, name: str, box: Box) -> Any:
        if name in self.params:
            arg = self.params[name]
            if self.p.is_scalar(arg):
                value = next(s.value for s in self.p.scalars if s.name == arg)
                return self.dtype.type(value)
            return self.field_at(arg, box)
        loc, i = self.locals[name]
        if loc.scan is not None:
            key = loc.names[0]
            hull = self.scan_boxes.get(key, box)
            if key not in self.scan_values:
                shape = tuple(hi - lo for _, lo, hi in hull)
                args = [self.value(e, hull) for e in loc.exprs]
                self.scan_values[key] = run_scan(self.scans[loc.scan], args, shape, self.dtype)
            values = self.scan_values[key][i]
            if all(hlo <= lo and hi <= hhi for (_, lo, hi), (_, hlo, hhi) in zip(box, hull)):
                return values[
                    tuple(slice(lo - hlo, hi - hlo) for (_, lo, hi), (_, hlo, _) in zip(box, hull))
                ]
            # read where a concat_where branch is not selected (np.where evaluates both branches):
            # those points are discarded, so they hold a filler (NaN, so that a leak would show)
            part = np.full(
                tuple(hi - lo for _, lo, hi in box),
                np.nan if self.dtype.kind == "f" else 0,
                dtype=self.dtype,
            )
            src, dst = [], []
            for (_, lo, hi), (_, hlo, hhi) in zip(box, hull):
                a, b = max(lo, hlo), min(hi, hhi)
                if a >= b:
                    return part
                src.append(slice(a - hlo, b - hlo))
                dst.append(slice(a - lo, b - lo))
            part[tuple(dst)] = values[tuple(src)]
            return part
        return self.value(loc.exprs[i], box)

    def neighbours(self, name: str, offset: str, index: int | None, box: Box) -> np.ndarray:
        (_, hlo, hhi), rest = box[0], box[1:]
        rows = self.tables[offset][hlo:hhi]
        rows = rows[:, index] if index is not None else np.where(rows < 0, 0, rows)
        arr = self.arrays[self.params[name]][rows]
        if rest:  # the K slice
            ((_, klo, khi),) = rest
            arr = arr[..., klo:khi]
        return arr

    # ------------------------------------------------------------------ values
    def value(self, e: object, box: Box) -> Any:
        match e:
            case Ref(name):
                return self.name_at(name, box)
            case Shift(name, dim, off):
                return self.name_at(name, _shifted(box, dim, off))
            case Nb(name, offset, index):
                return self.neighbours(name, offset, index, box)
            case Lit(value):
                return value
            case Bin(op, a, b):
                return BINARY[op](self.value(a, box), self.value(b, box))
            case Un(fn, a):
                return UNARY[fn](self.value(a, box))
            case Cmp(op, a, b):
                return COMPARE[op](self.value(a, box), self.value(b, box))
            case Where(c, a, b):
                return self._typed(
                    np.where(self.value(c, box), self.value(a, box), self.value(b, box))
                )
            case ConcatWhere(c, a, b):
                return self._typed(
                    np.where(self.condition(c, box), self.value(a, box), self.value(b, box))
                )
            case TupleGet(name, index):
                loc, _ = self.locals[name]
                return self.value(loc.exprs[index], box)
            case Reduce(fn, arg, offset):
                return self.reduce(fn, arg, offset, box)
        raise TypeError(f"not an expression: {e!r}")

    def _typed(self, v: np.ndarray) -> np.ndarray:
        # np.where of two Python literals gives float64/int64: the DSL keeps the program's dtype
        return v.astype(self.dtype, copy=False)

    def condition(self, c: object, box: Box) -> Any:
        match c:
            case IdxCond(dim, op, value):
                axis = [d for d, _, _ in box].index(dim)
                _, lo, hi = box[axis]
                shape = [1] * len(box)
                shape[axis] = hi - lo
                return COMPARE[op](np.arange(lo, hi).reshape(shape), value)
            case CondOp("~", (a,)):
                return ~self.condition(a, box)
            case CondOp("&", (a, b)):
                return self.condition(a, box) & self.condition(b, box)
            case CondOp("|", (a, b)):
                return self.condition(a, box) | self.condition(b, box)
        raise TypeError(f"not a condition: {c!r}")

    def local(self, e: object, offset: str, box: Box) -> Any:
        """``e`` over the box and the offset's local axis (axis 1)."""
        if isinstance(e, Ref) and self._is_weight(e.name):
            w = self.field_at_rows(self.params[e.name], box)
            return w[..., None] if len(box) > 1 else w
        match e:
            case Nb(name, off, None):
                assert off == offset
                return self.neighbours(name, offset, None, box)
            case Bin(op, a, b):
                return BINARY[op](self.local(a, offset, box), self.local(b, offset, box))
            case Un(fn, a):
                return UNARY[fn](self.local(a, offset, box))
        v = self.value(e, box)
        return np.expand_dims(v, 1) if np.ndim(v) > 0 else v

    def _is_weight(self, name: str) -> bool:
        arg = self.params.get(name)
        return arg is not None and not self.p.is_scalar(arg) and self.p.field(arg).role == "weight"

    def field_at_rows(self, name: str, box: Box) -> np.ndarray:
        _, lo, hi = box[0]
        return self.arrays[name][lo:hi]

    def reduce(self, fn: str, arg: object, offset: str, box: Box) -> np.ndarray:
        v = np.asarray(self.local(arg, offset, box), dtype=self.dtype)
        _, _, n, _ = NEIGHBOURS[offset]
        _, lo, hi = box[0]
        mask = (self.tables[offset][lo:hi] >= 0).reshape((hi - lo, n) + (1,) * (v.ndim - 2))
        v = np.broadcast_to(v, np.broadcast_shapes(v.shape, mask.shape))
        info = np.iinfo(self.dtype) if self.dtype.kind == "i" else np.finfo(self.dtype)
        if fn == "sum":
            return np.where(mask, v, 0).sum(axis=1, dtype=self.dtype)
        if fn == "max":
            return np.where(mask, v, info.min).max(axis=1)
        return np.where(mask, v, info.max).min(axis=1)


def _shifted(box: Box, dim: str, off: int) -> Box:
    return tuple((d, lo + off, hi + off) if d == dim else (d, lo, hi) for d, lo, hi in box)


def _hull(uses: list[tuple[Box, np.ndarray]]) -> Box:
    """The bounding box of the selected points of every (box, mask) use."""
    lo: list[int] = []
    hi: list[int] = []
    for box, mask in uses:
        for axis, (_, blo, _) in enumerate(box):
            on = np.nonzero(mask.any(axis=tuple(a for a in range(mask.ndim) if a != axis)))[0]
            a, b = blo + int(on[0]), blo + int(on[-1]) + 1
            if axis == len(lo):
                lo.append(a)
                hi.append(b)
            else:
                lo[axis], hi[axis] = min(lo[axis], a), max(hi[axis], b)
    return tuple((d, a, b) for (d, _, _), a, b in zip(uses[0][0], lo, hi))


def evaluate(
    p: Program, arrays: dict[str, np.ndarray], tables: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Run the program on copies of ``arrays`` (in the model's index space); return the final arrays."""
    arrays = {k: v.copy() for k, v in arrays.items()}
    sizes = dict(p.sizes)
    with np.errstate(all="ignore"):
        for st in p.statements:
            out_dims = p.field(st.outs[0]).dims
            given = {d: (lo, hi) for d, lo, hi in st.domain or ()}
            box = tuple((d, *given.get(d, (0, sizes[d]))) for d in out_dims)
            ev = StatementEval(p, st, arrays, tables)
            ev.plan_scans(box)
            shape = tuple(hi - lo for _, lo, hi in box)
            results = [
                np.broadcast_to(np.asarray(ev.value(r, box), dtype=ev.dtype), shape).copy()
                for r in st.results
            ]
            for o, r in zip(st.outs, results):
                arrays[o][tuple(slice(lo, hi) for _, lo, hi in box)] = r
    return arrays
