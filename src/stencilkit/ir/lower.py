"""Lowering: operator-level programs -> stencil-level kernels of point-wise expressions.

Shifts are pushed down to the field reads, which become ``Access`` nodes at an index relative to
the output point; neighbour shifts become table ``Lookup`` indices; reductions become
``LocalReduce`` loops masked where a table holds its skip value; tuples are flattened.
"""

from __future__ import annotations

from typing import Any

from ..core.dims import Dimension
from ..core.errors import InternalError, StencilTypeError, StencilValueError
from ..core.records import record
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec
from . import nodes as n
from .tuples import flat_name, flat_params, flatten_value
from .verify import check_program, check_stencil

__all__ = [
    "TableInfo",
    "flat_params",
    "lower_program",
    "lower_statement",
]  # flat_params: from .tuples
from .visit import children, deep, map_children


@record
class TableInfo:
    """What lowering needs to know of a neighbour table from ``offset_provider``."""

    max_neighbors: int
    has_skip: bool


Position = dict[Dimension, n.Index]


class _Lowerer:
    def __init__(self, tables: dict[str, TableInfo], carries: dict[str, str], root: n.Node) -> None:
        self.tables = tables
        self.carries = carries  # carry element name -> flattened scalar name
        self.loop_vars: set[str] = set()  # the variables of while loops (scalars at a point)
        # The dimension each neighbour table is indexed by (its rows), for skip masks.
        self.table_rows = _neighbor_targets(root)
        # Lowered values per (node, position): a value used at one position is lowered once
        # (the node is kept beside its result so that its id is not reused).
        self.memo: dict[tuple[int, Any], tuple[n.Node, Any]] = {}

    def lower(self, e: n.Expr, pos: Position) -> n.Expr:
        key = (id(e), frozenset(pos.items()))  # the same position however the dict was built
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = (e, self._lower(e, pos))
        return hit[1]

    def _lower(self, e: n.Expr, pos: Position) -> n.Expr:
        if isinstance(e, n.TupleGet):
            if isinstance(_tuple_base(e), n.IfElse):
                return self.tuple_element(e, pos)
            inner = self.simplify_tuple(e)
            if inner is not e:
                return self.lower(inner, pos)
        name = flat_name(e)
        if name is not None:
            return self.ref(name, e.type, pos)
        if isinstance(e, n.Shift):
            return self.lower(e.expr, self.shift(pos, e.by))
        if isinstance(e, n.Reduce):
            return self.reduce(e, pos)
        if isinstance(e, n.LocalSelect):
            return self.lower(e.expr, {**pos, e.dim: n.ConstIndex(e.index)})
        if isinstance(e, n.Call) and e.fn == "broadcast":
            return self.lower(e.args[0], pos)
        if isinstance(e, n.DimIndex):
            if e.dim not in pos:
                raise StencilTypeError(
                    f"the index along {e.dim} is used where {e.dim} is not defined"
                )
            return n.IndexValue(pos[e.dim], ScalarType("int64"))
        if isinstance(e, n.While):
            return self.loop(e, pos)
        if isinstance(e, n.ScanCall):
            raise InternalError("a scan call reached lowering; the frontend makes it a statement")
        if isinstance(e, n.MakeTuple):
            raise StencilTypeError("a tuple cannot be used as a single value here")
        return map_children(e, lambda c: self.lower(n.as_expr(c), pos))

    def loop(self, e: n.While, pos: Position) -> n.Expr:
        """A while loop at the point ``pos``: its variables are scalars there."""
        inits = tuple(self.lower(x, pos) for x in e.inits)
        self.loop_vars |= set(e.names)
        cond = self.lower(e.cond, pos)
        body = tuple(self.lower(x, pos) for x in e.body)
        types = TupleType(tuple(n.scalar_of(t) for t in e.type.types))
        return n.While(e.names, inits, cond, body, types)

    def simplify_tuple(self, e: n.TupleGet) -> n.Expr:
        inner = e.expr
        if isinstance(inner, n.TupleGet):
            inner = self.simplify_tuple(inner)
        if isinstance(inner, n.MakeTuple):
            return inner.elems[e.index]
        if isinstance(inner, n.IfElse):
            t = inner.true.type
            tt = t.types[e.index] if isinstance(t, TupleType) else t
            return n.IfElse(
                inner.cond,
                n.TupleGet(inner.true, e.index, tt),
                n.TupleGet(inner.false, e.index, tt),
                tt,
            )
        return e if inner is e.expr else n.TupleGet(inner, e.index, e.type)

    def tuple_element(self, e: n.TupleGet, pos: Position) -> n.Expr:
        """A scalar element of a tuple computed by an ``if`` (``x, y = t if c else f``, or the
        names an if statement assigns): the tuple is chosen once, its elements read from it."""
        if isinstance(e.type, TupleType):
            raise StencilTypeError("a tuple cannot be used as a single value here")
        leaves = self.tuple_leaves(e.expr, pos)
        return leaves[_leaf_offset(e.expr.type, e.index)]

    def tuple_leaves(self, e: n.Expr, pos: Position) -> tuple[n.Expr, ...]:
        """The lowered scalar elements of the (nested) tuple value ``e``, in order."""
        key = (id(e), ("leaves", frozenset(pos.items())))
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = (e, self._tuple_leaves(e, pos))
        return hit[1]

    def _tuple_leaves(self, e: n.Expr, pos: Position) -> tuple[n.Expr, ...]:
        if not isinstance(e.type, TupleType):
            return (self.lower(e, pos),)
        if isinstance(e, n.MakeTuple):
            return tuple(x for el in e.elems for x in self.tuple_leaves(el, pos))
        if isinstance(e, n.TupleGet) and flat_name(e) is None:
            leaves = self.tuple_leaves(e.expr, pos)
            start = _leaf_offset(e.expr.type, e.index)
            return leaves[start : start + _leaf_count(e.type)]
        if isinstance(e, n.IfElse):
            cond = self.lower(e.cond, pos)
            t, f = self.tuple_leaves(e.true, pos), self.tuple_leaves(e.false, pos)
            differ = [k for k in range(len(t)) if t[k] is not f[k]]
            if not differ:
                return t
            if len(differ) == 1:
                k = differ[0]
                return (*t[:k], n.IfElse(cond, t[k], f[k], t[k].type), *t[k + 1 :])
            tt = TupleType(tuple(t[k].type for k in differ))
            chosen = n.IfElse(
                cond,
                n.MakeTuple(tuple(t[k] for k in differ), tt),
                n.MakeTuple(tuple(f[k] for k in differ), tt),
                tt,
            )
            out = list(t)
            for j, k in enumerate(differ):
                out[k] = n.TupleGet(chosen, j, t[k].type)
            return tuple(out)
        return tuple(self.lower(x, pos) for x in flatten_value(e))

    def ref(self, name: str, t: TypeSpec, pos: Position) -> n.Expr:
        if name in self.loop_vars:
            return n.Ref(name, n.scalar_of(t))
        if name in self.carries:
            return n.Ref(self.carries[name], t)
        if isinstance(t, FieldType):
            index = []
            for d in t.dims:
                if d not in pos:
                    raise StencilTypeError(
                        f"field '{name}' over {d} is read where {d} is not defined"
                    )
                index.append(pos[d])
            return n.Access(name, tuple(index), ScalarType(t.dtype))
        return n.Ref(name, t)

    def shift(
        self,
        pos: Position,
        by: n.CartesianShift | n.NeighborShift | n.DynamicShift | n.StaggeredShift,
    ) -> Position:
        new = dict(pos)
        if isinstance(by, n.DynamicShift | n.StaggeredShift):
            return _special_shift(self, pos, by)
        if isinstance(by, n.CartesianShift):
            cur = pos.get(by.dim)
            if isinstance(cur, n.DynIndex):  # after as_offset
                new[by.dim] = n.DynIndex(cur, n.Literal(by.amount, ScalarType("int64")))
                return new
            if not isinstance(cur, n.Pos):
                raise StencilTypeError(
                    f"cannot shift along {by.dim} here: the index is not Cartesian"
                )
            new[by.dim] = n.Pos(cur.dim, cur.offset + by.amount)
            return new
        if by.offset not in self.tables:
            raise StencilValueError(
                f"offset_provider has no neighbour table for '{by.offset}'",
                hint=f"pass offset_provider={{'{by.offset}': gtx.as_connectivity(...)}}",
            )
        src = new.pop(by.target[0])
        if by.index is not None:
            neighbor: n.Index = n.ConstIndex(by.index)
            if by.index >= self.tables[by.offset].max_neighbors:
                raise StencilValueError(
                    f"{by.offset}[{by.index}] is out of range: the table has"
                    f" {self.tables[by.offset].max_neighbors} neighbours"
                )
        else:
            neighbor = new.pop(by.target[1])
            if (
                isinstance(neighbor, n.ConstIndex)
                and neighbor.value >= self.tables[by.offset].max_neighbors
            ):
                raise StencilValueError(
                    f"neighbour slot {neighbor.value} of {by.target[1]} is out of range:"
                    f" {by.offset} has {self.tables[by.offset].max_neighbors} neighbours"
                )
        new[by.source] = n.Lookup(by.offset, src, neighbor)
        return new

    def reduce(self, e: n.Reduce, pos: Position) -> n.Expr:
        tables = sorted(
            {s.by.offset for s in _shifts_into(e.expr, e.axis) if isinstance(s.by, n.NeighborShift)}
        )
        size: int | None = None
        for t in tables:
            count = self.tables[t].max_neighbors if t in self.tables else None
            if count is not None and size is not None and count != size:
                raise StencilValueError(
                    f"tables {', '.join(tables)} disagree on the size of {e.axis}"
                )
            size = count if count is not None else size
        if size is None:
            size = self._local_size(e.axis)
        var = _loop_var(pos, e.axis)  # nested reductions over one dimension: one loop variable each
        inner = dict(pos)
        inner[e.axis] = n.LocalIndex(e.axis, var)
        body = self.lower(e.expr, inner)
        masks = [
            n.Valid(t, self._source_of(t, e, pos), n.LocalIndex(e.axis, var), ScalarType("bool"))
            for t in tables
            if self.tables[t].has_skip
        ]
        mask: n.Expr | None = None
        for valid in masks:
            mask = valid if mask is None else n.BinOp("and", mask, valid, ScalarType("bool"))
        return n.LocalReduce(e.op, e.axis, size, body, mask, n.scalar_of(body.type), var)

    def _local_size(self, axis: Dimension) -> int:
        raise StencilValueError(
            f"cannot tell how many neighbours {axis} has: the reduction reads no neighbour table",
            hint="reduce over a shift such as f(E2C), whose table gives the size",
        )

    def _source_of(self, table: str, e: n.Reduce, pos: Position) -> n.Index:
        """The row of ``table`` that the reduction ``e`` at ``pos`` reads: where its shift
        through ``table`` is applied. Shifts between the reduction and that one move the row:
        in ``neighbor_sum(neighbor_sum(f(V2E)(E2V), axis=V2EDim), axis=E2VDim)`` the inner
        reduction at an edge reads V2E at the vertex E2V gives (gt4py's nested reduction with
        the shift first)."""
        found: list[n.Index] = []
        self._rows_read(e.expr, table, e.axis, pos, found)
        if found:
            if any(f != found[0] for f in found[1:]):
                raise StencilValueError(
                    f"the reduction over {e.axis} reads {table} at several different points;"
                    " stencilkit cannot tell which of them skips a neighbour",
                    hint=f"reduce each read through {table} separately and add the results",
                )
            return found[0]
        rows = self.table_rows.get(table)
        if rows is None or rows not in pos:
            raise StencilValueError(f"cannot place the skip mask of {table}")
        return pos[rows]

    def _rows_read(
        self, e: n.Node, table: str, axis: Dimension, pos: Position, found: list[n.Index]
    ) -> None:
        """Collect into ``found`` the row indices at which ``e`` at ``pos`` shifts through
        ``table`` into ``axis`` (following the positions the shifts above it give)."""
        if isinstance(e, n.Shift):
            by = e.by
            if (
                isinstance(by, n.NeighborShift)
                and by.offset == table
                and by.index is None
                and len(by.target) == 2
                and by.target[1] == axis
            ):
                if by.target[0] in pos:
                    found.append(pos[by.target[0]])
                return
            self._rows_read(e.expr, table, axis, self.shift(pos, by), found)
            return
        if isinstance(e, n.LocalSelect):
            self._rows_read(e.expr, table, axis, {**pos, e.dim: n.ConstIndex(e.index)}, found)
            return
        if isinstance(e, n.Reduce):
            inner = {**pos, e.axis: n.LocalIndex(e.axis, _loop_var(pos, e.axis))}
            self._rows_read(e.expr, table, axis, inner, found)
            return
        for c in children(e):
            self._rows_read(c, table, axis, pos, found)


