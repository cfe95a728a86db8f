"""The end of the lowering: the values of each block become ``Apply``/``ScanApply`` statements
over their domains, after extent inference (how far each materialised temporary must be
computed beyond the compute domain, and how far each parameter field is read into its halo:
``field_info[name].boundary``).

A scan block whose temporaries are needed on a grown domain while it also writes parameters
(on the compute domain) runs twice: first the temporaries alone on the grown domain, then
everything on the compute domain.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..core.errors import SourceLocation
from ..core.types import FieldType, ScalarType, TupleType
from ..ir import nodes as ir
from ..ir.visit import children, walk
from . import nodes as cn
from .axes import DIMS
from .definitions import GTScriptNotSupportedError
from .exprs import parsed_reads
from .lower_exprs import INT, SIZES, ExprLowerer, Fields
from .promotion import cast
from .regions import guarded_reads, halo

Extent = tuple[int, int, int, int]  # I minus, I plus, J minus, J plus
_ZERO: Extent = (0, 0, 0, 0)


@dataclass(frozen=True)
class Lowered:
    """A definition lowered to the engine's IR, with what its calls need to know."""

    program: ir.Program
    fields: Fields
    written: frozenset[str]
    read: frozenset[str]
    scalars_read: frozenset[str]
    #: API fields: ((i-, i+), (j-, j+), (k-, k+)) over I, J, K
    boundary: dict[str, tuple[tuple[int, int], ...]]
    temp_extents: dict[str, tuple[int, int, int, int, int, int]]
    min_k: int
    #: 2-D fields written level by level, with the levels read around the K domain (below,
    #: above): bound to views whose K stride is 0
    promoted: dict[str, tuple[int, int]]
    #: 2-D temporaries: allocated per column and bound with K stride 0
    flat_temps: frozenset[str] = frozenset()
    #: API fields: per side of ``boundary`` (I-, I+, J-, J+, K-, K+) the read that needs that
    #: halo, as the user wrote it (``q[-2, 0, 0] at file.py:12``), for the call's errors
    halo_reads: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


@dataclass
class Block:
    """One interval block being lowered: its outputs as IR expressions."""

    order: str
    interval: cn.Interval
    outputs: dict[str, ir.Expr]
    loc: SourceLocation
    label: str


def _scalar_reads(e: cn.Expr) -> list[cn.ScalarRead]:
    return [x for x in parsed_reads(e) if isinstance(x, cn.ScalarRead)]


def memory_reads(e: ir.Expr) -> set[tuple[str, tuple[int, int, int]]]:
    """Every field read of ``e`` from memory with its offset (I, J, K)."""
    out: set[tuple[str, tuple[int, int, int]]] = set()
    seen: set[tuple[int, tuple[int, int, int]]] = set()
    stack: list[tuple[ir.Node, tuple[int, int, int]]] = [(e, (0, 0, 0))]
    index = {"I": 0, "J": 1, "K": 2}
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


def _level(b: cn.LevelBound, fields: Fields | None = None) -> ir.Expr:
    if b.runtime is not None:
        assert fields is not None
        value = cast(ExprLowerer(fields, lambda r: None)(b.runtime), "int64")
        return ir.BinOp("+", value, ir.Literal(b.offset, INT), INT) if b.offset else value
    if not b.from_top:
        return ir.Literal(b.offset, INT)
    return ir.BinOp("+", SIZES["K"], ir.Literal(b.offset, INT), INT) if b.offset else SIZES["K"]


def _k_extent(ivl: cn.Interval, dk: int) -> tuple[int, int]:
    s, e = ivl.start, ivl.end
    lo = max(0, -(s.offset + dk)) if not s.from_top and s.runtime is None else 0
    hi = max(0, e.offset + dk) if e.from_top and e.runtime is None else 0
    return lo, hi


