"""Values read at several neighbours of every point, computed once per point of their own location.

ICON's operators compose neighbour reductions: ``compute_advection_in_horizontal_momentum``
reads the vorticity at vertices (a sum over V2E of the edges' normal wind) from every edge
through E2V, at both of its vertices, twice. Inlined, each edge computes the sums of its two
vertices itself: 12 gathers of ``vn`` (and 12 of the weights) per edge and level, and every
vertex's sum is computed by each of its ~6 edges. Neither gt4py (without its temporaries
pass) nor an inlining backend avoids that. This rewrite gives such a value a statement of its
own, writing a temporary over its own location (the vertices), which the statement then reads
through the table: 6 gathers per vertex once, 2 reads per edge.

A value is hoisted when all of these hold:

* it is computed (not a parameter) and is a field over dimensions without a local one;
* it is read through neighbour tables at least twice per point of the statement (a shift
  through a table with a chosen neighbour counts once, a reduction over all neighbours twice;
  of two branches, ``where(vn > 0, x(E2C[0]), x(E2C[1]))``, the one that reads more: each
  point computes one of them, so an upwind choice reads ``x`` once);
* it lies on another location than the statement's output (vertices or cells read from edges):
  a value on the output's own location read at its neighbours (a Laplacian of a Laplacian
  through C2E2CO, icon4py's ``apply_diffusion_to_w_...``) measured slower hoisted on the H200
  (0.174 -> 0.205 ms): neighbouring output points share its inputs in cache, so recomputing it
  costs less than writing and reading it back;
* computing it gathers: it contains a neighbour reduction, and every neighbour shift inside it
  is under a reduction (a reduction skips missing neighbours, so the value exists at every
  point of its location, which is where the hoisted statement computes it).

The hoisted statement has no domain of its own: like a scan's temporaries it runs where the
later statements read it (``stages/inferred.py``), along a table's dimension over the indices
the tables hold. The runner allocates it (``stages/temporaries.py``): along a dimension that the
output it is shaped like does not have, over the range of the fields and tables it reads there.
"""

from __future__ import annotations

from ..core.dims import Dimension, DimensionKind
from ..core.types import FieldType
from . import nodes as ir
from .visit import children, deep, map_children, walk

#: Prefix of the temporaries this rewrite adds (``__nbr<statement>_<n>``).
PREFIX = "__nbr"


def _reads_per_point(expr: ir.Expr) -> dict[int, int]:
    """How often each computed value is read through a neighbour table per point of ``expr``
    (by node identity): a chosen neighbour once, all neighbours (a reduction's argument) twice;
    of two branches (``where``, ``concat_where``, ``if``) only the one that reads more counts,
    since a point computes one of them; a value first shifted along a Cartesian dimension counts
    for the value under that shift."""
    memo: dict[int, dict[int, int]] = {}

    def add(into: dict[int, int], other: dict[int, int]) -> None:
        for k, v in other.items():
            into[k] = into.get(k, 0) + v

    def reads(x: ir.Node) -> dict[int, int]:
        hit = memo.get(id(x))
        if hit is not None:
            return hit
        result: dict[int, int] = {}
        if isinstance(x, ir.Shift) and isinstance(x.by, ir.NeighborShift):
            inner = x.expr
            while isinstance(inner, ir.Shift) and isinstance(inner.by, ir.CartesianShift):
                inner = inner.expr  # vort(Koff[1])(E2V): the value is vort
            result[id(inner)] = 1 if x.by.index is not None else 2
            add(result, reads(inner))  # what computing it reads, at each neighbour
        elif _is_choice(x):
            cond, a, b = _choice_parts(x)
            add(result, reads(cond))
            ra, rb = reads(a), reads(b)
            for k in ra.keys() | rb.keys():
                result[k] = max(ra.get(k, 0), rb.get(k, 0))
        else:
            for c in children(x):
                add(result, reads(c))
        memo[id(x)] = result
        return result

    return reads(expr)


def _is_choice(x: ir.Node) -> bool:
    return isinstance(x, ir.IfElse) or (
        isinstance(x, ir.Call) and x.fn in ("where", "concat_where") and len(x.args) == 3
    )


def _choice_parts(x: ir.Node) -> tuple[ir.Node, ir.Node, ir.Node]:
    if isinstance(x, ir.IfElse):
        return x.cond, x.true, x.false
    assert isinstance(x, ir.Call)
    return x.args[0], x.args[1], x.args[2]


def _gathers_everywhere(x: ir.Expr) -> bool:
    """``x`` contains a neighbour reduction, and every neighbour shift in it is under one."""
    nodes = list(walk(x))
    if not any(isinstance(n, ir.Reduce) for n in nodes):
        return False
    if any(isinstance(n, ir.ScanCall | ir.LocalSelect) for n in nodes):
        return False
    under_reduce = {id(n) for r in nodes if isinstance(r, ir.Reduce) for n in walk(r.expr)}
    return all(
        id(n) in under_reduce
        for n in nodes
        if isinstance(n, ir.Shift) and isinstance(n.by, ir.NeighborShift)
    )


def _candidate(x: ir.Node, reads: int, out_dims: tuple[Dimension, ...]) -> bool:
    if reads < 2 or isinstance(x, ir.Ref) or not isinstance(x, ir.Expr):
        return False
    t = x.type
    if not isinstance(t, FieldType) or not t.dims:
        return False
    if any(d.kind is DimensionKind.LOCAL for d in t.dims):
        return False
    if set(t.dims) <= set(out_dims):
        return False  # over the output's own location (see the module's note)
    return _gathers_everywhere(x)


@deep
def hoist_neighbour_values(prog: ir.Program) -> ir.Program:
    """``prog`` with every value that its statements read at several neighbours of each point
    (and that gathers to be computed) computed by a statement of its own into a temporary."""
    body: list[ir.Apply | ir.ScanApply] = []
    temps = list(prog.temps)
    for si, s in enumerate(prog.body):
        body.extend(_hoisted(s, f"{PREFIX}{si}_", temps) if isinstance(s, ir.Apply) else [s])
    if len(temps) == len(prog.temps):
        return prog
    return ir.Program(prog.name, prog.params, tuple(body), tuple(temps))


def _hoisted(s: ir.Apply, prefix: str, temps: list[ir.Param]) -> list[ir.Apply | ir.ScanApply]:
    """``s`` preceded by a statement per value it reads at several neighbours of each point;
    their temporaries (named ``prefix<n>``) are appended to ``temps``."""
    counts = _reads_per_point(s.expr)
    out_dims = ir.field_dims(s.outs[0].type)
    chosen = {
        id(x) for x in walk(s.expr) if id(x) in counts and _candidate(x, counts[id(x)], out_dims)
    }
    if not chosen:
        return [s]
    before: list[ir.Apply | ir.ScanApply] = []
    done: dict[int, ir.Node] = {}

    def rewrite(x: ir.Node) -> ir.Node:
        hit = done.get(id(x))
        if hit is not None:
            return hit
        new = map_children(x, rewrite)  # values inside it are hoisted first
        if id(x) in chosen:
            assert isinstance(new, ir.Expr) and isinstance(new.type, FieldType)
            ref = ir.Ref(f"{prefix}{len(before)}", new.type)
            temps.append(ir.Param(ref.name, ref.type))
            before.append(ir.Apply(new, (ref,), (), s.label, s.where))
            new = ref
        done[id(x)] = new
        return new

    expr = ir.as_expr(rewrite(s.expr))
    return [*before, ir.Apply(expr, s.outs, s.domain, s.label, s.where)]
