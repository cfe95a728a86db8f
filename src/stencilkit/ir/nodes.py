"""IR nodes: a small closed set of frozen, slotted dataclasses.

Two levels share the scalar nodes:

* **operator level** (what the frontend produces): whole-field expressions with shifts
  (``Shift``), reductions over local dimensions and tuples;
* **stencil level** (what backends generate code from): point-wise expressions where every field
  read is an ``Access`` at an index relative to the current output point.

``str(node)`` prints readable IR (see ``printer.py``).
"""

from __future__ import annotations

from ..core.dims import Dimension
from ..core.records import record
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec


class Node:
    __slots__ = ()

    def __str__(self) -> str:
        from .printer import to_text

        return to_text(self)


# ---------------------------------------------------------------- shared scalar expressions
@record(repr=False)
class Literal(Node):
    """A scalar constant of ``type``."""

    value: bool | int | float
    type: ScalarType
    weak: bool = False  # a Python literal: adopts the dtype of the other operand


@record(repr=False)
class Ref(Node):
    """A parameter (field, scalar or tuple) by name."""

    name: str
    type: TypeSpec


@record(repr=False)
class BinOp(Node):
    """``left op right``, elementwise."""

    op: str  # one of ops.BINARY_OPS
    left: Expr
    right: Expr
    type: TypeSpec


@record(repr=False)
class UnaryOp(Node):
    """``op operand``, elementwise."""

    op: str  # one of ops.UNARY_OPS
    operand: Expr
    type: TypeSpec


@record(repr=False)
class Call(Node):
    """A builtin function applied element-wise (``sqrt``, ``where``, ``astype``, ...)."""

    fn: str
    args: tuple[Expr, ...]
    type: TypeSpec


@record(repr=False)
class IfElse(Node):
    """``t if cond else f`` with a scalar condition."""

    cond: Expr
    true: Expr
    false: Expr
    type: TypeSpec


# ---------------------------------------------------------------- operator level
@record(repr=False)
class CartesianShift(Node):
    """A shift by ``amount`` points along the Cartesian dimension ``dim``."""

    dim: Dimension
    amount: int


@record(repr=False)
class NeighborShift(Node):
    """Shift through the neighbour table named ``offset``; ``index`` picks one neighbour."""

    offset: str
    source: Dimension
    target: tuple[Dimension, ...]
    index: int | None


@record(repr=False)
class DynamicShift(Node):
    """``as_offset(Off, amount)``: along ``dim`` by the integer value of ``amount`` at each point."""

    dim: Dimension
    amount: Expr


@record(repr=False)
class StaggeredShift(Node):
    """A half-integer shift: a field over ``source`` read at index ``i + amount`` of ``target``,
    where ``target`` is ``source``'s staggered counterpart (or its base)."""

    source: Dimension
    target: Dimension
    amount: int


@record(repr=False)
class Shift(Node):
    """``expr`` read shifted ``by`` one of the shifts above."""

    expr: Expr
    by: CartesianShift | NeighborShift | DynamicShift | StaggeredShift
    type: TypeSpec


@record(repr=False)
class LocalSelect(Node):
    """``f[C2EDim(i)]``: neighbour slot ``index`` of a field over the local dimension ``dim``."""

    expr: Expr
    dim: Dimension
    index: int
    type: TypeSpec


@record(repr=False)
class Reduce(Node):
    """``neighbor_sum`` / ``max_over`` / ``min_over`` of ``expr`` along a local dimension."""

    op: str  # "sum" | "max" | "min"
    expr: Expr
    axis: Dimension
    type: TypeSpec


@record(repr=False)
class DimIndex(Node):
    """The index along ``dim`` at each point (``K`` in ``concat_where(K == 0, a, b)``): an integer
    field over ``dim``."""

    dim: Dimension
    type: TypeSpec


@record(repr=False)
class ScanCall(Node):
    """A scan operator applied inside a field operator: the columns it produces. ``step`` computes
    the next carry from ``Ref(carry_name)`` and the column values, as in ``ScanApply``."""

    axis: Dimension
    forward: bool
    carry_name: str
    init: Expr
    step: Expr
    type: TypeSpec
    label: str = ""


@record(repr=False)
class While(Node):
    """A loop at each point (GTScript's ``while``): the loop variables ``names`` (read as
    ``Ref(name)`` in ``cond`` and ``body``) start at ``inits``; while ``cond`` holds, each takes
    its ``body`` value, all computed from the values before the step. The value is the tuple of
    the variables' final values (``TupleGet`` picks one)."""

    names: tuple[str, ...]
    inits: tuple[Expr, ...]
    cond: Expr
    body: tuple[Expr, ...]
    type: TupleType


@record(repr=False)
class MakeTuple(Node):
    """A tuple of expressions (a tuple-valued operator's result)."""

    elems: tuple[Expr, ...]
    type: TupleType


@record(repr=False)
class TupleGet(Node):
    """Element ``index`` of the tuple-valued ``expr``."""

    expr: Expr
    index: int
    type: TypeSpec


# ---------------------------------------------------------------- stencil level
@record(repr=False)
class Pos(Node):
    """The current output index along ``dim``, plus ``offset``."""

    dim: Dimension
    offset: int = 0


@record(repr=False)
class ConstIndex(Node):
    """A constant integer index (a neighbour slot, a tuple position)."""

    value: int


@record(repr=False)
class LocalIndex(Node):
    """The loop index of an enclosing ``LocalReduce`` over ``dim``; ``var`` tells nested
    reductions over the same dimension apart."""

    dim: Dimension
    var: int = 0


