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
from .axes import DIMS, table_dims
from .definitions import GTScriptDefinitionError, GTScriptNotSupportedError, GTScriptSyntaxError
from .emit import Block, Lowered, emit, memory_reads
from .exprs import field_reads, statement_reads
from .k_writes import split_k_writes
from .lower_exprs import ExprLowerer, Fields, Reader, select, shift
from .promotion import cast, dims_of, dtype_of, typed


@dataclass
class _Pass:
    """The state of one lowering pass over a definition."""

    fields: Fields
    materialised: set[str]
    temp_dtypes: dict[str, str]
    mem_reads: set[str] = field(default_factory=set)
    assigned: set[str] = field(default_factory=set)
    column: bool = False  # the current block visits one level at a time (sequential or one level)
    flat: frozenset[str] = frozenset()  # 2-D temporaries (one value per column)
    ddim: frozenset[str] = frozenset()  # fields with data dimensions (read by element only)
    loops: int = 0  # while statements lowered so far (their variables are named after it)
    order: str = "PARALLEL"  # the current block's iteration order
    #: where each (field, offset) is read first, to name the read a too-small halo is for
    read_locs: dict[tuple[str, tuple[int, int, int]], SourceLocation] = field(default_factory=dict)


def lower_definition(d: cn.Definition) -> Lowered:
    d = split_k_writes(d)  # f[0, 0, 1] = ... in FORWARD/BACKWARD (k_writes.py)
    axes = {p.name: p.axes for p in d.params if p.axes is not None and not p.data_dims}
    dtypes = {p.name: p.dtype for p in d.params if p.axes is not None and not p.data_dims}
    by_name = {p.name: p for p in d.params}
    for comp, base, _ in d.components:  # an element of a data-dimension field: a field
        axes[comp] = by_name[base].axes  # type: ignore[assignment]
        dtypes[comp] = by_name[base].dtype
    ddim = frozenset(p.name for p in d.params if p.data_dims and p.axes)
    tables = {p.name: table_dims(p.name, len(p.data_dims)) for p in d.params if p.axes == ()}
    for name in tables:
        axes[name] = ()
        dtypes[name] = by_name[name].dtype
    annotated = {name: dt for name, dt, _ in d.temporaries if dt is not None}
    for name, _, _ in d.temporaries:
        axes[name] = ("I", "J", "K")
    scalars = {p.name: p.dtype for p in d.params if p.axes is None}
    fields = Fields(axes, dtypes, scalars, frozenset(dtypes), tables)
    dtypes.update(annotated)
    # a 2-D temporary is memory (a column's one value, read at every level): never inlined
    materialised: set[str] = set(d.flat_temporaries)
    promoted: set[str] = set()
    for _ in range(8 + len(axes)):
        state = _Pass(
            fields, set(materialised), dict(annotated), flat=d.flat_temporaries, ddim=ddim
        )
        try:
            blocks = _lower_blocks(d, state)
        except _Promote as p:
            # a 2-D field written level by level: a 3-D field to the engine, bound to a view of
            # the array whose K stride is 0 (every level is the same memory)
            promoted.add(p.name)
            fields.axes[p.name] = ("I", "J", "K")
            continue
        if state.mem_reads <= materialised:
            break
        materialised |= state.mem_reads
    for name, dt in state.temp_dtypes.items():
        dtypes[name] = dt
    return emit(d, fields, blocks, materialised, frozenset(promoted), state.read_locs)


