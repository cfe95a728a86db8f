"""Drawing one random, valid statement (locals and results) from a ``Chooser``.

Values stay bounded so that every backend must agree to a tolerance: each expression carries a
bound of its magnitude, products that would pass ``LIMIT`` become sums, a child over the limit
is clamped (``minimum(maximum(x, -L), L)``), ``sin``/``cos`` only see small arguments, and
divisors are ``abs(x) + 1``. Integer programs never overflow int32 for the same reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .model import (
    NEIGHBOURS,
    Bin,
    Cmp,
    ConcatWhere,
    CondOp,
    FieldParam,
    IdxCond,
    Lit,
    Local,
    Nb,
    Reduce,
    Ref,
    Shift,
    TupleGet,
    Un,
    Where,
)
from .scans import ARG_BOUND, draw_scan

if TYPE_CHECKING:
    from .programs import ProgramGen

LIMIT = {"float64": 1e6, "float32": 1e3, "int32": float(2**20)}
SENTINEL = {"float64": 300.0, "float32": 300.0, "int32": 77}
FLOAT_OPS = ("+", "-", "*", "/", "min", "max", "//", "%")
INT_OPS = ("+", "-", "*", "min", "max", "//", "%", "&", "|", "^")
CMP_OPS = ("<", "<=", ">", ">=", "==", "!=")
BIG = float("inf")


@dataclass
class Value:
    expr: object
    bound: float


@dataclass
class LocalInfo:
    loc: str
    bound: float
    shiftable: bool
    tuple_size: int = 0  # a tuple local: read as name[i]


class StatementGen:
    """One statement: its locals and results at ``loc``, over the program's fields."""

    def __init__(self, pg: ProgramGen, loc: str) -> None:
        self.pg, self.ch, self.loc = pg, pg.ch, loc
        self.dtype = pg.dtype
        self.locals: list[Local] = []
        self.info: dict[str, LocalInfo] = {}
        self.peak = 1.0

    # ------------------------------------------------------------------ helpers
    def lit(self) -> Value:
        if self.dtype == "int32":
            v = self.ch.choice((1, 2, 3, -1, -2, 5, 7))
            return Value(Lit(v), abs(v))
        v = self.ch.choice((0.5, 2.0, 1.5, -0.25, -3.0, 0.125, 1.0))
        return Value(Lit(v), abs(v))

    def clamp(self, v: Value) -> Value:
        if v.bound <= LIMIT[self.dtype]:
            return v
        lim = LIMIT[self.dtype]
        lit = int(lim) if self.dtype == "int32" else lim
        return Value(Bin("min", Bin("max", v.expr, Lit(-lit)), Lit(lit)), lim)

    def squash(self, v: Value) -> Value:
        """Clamped to the magnitude scan bodies assume for their arguments (scans.ARG_BOUND)."""
        if v.bound <= ARG_BOUND:
            return v
        return Value(Bin("min", Bin("max", v.expr, Lit(-ARG_BOUND)), Lit(ARG_BOUND)), ARG_BOUND)

    def note(self, v: Value) -> Value:
        if v.bound < BIG:
            self.peak = max(self.peak, v.bound)
        return v

    def fields_at(self, loc: str) -> list[FieldParam]:
        return [f for f in self.pg.fields if f.role != "weight" and self.pg.loc_of(f) == loc]

    def shift_dims(self, dims: tuple[str, ...]) -> list[str]:
        return [d for d in dims if d in ("I", "J", "K")]

    def shift(self) -> int:
        return self.ch.choice((1, -1, 2, -2)) if self.pg.kind == "cart" else self.ch.choice((1, -1))

    # ------------------------------------------------------------------ leaves
    def field_leaf(self) -> Value:
        f = self.ch.choice(self.fields_at(self.loc))
        b = self.pg.bounds[f.name]
        dims = self.shift_dims(f.dims)
        if dims and self.ch.chance(35):
            return Value(Shift(f.name, self.ch.choice(dims), self.shift()), b)
        return Value(Ref(f.name), b)

    def leaf(self, full: bool) -> Value:
        """A leaf; ``full``: one that has the statement's dimensions (a field, not a literal)."""
        options = ["field", "field"]
        if not full:
            options += ["lit", "scalar"] if self.pg.scalars else ["lit"]
        mine = [n for n, i in self.info.items() if i.loc == self.loc]
        if mine:
            options += ["local", "local"]
        if self.pg.kind == "mesh" and self.loc == "Edge" and self.fields_at("Cell"):
            options.append("neighbour")
        kind = self.ch.choice(options)
        if kind == "lit":
            return self.lit()
        if kind == "scalar":
            s = self.ch.choice(self.pg.scalars)
            return Value(Ref(s.name), abs(s.value))
        if kind == "local":
            name = self.ch.choice(mine)
            info = self.info[name]
            if info.tuple_size:
                return Value(TupleGet(name, self.ch.integer(0, info.tuple_size - 1)), info.bound)
            dims = self.shift_dims(self.pg.loc_dims(self.loc))
            if info.shiftable and dims and self.ch.chance(30):
                return Value(Shift(name, self.ch.choice(dims), self.shift()), info.bound)
            return Value(Ref(name), info.bound)
        if kind == "neighbour":
            c = self.ch.choice(self.fields_at("Cell"))
            return Value(Nb(c.name, "E2C", self.ch.integer(0, 1)), self.pg.bounds[c.name])
        return self.field_leaf()

    # ------------------------------------------------------------------ inner nodes
    def binary(self, a: Value, b: Value, ops: tuple[str, ...]) -> Value:
        a, b = self.clamp(a), self.clamp(b)
        op = self.ch.choice(ops)
        if op == "*" and a.bound * b.bound > LIMIT[self.dtype]:
            op = "+"
        if self.dtype != "int32" and op in ("/", "//", "%"):
            div = (
                Lit(abs(b.expr.value) + 1.0)
                if isinstance(b.expr, Lit)
                else Bin("+", Un("abs", b.expr), Lit(1.0))
            )
            bound = {"/": a.bound, "//": a.bound + 1, "%": b.bound + 1}[op]
            return self.weak(self.note(Value(Bin(op, a.expr, div), bound)))
        bound = {
            "+": a.bound + b.bound,
            "-": a.bound + b.bound,
            "*": a.bound * b.bound,
            "min": max(a.bound, b.bound),
            "max": max(a.bound, b.bound),
            "//": a.bound,
            "%": b.bound,
            "&": 2 * max(a.bound, b.bound),
            "|": 2 * max(a.bound, b.bound),
            "^": 2 * max(a.bound, b.bound),
        }[op]
        return self.weak(self.note(Value(Bin(op, a.expr, b.expr), bound)))

    def unary(self, a: Value) -> Value:
        a = self.clamp(a)
        if self.dtype == "int32":
            fn = self.ch.choice(("neg", "abs"))
            return self.weak(Value(Un(fn, a.expr), a.bound))
        fns = ["neg", "abs", "tanh", "sqrt", "floor"] + (["sin", "cos"] if a.bound <= 100 else [])
        fn = self.ch.choice(fns)
        if fn == "sqrt":
            return self.weak(Value(Un("sqrt", Un("abs", a.expr)), a.bound**0.5 + 1))
        bound = {
            "neg": a.bound,
            "abs": a.bound,
            "tanh": 1.0,
            "sin": 1.0,
            "cos": 1.0,
            "floor": a.bound + 1,
        }[fn]
        return self.weak(Value(Un(fn, a.expr), bound))

    def condition(self, depth: int) -> object:
        dims = self.pg.loc_dims(self.loc)
        if depth > 0 and self.ch.chance(30):
            op = self.ch.choice(("&", "|", "~"))
            if op == "~":
                return CondOp("~", (self.condition(depth - 1),))
            return CondOp(op, (self.condition(depth - 1), self.condition(depth - 1)))
        d = self.ch.choice(dims)
        return IdxCond(
            d,
            self.ch.choice(("==", "<", ">=", "!=", "<=", ">")),
            self.ch.integer(0, self.pg.size(d)),
        )

    def gen(self, depth: int, full: bool = True) -> Value:
        """A value at the statement's location; ``full``: it has the location's dimensions."""
        return self.weak(self._gen(depth, full))

    def weak(self, v: Value) -> Value:
        """Literal-only arithmetic is float64/int64 (literals are weakly typed only where they
        meet a typed operand): below float64, such subexpressions become one literal."""
        if self.dtype != "float64" and not isinstance(v.expr, Lit) and not _typed(v.expr):
            return self.lit()
        return v

    def _gen(self, depth: int, full: bool) -> Value:
        if depth <= 0 or self.ch.chance(25):
            return self.leaf(full)
        kinds = ["bin", "bin", "bin", "un", "where", "concat"]
        if self.pg.kind == "mesh" and self.pg.reductions_at(self.loc):
            kinds += ["reduce", "reduce"]
        kind = self.ch.choice(kinds)
        ops = INT_OPS if self.dtype == "int32" else FLOAT_OPS
        if kind == "bin":
            first_full = self.ch.chance(50) if full else False
            a = self.gen(depth - 1, first_full)
            b = self.gen(depth - 1, full and not first_full)
            return self.binary(a, b, ops)
        if kind == "un":
            return self.unary(self.gen(depth - 1, full))
        if kind == "where":
            c1 = self.clamp(self.gen(depth - 1, True))
            c2 = self.clamp(self.gen(depth - 1, False))
            a, b = self.gen(depth - 1, False), self.gen(depth - 1, False)
            return self.note(
                Value(
                    Where(Cmp(self.ch.choice(CMP_OPS), c1.expr, c2.expr), a.expr, b.expr),
                    max(a.bound, b.bound),
                )
            )
        if kind == "concat":
            # a branch with the location's dimensions: scalar branches make a field over the
            # condition's dimensions only ([J] beside [I] is ambiguous: gt4py refuses it too)
            cond = self.condition(1)
            a, b = self.gen(depth - 1, True), self.gen(depth - 1, full)
            return self.note(Value(ConcatWhere(cond, a.expr, b.expr), max(a.bound, b.bound)))
        return self.reduce(depth)

    def reduce(self, depth: int) -> Value:
        offset = self.ch.choice(self.pg.reductions_at(self.loc))
        _, target, n, skips = NEIGHBOURS[offset]
        fn = self.ch.choice(("sum", "max", "min"))
        arg = self.local_value(depth - 1, offset, target)
        if not self._has_local(arg.expr):
            f = self.ch.choice(self.fields_at(target))
            arg = Value(
                Bin("+", arg.expr, Nb(f.name, offset, None)), arg.bound + self.pg.bounds[f.name]
            )
        bound = (
            n * arg.bound if fn == "sum" else (BIG if skips and self.pg.skip_rows else arg.bound)
        )
        return self.note(Value(Reduce(fn, arg.expr, offset), bound))

    def local_value(self, depth: int, offset: str, target: str) -> Value:
        """A value over the statement's location and the offset's local dimension."""
        if depth <= 0 or self.ch.chance(30):
            options = ["nb", "nb", "lit", "field"]
            weights = [
                w for w in self.pg.fields if w.role == "weight" and w.dims[-1] == f"{offset}Dim"
            ]
            if weights:
                options.append("weight")
            kind = self.ch.choice(options)
            if kind == "nb":
                f = self.ch.choice(self.fields_at(target))
                return Value(Nb(f.name, offset, None), self.pg.bounds[f.name])
            if kind == "weight":
                return Value(Ref(self.ch.choice(weights).name), 2.0)
            if kind == "field":
                return self.field_leaf()
            return self.lit()
        if self.ch.chance(25):
            return self.unary(self.local_value(depth - 1, offset, target))
        ops = ("+", "-", "*", "min", "max")
        return self.binary(
            self.local_value(depth - 1, offset, target),
            self.local_value(depth - 1, offset, target),
            ops,
        )

    def _has_local(self, e: object) -> bool:
        """Whether ``e`` reads through the table (stencilkit sizes a reduction from its shifts:
        a reduction of a weight field alone is refused, see the fuzzing report)."""
        if isinstance(e, Nb) and e.index is None:
            return True
        return any(
            self._has_local(getattr(e, f.name))
            for f in dataclasses.fields(e)  # type: ignore[arg-type]
            if not isinstance(getattr(e, f.name), str | int | float | tuple)
        )

    # ------------------------------------------------------------------ locals
    def add_local(self, depth: int) -> None:
        i = len(self.info)
        kinds = ["plain", "plain", "tuple"]
        if self.dtype != "int32" and "K" in self.pg.loc_dims(self.loc):
            kinds.append("scan")
        kind = self.ch.choice(kinds)
        if kind == "plain":
            v = self.full_result(depth)
            name = f"t{i}"
            self.locals.append(Local((name,), (v.expr,)))
            self.info[name] = LocalInfo(self.loc, v.bound, self._shiftable(v.expr))
        elif kind == "tuple":
            vs = [self.full_result(depth) for _ in range(2)]
            name = f"q{i}"
            self.locals.append(Local((name,), tuple(v.expr for v in vs), is_tuple=True))
            self.info[name] = LocalInfo(self.loc, max(v.bound for v in vs), False, tuple_size=2)
        else:
            scan, bound = draw_scan(self.ch, f"scan{len(self.pg.scans)}", self.dtype)
            self.pg.scans.append(scan)
            args = []
            for a in scan.args:
                if a.startswith("s") and self.pg.scalars:
                    args.append(Ref(self.ch.choice(self.pg.scalars).name))
                else:
                    args.append(self.squash(self.gen(depth - 1, not args)).expr)
            # every field argument needs the scan axis: one over fewer dimensions (a
            # concat_where of scalars, say) is refused, as it is in gt4py
            args = [
                a
                if self._full(a) or (isinstance(a, Ref) and self.pg.is_scalar(a.name))
                else self.squash(self.field_leaf()).expr
                for a in args
            ]
            if not any(self._full(a) for a in args):
                args[0] = self.squash(self.field_leaf()).expr
            names = tuple(f"u{i}_{k}" for k in range(len(scan.init)))
            self.locals.append(Local(names, tuple(args), scan=scan.name))
            for n in names:
                self.info[n] = LocalInfo(self.loc, bound, False)

    def _shiftable(self, e: object) -> bool:
        """Shifting a local re-evaluates it: only for Cartesian locals of fields and other such locals."""
        if self.pg.kind == "mesh":
            return False
        if isinstance(e, Ref | Shift) and e.name in self.info:
            return self.info[e.name].shiftable
        if isinstance(e, TupleGet):
            return False
        return all(
            self._shiftable(getattr(e, f.name))
            for f in dataclasses.fields(e)  # type: ignore[arg-type]
            if not isinstance(getattr(e, f.name), str | int | float | tuple)
        )

    def _full(self, e: object) -> bool:
        """Whether ``e`` has every dimension of the location (reads a non-weight field)."""
        match e:
            case Ref(name) | Shift(name, _, _):
                return name in self.info or any(
                    f.name == name and f.role != "weight" for f in self.pg.fields
                )
            case Nb() | TupleGet():
                return True
            case Lit():
                return False
        return any(
            self._full(getattr(e, f.name))
            for f in dataclasses.fields(e)  # type: ignore[arg-type]
            if not isinstance(getattr(e, f.name), str | int | float | tuple)
        )

    def full_result(self, depth: int) -> Value:
        v = self.clamp(self.gen(depth))
        if not self._full(v.expr):
            f = self.field_leaf()
            v = Value(Bin("+", v.expr, f.expr), v.bound + f.bound)
        return v


def _typed(e: object) -> bool:
    """Whether ``e`` has the program's dtype: it reads a field, a scalar or a local."""
    match e:
        case Lit():
            return False
        case Ref() | Shift() | Nb() | TupleGet() | Reduce():
            return True
        case Bin(_, a, b) | Where(_, a, b) | ConcatWhere(_, a, b):
            return _typed(a) or _typed(b)
        case Un(_, a):
            return _typed(a)
    return True
