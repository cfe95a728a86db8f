"""A parsed GTScript definition -> stencilkit's program IR (``ir.Program``), the engine's input.

Each interval block becomes statements over the block's K range and the compute domain:

* **PARALLEL**: the block's statements run in order as values (a later statement sees an
  earlier one's result: the value itself is used, so nothing is read back); the block ends in
  ``Apply`` statements writing the fields it assigned, all evaluated from the values before the
  block. Temporaries read only inside their block are inlined; those read later are
  *materialised* (written to a temporary field, on the compute domain grown by the offsets of
  their later reads: extent inference).
* **FORWARD / BACKWARD**: one ``ScanApply`` per block: one column's levels in order (one thread
  per column on the GPU), every written field stored at each level, so a read at ``[0, 0, -1]``
  sees the level just written and a read of a level not yet visited sees the old value.

Masked writes (field ``if``, horizontal regions) keep the old value outside the mask:
``where(mask, new, old)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.errors import SourceLocation, StencilError
from ..core.types import FieldType, ScalarType, TupleType
from ..ir import nodes as ir
from . import nodes as cn
from .axes import DIMS
from .definitions import GTScriptDefinitionError, GTScriptNotSupportedError
from .lower_exprs import INT, SIZES, ExprLowerer, Fields, select, shift
from .promotion import cast, dims_of, dtype_of

Extent = tuple[int, int, int, int]  # I minus, I plus, J minus, J plus
_ZERO: Extent = (0, 0, 0, 0)


@dataclass(frozen=True)
class Lowered:
    program: ir.Program
    fields: Fields
    written: frozenset[str]
    read: frozenset[str]
    scalars_read: frozenset[str]
    #: API fields: ((i-, i+), (j-, j+), (k-, k+)) over I, J, K
    boundary: dict[str, tuple[tuple[int, int], ...]]
    temp_extents: dict[str, tuple[int, int, int, int, int, int]]
    min_k: int


@dataclass
class _Block:
    order: str
    interval: cn.Interval
    outputs: dict[str, ir.Expr]
    loc: SourceLocation
    label: str


@dataclass
class _Pass:
    fields: Fields
    materialised: set[str]
    temp_dtypes: dict[str, str]
    mem_reads: set[str] = field(default_factory=set)
    assigned: set[str] = field(default_factory=set)


def lower_definition(d: cn.Definition) -> Lowered:
    axes = {p.name: p.axes for p in d.params if p.axes is not None}
    dtypes = {p.name: p.dtype for p in d.params if p.axes is not None}
    annotated = {name: dt for name, dt, _ in d.temporaries if dt is not None}
    for name, _, _ in d.temporaries:
        axes[name] = ("I", "J", "K")
    scalars = {p.name: p.dtype for p in d.params if p.axes is None}
    fields = Fields(axes, dtypes, scalars, frozenset(dtypes))
    dtypes.update(annotated)
    materialised: set[str] = set()
    for _ in range(8):
        state = _Pass(fields, set(materialised), dict(annotated))
        blocks = _lower_blocks(d, state)
        if state.mem_reads <= materialised:
            break
        materialised |= state.mem_reads
    for name, dt in state.temp_dtypes.items():
        dtypes[name] = dt
    return _emit(d, fields, blocks, materialised)


# ---------------------------------------------------------------- statements -> values
def _lower_blocks(d: cn.Definition, st: _Pass) -> list[_Block]:
    out = []
    for ci, comp in enumerate(d.computations):
        written: dict[str, SourceLocation] = {}
        offset_read: dict[str, SourceLocation | None] = {}
        k_read: dict[str, tuple[SourceLocation | None, int]] = {}
        for bi, block in enumerate(comp.blocks):
            env: dict[str, ir.Expr] = {}
            reader = _reader(st, comp.order, block, env, offset_read, k_read)
            lower = ExprLowerer(st.fields, reader)
            for s in block.body:
                _stmt(s, env, lower, st, written)
            outputs = {
                n: v for n, v in env.items() if n in st.fields.params or n in st.materialised
            }
            out.append(_Block(comp.order, block.interval, outputs, block.loc, f"{d.name}_c{ci}b{bi}"))
        for name, (loc, dk) in k_read.items():
            if name in written:
                raise GTScriptDefinitionError(
                    f"'{name}' is written and read at a K offset ({dk}) in a PARALLEL"
                    " computation, where the levels have no order",
                    loc or written[name],
                    hint="use FORWARD or BACKWARD to read levels written before",
                )
        for name, loc in offset_read.items():
            if name in written:
                raise GTScriptDefinitionError(
                    f"'{name}' is written and also read with a horizontal offset in one"
                    " computation; only temporaries may be",
                    loc or written[name],
                    hint=f"write the new values into a temporary, or split the computation",
                )
    return out


def _reader(
    st: _Pass, order: str, block: cn.Block, env: dict[str, ir.Expr], offset_read: dict, k_read: dict
) -> object:
    single = block.interval.min_levels() and not block.interval.start.from_top and (
        not block.interval.end.from_top and block.interval.end.offset == block.interval.start.offset + 1
    )

    def read(r: cn.FieldRead) -> ir.Expr | None:
        name, off = r.name, r.offset
        is_tmp = name not in st.fields.params
        if r.k_expr is not None:  # a variable K offset reads memory
            if name in env and order == "PARALLEL":
                raise GTScriptDefinitionError(
                    f"'{name}' is written and read at a variable K offset in a PARALLEL computation",
                    r.loc,
                    hint="use FORWARD or BACKWARD, or read a field this computation does not write",
                )
            if name in env and (off[0] or off[1]):
                raise GTScriptNotSupportedError(
                    f"'{name}' is written in this {order} computation and read at a horizontal"
                    " offset (not supported by stencilkit's GTScript yet)",
                    r.loc,
                )
            if is_tmp:
                st.mem_reads.add(name)
            return None
        if not is_tmp and (off[0] or off[1]):
            offset_read.setdefault(name, r.loc)
        if not is_tmp and off[2] and order == "PARALLEL" and not single:
            k_read.setdefault(name, (r.loc, off[2]))
        if name in env:
            if order == "PARALLEL":
                if is_tmp:
                    return shift(env[name], off)
                if off[2] and not single:
                    raise GTScriptDefinitionError(
                        f"'{name}' is written and read at a K offset ({off[2]}) in a PARALLEL"
                        " computation, where the levels have no order",
                        r.loc,
                        hint="use FORWARD or BACKWARD to read levels written before",
                    )
                return None if off[2] else env[name]
            if off == (0, 0, 0):
                return env[name]
            if off[0] or off[1]:
                raise GTScriptNotSupportedError(
                    f"'{name}' is written in this {order} computation and read at a horizontal"
                    f" offset {off} (not supported by stencilkit's GTScript yet)",
                    r.loc,
                    hint="compute it in a PARALLEL computation before this one",
                )
            if is_tmp:
                st.mem_reads.add(name)
            return None
        if is_tmp:
            st.mem_reads.add(name)
        return None

    return read


def _stmt(s: cn.Stmt, env: dict[str, ir.Expr], lower: ExprLowerer, st: _Pass, written: dict) -> None:
    lower.memo.clear()  # a value depends on what earlier statements wrote
    if isinstance(s, cn.Assign):
        name = s.target
        for r in field_reads(s.value):
            if r.name == name and (r.offset[0] or r.offset[1]):
                raise GTScriptDefinitionError(
                    f"'{name}' is assigned and read at a horizontal offset {r.offset} in the same"
                    " assignment",
                    r.loc or s.loc,
                    hint="assign the new values to another name (a temporary)",
                )
        value = _located(lambda: lower(s.value), s.loc)
        if name in st.fields.params:
            dt = st.fields.dtypes[name]
        else:
            dt = st.temp_dtypes.setdefault(name, dtype_of(value))
            st.fields.dtypes.setdefault(name, dt)
        extra = set(dims_of(value)) - set(st.fields.axes[name])
        if extra:
            raise GTScriptNotSupportedError(
                f"'{name}' over {''.join(st.fields.axes[name])} is assigned a value over"
                f" {''.join(dims_of(value))} (not supported by stencilkit's GTScript yet)",
                s.loc,
            )
        env[name] = cast(value, dt)
        st.assigned.add(name)
        written.setdefault(name, s.loc)
        return
    assert isinstance(s, cn.If)
    cond = _located(lambda: lower.boolean(lower(s.cond)), s.loc)
    before = dict(env)
    branches = []
    for body in (s.body, s.orelse):
        env.clear()
        env.update(before)
        for x in body:
            _stmt(x, env, lower, st, written)
        branches.append(dict(env))
    env.clear()
    env.update(before)
    t, f = branches
    for name in [*t, *(n for n in f if n not in t)]:
        tv, fv = t.get(name), f.get(name)
        if tv is fv:
            continue
        old = _old(name, before, st)
        env[name] = select(cond, tv if tv is not None else old, fv if fv is not None else old)


def _located(compute: Callable[[], ir.Expr], loc: SourceLocation) -> ir.Expr:
    """``compute()``, its GTScript errors given the statement's location where they have none."""
    try:
        return compute()
    except StencilError as err:
        if err.location is not None:
            raise
        raise type(err)(err.message, loc, err.hint) from None


