"""The fuzzer's program model: expressions, field operators, scans, program statements, and the
Python source of the stencilkit module that they stand for.

The model is the single truth that both sides read: ``source.py`` prints it as DSL source for
stencilkit to parse, ``reference.py`` evaluates it with NumPy from the DSL's documented semantics.
"""

from __future__ import annotations

from dataclasses import dataclass, field


# ------------------------------------------------------------------------------ expressions
@dataclass(frozen=True)
class Ref:
    """A field or scalar parameter, a local variable, or a scan carry / level argument."""

    name: str


@dataclass(frozen=True)
class Shift:
    """``name(D + off)``: a Cartesian shift of a field parameter or a local."""

    name: str
    dim: str
    off: int


@dataclass(frozen=True)
class Nb:
    """``name(E2C[index])`` (one neighbour) or ``name(C2E)`` (all of them: a local dimension)."""

    name: str
    offset: str
    index: int | None


@dataclass(frozen=True)
class Lit:
    value: float | int


@dataclass(frozen=True)
class Bin:
    """``+ - * / // % & | ^`` or ``min``/``max`` (gtx.minimum / gtx.maximum)."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Un:
    """``neg``, ``abs``, ``sin``, ``cos``, ``tanh``, ``sqrt``, ``floor``."""

    fn: str
    arg: Expr


@dataclass(frozen=True)
class Cmp:
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Where:
    cond: Cmp
    a: Expr
    b: Expr


@dataclass(frozen=True)
class IdxCond:
    """``D op value``, e.g. ``K == 0`` (concat_where conditions)."""

    dim: str
    op: str
    value: int


@dataclass(frozen=True)
class CondOp:
    """``&``, ``|`` of two index conditions, or ``~`` of one."""

    op: str
    args: tuple[Cond, ...]


@dataclass(frozen=True)
class ConcatWhere:
    cond: Cond
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Reduce:
    """``neighbor_sum|max_over|min_over(arg, axis=<offset>Dim)`` over a neighbour table."""

    fn: str
    arg: Expr
    offset: str


@dataclass(frozen=True)
class TupleGet:
    name: str
    index: int


Expr = Ref | Shift | Nb | Lit | Bin | Un | Cmp | Where | ConcatWhere | Reduce | TupleGet
Cond = IdxCond | CondOp


# ------------------------------------------------------------------------------ operators
@dataclass(frozen=True)
class Local:
    """``names = value``: one name and one expression, a tuple local (``p = (e1, e2)``) or the
    result of a scan call (``u0, u1 = scan2(x, y)``)."""

    names: tuple[str, ...]
    exprs: tuple[Expr, ...]
    scan: str | None = None  # the scan operator called with ``exprs`` as its arguments
    is_tuple: bool = False  # ``p = (e1, e2)``, read back as ``p[i]``


@dataclass(frozen=True)
class Scan:
    name: str
    forward: bool
    init: tuple[float | int, ...]  # one value: a plain carry, several: a tuple carry
    args: tuple[str, ...]  # the level arguments (fields or scalars at the call)
    body: tuple[Expr, ...]  # in terms of ``carry`` (plain) or ``c0, c1, ...`` and the args


@dataclass(frozen=True)
class Statement:
    """One field operator, and its call in the program: ``op(args..., out=outs, domain=...)``."""

    op: str
    params: tuple[str, ...]  # the operator's parameter names
    args: tuple[str, ...]  # the program parameters passed to them, in order
    locals: tuple[Local, ...]
    results: tuple[Expr, ...]  # one: a field result; several: a tuple result
    outs: tuple[str, ...]
    loc: str  # the output's horizontal location: "cart" for Cartesian programs, Cell or Edge
    domain: tuple[tuple[str, int, int], ...] | None  # None: no ``domain=`` (the whole output)
    from_sizes: tuple[str, ...] = ()  # dimensions whose upper bound is written ``n_D - c``


@dataclass(frozen=True)
class FieldParam:
    name: str
    dims: tuple[str, ...]
    role: str  # "in", "out" (sentinel-filled) or "weight" (over a local dimension)
    origin: tuple[int, ...]  # the domain's start per dimension (negative: a halo)
    shape: tuple[int, ...]
    layout: str  # "C", "F", "strided", "reversed", "field", "halo"


@dataclass(frozen=True)
class ScalarParam:
    name: str
    value: float | int
    dtype: str = ""  # empty: the program's dtype; ``n_D`` sizes for domain bounds are int32


@dataclass(frozen=True)
class Program:
    dtype: str  # float64, float32, int32
    kind: str  # "cart" or "mesh"
    sizes: tuple[tuple[str, int], ...]
    fields: tuple[FieldParam, ...]
    scalars: tuple[ScalarParam, ...]
    scans: tuple[Scan, ...]
    statements: tuple[Statement, ...]
    order: tuple[str, ...]  # the program's parameter order
    data_seed: int
    skip_rows: tuple[int, ...] = field(default=())  # C2E rows with no neighbour at all
    direct: bool = False  # run each statement as a direct call of its field operator, not a program
    peaks: tuple[tuple[str, float], ...] = field(default=())  # per field: the largest magnitude
    # of any value its results are computed from (sets the comparison's absolute tolerance)

    def field(self, name: str) -> FieldParam:
        return next(f for f in self.fields if f.name == name)

    def is_scalar(self, name: str) -> bool:
        return any(s.name == name for s in self.scalars)


NEIGHBOURS = {"E2C": ("Edge", "Cell", 2, False), "C2E": ("Cell", "Edge", 4, True)}
"""offset -> (where it is read, the location it reads, neighbours per row, has skip values)"""