def _loop_var(pos: Position, axis: Dimension) -> int:
    """A loop variable over ``axis`` that no index of ``pos`` uses (a function of ``pos`` alone)."""
    from .visit import walk

    used = [
        x.var
        for idx in pos.values()
        for x in walk(idx)
        if isinstance(x, n.LocalIndex) and x.dim == axis
    ]
    return max(used) + 1 if used else 0


def _special_shift(lw: _Lowerer, pos: Position, by: n.DynamicShift | n.StaggeredShift) -> Position:
    """Dynamic (``as_offset``) and half-integer (staggered) Cartesian shifts."""
    new = dict(pos)
    if isinstance(by, n.DynamicShift):
        cur = pos.get(by.dim)
        # from a constant index: an absolute position (a table read, GTScript's t.A[i])
        if not isinstance(cur, n.Pos | n.DynIndex | n.ConstIndex):
            raise StencilTypeError(
                f"cannot shift along {by.dim} by as_offset here: the index is not Cartesian"
            )
        new[by.dim] = n.DynIndex(cur, lw.lower(by.amount, pos))
        return new
    if by.target not in pos:
        raise StencilTypeError(
            f"the staggered shift to {by.target} is used where {by.target} is not defined"
        )
    cur = new.pop(by.target)
    if isinstance(cur, n.Pos):
        new[by.source] = n.Pos(cur.dim, cur.offset + by.amount)
    elif isinstance(cur, n.DynIndex):
        new[by.source] = n.DynIndex(cur, n.Literal(by.amount, ScalarType("int64")))
    else:
        raise StencilTypeError(f"cannot shift along {by.target} here: the index is not Cartesian")
    return new


