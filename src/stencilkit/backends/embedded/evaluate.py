"""Embedded execution: stencil-level kernels evaluated with whole-array operations.

One implementation serves NumPy and CuPy: the array namespace comes from the fields. Every value
is an array over the kernel's dimensions plus the local dimensions of enclosing reductions
(size-1 axes where a value does not vary), so broadcasting does the rest.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Any

import numpy as np

from ...core.dims import Dimension
from ...core.domain import UnitRange
from ...core.errors import InternalError, StencilValueError
from ...core.identity import IdentityCache
from ...ir import nodes as ir
from ...ir.ops import array_function
from ...ir.visit import deep, use_counts


def _quietly(fn: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    """``//`` and ``%`` without NumPy's warnings: an integer division by zero gives 0 and
    INT_MIN // -1 wraps, on every backend (docs/semantics.md)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return fn(a, b)


def _remainder(xp: ModuleType, a: Any, b: Any) -> Any:
    """Python's ``%`` (the sign of the divisor) as NumPy computes it for floats, exactly: from
    ``fmod``. CuPy's ``remainder`` goes through a division and is off by up to an ulp of the
    dividend (``-1.8e308 % 1.5`` gives ``-4e291``, not ``1.5``-sized), so for floats on CuPy the
    same steps as NumPy's are taken here."""
    if xp is np:
        return np.remainder(a, b)
    r = xp.remainder(a, b)
    if r.dtype.kind != "f":
        return r
    m = xp.fmod(a, b)
    m = xp.where((m != 0) & ((m < 0) != (b < 0)), m + b, m)
    return xp.where(m == 0, xp.copysign(m, b), m)


_BINARY: dict[str, Callable[[ModuleType, Any, Any], Any]] = {
    "+": lambda xp, a, b: a + b,
    "-": lambda xp, a, b: a - b,
    "*": lambda xp, a, b: a * b,
    "/": lambda xp, a, b: a / b,
    "//": lambda xp, a, b: _quietly(xp.floor_divide, a, b),
    "%": lambda xp, a, b: _quietly(lambda x, y: _remainder(xp, x, y), a, b),  # the divisor's sign
    "**": lambda xp, a, b: xp.power(a, b),
    "&": lambda xp, a, b: a & b,
    "|": lambda xp, a, b: a | b,
    "^": lambda xp, a, b: a ^ b,
    "<": lambda xp, a, b: a < b,
    "<=": lambda xp, a, b: a <= b,
    "==": lambda xp, a, b: a == b,
    "!=": lambda xp, a, b: a != b,
    ">": lambda xp, a, b: a > b,
    ">=": lambda xp, a, b: a >= b,
    "and": lambda xp, a, b: xp.logical_and(a, b),
    "or": lambda xp, a, b: xp.logical_or(a, b),
}
_UNARY: dict[str, Callable[[ModuleType, Any], Any]] = {
    "-": lambda xp, a: -a,
    "+": lambda xp, a: a,
    "~": lambda xp, a: ~a,
    "not": lambda xp, a: xp.logical_not(a),
}
_CALLS: dict[str, str] = {
    "abs": "absolute",
    "arcsin": "arcsin",
    "arccos": "arccos",
    "arctan": "arctan",
}
_REDUCE_IDENTITY = {
    "sum": lambda dt: dt.type(0),
    "max": lambda dt: _lowest(dt),
    "min": lambda dt: _highest(dt),
}


# The identities of max/min over no neighbours: the lowest/highest finite value, as in the
# compiled backends (and gt4py's gtfn), not infinities.
def _lowest(dt: np.dtype) -> Any:
    return np.finfo(dt).min if dt.kind == "f" else np.iinfo(dt).min


def _highest(dt: np.dtype) -> Any:
    return np.finfo(dt).max if dt.kind == "f" else np.iinfo(dt).max


