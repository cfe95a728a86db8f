"""A GTScript definition after parsing: computations of interval blocks of statements, with
externals, ``__INLINED`` branches and ``gtscript.function`` calls already resolved.

Expressions are small frozen trees; ``FieldRead`` carries a constant (I, J, K) offset.
The lowering (``lowering.py``) turns this into stencilkit's program IR.
"""

from __future__ import annotations

from ..core.errors import SourceLocation
from ..core.records import record


class Expr:
    __slots__ = ()


@record
class Lit(Expr):
    """A literal of ``dtype`` (GTScript's literal precision applied)."""

    value: bool | int | float
    dtype: str


@record
class FieldRead(Expr):
    """A field parameter or temporary read at ``offset`` (I, J, K) from the current point."""

    name: str
    offset: tuple[int, int, int]
    loc: SourceLocation | None = None
    #: a variable K offset ``f[0, 0, expr]``, added to ``offset[2]``, evaluated at the point
    k_expr: Expr | None = None


@record
class LevelIndex(Expr):
    """``K`` used as a value: the current level's index (0 at the compute domain's bottom)."""

    dtype: str


@record
class ScalarRead(Expr):
    """A scalar parameter read by name."""

    name: str


@record
class BinOp(Expr):
    """``left op right`` at the current point."""

    op: str  # an ir.ops spelling: + - * / // % ** < <= == != > >= and or
    left: Expr
    right: Expr


@record
class UnaryOp(Expr):
    """``op operand`` at the current point."""

    op: str  # - + not
    operand: Expr


@record
class Builtin(Expr):
    """A math builtin under its GTScript name (``min``, ``asin``, ``mod``...)."""

    fn: str
    args: tuple[Expr, ...]
    loc: SourceLocation | None = None


@record
class Cast(Expr):
    """``arg`` converted to ``dtype`` (an explicit cast or a promotion)."""

    dtype: str
    arg: Expr


@record
class Ternary(Expr):
    """``true if cond else false``, elementwise."""

    cond: Expr
    true: Expr
    false: Expr


@record
class TableRead(Expr):
    """``t.A[i, j]``: the element of ``GlobalTable`` parameter ``name`` at absolute indices."""

    name: str
    index: tuple[Expr, ...]
    loc: SourceLocation | None = None


@record
class IntegerValue(Expr):
    """``expr``, which must be an integer (a run-time data index): ``what`` it is, for the error."""

    expr: Expr
    what: str
    loc: SourceLocation | None = None


@record
class LoopVar(Expr):
    """A variable of the enclosing ``Loop``, read inside it (``name`` is unique)."""

    name: str


@record(eq=False)
class Loop(Expr):
    """A ``while`` loop in a ``gtscript.function``: its locals assigned in the body are the
    variables ``names``, starting at ``inits``; while ``cond`` holds each takes its ``body``
    value. ``LoopResult`` reads a final value."""

    names: tuple[str, ...]
    inits: tuple[Expr, ...]
    cond: Expr
    body: tuple[Expr, ...]
    loc: SourceLocation | None = None


@record
class LoopResult(Expr):
    """The final value of variable ``index`` of a ``while`` loop (``Loop.names[index]``)."""

    loop: Loop
    index: int


# ---------------------------------------------------------------- statements
class Stmt:
    __slots__ = ()


@record
class Assign(Stmt):
    """``target = value`` (a field, a temporary; at ``k_offset`` in sequential computations)."""

    target: str
    value: Expr
    loc: SourceLocation
    dtype: str | None = None  # an annotated temporary: ``tmp: float = ...``
    k_offset: int = 0  # ``f[0, 0, 1] = ...`` (sequential computations only)


@record
class If(Stmt):
    """``if cond: body else: orelse`` on a field or scalar condition."""

    cond: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]
    loc: SourceLocation


@record
class While(Stmt):
    """``while cond:`` in a stencil body: the body runs at each point until ``cond`` is false."""

    cond: Expr
    body: tuple[Stmt, ...]
    loc: SourceLocation


@record
class Bound:
    """A region bound: ``AxisIndex`` ``index`` (0 or -1) plus ``offset``."""

    index: int
    offset: int


@record
class Region:
    """``region[i_lo:i_hi, j_lo:j_hi]``; None bounds are unbounded, ``hi`` exclusive."""

    i: tuple[Bound | None, Bound | None]
    j: tuple[Bound | None, Bound | None]


@record
class Horizontal(Stmt):
    """``with horizontal(region[...], ...):``: ``body`` runs only in the regions."""

    regions: tuple[Region, ...]
    body: tuple[Stmt, ...]
    loc: SourceLocation


@record
class LevelBound:
    """An interval bound: ``offset`` levels above the bottom, or (``from_top``) the K size
    plus ``offset`` (``offset <= 0``)."""

    from_top: bool
    offset: int
    runtime: Expr | None = None  # a bound of scalar parameters (``interval(0, kbot)``), plus offset
    #: a bound read from 2-D fields (``interval(0, kbot)``, ``kbot: Field[IJ, int]``), one per
    #: column: the block runs over the levels on that side too, masked to the column's bound
    column: Expr | None = None


@record
class Interval:
    """``interval(start, end)``: the levels ``[start, end)``."""

    start: LevelBound
    end: LevelBound

    def min_levels(self) -> int:
        """The smallest K size for which this interval is valid (not reversed)."""
        s, e = self.start, self.end
        if s.runtime is not None or e.runtime is not None:
            return 0  # known at the call only
        if not s.from_top and not e.from_top:
            return e.offset
        if not s.from_top and e.from_top:
            return s.offset - e.offset  # start <= n + end
        if s.from_top and e.from_top:
            return -s.offset
        return 0


@record
class Block:
    """One ``with interval(...):`` block of a computation and its statements."""

    interval: Interval
    body: tuple[Stmt, ...]
    loc: SourceLocation


@record
class Computation:
    """``with computation(order):``: its interval blocks, in order."""

    order: str  # PARALLEL | FORWARD | BACKWARD
    blocks: tuple[Block, ...]
    loc: SourceLocation


@record
class Param:
    """A stencil parameter: a field (its axes, dtype, data dimensions) or a scalar."""

    name: str
    axes: tuple[str, ...] | None  # None: a scalar
    dtype: str
    default: object = None
    data_dims: tuple[int, ...] = ()  # Field[IJK, (dtype, (n, ...))]


@record
class Definition:
    """A parsed stencil definition: parameters, computations, temporaries."""

    name: str
    params: tuple[Param, ...]
    computations: tuple[Computation, ...]
    temporaries: tuple[
        tuple[str, str | None, SourceLocation], ...
    ]  # (name, annotated dtype, first write)
    filename: str
    #: temporaries annotated ``Field[IJ, dtype]`` (NDSL's ``FloatFieldIJ``): one value per column
    flat_temporaries: frozenset[str] = frozenset()
    #: the elements of data-dimension fields the body reads, each a field of its own to the
    #: engine (a view of the array): (element field, parameter, data index)
    components: tuple[tuple[str, str, tuple[int, ...]], ...] = ()


@record
class RegionMask(Expr):
    """True inside ``region`` (``horizontal(region[...])``), the region moved by ``shift``
    (I, J) when the mask is read at an offset."""

    region: Region
    shift: tuple[int, int] = (0, 0)