class _Promote(Exception):
    """A 2-D field assigned 3-D values level by level: lower again with it as a 3-D field."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


# ---------------------------------------------------------------- statements -> values
def _lower_blocks(d: cn.Definition, st: _Pass) -> list[Block]:
    out = []
    for ci, comp in enumerate(d.computations):
        written: dict[str, SourceLocation] = {}
        offset_read: dict[str, SourceLocation | None] = {}
        for bi, block in enumerate(comp.blocks):
            env: dict[str, ir.Expr] = {}
            # the levels of one interval have no order, but the intervals of a computation
            # run one after the other (as in gt4py): a K-offset read is refused only where
            # its own interval writes the field (pyFV3's nh_p_grad writes pk3 in interval(0, 1)
            # and reads pk3[0, 0, 1] in interval(1, None))
            block_written: dict[str, SourceLocation] = {}
            k_read: dict[str, tuple[SourceLocation | None, int, str]] = {}
            var_k_read: dict[str, SourceLocation | None] = {}
            st.column = comp.order != "PARALLEL" or _single_level(block.interval)
            st.order = comp.order
            reader = _reader(st, comp.order, block, env, offset_read, k_read, var_k_read)
            lower = ExprLowerer(st.fields, reader)
            for s in block.body:
                _stmt(s, env, lower, st, block_written)
            for name, vloc in var_k_read.items():
                if name in block_written:  # read before or after the write: gt4py refuses both
                    raise GTScriptDefinitionError(
                        "Not allowed to write and read with `VariableKOffset` and/or"
                        f" `AbsoluteKIndex` in PARALLEL loops: '{name}' is written and read at a"
                        " variable K offset (or .at(K=...)) in a PARALLEL computation",
                        vloc or block_written[name],
                        hint="use FORWARD or BACKWARD, or read a field this computation does not"
                        " write",
                    )
            for name, (loc, dk, via) in k_read.items():
                if name in block_written:
                    through = f", through the temporary '{via}'" if via else ""
                    old = (
                        f"; to read the old values, make '{via}' in a computation of its own first"
                        if via
                        else ""
                    )
                    raise GTScriptDefinitionError(  # gt4py's words first: users match on them
                        "Not allowed to write and read with k-offsets in PARALLEL loops:"
                        f" '{name}' is written and read at a K offset ({dk}{through}) in a"
                        " PARALLEL computation, where the levels have no order",
                        loc or block_written[name],
                        hint=f"use FORWARD or BACKWARD to read levels written before{old}",
                    )
            for name, loc in block_written.items():
                written.setdefault(name, loc)
            outputs = {
                n: v for n, v in env.items() if n in st.fields.params or n in st.materialised
            }
            order = _block_order(comp.order, block.interval, outputs)
            if order != "PARALLEL":
                _promote_mixed_scan_outputs(outputs, st)
            out.append(
                Block(
                    order,
                    block.interval,
                    outputs,
                    block.loc,
                    f"{d.name}_c{ci}b{bi}",
                )
            )
        for name, loc in offset_read.items():
            if name in written:
                raise GTScriptDefinitionError(
                    f"Illegal write and read with horizontal offset detected for '{name}': '{name}'"
                    " is written and also read with a horizontal offset in one computation; only"
                    " temporaries may be",
                    loc or written[name],
                    hint="write the new values into a temporary, or split the computation",
                )
    return out


def _block_order(order: str, interval: cn.Interval, outputs: dict[str, ir.Expr]) -> str:
    """A one-level PARALLEL interval that reads a field it writes at another level (the old
    value there) runs as a one-level FORWARD loop: the engine lets a scan read its outputs at
    other levels of the column, never a parallel kernel."""
    if order != "PARALLEL" or not _single_level(interval):
        return order
    for v in outputs.values():
        if any(dk and name in outputs for name, (_, _, dk) in memory_reads(v)):
            return "FORWARD"
    return order


def _promote_mixed_scan_outputs(outputs: dict[str, ir.Expr], st: _Pass) -> None:
    """One scan writes all its outputs over one domain along K: a 2-D parameter written beside
    3-D fields (pyFV3's fillz ``zfix = 0; sum0 = 0.0`` then ``sum0 += dm``, moist_cv's
    te_zsum), or alone (map_single's ``set_dp``: ``lev = 0`` in ``FORWARD, interval(0, 1)``),
    is written level by level as a 3-D field, a view whose K stride is 0 (the same memory)."""
    axes = {o: st.fields.axes[o] for o in outputs}
    if len(set(axes.values())) < 2 and all("K" in ax for ax in axes.values()):
        return
    for o, ax in axes.items():
        if o in st.fields.params and set(ax) == {"I", "J"}:
            raise _Promote(o)


def _reader(
    st: _Pass,
    order: str,
    block: cn.Block,
    env: dict[str, ir.Expr],
    offset_read: dict[str, SourceLocation | None],
    k_read: dict[str, tuple[SourceLocation | None, int, str]],
    var_k_read: dict[str, SourceLocation | None],
) -> Reader:
    single = _single_level(block.interval)

    def read(r: cn.FieldRead) -> ir.Expr | None:
        name, off = r.name, r.offset
        if r.loc is not None:
            st.read_locs.setdefault((name, off), r.loc)
        if name in st.fields.tables:
            raise GTScriptSyntaxError(
                f"'{name}' is a GlobalTable: read its elements at absolute indices",
                r.loc,
                hint=f"write {name}.A[i, ...]",
            )
        if name in st.ddim:
            raise GTScriptSyntaxError(
                f"'{name}' has data dimensions: read one element of it",
                r.loc,
                hint=f"write {name}[0, 0, 0][n] with a compile-time index n",
            )
        is_tmp = name not in st.fields.params
        if r.k_expr is not None:  # a variable K offset reads memory
            if order == "PARALLEL" and (name in env or not single):
                var_k_read.setdefault(name, r.loc)
            if name in env and order == "PARALLEL":
                raise GTScriptDefinitionError(
                    "Not allowed to write and read with `VariableKOffset` and/or `AbsoluteKIndex`"
                    f" in PARALLEL loops: '{name}' is written and read at a variable K offset in a"
                    " PARALLEL computation",
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
            k_read.setdefault(name, (r.loc, off[2], ""))
        if name in env:
            if order == "PARALLEL":
                if is_tmp:
                    shifted = shift(env[name], off)
                    if off[2] and not single:  # t[0, 0, -1] reads the fields t was made of there
                        for field, (_, _, dk) in memory_reads(shifted):
                            if dk and field in st.fields.params:
                                k_read.setdefault(field, (r.loc, dk, name))
                    return shifted
                if off[2] and not single:
                    raise GTScriptDefinitionError(
                        "Not allowed to write and read with k-offsets in PARALLEL loops:"
                        f" '{name}' is written and read at a K offset ({off[2]}) in a PARALLEL"
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


def _stmt(
    s: cn.Stmt,
    env: dict[str, ir.Expr],
    lower: ExprLowerer,
    st: _Pass,
    written: dict[str, SourceLocation],
) -> None:
    lower.memo.clear()  # a value depends on what earlier statements wrote
    if isinstance(s, cn.Assign):
        name = s.target
        for r in field_reads(s.value):
            if r.name == name and (r.offset[0] or r.offset[1]):
                raise GTScriptDefinitionError(
                    f"Self-assignment with offset in I or J is illegal. '{name}' is assigned and"
                    f" read at a horizontal offset {r.offset} in the same assignment",
                    r.loc or s.loc,
                    hint="assign the new values to another name (a temporary)",
                )
        value = _located(lambda: lower(s.value), s.loc)
        if name in st.fields.params:
            dt = st.fields.dtypes[name]
        else:
            dt = st.temp_dtypes.setdefault(name, dtype_of(value))
            st.fields.dtypes.setdefault(name, dt)
        _check_dims(name, value, st, s.loc)
        env[name] = cast(value, dt)
        lower.forget_loops(name)
        st.assigned.add(name)
        written.setdefault(name, s.loc)
        return
    lower.forget_loops()  # a branch's or a loop's values are not those after it
    if isinstance(s, cn.While):
        _while(s, env, lower, st, written)
        lower.forget_loops()
        return
    assert isinstance(s, cn.If)
    cond = _located(lambda: lower.boolean(lower(s.cond)), s.loc)
    before = dict(env)
    assigned_before = set(st.assigned)
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
        old = _old(name, before, st, name in assigned_before)
        env[name] = select(
            cond,
            tv if tv is not None else old,
            fv if fv is not None else old,
            isinstance(s.cond, cn.RegionMask),
        )
    lower.forget_loops()


def _check_dims(name: str, value: ir.Expr, st: _Pass, loc: SourceLocation) -> None:
    """A value over more axes than its target has: a 2-D field written level by level is
    promoted (``_Promote``); over several PARALLEL levels it is an error."""
    extra = set(dims_of(value)) - set(st.fields.axes[name])
    if name in st.flat and "K" in dims_of(value) and not st.column:
        raise GTScriptDefinitionError(
            f"the 2-D temporary '{name}' is assigned a 3-D value in a PARALLEL computation"
            " over several levels: which level would it keep?",
            loc,
            hint="assign it in an interval of one level, or in a FORWARD/BACKWARD computation",
        )
    if extra == {"K"} and name in st.fields.params and {"I", "J"} <= set(st.fields.axes[name]):
        if st.column:
            raise _Promote(name)
        raise GTScriptDefinitionError(
            f"'{name}' over {''.join(st.fields.axes[name])} is assigned a 3-D value in a"
            " PARALLEL computation over several levels: which level would it keep?",
            loc,
            hint="assign it in an interval of one level, or in a FORWARD/BACKWARD computation",
        )
    if extra:
        raise GTScriptNotSupportedError(
            f"'{name}' over {''.join(st.fields.axes[name])} is assigned a value over"
            f" {''.join(dims_of(value))} (not supported by stencilkit's GTScript yet)",
            loc,
        )


def _targets(
    body: tuple[cn.Stmt, ...], out: dict[str, SourceLocation]
) -> dict[str, SourceLocation]:
    """The names ``body`` assigns (also in branches and nested loops), in order."""
    for s in body:
        if isinstance(s, cn.Assign):
            out.setdefault(s.target, s.loc)
        elif isinstance(s, cn.If):
            _targets(s.body, out)
            _targets(s.orelse, out)
        elif isinstance(s, cn.While):
            _targets(s.body, out)
    return out


def _while(
    s: cn.While,
    env: dict[str, ir.Expr],
    lower: ExprLowerer,
    st: _Pass,
    written: dict[str, SourceLocation],
) -> None:
    """``while cond: body`` at each point: the names the body assigns are the loop's variables,
    starting at their values before the loop; after it they hold their final values."""
    targets = _targets(s.body, {})
    for r in [*field_reads(s.cond), *statement_reads(s.body)]:
        # in FORWARD/BACKWARD another level is memory (final below, old ahead): a K offset
        # reads it; at the level itself only the loop's value exists
        other_level = r.offset[2] != 0 and st.order != "PARALLEL"
        if r.name in targets and (
            r.offset[:2] != (0, 0) or r.k_expr is not None or (r.offset[2] and not other_level)
        ):
            raise GTScriptDefinitionError(
                f"'{r.name}' is written in a while loop and read there at an offset"
                f" {r.offset if r.k_expr is None else '(a variable K offset)'}",
                r.loc or s.loc,
                hint="read it at the point (its value in the loop), or copy it to a temporary"
                " before the loop",
            )
    names = list(targets)
    unknown = [n for n in names if n not in st.fields.params and n not in st.temp_dtypes]
    if unknown:  # temporaries first assigned in the loop: their type from one trial lowering
        saved = (set(st.mem_reads), set(st.assigned), dict(written), dict(env))
        for x in s.body:
            _stmt(x, env, lower, st, written)
        st.mem_reads, st.assigned = saved[0], saved[1]
        written.clear()
        written.update(saved[2])
        env.clear()
        env.update(saved[3])
    dts = [st.fields.dtypes[n] if n in st.fields.params else st.temp_dtypes[n] for n in names]
    inits = [cast(_old(n, env, st, n in st.assigned), dt) for n, dt in zip(names, dts)]
    st.loops += 1
    refs = [ir.Ref(f"sk_l{st.loops}_{n}", ScalarType(dt)) for n, dt in zip(names, dts)]
    before = dict(env)
    env.update(zip(names, refs))
    lower.memo.clear()
    cond = _located(lambda: lower.boolean(lower(s.cond)), s.loc)
    for x in s.body:
        _stmt(x, env, lower, st, written)
    body = [cast(env[n], dt) for n, dt in zip(names, dts)]
    env.clear()
    env.update(before)
    lower.memo.clear()
    types = tuple(typed(dt, i, b) for dt, i, b in zip(dts, inits, body))
    loop = ir.While(tuple(r.name for r in refs), tuple(inits), cond, tuple(body), TupleType(types))
    for i, (n, t) in enumerate(zip(names, types)):
        value = ir.TupleGet(loop, i, t)
        _check_dims(n, value, st, targets[n])
        env[n] = value
        st.assigned.add(n)
        written.setdefault(n, targets[n])


def _single_level(ivl: cn.Interval) -> bool:
    s, e = ivl.start, ivl.end
    return s.from_top == e.from_top and e.offset == s.offset + 1


def _located(compute: Callable[[], ir.Expr], loc: SourceLocation) -> ir.Expr:
    """``compute()``, its GTScript errors given the statement's location where they have none."""
    try:
        return compute()
    except StencilError as err:
        if err.location is not None:
            raise
        raise type(err)(err.message, loc, err.hint) from None


def _old(name: str, env: dict[str, ir.Expr], st: _Pass, assigned: bool) -> ir.Expr:
    """The value a masked write keeps where its mask is false: a temporary not assigned before
    (in this call) is zero there, never what an earlier call left in its memory."""
    if name in env:
        return env[name]
    if name in st.fields.params:
        return st.fields.ref(name)
    dt = st.temp_dtypes[name]
    if assigned:
        st.mem_reads.add(name)
        return ir.Ref(name, FieldType(tuple(DIMS[a] for a in "IJK"), dt))
    return ir.Literal(
        False if dt == "bool" else (0.0 if dt.startswith("float") else 0), ScalarType(dt)
    )