def field_reads(e: cn.Expr) -> list[cn.FieldRead]:
    """The field reads of a parsed expression."""
    out: list[cn.FieldRead] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, cn.FieldRead):
            out.append(x)
        elif isinstance(x, cn.BinOp):
            stack += [x.left, x.right]
        elif isinstance(x, cn.UnaryOp):
            stack.append(x.operand)
        elif isinstance(x, cn.Builtin):
            stack += list(x.args)
        elif isinstance(x, cn.Cast):
            stack.append(x.arg)
        elif isinstance(x, cn.Ternary):
            stack += [x.cond, x.true, x.false]
    return out


def _old(name: str, env: dict[str, ir.Expr], st: _Pass) -> ir.Expr:
    """The value a masked write keeps where its mask is false."""
    if name in env:
        return env[name]
    if name in st.fields.params:
        return st.fields.ref(name)
    dt = st.temp_dtypes[name]
    if name in st.materialised or name in st.mem_reads:
        st.mem_reads.add(name)
        return ir.Ref(name, FieldType(tuple(DIMS[a] for a in "IJK"), dt))
    return ir.Literal(False if dt == "bool" else (0.0 if dt.startswith("float") else 0), ScalarType(dt))


# ---------------------------------------------------------------- reads and extents
def memory_reads(e: ir.Expr) -> set[tuple[str, tuple[int, int, int]]]:
    """Every field read of ``e`` from memory with its offset (I, J, K)."""
    out: set[tuple[str, tuple[int, int, int]]] = set()
    seen: set[tuple[int, tuple[int, int, int]]] = set()
    stack: list[tuple[ir.Node, tuple[int, int, int]]] = [(e, (0, 0, 0))]
    index = {"I": 0, "J": 1, "K": 2}
    from ..ir.visit import children

    while stack:
        x, off = stack.pop()
        key = (id(x), off)
        if key in seen:
            continue
        seen.add(key)
        if isinstance(x, ir.Shift) and isinstance(x.by, ir.CartesianShift):
            o = list(off)
            o[index[x.by.dim.value]] += x.by.amount
            stack.append((x.expr, (o[0], o[1], o[2])))
        elif isinstance(x, ir.Ref) and isinstance(x.type, FieldType):
            out.add((x.name, off))
        else:
            stack.extend((c, off) for c in children(x))
    return out