class KernelEvaluator:
    """Evaluates one kernel's expressions over a concrete domain."""

    def __init__(
        self,
        xp: ModuleType,
        dims: tuple[Dimension, ...],
        domain: tuple[UnitRange, ...],
        fields: Mapping[str, Any],
        scalars: Mapping[str, Any],
        tables: Mapping[str, Any],
        shared: frozenset[int] | None = None,
    ) -> None:
        self.xp = xp
        # ids of the nodes used more than once (None: keep every value). Only those are kept:
        # keeping every intermediate array alive until the kernel ends costs fresh memory (and
        # page faults) for each of them, where freed ones would be reused while hot in cache.
        self.shared = shared
        # kernel dimensions, then (dimension, loop variable) of each enclosing reduction
        self.axes: list[Any] = list(dims)
        self.ranges: dict[Dimension, UnitRange] = dict(zip(dims, domain))
        self.local_sizes: dict[tuple[Dimension, int], int] = {}
        self.fields = fields
        self.scalars = dict(scalars)
        self.tables = tables
        # > 0 inside a concat_where branch: reads there may fall outside a field where the branch
        # is not selected, so they are clamped into the field (the values are discarded).
        self.guarded = 0
        # Values by (node id, enclosing reductions): a shared value is computed once. A value
        # first computed inside a concat_where branch is the same outside it: it is read there
        # too, so within the field, where clamping changes nothing.
        self.memo: dict[tuple[int, tuple[Any, ...]], Any] = {}
        self.reductions: tuple[Any, ...] = ()
        # inside a while loop: the points still looping (elsewhere the values are discarded, so
        # a data-dependent read there is kept inside its field instead of being an error)
        self.active: Any = None

    # --------------------------------------------------------------- index arrays
    def _axis_shape(self, d: Any, size: int) -> tuple[int, ...]:
        return tuple(size if a == d else 1 for a in self.axes)

    def index_array(self, idx: ir.Index) -> Any:
        xp = self.xp
        if isinstance(idx, ir.Pos):
            r = self.ranges[idx.dim]
            return xp.arange(r.start + idx.offset, r.stop + idx.offset).reshape(
                self._axis_shape(idx.dim, len(r))
            )
        if isinstance(idx, ir.ConstIndex):
            return xp.asarray(idx.value).reshape((1,) * len(self.axes))
        if isinstance(idx, ir.LocalIndex):
            key = (idx.dim, idx.var)
            n = self.local_sizes[key]
            return xp.arange(n).reshape(self._axis_shape(key, n))
        if isinstance(idx, ir.DynIndex):
            return self.index_array(idx.base) + xp.asarray(self.eval(idx.amount)).astype(np.int64)
        if isinstance(idx, ir.Lookup):
            return self._lookup(idx)
        raise InternalError(f"unknown index {idx!r}")

    def _lookup(self, idx: ir.Lookup, replace_skip: bool = True) -> Any:
        xp = self.xp
        table = self.tables[idx.table]
        rows = self.index_array(idx.source) - table.domain.ranges[0].start
        if self.guarded:
            rows = xp.clip(rows, 0, table.ndarray.shape[0] - 1)
        cols = self.index_array(idx.neighbor)
        values = table.ndarray[rows, cols]
        if replace_skip and table.skip_value is not None:
            # Skipped neighbours are masked out by the reduction; read a valid element instead.
            values = xp.where(values == table.skip_value, table.domain.ranges[0].start * 0, values)
        return values

    # --------------------------------------------------------------- expressions
    def eval(self, e: ir.Expr) -> Any:
        if self.shared is not None and id(e) not in self.shared:
            return self._eval(e)
        key = (id(e), self.reductions)
        try:
            return self.memo[key]
        except KeyError:
            value = self.memo[key] = self._eval(e)
            return value

    def _eval(self, e: ir.Expr) -> Any:
        method = getattr(self, f"_{type(e).__name__}", None)
        if method is None:
            raise InternalError(f"embedded backend cannot evaluate {type(e).__name__}")
        return method(e)

    def _Literal(self, e: ir.Literal) -> Any:
        return np.dtype(e.type.dtype).type(e.value)

    def _Ref(self, e: ir.Ref) -> Any:
        return self.scalars[e.name]

    def _Access(self, e: ir.Access) -> Any:
        f = self.fields[e.field]
        arr = f.ndarray
        fdims = f.domain.dims
        origin = {d: r.start for d, r in zip(fdims, f.domain.ranges)}
        if all(isinstance(i, ir.Pos) for i in e.index):
            slices = []
            # a staggered read indexes the field's dimension by the domain's (Pos.dim)
            pdims = [i.dim for i in e.index]  # type: ignore[union-attr]
            for a, (d, i) in enumerate(zip(fdims, e.index)):
                r = self.ranges[i.dim]  # type: ignore[union-attr]
                start = r.start + i.offset - origin[d]  # type: ignore[union-attr]
                if self.guarded and not 0 <= start <= start + len(r) <= arr.shape[a]:
                    return self._clamped_read(e)
                slices.append(slice(start, start + len(r)))
            view = arr[tuple(slices)]
            # Reorder to the evaluation axes and add size-1 axes for missing dimensions.
            order = sorted(range(len(fdims)), key=lambda a: self.axes.index(pdims[a]))
            view = view.transpose(order)
            present = [pdims[a] for a in order]
            return view.reshape(
                tuple(len(self.ranges[a]) if a in present else 1 for a in self.axes)
            )
        if self.guarded:
            return self._clamped_read(e)
        index = tuple(
            self._field_index(e, a, i) - origin[d] for a, (d, i) in enumerate(zip(fdims, e.index))
        )
        return arr[index]

    def _field_index(self, e: ir.Access, axis: int, idx: ir.Index) -> Any:
        """The indices along one axis of a read; skipped neighbours read the last element (NumPy's
        index -1, as gt4py's embedded backend does); dynamic offsets are checked."""
        f = self.fields[e.field]
        r = f.domain.ranges[axis]
        if isinstance(idx, ir.Lookup):
            table = self.tables[idx.table]
            if table.skip_value is not None:
                raw = self._lookup(idx, replace_skip=False)
                return self.xp.where(raw == table.skip_value, r.stop - 1, raw)
        values = self.index_array(idx)
        if _has_dynamic(idx):
            bad = (values < r.start) | (values >= r.stop)
            wrong = values
            if self.active is not None:
                bad = bad & self._with_axes(self.active)
                values = self.xp.clip(values, r.start, max(r.stop - 1, r.start))
            if bool(bad.any()):
                d = f.domain.dims[axis]
                # the offending indices (before the inactive points were clipped)
                outside = self.xp.broadcast_to(wrong, bad.shape)[bad]
                lo, hi = int(outside.min()), int(outside.max())
                raise StencilValueError(
                    f"as_offset reads field '{e.field}' along {d} at indices {lo}..{hi}, but '{e.field}' is"
                    f" defined only on {r}",
                    hint="check the offset field: its values move reads out of the field",
                )
        return values

    def _clamped_read(self, e: ir.Access) -> Any:
        f = self.fields[e.field]
        arr = f.ndarray
        index = tuple(
            self.xp.clip(self.index_array(i) - r.start, 0, max(n - 1, 0))
            for i, r, n in zip(e.index, f.domain.ranges, arr.shape)
        )
        return arr[index]

    def _IndexValue(self, e: ir.IndexValue) -> Any:
        return self.xp.asarray(self.index_array(e.index), dtype=np.int64)

    def _BinOp(self, e: ir.BinOp) -> Any:
        return _BINARY[e.op](self.xp, self.eval(e.left), self.eval(e.right))

    def _UnaryOp(self, e: ir.UnaryOp) -> Any:
        return _UNARY[e.op](self.xp, self.eval(e.operand))

    def _IfElse(self, e: ir.IfElse) -> Any:
        cond = self.eval(e.cond)
        if getattr(cond, "ndim", 0) == 0:
            return self.eval(e.true) if bool(cond) else self.eval(e.false)
        # A condition per column (an if in a scan body): both branches, chosen per point; the
        # branch not taken at a point is computed there too (it may divide by zero), its values
        # discarded.
        with np.errstate(all="ignore"):
            t, f = self.eval(e.true), self.eval(e.false)
            if isinstance(t, tuple):
                return tuple(self.xp.where(cond, a, b) for a, b in zip(t, f))
        dtype = np.dtype(e.type.dtype)  # type: ignore[union-attr]
        return self.xp.asarray(self.xp.where(cond, t, f)).astype(dtype, copy=False)

    def _MakeTuple(self, e: ir.MakeTuple) -> Any:
        return tuple(self.eval(x) for x in e.elems)

    def _TupleGet(self, e: ir.TupleGet) -> Any:
        return self.eval(e.expr)[e.index]

    def _Call(self, e: ir.Call) -> Any:
        xp = self.xp
        dtype = np.dtype(e.type.dtype)  # type: ignore[union-attr]
        if e.fn == "concat_where":
            mask = self.eval(e.args[0])
            self.guarded += 1
            try:
                with np.errstate(
                    all="ignore"
                ):  # values where a branch is not selected are discarded
                    t, f = self.eval(e.args[1]), self.eval(e.args[2])
            finally:
                self.guarded -= 1
            return xp.asarray(xp.where(mask, t, f)).astype(dtype, copy=False)
        if e.fn == "where":
            return xp.where(*self._where_branches(e)).astype(dtype, copy=False)
        args = [self.eval(a) for a in e.args]
        if e.fn == "astype":
            a = args[0]
            return a.astype(dtype) if hasattr(a, "astype") else dtype.type(a)
        if e.fn == "broadcast":
            return args[0]
        if e.fn in _CALLS:
            return getattr(xp, _CALLS[e.fn])(*args)
        return array_function(xp, e.fn)(*args)

    def _where_branches(self, e: ir.Call) -> tuple[Any, Any, Any]:
        """``where(c, t, f)``'s operands, each branch evaluated with the points it is chosen at
        as the active ones (``masked``)."""
        cond = self.eval(e.args[0])
        if getattr(cond, "ndim", 0) == 0:
            return cond, self.eval(e.args[1]), self.eval(e.args[2])
        with self.masked(cond):
            t = self.eval(e.args[1])
        with self.masked(cond, negate=True):
            f = self.eval(e.args[2])
        return cond, t, f

    @contextlib.contextmanager
    def masked(self, cond: Any, negate: bool = False) -> Iterator[None]:
        """Evaluate with only the points where ``cond`` holds (or, ``negate``, does not) active:
        an as_offset read counts only where its value is selected, as in the compiled kernels
        (icon4py's truly horizontal diffusion reads past the top level where ``zd_diffcoef``
        is 0, and its ``where`` discards the value); a read outside its field at an inactive
        point reads inside it instead. Values computed under the mask stay under it (a memo of
        their own), so a read outside the mask is checked again."""
        chosen = self.xp.asarray(cond, dtype=bool)
        if negate:
            chosen = ~chosen
        outer, memo = self.active, self.memo
        if outer is not None:
            chosen = self._with_axes(outer) & chosen
        self.active, self.memo = chosen, dict(memo)
        try:
            yield
        finally:
            self.active, self.memo = outer, memo

    def _with_axes(self, a: Any) -> Any:
        """``a`` (over the axes of an enclosing loop) with size-1 axes for reductions opened since."""
        a = self.xp.asarray(a)
        return a.reshape(a.shape + (1,) * (len(self.axes) - a.ndim))

    def _While(self, e: ir.While) -> Any:
        """All points loop together: each step computes the body everywhere and keeps the new
        values where the condition still holds, until it holds nowhere."""
        xp = self.xp
        shape = tuple(
            len(self.ranges[a]) if a in self.ranges else self.local_sizes[a] for a in self.axes
        )
        dtypes = [np.dtype(t.dtype) for t in e.type.types]  # type: ignore[union-attr]
        values = [
            xp.array(xp.broadcast_to(xp.asarray(self.eval(x), dtype=dt), shape))
            for x, dt in zip(e.inits, dtypes)
        ]
        outer = (self.memo, self.active, {n: self.scalars.get(n) for n in e.names})
        active = xp.ones(shape, dtype=bool) if self.active is None else self._with_axes(self.active)
        try:
            while True:
                # values of one step only: the loop's variables change from one step to the
                # next (and a long loop keeps no arrays of earlier steps)
                self.memo = {}
                self.scalars.update(zip(e.names, values))
                self.active = active
                with np.errstate(all="ignore"):
                    active = active & xp.asarray(self.eval(e.cond))
                if not bool(active.any()):
                    return tuple(values)
                self.active = active
                with np.errstate(all="ignore"):
                    new = [self.eval(x) for x in e.body]
                values = [
                    xp.where(active, xp.asarray(x, dtype=dt), v)
                    for x, v, dt in zip(new, values, dtypes)
                ]
        finally:
            self.memo, self.active = outer[0], outer[1]
            for name, old in outer[2].items():
                if old is None:
                    self.scalars.pop(name, None)
                else:
                    self.scalars[name] = old

    def _Valid(self, e: ir.Valid) -> Any:
        table = self.tables[e.table]
        rows = self.index_array(e.source) - table.domain.ranges[0].start
        cols = self.index_array(e.neighbor)
        return table.ndarray[rows, cols] != table.skip_value

    def _LocalReduce(self, e: ir.LocalReduce) -> Any:
        xp = self.xp
        key = (e.dim, e.var)
        self.axes.append(key)
        self.local_sizes[key] = e.size
        outer = self.reductions
        self.reductions = (*outer, key, e.size)
        try:
            body = self.eval(e.body)
            dt = np.dtype(e.type.dtype)
            shape = tuple(
                len(self.ranges[a]) if a in self.ranges else self.local_sizes[a] for a in self.axes
            )
            body = xp.broadcast_to(xp.asarray(body, dtype=dt), shape)
            if e.mask is not None:
                mask = self.eval(e.mask)
                body = xp.where(mask, body, _REDUCE_IDENTITY[e.op](dt))
            reducer = {"sum": xp.sum, "max": xp.max, "min": xp.min}[e.op]
            return reducer(body, axis=-1).astype(dt, copy=False)
        finally:
            self.axes.pop()
            del self.local_sizes[key]
            self.reductions = outer