@record(repr=False)
class Lookup(Node):
    """``table[source, neighbor]``: an index read from a neighbour table."""

    table: str
    source: Index
    neighbor: Index


@record(repr=False)
class DynIndex(Node):
    """``base`` plus the integer value of ``amount`` (a dynamic offset, ``as_offset``)."""

    base: Index
    amount: Expr


Index = Pos | ConstIndex | LocalIndex | Lookup | DynIndex


@record(repr=False)
class IndexValue(Node):
    """The value of an index (``DimIndex`` after lowering), as an int64 scalar."""

    index: Index
    type: ScalarType


@record(repr=False)
class Access(Node):
    """Read of ``field`` at one index per field dimension."""

    field: str
    index: tuple[Index, ...]
    type: ScalarType


@record(repr=False)
class Valid(Node):
    """True where neighbour ``table[source, neighbor]`` exists (is not the skip value)."""

    table: str
    source: Index
    neighbor: Index
    type: ScalarType


@record(repr=False)
class LocalReduce(Node):
    """Reduce ``body`` with ``op`` over ``size`` neighbours, the loop variable ``LocalIndex(dim)``;
    terms where ``mask`` is false are skipped."""

    op: str
    dim: Dimension
    size: int
    body: Expr
    mask: Expr | None
    type: ScalarType
    var: int = 0  # the loop variable: LocalIndex(dim, var)


Expr = (
    Literal
    | Ref
    | BinOp
    | UnaryOp
    | Call
    | IfElse
    | Shift
    | Reduce
    | MakeTuple
    | TupleGet
    | DimIndex
    | ScanCall
    | While
    | Access
    | Valid
    | LocalReduce
    | IndexValue
    | LocalSelect
)


# ---------------------------------------------------------------- programs
@record(repr=False)
class Param(Node):
    """A program parameter: its name and type."""

    name: str
    type: TypeSpec


@record(repr=False)
class DomainRange(Node):
    """Bounds along one dimension; ``start``/``stop`` are integer scalar expressions."""

    dim: Dimension
    start: Expr
    stop: Expr


@record(repr=False)
class FieldOperator(Node):
    """A field operator after parsing: parameters and one (possibly tuple) result expression."""

    name: str
    params: tuple[Param, ...]
    body: Expr


@record(repr=False)
class Apply(Node):
    """A program statement: evaluate ``expr`` over ``domain`` into ``outs`` (one per tuple element).
    ``domain`` empty means the whole domain of the first output."""

    expr: Expr
    outs: tuple[Ref, ...]
    domain: tuple[DomainRange, ...]
    label: str = ""
    where: str = ""  # the user's file:line of the call


@record(repr=False)
class ScanApply(Node):
    """A vertical scan writing ``outs``: along ``axis`` the carry starts at ``init`` and each level
    computes ``step`` from the carry (``Ref(carry_name)``) and the column values."""

    axis: Dimension
    forward: bool
    carry_name: str
    init: Expr
    step: Expr
    outs: tuple[Ref, ...]
    domain: tuple[DomainRange, ...]
    label: str = ""
    where: str = ""


@record(repr=False, weakref=True)  # weakly referenced by the caches by identity (core/identity.py)
class Program(Node):
    """``temps`` are fields the program writes and reads but the caller never sees (the columns
    a scan passes to another scan inside one field operator); the runner allocates them."""

    name: str
    params: tuple[Param, ...]
    body: tuple[Apply | ScanApply, ...]
    temps: tuple[Param, ...] = ()
    #: an input passed as an output too is read as it was before the call where it can be
    #: (GTScript: gt4py's statements read it before the output is written); else refused
    alias_reads_before: bool = False


def as_expr(x: Node) -> Expr:
    """``x`` as an expression (the child of an expression node that passes rebuild); a bug if not."""
    if not isinstance(x, Expr):
        from ..core.errors import InternalError

        raise InternalError(f"{type(x).__name__} where an expression belongs: {x}")
    return x


def field_dims(t: TypeSpec) -> tuple[Dimension, ...]:
    return t.dims if isinstance(t, FieldType) else ()


def scalar_of(t: TypeSpec) -> ScalarType:
    if isinstance(t, ScalarType):
        return t
    if isinstance(t, FieldType):
        return ScalarType(t.dtype)
    raise TypeError(f"{t} has no single scalar type")


# ---------------------------------------------------------------- stencil level programs
@record(repr=False)
class Scan(Node):
    """Makes a kernel a vertical scan: ``carries`` start at ``inits`` and each level's values
    become the next level's carries."""

    axis: Dimension
    forward: bool
    carries: tuple[str, ...]
    inits: tuple[Expr, ...]


@record(repr=False, weakref=True)
class Kernel(Node):
    """One parallel loop nest: at every point of ``domain`` (over ``dims``), ``outs[i] = values[i]``.
    An empty ``domain`` means the whole domain of ``outs[0]``."""

    name: str
    dims: tuple[Dimension, ...]
    outs: tuple[str, ...]
    values: tuple[Expr, ...]
    domain: tuple[DomainRange, ...]
    scan: Scan | None = None
    where: str = ""  # the user's file:line of the call this kernel comes from


@record(repr=False, weakref=True)
class StencilProgram(Node):
    """A program at stencil level; tuple parameters are flattened to ``name__i``."""

    name: str
    params: tuple[Param, ...]
    kernels: tuple[Kernel, ...]