def _tuple_base(e: n.Expr) -> n.Expr:
    while isinstance(e, n.TupleGet):
        e = e.expr
    return e


def _leaf_count(t: TypeSpec) -> int:
    return sum(_leaf_count(s) for s in t.types) if isinstance(t, TupleType) else 1


def _leaf_offset(t: TypeSpec, index: int) -> int:
    """Where element ``index`` of a tuple of type ``t`` starts among its scalar leaves."""
    assert isinstance(t, TupleType)
    return sum(_leaf_count(s) for s in t.types[:index])


def _shifts_into(e: n.Node, axis: Dimension) -> list[n.Shift]:
    from .visit import walk

    return [
        x
        for x in walk(e)
        if isinstance(x, n.Shift)
        and isinstance(x.by, n.NeighborShift)
        and x.by.index is None
        and len(x.by.target) == 2
        and x.by.target[1] == axis
    ]


@deep
def lower_program(prog: n.Program, tables: dict[str, TableInfo]) -> n.StencilProgram:
    """The stencil-level form of ``prog`` for neighbour tables described by ``tables``."""
    check_program(prog, "the frontend")
    kernels = []
    for i, stmt in enumerate(prog.body):
        kernels.append(lower_statement(stmt, tables, stmt.label or f"statement{i}"))
    out = n.StencilProgram(prog.name, flat_params(prog.params + prog.temps), tuple(kernels))
    check_stencil(out, "lower_program", tables)
    return out