def _has_dynamic(idx: ir.Index) -> bool:
    return isinstance(idx, ir.DynIndex) or (
        isinstance(idx, ir.Lookup) and (_has_dynamic(idx.source) or _has_dynamic(idx.neighbor))
    )


#: Shared nodes per kernel (by identity, as long as the kernel lives).
_SHARED: IdentityCache[ir.Kernel, frozenset[int]] = IdentityCache(512)


def shared_nodes(k: ir.Kernel) -> frozenset[int]:
    """The ids of the nodes of ``k`` that more than one parent uses (found once per kernel)."""
    hit = _SHARED.get(k)
    if hit is not None:
        return hit
    roots = (*k.values, *(k.scan.inits if k.scan else ()))
    return _SHARED.put(k, frozenset(i for i, n in use_counts(*roots).items() if n > 1))


@deep
def run_kernel(
    xp: ModuleType,
    k: ir.Kernel,
    domain: tuple[UnitRange, ...],
    fields: Mapping[str, Any],
    scalars: Mapping[str, Any],
    tables: Mapping[str, Any],
) -> None:
    """Evaluate ``k`` over ``domain`` and write its outputs."""
    if any(len(r) == 0 for r in domain):
        return
    if k.scan is None:
        ev = KernelEvaluator(xp, k.dims, domain, fields, scalars, tables, shared_nodes(k))
        values = _detached(xp, [ev.eval(v) for v in k.values], [fields[o] for o in k.outs])
        for name, value in zip(k.outs, values):
            _store(xp, fields[name], k.dims, domain, value)
        return
    scan = k.scan
    axis_pos = k.dims.index(scan.axis)
    levels = list(domain[axis_pos])
    if not scan.forward:
        levels.reverse()
    shared = shared_nodes(k)
    carry = {
        c: KernelEvaluator(xp, k.dims, domain, fields, scalars, tables).eval(i)
        for c, i in zip(scan.carries, scan.inits)
    }
    for level in levels:
        level_dom = tuple(
            UnitRange(level, level + 1) if d == scan.axis else r for d, r in zip(k.dims, domain)
        )
        ev = KernelEvaluator(xp, k.dims, level_dom, fields, {**scalars, **carry}, tables, shared)
        values = _detached(xp, [ev.eval(v) for v in k.values], [fields[o] for o in k.outs])
        for name, value in zip(k.outs, values):
            _store(xp, fields[name], k.dims, level_dom, value)
        carry = dict(zip(scan.carries, values))