def _level(b: cn.LevelBound) -> ir.Expr:
    if not b.from_top:
        return ir.Literal(b.offset, INT)
    return ir.BinOp("+", SIZES["K"], ir.Literal(b.offset, INT), INT) if b.offset else SIZES["K"]


def _k_extent(ivl: cn.Interval, dk: int) -> tuple[int, int]:
    lo = max(0, -(ivl.start.offset + dk)) if not ivl.start.from_top else 0
    hi = max(0, ivl.end.offset + dk) if ivl.end.from_top else 0
    return lo, hi


def _grow(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(max(x, y) for x, y in zip(a, b))


def _emit(d: cn.Definition, fields: Fields, blocks: list[_Block], mat: set[str]) -> Lowered:
    ext: dict[str, tuple[int, ...]] = {t: (0,) * 6 for t in mat}
    boundary: dict[str, tuple[int, ...]] = {p: (0,) * 6 for p in fields.params}
    reads_of: dict[int, dict[str, set]] = {}
    for bi in range(len(blocks) - 1, -1, -1):
        b = blocks[bi]
        if b.order != "PARALLEL":  # one domain for every output of a scan
            outs_ext = [ext.get(o, (0,) * 6)[:4] for o in b.outputs]
            widest = tuple(max(e[i] for e in outs_ext) for i in range(4)) if outs_ext else _ZERO
            if widest != _ZERO and any(o in fields.params for o in b.outputs):
                raise GTScriptNotSupportedError(
                    f"a temporary written in this {b.order} computation is read at a horizontal"
                    " offset later, and the computation also writes parameters (not supported by"
                    " stencilkit's GTScript yet)",
                    b.loc,
                    hint="compute the temporary in a computation of its own",
                )
            for o in b.outputs:
                if o in ext:
                    ext[o] = (*widest, *ext[o][4:])
        reads_of[bi] = {}
        for o, v in b.outputs.items():
            e = ext.get(o, (0,) * 6)
            for name, (di, dj, dk) in memory_reads(v):
                reads_of[bi].setdefault(o, set()).add(name)
                klo, khi = _k_extent(b.interval, dk)
                need = (max(0, e[0] - di), max(0, e[1] + di), max(0, e[2] - dj), max(0, e[3] + dj), klo, khi)
                if name in ext:
                    ext[name] = _grow(ext[name], need)
                elif name in boundary:
                    boundary[name] = _grow(boundary[name], need)
    body: list[ir.Apply | ir.ScanApply] = []
    written: set[str] = set()
    read: set[str] = set()
    scalars: set[str] = set()
    for bi, b in enumerate(blocks):
        for o, v in b.outputs.items():
            for name, _ in memory_reads(v):
                read.add(name)
            from ..ir.visit import walk

            scalars |= {x.name for x in walk(v) if isinstance(x, ir.Ref) and isinstance(x.type, ScalarType)}
        written |= set(b.outputs)
        body.extend(_statements(b, fields, ext, reads_of[bi]))
    temps = tuple(
        ir.Param(t, FieldType(tuple(DIMS[a] for a in "IJK"), fields.dtypes[t])) for t in sorted(mat)
    )
    params = tuple(
        ir.Param(p.name, fields.ref(p.name).type if p.axes is not None else ScalarType(p.dtype))
        for p in d.params
    ) + tuple(ir.Param(f"__n{a}", INT) for a in "IJK")
    program = ir.Program(d.name, params, tuple(body), temps)
    min_k = max(b.interval.min_levels() for b in blocks) if blocks else 0
    bnd = {
        p: tuple((bd[2 * i], bd[2 * i + 1]) for i, a in enumerate("IJK") if a in fields.axes[p])
        for p, bd in boundary.items()
    }
    scalars -= {"__nI", "__nJ", "__nK"}
    return Lowered(
        program, fields, frozenset(written & fields.params), frozenset(read & fields.params),
        frozenset(scalars), bnd, {t: tuple(e) for t, e in ext.items()}, min_k,  # type: ignore[misc]
    )  # fmt: skip


def _domain(dims: tuple[str, ...], e: tuple[int, ...], ivl: cn.Interval) -> tuple[ir.DomainRange, ...]:
    out = []
    for i, a in enumerate(("I", "J")):
        if a in dims:
            lo, hi = e[2 * i], e[2 * i + 1]
            stop = ir.BinOp("+", SIZES[a], ir.Literal(hi, INT), INT) if hi else SIZES[a]
            out.append(ir.DomainRange(DIMS[a], ir.Literal(-lo, INT), stop))
    if "K" in dims:
        out.append(ir.DomainRange(DIMS["K"], _level(ivl.start), _level(ivl.end)))
    return tuple(out)


def _statements(b: _Block, fields: Fields, ext: dict, reads: dict[str, set]) -> list:
    groups: dict[tuple, list[str]] = {}
    for o in b.outputs:
        key = (fields.axes[o], ext.get(o, (0,) * 6)[:4]) if b.order == "PARALLEL" else ("scan",)
        groups.setdefault(key, []).append(o)
    ordered = sorted(groups.items(), key=lambda kv: (all(o in fields.params for o in kv[1]), -sum(kv[0][1]) if len(kv[0]) > 1 else 0))
    out: list = []
    done: set[str] = set()
    where = str(b.loc)
    for key, outs in ordered:
        for o in outs:
            clash = reads.get(o, set()) & done
            if clash:
                raise GTScriptNotSupportedError(
                    f"'{o}' reads the old value of {sorted(clash)}, which the same block overwrites"
                    " on a different domain (not supported by stencilkit's GTScript yet)",
                    b.loc,
                )
        values = [_as_field(b.outputs[o], fields, o) for o in outs]
        refs = tuple(fields.ref(o) for o in outs)
        expr = values[0] if len(values) == 1 else ir.MakeTuple(tuple(values), TupleType(tuple(v.type for v in values)))
        axes = fields.axes[outs[0]]
        if any(fields.axes[o] != axes for o in outs):
            raise GTScriptNotSupportedError(
                f"a {b.order} computation writing fields over different axes ({outs})"
                " (not supported by stencilkit's GTScript yet)",
                b.loc,
            )
        e = ext.get(outs[0], (0,) * 6)
        dom = _domain(axes, e, b.interval)
        if b.order == "PARALLEL":
            out.append(ir.Apply(expr, refs, dom, b.label, where))
        else:
            # the engine's scan carries each output's previous level; GTScript reads them from
            # memory instead (any level back), so the carries are unused (dead in the kernel)
            zeros = [_zero(fields.dtypes[o]) for o in outs]
            init: ir.Expr = zeros[0] if len(zeros) == 1 else ir.MakeTuple(tuple(zeros), TupleType(tuple(z.type for z in zeros)))
            out.append(ir.ScanApply(DIMS["K"], b.order == "FORWARD", f"__carry_{b.label}", init, expr, refs, dom, b.label, where))
        done |= set(outs)
    return out


def _zero(dtype: str) -> ir.Literal:
    v: bool | int | float = False if dtype == "bool" else (0.0 if dtype.startswith("float") else 0)
    return ir.Literal(v, ScalarType(dtype))


def _as_field(v: ir.Expr, fields: Fields, name: str) -> ir.Expr:
    """``v`` as a value over the output's dimensions (a scalar or lower-dimensional value is
    broadcast)."""
    t = fields.ref(name).type
    assert isinstance(t, FieldType)
    if isinstance(v.type, FieldType) and v.type.dims == t.dims:
        return v
    return ir.Call("broadcast", (v,), t)