def _grow(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(max(x, y) for x, y in zip(a, b))


def emit(
    d: cn.Definition,
    fields: Fields,
    blocks: list[Block],
    mat: set[str],
    promoted: frozenset[str],
    read_locs: dict[tuple[str, tuple[int, int, int]], SourceLocation] | None = None,
) -> Lowered:
    ext: dict[str, tuple[int, ...]] = {t: (0,) * 6 for t in mat}
    boundary: dict[str, tuple[int, ...]] = {p: (0,) * 6 for p in fields.params}
    halo_reads: dict[str, list[str]] = {p: [""] * 6 for p in fields.params}
    reads_of: dict[int, dict[str, set[str]]] = {}
    split: dict[int, tuple[int, ...]] = {}  # scan blocks whose temporaries run first, grown
    for bi in range(len(blocks) - 1, -1, -1):
        b = blocks[bi]
        if b.order != "PARALLEL":  # one domain for every output of a scan
            outs_ext = [ext.get(o, (0,) * 6)[:4] for o in b.outputs]
            widest = tuple(max(e[i] for e in outs_ext) for i in range(4)) if outs_ext else _ZERO
            api = {o for o in b.outputs if o in fields.params}
            if widest != _ZERO and api:
                # the temporaries are needed on a grown domain, the parameters only on the
                # compute domain: a first loop computes the temporaries alone on the grown
                # domain, if they do not read what the loop writes into parameters
                deps = {
                    name
                    for o, v in b.outputs.items()
                    if o not in api
                    for name, _ in memory_reads(v)
                }
                if deps & api:
                    raise GTScriptNotSupportedError(
                        f"a temporary written in this {b.order} computation is read at a"
                        " horizontal offset later, and it depends on parameters the computation"
                        f" writes ({', '.join(sorted(deps & api))}) (not supported by stencilkit's"
                        " GTScript yet)",
                        b.loc,
                        hint="compute the temporary in a computation of its own",
                    )
                split[bi] = widest
            for o in b.outputs:
                if o in ext:
                    ext[o] = (*widest, *ext[o][4:])
        reads_of[bi] = {}
        for o, v in b.outputs.items():
            if o in boundary:
                # as gt4py's K boundary, writes count too: a write at a K offset (k_writes.py:
                # its levels beyond the interval) needs the levels above/below the domain, so
                # the default domain leaves them out rather than writing past the array
                lo, hi = _k_extent(b.interval, 0)
                old = boundary[o]
                if lo > old[4] or hi > old[5]:
                    for side, now in ((4, lo), (5, hi)):
                        if now > old[side]:
                            halo_reads[o][side] = f"a write at a K offset at {b.loc}"
                    boundary[o] = (*old[:4], max(old[4], lo), max(old[5], hi))
            e = ext.get(o, (0,) * 6)
            # (in a fixed order: the read an error names is the same every build)
            for name, (di, dj, dk), guard in sorted(guarded_reads(v), key=repr):
                reads_of[bi].setdefault(o, set()).add(name)
                # a read inside a horizontal region counts only where the region meets the
                # points the output is computed on (regions.py)
                h = halo(guard, e[:4], (di, dj, dk))
                if h is None:
                    continue
                need = (*h, *_k_extent(b.interval, dk))
                if name in ext:
                    ext[name] = _grow(ext[name], need)
                elif name in boundary:
                    old = boundary[name]
                    for side, (was, now) in enumerate(zip(old, need)):
                        if now > was:
                            halo_reads[name][side] = _read_text(
                                name, (di, dj, dk), b.loc, read_locs or {}
                            )
                    boundary[name] = _grow(old, need)
    body: list[ir.Apply | ir.ScanApply] = []
    written: set[str] = set()
    read: set[str] = set()
    scalars: set[str] = set()
    for bi, b in enumerate(blocks):
        for v in b.outputs.values():
            for name, _ in memory_reads(v):
                read.add(name)
            scalars |= {
                x.name for x in walk(v) if isinstance(x, ir.Ref) and isinstance(x.type, ScalarType)
            }
        written |= set(b.outputs)
        if bi in split:
            tmps = {o: v for o, v in b.outputs.items() if o not in fields.params}
            pre = Block(b.order, b.interval, tmps, b.loc, f"{b.label}_grown")
            body.extend(_statements(pre, fields, ext, reads_of[bi]))
            body.extend(_statements(b, fields, {}, reads_of[bi]))
        else:
            body.extend(_statements(b, fields, ext, reads_of[bi]))
    temps = tuple(
        ir.Param(t, FieldType(tuple(DIMS[a] for a in "IJK"), fields.dtypes[t])) for t in sorted(mat)
    )
    params: list[ir.Param] = []
    for p in d.params:  # a data-dimension field: its elements read, in order of first use
        if p.axes == ():  # a GlobalTable: one field over its own dimensions
            params.append(ir.Param(p.name, fields.ref(p.name).type))
            continue
        names = [c for c, base, _ in d.components if base == p.name] if p.data_dims else [p.name]
        params.extend(
            ir.Param(n, fields.ref(n).type if p.axes is not None else ScalarType(p.dtype))
            for n in names
        )
    params.extend(ir.Param(f"__n{a}", INT) for a in "IJK")
    program = ir.Program(d.name, tuple(params), tuple(body), temps, alias_reads_before=True)
    min_k = max(b.interval.min_levels() for b in blocks) if blocks else 0
    declared = {p.name: p.axes or () for p in d.params}
    declared.update({c: declared[base] for c, base, _ in d.components})
    bnd = {
        p: tuple((bd[2 * i], bd[2 * i + 1]) for i, a in enumerate("IJK") if a in declared[p])
        for p, bd in boundary.items()
    }
    levels = {p: (boundary[p][4], boundary[p][5]) for p in promoted}
    for b in blocks:
        for bound in (b.interval.start, b.interval.end):
            if bound.runtime is not None:
                scalars |= {x.name for x in _scalar_reads(bound.runtime)}
    scalars -= {"__nI", "__nJ", "__nK"}
    return Lowered(
        program, fields, frozenset(written & fields.params), frozenset(read & fields.params),
        frozenset(scalars), bnd, {t: tuple(e) for t, e in ext.items()}, min_k, levels,  # type: ignore[misc]
        d.flat_temporaries & frozenset(mat), {p: tuple(r) for p, r in halo_reads.items()},
    )  # fmt: skip


def _read_text(
    name: str,
    off: tuple[int, int, int],
    block: SourceLocation,
    read_locs: dict[tuple[str, tuple[int, int, int]], SourceLocation],
) -> str:
    """The read of ``name`` at ``off`` as written, with its line (a read through a temporary
    has no line of its own: the block's)."""
    loc = read_locs.get((name, off))
    where = f"{loc.filename}:{loc.line}" if loc else f"the block at {block.filename}:{block.line}"
    return f"{name}[{', '.join(map(str, off))}] at {where}"


def _domain(
    dims: tuple[str, ...], e: tuple[int, ...], ivl: cn.Interval, fields: Fields
) -> tuple[ir.DomainRange, ...]:
    out = []
    for i, a in enumerate(("I", "J")):
        if a in dims:
            lo, hi = e[2 * i], e[2 * i + 1]
            stop = ir.BinOp("+", SIZES[a], ir.Literal(hi, INT), INT) if hi else SIZES[a]
            out.append(ir.DomainRange(DIMS[a], ir.Literal(-lo, INT), stop))
    if "K" in dims:
        out.append(ir.DomainRange(DIMS["K"], _level(ivl.start, fields), _level(ivl.end, fields)))
    return tuple(out)


def _statements(
    b: Block, fields: Fields, ext: dict[str, tuple[int, ...]], reads: dict[str, set[str]]
) -> list[ir.Apply | ir.ScanApply]:
    groups: dict[tuple[Any, ...], list[str]] = {}
    for o in b.outputs:
        key = (fields.axes[o], ext.get(o, (0,) * 6)[:4]) if b.order == "PARALLEL" else ("scan",)
        groups.setdefault(key, []).append(o)
    ordered = sorted(
        groups.items(),
        key=lambda kv: (
            all(o in fields.params for o in kv[1]),
            -sum(kv[0][1]) if len(kv[0]) > 1 else 0,
        ),
    )
    out: list[ir.Apply | ir.ScanApply] = []
    done: set[str] = set()
    where = str(b.loc)
    for _, outs in ordered:
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
        expr = (
            values[0]
            if len(values) == 1
            else ir.MakeTuple(tuple(values), TupleType(tuple(v.type for v in values)))
        )
        axes = fields.axes[outs[0]]
        if any(fields.axes[o] != axes for o in outs):
            raise GTScriptNotSupportedError(
                f"a {b.order} computation writing fields over different axes ({outs})"
                " (not supported by stencilkit's GTScript yet)",
                b.loc,
            )
        e = ext.get(outs[0], (0,) * 6)
        dom = _domain(axes, e, b.interval, fields)
        if b.order == "PARALLEL":
            out.append(ir.Apply(expr, refs, dom, b.label, where))
        else:
            # the engine's scan carries each output's previous level; GTScript reads them from
            # memory instead (any level back), so the carries are unused (dead in the kernel)
            zeros = [_zero(fields.dtypes[o]) for o in outs]
            init: ir.Expr = (
                zeros[0]
                if len(zeros) == 1
                else ir.MakeTuple(tuple(zeros), TupleType(tuple(z.type for z in zeros)))
            )
            out.append(
                ir.ScanApply(
                    DIMS["K"],
                    b.order == "FORWARD",
                    f"__carry_{b.label}",
                    init,
                    expr,
                    refs,
                    dom,
                    b.label,
                    where,
                )
            )
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