def _detached(xp: ModuleType, values: list[Any], outs: list[Any]) -> list[Any]:
    """``values`` with every array that may share memory with one of several outputs copied: a
    value passed through unchanged (``return a + b, o`` written to ``out=(o, y)``) must be the
    value before the statement, not what an earlier output of the same statement wrote."""
    if len(outs) < 2:
        return values
    return [
        xp.array(v, copy=True)
        if isinstance(v, xp.ndarray) and any(xp.may_share_memory(v, o.ndarray) for o in outs)
        else v
        for v in values
    ]


def _store(
    xp: ModuleType, out: Any, dims: tuple[Dimension, ...], domain: tuple[UnitRange, ...], value: Any
) -> None:
    odims = out.domain.dims
    ranges = dict(zip(dims, domain))
    slices = tuple(
        slice(ranges[d].start - r.start, ranges[d].stop - r.start)
        for d, r in zip(odims, out.domain.ranges)
    )
    value = xp.asarray(value, dtype=out.dtype)
    shape = tuple(len(r) for r in domain)
    value = xp.broadcast_to(
        value.reshape(value.shape + (1,) * (len(dims) - value.ndim))
        if value.ndim < len(dims)
        else value,
        shape,
    )
    perm = [dims.index(d) for d in odims]
    out.ndarray[slices] = value.transpose(perm)
