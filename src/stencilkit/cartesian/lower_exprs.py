"""GTScript expressions -> typed stencilkit IR at operator level, reading the values the
current block has computed so far (``env``) or the fields' memory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.dims import Dimension
from ..core.errors import SourceLocation
from ..core.types import FieldType, ScalarType, TupleType
from ..ir import nodes as ir
from ..ir.ops import MATH_BUILTINS as IR_BUILTINS
from . import nodes as cn
from .axes import DIMS
from .definitions import GTScriptDefinitionError, GTScriptNotSupportedError, GTScriptSyntaxError
from .exprs import field_reads
from .language import MATH_BUILTINS
from .promotion import arithmetic, cast, common, dtype_of, is_float, is_int, typed, ufunc_operands

INT = ScalarType("int64")
SIZES = {"I": ir.Ref("__nI", INT), "J": ir.Ref("__nJ", INT), "K": ir.Ref("__nK", INT)}


@dataclass
class Fields:
    """Every field of the definition: axes and dtype (parameters and temporaries)."""

    axes: dict[str, tuple[str, ...]]
    dtypes: dict[str, str]
    scalars: dict[str, str]
    params: frozenset[str]
    #: GlobalTable parameters: their (local) dimensions
    tables: dict[str, tuple[Dimension, ...]] = field(default_factory=dict)

    def ref(self, name: str) -> ir.Ref:
        if name in self.tables:
            return ir.Ref(name, FieldType(self.tables[name], self.dtypes[name]))
        return ir.Ref(name, FieldType(tuple(DIMS[a] for a in self.axes[name]), self.dtypes[name]))


#: How a block reads a field: (name, offset, read node) -> the value, or None for memory.
Reader = Callable[[cn.FieldRead], "ir.Expr | None"]


def shift(e: ir.Expr, off: tuple[int, int, int], axes: tuple[str, ...] | None = None) -> ir.Expr:
    for name, amount in zip(("I", "J", "K"), off):
        if amount and (axes is None or name in axes) and isinstance(e.type, FieldType):
            if DIMS[name] in e.type.dims:
                e = ir.Shift(e, ir.CartesianShift(DIMS[name], amount), e.type)
    return e


class ExprLowerer:
    def __init__(self, fields: Fields, read: Reader) -> None:
        self.fields = fields
        self.read = read
        self.memo: dict[int, tuple[cn.Expr, ir.Expr]] = {}
        self.loop_vars: dict[str, ir.Ref] = {}  # the variables of the loops being lowered
        # while loops of gtscript.functions lowered by earlier statements, with the fields they
        # read: ``a, b = f(...)`` is two statements reading one loop, computed once
        self.loops: dict[int, tuple[cn.Loop, ir.While, frozenset[str]]] = {}

    def forget_loops(self, written: str | None = None) -> None:
        """Drop the loops that read ``written`` (all of them for None): its value changed."""
        for key, (_, _, reads) in list(self.loops.items()):
            if written is None or written in reads:
                del self.loops[key]

    def __call__(self, e: cn.Expr) -> ir.Expr:
        hit = self.memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        out = self._lower(e)
        self.memo[id(e)] = (e, out)
        return out

    def _lower(self, e: cn.Expr) -> ir.Expr:
        if isinstance(e, cn.Lit):
            return ir.Literal(e.value, ScalarType(e.dtype))
        if isinstance(e, cn.LevelIndex):
            return cast(ir.DimIndex(DIMS["K"], FieldType((DIMS["K"],), "int64")), e.dtype)
        if isinstance(e, cn.ScalarRead):
            return ir.Ref(e.name, ScalarType(self.fields.scalars[e.name]))
        if isinstance(e, cn.FieldRead):
            v = self.read(e)
            if v is not None:
                return v
            base = shift(self.fields.ref(e.name), e.offset, self.fields.axes[e.name])
            if e.k_expr is None:
                return base
            amount = _integer(self(e.k_expr), f"the variable K offset of '{e.name}'", e.loc)
            by = ir.DynamicShift(DIMS["K"], cast(amount, "int64"))
            return ir.Shift(base, by, typed(dtype_of(base), base, amount))
        if isinstance(e, cn.BinOp):
            return self.binop(e.op, self(e.left), self(e.right))
        if isinstance(e, cn.UnaryOp):
            x = self(e.operand)
            if e.op == "not":
                return ir.UnaryOp("not", self.boolean(x), typed("bool", x))
            if dtype_of(x) == "bool":
                raise GTScriptSyntaxError(f"arithmetic '{e.op}' on a bool value")
            return x if e.op == "+" else ir.UnaryOp("-", x, x.type)
        if isinstance(e, cn.Cast):
            return cast(self(e.arg), e.dtype)
        if isinstance(e, cn.Ternary):
            c = self.boolean(self(e.cond))
            a, b = self(e.true), self(e.false)
            t = common(dtype_of(a), dtype_of(b))
            return select(c, cast(a, t), cast(b, t), isinstance(e.cond, cn.RegionMask))
        if isinstance(e, cn.Builtin):
            return self.builtin(e)
        if isinstance(e, cn.RegionMask):
            return region_mask(e)
        if isinstance(e, cn.LoopVar):
            return self.loop_vars[e.name]
        if isinstance(e, cn.TableRead):
            return self.table_read(e)
        if isinstance(e, cn.IntegerValue):
            return _integer(self(e.expr), e.what, e.loc)
        if isinstance(e, cn.LoopResult):
            w = self(e.loop)
            assert isinstance(w, ir.While)
            return ir.TupleGet(w, e.index, w.type.types[e.index])
        if isinstance(e, cn.Loop):
            hit = self.loops.get(id(e))
            if hit is not None and hit[0] is e:
                return hit[1]
            w = self.loop(e)
            self.loops[id(e)] = (e, w, frozenset(r.name for r in field_reads(e)))
            return w
        raise AssertionError(type(e))

    def table_read(self, e: cn.TableRead) -> ir.Expr:
        """``t.A[i, j]``: along each of the table's dimensions a dynamic shift from index 0 by
        the index's value, then that dimension's slot 0."""
        out: ir.Expr = self.fields.ref(e.name)
        dtype = self.fields.dtypes[e.name]
        for dim, x in zip(self.fields.tables[e.name], e.index):
            amount = cast(self(x), "int64")  # an integer: checked as a data index (IntegerValue)
            dims = (
                *ir.field_dims(out.type),
                *(d for d in ir.field_dims(amount.type) if d not in ir.field_dims(out.type)),
            )
            out = ir.Shift(out, ir.DynamicShift(dim, amount), FieldType(dims, dtype))
            rest = tuple(d for d in dims if d != dim)
            out = ir.LocalSelect(out, dim, 0, FieldType(rest, dtype) if rest else ScalarType(dtype))
        return out

    def loop(self, e: cn.Loop) -> ir.While:
        """A ``gtscript.function``'s while loop: each variable's type is that of its value
        before the loop, widened until the body's values fit it (NumPy's promotion)."""
        inits = [self(x) for x in e.inits]
        dts = [dtype_of(x) for x in inits]
        saved = dict(self.memo)
        for _ in range(4):
            self.memo = dict(saved)  # what depends on the variables is lowered again
            for name, dt in zip(e.names, dts):
                self.loop_vars[name] = ir.Ref(name, ScalarType(dt))
            cond = self(e.cond)
            if dtype_of(cond) != "bool":
                raise GTScriptSyntaxError(
                    f"a while condition must be bool, not {dtype_of(cond)}", e.loc
                )
            body = [self(x) for x in e.body]
            wider = [common(dt, dtype_of(b)) for dt, b in zip(dts, body)]
            if wider == dts:
                break
            dts = wider
        inits = [cast(x, dt) for x, dt in zip(inits, dts)]
        body = [cast(x, dt) for x, dt in zip(body, dts)]
        types = tuple(typed(dt, i, b) for dt, i, b in zip(dts, inits, body))
        return ir.While(e.names, tuple(inits), cond, tuple(body), TupleType(types))

    def boolean(self, x: ir.Expr) -> ir.Expr:
        if dtype_of(x) != "bool":
            raise GTScriptSyntaxError(f"a condition must be bool, not {dtype_of(x)}: {x}")
        return x

    def binop(self, op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
        if op in ("and", "or"):
            a, b = self.boolean(a), self.boolean(b)
            return ir.BinOp(op, a, b, typed("bool", a, b))
        if "bool" in (dtype_of(a), dtype_of(b)) and op not in ("==", "!="):
            raise GTScriptSyntaxError(f"arithmetic '{op}' on bool values: {a} {op} {b}")
        a, b, t = arithmetic(op, a, b)
        if op in ("<", "<=", "==", "!=", ">", ">="):
            return ir.BinOp(op, a, b, typed("bool", a, b))
        return ir.BinOp(op, a, b, typed(t, a, b))

    def builtin(self, e: cn.Builtin) -> ir.Expr:
        fn = MATH_BUILTINS[e.fn]
        args = [self(a) for a in e.args]
        if fn is None:
            raise GTScriptNotSupportedError(f"the builtin {e.fn}() is not supported yet", e.loc)
        if fn == "%":
            return self.binop("%", args[0], args[1])
        if fn in ("round", "round_away_from_zero"):
            return _rounded(args[0], fn == "round")
        spec = IR_BUILTINS[fn]
        if any(dtype_of(a) == "bool" for a in args):
            raise GTScriptDefinitionError(f"{e.fn}() of a bool value", e.loc)
        targets = ufunc_operands(fn, [dtype_of(a) for a in args])
        if targets is None:
            t = common(*(dtype_of(a) for a in args))
            if spec.needs_float and not is_float(t):
                t = common(t, "float64") if t != "float32" else t
            targets = [t] * len(args)
        args = [cast(a, t) for a, t in zip(args, targets)]
        out = "bool" if spec.result == "bool" else targets[0]
        return ir.Call(fn, tuple(args), typed(out, *args))


def _integer(x: ir.Expr, what: str, loc: SourceLocation | None) -> ir.Expr:
    """``x``, which must be an integer (``what`` it is, for the error)."""
    if not is_int(dtype_of(x)):
        raise GTScriptDefinitionError(
            f"{what} must be an integer, not {dtype_of(x)}",
            loc,
            hint="convert it with int32(...) or int64(...)",
        )
    return x


def _rounded(x: ir.Expr, half_even: bool) -> ir.Expr:
    """``round`` (half to even, NumPy's ``round``/C's ``nearbyint``) or ``round_away_from_zero``
    (C's ``round``) from ``trunc``: ``x - trunc(x)`` is exact, so both are exact."""
    dt = dtype_of(x)
    if not is_float(dt):
        return x
    t = ir.Call("trunc", (x,), x.type)
    frac = ir.Call("abs", (ir.BinOp("-", x, t, x.type),), x.type)
    half = ir.Literal(0.5, ScalarType(dt))
    one = ir.Literal(1.0, ScalarType(dt))
    neg = ir.BinOp("<", x, ir.Literal(0.0, ScalarType(dt)), typed("bool", x))
    step = ir.BinOp("+", t, select(neg, ir.UnaryOp("-", one, one.type), one), x.type)
    if half_even:
        odd = ir.BinOp(
            "!=",
            ir.BinOp("%", t, ir.Literal(2.0, ScalarType(dt)), x.type),
            ir.Literal(0.0, ScalarType(dt)),
            typed("bool", x),
        )
        tie = ir.BinOp("and", ir.BinOp("==", frac, half, typed("bool", x)), odd, typed("bool", x))
        up = ir.BinOp("or", ir.BinOp(">", frac, half, typed("bool", x)), tie, typed("bool", x))
    else:
        up = ir.BinOp(">=", frac, half, typed("bool", x))
    return select(up, step, t)


def select(c: ir.Expr, a: ir.Expr, b: ir.Expr, region: bool = False) -> ir.Expr:
    """``a`` where ``c`` holds, else ``b``. A horizontal region's mask (``region``) guards its
    branch: ``concat_where``, whose branch is read only inside the region, so its reads need a
    halo only where the region is (``regions.py``)."""
    if (
        isinstance(c.type, ScalarType)
        and not isinstance(a.type, FieldType)
        and not isinstance(b.type, FieldType)
    ):
        return ir.IfElse(c, a, b, a.type)
    fn = "concat_where" if region and isinstance(c.type, FieldType) else "where"
    return ir.Call(fn, (c, a, b), typed(dtype_of(a), c, a, b))


def _bound(b: cn.Bound, axis: str, shift: int) -> ir.Expr:
    """The index bound ``b`` less ``shift``: ``c`` (from the compute domain's first point) or
    ``__nI + c`` (from its end), the forms ``regions.py`` reads back."""
    if b.index == 0:
        return ir.Literal(b.offset - shift, INT)
    return ir.BinOp("+", SIZES[axis], ir.Literal(b.offset - 1 - shift, INT), INT)


def region_mask(e: cn.RegionMask) -> ir.Expr:
    """``lo <= index < hi`` along I and J, relative to the compute domain (index 0 is its first
    point), for the point ``e.shift`` away from the current one."""
    parts: list[ir.Expr] = []
    for axis, (lo, hi), s in (("I", e.region.i, e.shift[0]), ("J", e.region.j, e.shift[1])):
        # index + s >= lo as index >= lo - s: a plain index compared with a bound, which the
        # extent analyses (here and the engine's) read as a restriction of the points
        idx = ir.DimIndex(DIMS[axis], FieldType((DIMS[axis],), "int64"))
        if lo is not None:
            parts.append(ir.BinOp(">=", idx, _bound(lo, axis, s), FieldType((DIMS[axis],), "bool")))
        if hi is not None:
            parts.append(ir.BinOp("<", idx, _bound(hi, axis, s), FieldType((DIMS[axis],), "bool")))
    if not parts:
        return ir.Literal(True, ScalarType("bool"))
    out = parts[0]
    for p in parts[1:]:
        out = ir.BinOp("and", out, p, typed("bool", out, p))
    return out
