"""The IR verifier's checks of expressions, indices, types and domain bounds, one rule per node
class (``EXPR_RULES``); ``verify.py`` checks programs and kernels with them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

from ..core.dims import Dimension, DimensionKind
from ..core.dtypes import DTYPES, is_integral
from ..core.errors import InternalError
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec
from . import nodes as n
from .ops import BINARY_OPS, COMPARISONS, LOGICAL, MATH_BUILTINS, SPECIAL_BUILTINS, UNARY_OPS
from .visit import children

#: Calls that only domain bounds use: where a field starts / stops along a dimension.
FIELD_BOUNDS = frozenset({"__field_start", "__field_stop"})
REDUCE_OPS = frozenset({"sum", "max", "min"})
_ARITY = {
    "where": 3,
    "concat_where": 3,
    "broadcast": 1,
    "astype": 1,
    **{f: s.arity for f, s in MATH_BUILTINS.items()},
}
_OPERATOR_ONLY = (n.Shift, n.Reduce, n.LocalSelect, n.DimIndex, n.ScanCall)
_STENCIL_ONLY = (
    n.Access,
    n.Valid,
    n.LocalReduce,
    n.IndexValue,
    n.Pos,
    n.ConstIndex,
    n.LocalIndex,
    n.Lookup,
    n.DynIndex,
)
_MAX_TEXT = 1500


class TableLike(Protocol):
    """What the verifier reads of a neighbour table (``lower.TableInfo``)."""

    @property
    def max_neighbors(self) -> int: ...

    @property
    def has_skip(self) -> bool: ...


def _text(node: object) -> str:
    s = str(node)
    return s if len(s) <= _MAX_TEXT else s[:_MAX_TEXT] + f" ... ({len(s)} characters)"


def _dtype(t: TypeSpec) -> str | None:
    return None if isinstance(t, TupleType) else t.dtype


@dataclass
class Scope:
    """What an expression may refer to: names with their types, bound local loop variables."""

    names: Mapping[str, TypeSpec]
    locals: frozenset[tuple[Dimension, int]] = frozenset()
    dims: tuple[Dimension, ...] = ()  # the kernel's dimensions (stencil level)
    #: values are computed point by point: fields read there are their values at the point
    #: (stencil level, and the step of a scan), so types agree up to dimensions
    pointwise: bool = False

    def key(self) -> tuple[int, frozenset[tuple[Dimension, int]], bool]:
        return id(self.names), self.locals, self.pointwise


@dataclass
class Verifier:
    stencil: bool  # which level: stencil (kernels) or operator (programs)
    tables: Mapping[str, TableLike] | None = None
    context: n.Node | None = None  # the statement or kernel being checked, for messages
    after: str = ""  # the pass that produced the IR, for messages
    seen: set[tuple[int, Any]] = field(default_factory=set)

    def fail(self, rule: str, node: object) -> NoReturn:
        where = (
            "" if self.context is None or self.context is node else f"\n  in: {_text(self.context)}"
        )
        when = f" after {self.after}" if self.after else ""
        raise InternalError(
            f"invalid {'stencil' if self.stencil else 'operator'}-level IR{when}: {rule}\n"
            f"  node: {_text(node)}{where}"
        )

    # ------------------------------------------------------------ types
    def type(self, t: object, node: object) -> None:
        if isinstance(t, ScalarType):
            if t.dtype not in DTYPES:
                self.fail(f"unknown dtype {t.dtype!r}", node)
        elif isinstance(t, FieldType):
            if t.dtype not in DTYPES:
                self.fail(f"unknown dtype {t.dtype!r}", node)
            if len(set(t.dims)) != len(t.dims) or not all(isinstance(d, Dimension) for d in t.dims):
                self.fail(f"field type {t} repeats a dimension", node)
        elif isinstance(t, TupleType):
            if not t.types:
                self.fail("empty tuple type", node)
            for s in t.types:
                self.type(s, node)
        else:
            self.fail(f"{t!r} is not a type", node)

    # ------------------------------------------------------------ expressions
    def expr(self, e: object, scope: Scope) -> None:
        if not isinstance(e, n.Node):
            self.fail(f"expected an IR node, found {type(e).__name__} {e!r}", self.context)
        key = (id(e), scope.key())
        if key in self.seen:
            return
        self.seen.add(key)
        if self.stencil and isinstance(e, _OPERATOR_ONLY):
            self.fail(f"{type(e).__name__} is an operator-level node: lowering must remove it", e)
        if not self.stencil and isinstance(e, _STENCIL_ONLY):
            self.fail(f"{type(e).__name__} is a stencil-level node in an operator-level program", e)
        t = getattr(e, "type", None)
        if t is not None:  # at stencil level a node may keep its operator-level field type:
            self.type(t, e)  # only its dtype counts there (see same())
        rule = EXPR_RULES.get(type(e))
        if rule is None:
            self.fail(f"{type(e).__name__} is not an expression", e)
        inner = rule(self, e, scope)
        if inner is DONE:
            return
        for c in children(e):
            if type(c) in EXPR_RULES:  # indices and shift kinds: checked by the node's rule
                self.expr(c, inner or scope)

    def same(self, a: TypeSpec, b: TypeSpec, scope: Scope) -> bool:
        """Types agree: exactly, or up to dimensions where values are computed point-wise."""
        return a == b or ((self.stencil or scope.pointwise) and strip_dims(a) == strip_dims(b))

    def index(self, i: object, scope: Scope, at: n.Node) -> None:
        if isinstance(i, n.Pos):
            if scope.dims and i.dim not in scope.dims:
                self.fail(f"position along {i.dim}, which is not a dimension of the kernel", at)
        elif isinstance(i, n.LocalIndex):
            if (i.dim, i.var) not in scope.locals:
                self.fail(
                    f"loop variable {n.LocalIndex(i.dim, i.var)} is used outside a reduction binding it",
                    at,
                )
        elif isinstance(i, n.ConstIndex):
            if i.value < 0:
                self.fail("negative constant index", at)
        elif isinstance(i, n.Lookup):
            self.table(i.table, i.neighbor, at)
            self.index(i.source, scope, at)
            self.index(i.neighbor, scope, at)
        elif isinstance(i, n.DynIndex):
            self.index(i.base, scope, at)
            self.expr(i.amount, scope)
            if not is_integral(_dtype(i.amount.type) or ""):  # its value at the point: dtype only
                self.fail(f"a dynamic offset must be an integer, not {i.amount.type}", at)
        else:
            self.fail(f"{type(i).__name__} is not an index", at)

    def table(self, name: str, neighbor: object, at: n.Node) -> None:
        if self.tables is None:
            return
        info = self.tables.get(name)
        if info is None:
            self.fail(
                f"neighbour table '{name}' is not among the tables given to lowering "
                f"({', '.join(sorted(self.tables)) or 'none'})",
                at,
            )
        if isinstance(neighbor, n.ConstIndex) and neighbor.value >= info.max_neighbors:
            self.fail(
                f"neighbour slot {neighbor.value} of '{name}', which has {info.max_neighbors}", at
            )

    # ------------------------------------------------------------ domains
    def domain(
        self,
        ranges: tuple[n.DomainRange, ...],
        dims: tuple[Dimension, ...],
        scope: Scope,
        at: n.Node,
    ) -> None:
        seen: set[Dimension] = set()
        for r in ranges:
            if not isinstance(r, n.DomainRange):
                self.fail(f"{type(r).__name__} in a domain", at)
            if r.dim in seen:
                self.fail(f"the domain gives {r.dim} twice", at)
            seen.add(
                r.dim
            )  # a dimension the output lacks is the user's error, reported at the call
            for bound in (r.start, r.stop):
                self.bound(bound, scope, r)

    def bound(self, e: object, scope: Scope, at: n.Node) -> None:
        """A domain bound: integer scalar arithmetic on literals, scalar parameters and
        ``__field_start(f, index(D))`` / ``__field_stop``."""
        t = getattr(e, "type", None)
        if not isinstance(e, n.Node) or not isinstance(t, ScalarType) or not is_integral(t.dtype):
            self.fail("a domain bound must be an integer scalar", at)
        if isinstance(e, n.Call) and e.fn in FIELD_BOUNDS:
            ref, dim = (*e.args, None, None)[:2]
            if len(e.args) != 2 or not isinstance(ref, n.Ref) or not isinstance(dim, n.DimIndex):
                self.fail(f"{e.fn} takes a field and a dimension index", e)
            self.ref(ref, scope)
            if dim.dim not in n.field_dims(ref.type):
                self.fail(f"{e.fn} along {dim.dim}, which field '{ref.name}' does not have", e)
            return
        if isinstance(e, n.Ref):
            self.ref(e, scope)
        elif isinstance(e, n.Literal):
            self.expr(e, scope)
        elif isinstance(e, n.BinOp | n.UnaryOp | n.Call):
            if isinstance(e, n.Call) and e.fn not in ("minimum", "maximum", "abs", "astype"):
                self.fail(f"{e.fn} in a domain bound", e)
            for c in children(e):
                self.bound(c, scope, e)
        else:
            self.fail(f"{type(e).__name__} in a domain bound", e)

    def ref(self, e: n.Ref, scope: Scope) -> None:
        declared = scope.names.get(e.name)
        if declared is None:
            self.fail(
                f"'{e.name}' is not bound here (not a parameter, temporary or carry in scope)", e
            )
        elif declared != e.type:
            self.fail(f"'{e.name}' has type {e.type} here but is declared {declared}", e)


# ---------------------------------------------------------------- rules per expression node
Rule = Callable[[Verifier, Any, Scope], "Scope | None"]
#: A rule's answer when it has checked the node's children itself.
DONE = Scope({})


def check_literal(v: Verifier, e: n.Literal, s: Scope) -> None:
    if not isinstance(e.type, ScalarType):
        v.fail("a literal must have a scalar type", e)
    if isinstance(e.value, bool) != (e.type.dtype == "bool"):
        v.fail(f"literal {e.value!r} does not have type {e.type}", e)
    if isinstance(e.value, float) and not e.type.dtype.startswith("float"):
        v.fail(f"float literal {e.value!r} of integer type {e.type}", e)


def _ref(v: Verifier, e: n.Ref, s: Scope) -> None:
    v.ref(e, s)
    if v.stencil and not isinstance(e.type, ScalarType):
        v.fail(
            f"'{e.name}' is read as a whole {e.type}: at stencil level fields are read by Access"
            " and tuples are flattened",
            e,
        )


def _binop(v: Verifier, e: n.BinOp, s: Scope) -> None:
    if e.op not in _BINARY:
        v.fail(f"unknown binary operator {e.op!r}", e)
    if (e.op in COMPARISONS or e.op in LOGICAL) and _dtype(e.type) != "bool":
        v.fail(f"'{e.op}' gives bool, not {e.type}", e)
    _samedims_of(v, e, (e.left, e.right), s)


def _unary(v: Verifier, e: n.UnaryOp, s: Scope) -> None:
    if e.op not in _UNARY:
        v.fail(f"unknown unary operator {e.op!r}", e)
    if e.op == "not" and _dtype(e.type) != "bool":
        v.fail(f"'not' gives bool, not {e.type}", e)
    _samedims_of(v, e, (e.operand,), s)


def _call(v: Verifier, e: n.Call, s: Scope) -> None:
    if e.fn in FIELD_BOUNDS:
        v.fail(f"{e.fn} outside a domain bound", e)
    if e.fn not in _ARITY and e.fn not in SPECIAL_BUILTINS:
        v.fail(f"unknown builtin '{e.fn}'", e)
    if e.fn in _ARITY and len(e.args) != _ARITY[e.fn]:
        v.fail(f"{e.fn} takes {_ARITY[e.fn]} arguments, not {len(e.args)}", e)
    if e.fn in MATH_BUILTINS and MATH_BUILTINS[e.fn].result == "bool" and _dtype(e.type) != "bool":
        v.fail(f"{e.fn} gives bool, not {e.type}", e)
    if e.fn in ("where", "concat_where") and e.args and _dtype(e.args[0].type) != "bool":
        v.fail(f"the condition of {e.fn} must be bool, not {e.args[0].type}", e)
    if e.fn != "broadcast":
        _samedims_of(v, e, e.args, s)


def _ifelse(v: Verifier, e: n.IfElse, s: Scope) -> None:
    if not v.same(e.cond.type, ScalarType("bool"), s) or (
        not (v.stencil or s.pointwise) and isinstance(e.cond.type, FieldType)
    ):
        v.fail(f"the condition of an if must be a bool scalar, not {e.cond.type}", e)
    if not v.same(e.true.type, e.type, s) or not v.same(e.false.type, e.type, s):
        v.fail(f"branches of types {e.true.type} and {e.false.type} in an if of type {e.type}", e)


def _shift(v: Verifier, e: n.Shift, s: Scope) -> None:
    src = n.field_dims(e.expr.type)
    if not isinstance(e.expr.type, FieldType):
        v.fail(f"only fields can be shifted, not {e.expr.type}", e)
    by = e.by
    if isinstance(by, n.NeighborShift):
        if by.source not in src:
            v.fail(
                f"shift through {by.offset} (from {by.source}) of a field over {', '.join(map(str, src))}",
                e,
            )
        if not 1 <= len(by.target) <= 2 or by.target[0] not in n.field_dims(e.type):
            v.fail(f"shift through {by.offset} must give a field over {by.target[0]}", e)
        if by.index is not None and by.index < 0:
            v.fail("negative neighbour index", e)
    elif isinstance(by, n.DynamicShift):
        v.expr(by.amount, s)
        if not is_integral(_dtype(by.amount.type) or ""):
            v.fail("as_offset needs integer offsets", e)
    elif not isinstance(by, n.CartesianShift | n.StaggeredShift):
        v.fail(f"{type(by).__name__} is not a shift", e)


def _reduce(v: Verifier, e: n.Reduce, s: Scope) -> None:
    if e.op not in REDUCE_OPS:
        v.fail(f"unknown reduction {e.op!r}", e)
    if e.axis.kind is not DimensionKind.LOCAL:
        v.fail(f"reduction over {e.axis}, which is not a local dimension", e)
    if e.axis not in n.field_dims(e.expr.type) or e.axis in n.field_dims(e.type):
        v.fail(f"a reduction over {e.axis} must remove it from {e.expr.type}, giving {e.type}", e)


def _local_select(v: Verifier, e: n.LocalSelect, s: Scope) -> None:
    if e.dim not in n.field_dims(e.expr.type) or e.dim in n.field_dims(e.type) or e.index < 0:
        v.fail(f"selecting slot {e.index} of {e.dim} from {e.expr.type} gives {e.type}", e)


def _dim_index(v: Verifier, e: n.DimIndex, s: Scope) -> None:
    if n.field_dims(e.type) != (e.dim,) or not is_integral(_dtype(e.type) or ""):
        v.fail(f"the index along {e.dim} is an integer field over {e.dim}, not {e.type}", e)


def _scan_call(v: Verifier, e: n.ScanCall, s: Scope) -> Scope:
    v.expr(e.init, s)
    if e.carry_name in s.names:
        v.fail(f"the carry '{e.carry_name}' shadows a name in scope", e)
    if e.step.type != e.init.type and strip_dims(e.step.type) != e.init.type:
        v.fail(f"the step gives {e.step.type} but the carry starts as {e.init.type}", e)
    v.expr(e.step, Scope({**s.names, e.carry_name: e.init.type}, s.locals, s.dims, pointwise=True))
    return DONE  # the step sees the carry, the init does not


def _while(v: Verifier, e: n.While, s: Scope) -> Scope:
    k = len(e.names)
    if not (len(e.inits) == len(e.body) == len(e.type.types) == k) or len(set(e.names)) != k:
        v.fail(
            f"a while loop of {k} variables with {len(e.inits)} initial and {len(e.body)} new values",
            e,
        )
    for name in e.names:
        if name in s.names:
            v.fail(f"the loop variable '{name}' shadows a name in scope", e)
    for x in e.inits:
        v.expr(x, s)
    types = {name: strip_dims(t) for name, t in zip(e.names, e.type.types)}  # at a point
    inner = Scope({**s.names, **types}, s.locals, s.dims, pointwise=True)
    for name, x, init in zip(e.names, e.body, e.inits):
        if strip_dims(x.type) != strip_dims(types[name]) or strip_dims(init.type) != strip_dims(
            types[name]
        ):
            v.fail(
                f"loop variable '{name}' of {types[name]} starts as {init.type}, steps to {x.type}",
                e,
            )
        v.expr(x, inner)
    v.expr(e.cond, inner)
    if _dtype(e.cond.type) != "bool":
        v.fail(f"a while condition must be bool, not {e.cond.type}", e)
    return DONE


def _make_tuple(v: Verifier, e: n.MakeTuple, s: Scope) -> None:
    if (
        not isinstance(e.type, TupleType)
        or len(e.elems) != len(e.type.types)
        or not all(v.same(x.type, t, s) for x, t in zip(e.elems, e.type.types))
    ):
        v.fail(f"a tuple of ({', '.join(str(x.type) for x in e.elems)}) typed {e.type}", e)


def _tuple_get(v: Verifier, e: n.TupleGet, s: Scope) -> None:
    t = e.expr.type
    if not isinstance(t, TupleType) or not 0 <= e.index < len(t.types):
        v.fail(f"element {e.index} of a value of type {t}", e)
    elif not v.same(t.types[e.index], e.type, s):
        v.fail(f"element {e.index} of {t} typed {e.type}", e)


def _access(v: Verifier, e: n.Access, s: Scope) -> None:
    declared = s.names.get(e.field)
    if not isinstance(declared, FieldType):
        v.fail(
            f"'{e.field}' is read as a field but is {'not a parameter' if declared is None else declared}",
            e,
        )
    if len(e.index) != len(declared.dims):
        v.fail(
            f"'{e.field}' has {len(declared.dims)} dimensions but is read with {len(e.index)} indices",
            e,
        )
    if e.type.dtype != declared.dtype:
        v.fail(f"'{e.field}' holds {declared.dtype} but is read as {e.type}", e)
    for i in e.index:
        v.index(i, s, e)


def _valid(v: Verifier, e: n.Valid, s: Scope) -> None:
    if e.type != ScalarType("bool"):
        v.fail("valid(...) is a bool", e)
    v.table(e.table, e.neighbor, e)
    if v.tables is not None and e.table in v.tables and not v.tables[e.table].has_skip:
        v.fail(f"a skip mask for table '{e.table}', which has no skip values", e)
    v.index(e.source, s, e)
    v.index(e.neighbor, s, e)


def _index_value(v: Verifier, e: n.IndexValue, s: Scope) -> None:
    if not is_integral(e.type.dtype):
        v.fail(f"an index value is an integer, not {e.type}", e)
    v.index(e.index, s, e)


def _local_reduce(v: Verifier, e: n.LocalReduce, s: Scope) -> Scope:
    if e.op not in REDUCE_OPS:
        v.fail(f"unknown reduction {e.op!r}", e)
    if e.size < 1:
        v.fail(f"a reduction over {e.size} neighbours", e)
    if (e.dim, e.var) in s.locals:
        v.fail(f"nested reductions share the loop variable {n.LocalIndex(e.dim, e.var)}", e)
    if not v.same(e.body.type, e.type, s):
        v.fail(f"a reduction of {e.body.type} values typed {e.type}", e)
    if e.mask is not None and not v.same(e.mask.type, ScalarType("bool"), s):
        v.fail(f"the mask of a reduction must be bool, not {e.mask.type}", e)
    return Scope(s.names, s.locals | {(e.dim, e.var)}, s.dims, s.pointwise)


def _samedims_of(v: Verifier, e: Any, args: tuple[n.Expr, ...], s: Scope) -> None:
    """Element-wise nodes: every field operand's dimensions are among the result's."""
    if v.stencil or s.pointwise:
        return
    out = set(n.field_dims(e.type))
    for a in args:
        if not set(n.field_dims(a.type)) <= out:
            v.fail(
                f"an operand over {', '.join(map(str, n.field_dims(a.type)))} gives a result of type {e.type}",
                e,
            )


def strip_dims(t: TypeSpec) -> TypeSpec:
    if isinstance(t, FieldType):
        return ScalarType(t.dtype)
    if isinstance(t, TupleType):
        return TupleType(tuple(strip_dims(x) for x in t.types))
    return t


_BINARY = frozenset(BINARY_OPS.values())
_UNARY = frozenset(UNARY_OPS.values())
EXPR_RULES: dict[type, Rule] = {
    n.Literal: check_literal,
    n.Ref: _ref,
    n.BinOp: _binop,
    n.UnaryOp: _unary,
    n.Call: _call,
    n.IfElse: _ifelse,
    n.Shift: _shift,
    n.Reduce: _reduce,
    n.LocalSelect: _local_select,
    n.DimIndex: _dim_index,
    n.ScanCall: _scan_call,
    n.While: _while,
    n.MakeTuple: _make_tuple,
    n.TupleGet: _tuple_get,
    n.Access: _access,
    n.Valid: _valid,
    n.IndexValue: _index_value,
    n.LocalReduce: _local_reduce,
}