@deep
def lower_statement(
    stmt: n.Apply | n.ScanApply, tables: dict[str, TableInfo], name: str
) -> n.Kernel:
    out_types = [o.type for o in stmt.outs]
    dims = n.field_dims(out_types[0])
    for o in stmt.outs[1:]:
        if set(n.field_dims(o.type)) != set(dims):
            raise StencilTypeError(f"all outputs of {stmt.label} must have the same dimensions")
    pos: Position = {d: n.Pos(d) for d in dims}
    outs = tuple(o.name for o in stmt.outs)
    if isinstance(stmt, n.Apply):
        lw = _Lowerer(tables, {}, stmt.expr)
        values = tuple(lw.lower(v, pos) for v in flatten_value(stmt.expr))
        kernel = n.Kernel(name, dims, outs, values, stmt.domain, None, stmt.where)
    else:
        carry_vals = flatten_value(n.Ref(stmt.carry_name, _carry_type(stmt)))
        carry_names = {}
        for i, c in enumerate(carry_vals):
            cname = flat_name(c)
            assert cname is not None
            carry_names[cname] = (
                f"{stmt.carry_name}__c{i}" if len(carry_vals) > 1 else f"{stmt.carry_name}__c"
            )
        lw = _Lowerer(tables, carry_names, stmt.step)
        values = tuple(lw.lower(v, pos) for v in flatten_value(stmt.step))
        inits = flatten_value(stmt.init)
        scan = n.Scan(stmt.axis, stmt.forward, tuple(carry_names.values()), inits)
        kernel = n.Kernel(name, dims, outs, values, stmt.domain, scan, stmt.where)
    _check_no_shifted_self_read(kernel)
    return kernel


def _carry_type(stmt: n.ScanApply) -> TypeSpec:
    return stmt.init.type


def _neighbor_targets(e: n.Node) -> dict[str, Dimension]:
    from .visit import walk

    return {
        x.by.offset: x.by.target[0]
        for x in walk(e)
        if isinstance(x, n.Shift) and isinstance(x.by, n.NeighborShift)
    }


def _check_no_shifted_self_read(k: n.Kernel) -> None:
    from .visit import walk

    outs = set(k.outs)
    # A scan visits one column's levels in order, storing each level before the next: its
    # outputs may be read at other levels of that column (GTScript's FORWARD/BACKWARD loops),
    # never at other columns.
    along = k.scan.axis if k.scan is not None else None
    for v in k.values:
        for x in walk(v):
            if (
                isinstance(x, n.Access)
                and x.field in outs
                and any(
                    not (isinstance(i, n.Pos) and (i.offset == 0 or i.dim == along))
                    for i in x.index
                )
            ):
                raise StencilValueError(
                    f"'{x.field}' is both written by {k.name} and read at another point ({x}):"
                    " the result would depend on the order of evaluation",
                    hint="write into a separate output field (a temporary) and copy back",
                )
