"""Code generation shared by the C++ and CUDA backends: point-wise expressions as C++ text.

Emission is table-driven: a frozen ``CTarget`` holds the rules of one target, C_TARGET those of
plain C (which CUDA device code uses as they are); the C++ target is derived from it
(``in_namespace("std")``). Each math builtin is spelled once, in ``CALLS``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import numpy as np

from ..core.dims import Dimension
from ..core.dtypes import C_TYPES
from ..core.errors import InternalError
from ..core.records import record
from ..core.types import TupleType
from ..ir import nodes as ir
from ..ir.visit import children, postorder, use_counts
from ..stages.abi import ArgLayout, FieldSlots

#: C spelling of the math builtins; ``{0}``, ``{1}`` are the arguments.
CALLS: dict[str, str] = {
    "sqrt": "sqrt({0})",
    "exp": "exp({0})",
    "log": "log({0})",
    "sin": "sin({0})",
    "cos": "cos({0})",
    "tan": "tan({0})",
    "arcsin": "asin({0})",
    "arccos": "acos({0})",
    "arctan": "atan({0})",
    "sinh": "sinh({0})",
    "cosh": "cosh({0})",
    "tanh": "tanh({0})",
    "floor": "floor({0})",
    "ceil": "ceil({0})",
    "trunc": "trunc({0})",
    "cbrt": "cbrt({0})",
    "abs": "sk_abs({0})",
    "isfinite": "isfinite({0})",
    "isnan": "isnan({0})",
    "isinf": "isinf({0})",
    "minimum": "sk_min({0}, {1})",
    "maximum": "sk_max({0}, {1})",
    "fmod": "fmod({0}, {1})",
    "power": "sk_pow({0}, {1})",
    "gamma": "tgamma({0})",
    "arcsinh": "asinh({0})",
    "arccosh": "acosh({0})",
    "arctanh": "atanh({0})",
    "neg": "(-{0})",
    "log10": "log10({0})",
    "erf": "erf({0})",
    "erfc": "erfc({0})",
}
BINARY: dict[str, str] = {
    "+": "({0} + {1})",
    "-": "({0} - {1})",
    "*": "({0} * {1})",
    "/": "({0} / {1})",
    "//": "sk_floordiv<{t}>({0}, {1})",
    "%": "sk_mod<{t}>({0}, {1})",
    "**": "sk_pow<{t}>({0}, {1})",
    "&": "({0} & {1})",
    "|": "({0} | {1})",
    "^": "({0} ^ {1})",
    "<": "({0} < {1})",
    "<=": "({0} <= {1})",
    "==": "({0} == {1})",
    "!=": "({0} != {1})",
    ">": "({0} > {1})",
    ">=": "({0} >= {1})",
    "and": "({0} && {1})",
    "or": "({0} || {1})",
}
UNARY: dict[str, str] = {"-": "(-{0})", "+": "(+{0})", "~": "(~{0})", "not": "(!{0})"}


def ctype(dtype: str) -> str:
    return C_TYPES[dtype]


def c_literal(value: bool | int | float, dtype: str) -> str:
    if dtype == "bool":
        return "true" if value else "false"
    if dtype.startswith("float"):
        v = float(value)
        if np.isnan(v):
            return f"(({ctype(dtype)})sk_from_slot<double>(0x7ff8000000000000LL))"
        if np.isinf(v):
            return (
                "(-" if v < 0 else "("
            ) + f"(({ctype(dtype)})sk_from_slot<double>(0x7ff0000000000000LL)))"
        text = repr(v) + ("f" if dtype == "float32" else "")
        # parenthesised when negative: after a unary minus, "--0.5f" would be a decrement
        return f"({text})" if text.startswith("-") else text
    suffix = "LL" if dtype in ("int64",) else ("ULL" if dtype == "uint64" else "")
    return f"(({ctype(dtype)}){int(value)}{suffix})"


@record
class CTarget:
    """Emission rules for one C-family target (read-only tables: ``{0}``, ``{1}`` the operands)."""

    calls: Mapping[str, str]
    binary: Mapping[str, str]
    unary: Mapping[str, str]

    def in_namespace(self, namespace: str) -> CTarget:
        """These rules with the C library's functions called through ``namespace``
        (``std::sqrt``); stencilkit's own helpers (``sk_*``) and operators stay as they are."""
        calls = {
            f: t if t.startswith(("sk_", "(")) else f"{namespace}::{t}"
            for f, t in self.calls.items()
        }
        return replace(self, calls=MappingProxyType(calls))


#: Plain C: the rules of the CUDA target's device code.
C_TARGET: CTarget = CTarget(
    MappingProxyType(CALLS), MappingProxyType(BINARY), MappingProxyType(UNARY)
)


#: Nodes emitted in place even when shared: as cheap as a local variable.
_INLINE = (ir.Literal, ir.Ref, ir.Access, ir.IndexValue, ir.Valid)
# not values of their own (indices are part of a read), or emitted inline where used
_NOT_HOISTED = (*_INLINE, ir.Pos, ir.ConstIndex, ir.LocalIndex, ir.Lookup, ir.DynIndex)


class ExprEmitter:
    """Emits a point-wise expression; ``index_var[dim]`` names the loop index of each dimension.

    A value the kernel uses more than once becomes a local (``const auto t3 = ...;``), emitted
    once before the first statement that needs it (``statements``). Branches (``if``,
    ``where``, ``concat_where``) and reductions are blocks: what is computed only there stays
    there, so a read a branch guards is never done where it is not selected."""

    def __init__(self, target: CTarget, layout: ArgLayout, index_var: dict[str, str]) -> None:
        self.target = target
        self.layout = layout
        self.index_var = index_var
        self.local_var: dict[tuple[str, int], str] = {}
        self.lines: list[str] = []  # statements of the current block not yet taken
        self.scopes: list[dict[int, Any]] = [{}]  # node id -> its local, per open block
        self.uses: dict[int, int] = {}
        self.movable: dict[int, bool] = {}  # node id -> computable before a choice (_movable)
        self.loop_vars: set[str] = set()  # the variables of the kernel's while loops
        self.loop_c: dict[str, str] = {}  # a loop variable -> its C local, inside the loop
        self.prepared: ir.Kernel | None = None
        self.count = 0

    # ------------------------------------------------------------------ locals and blocks
    def prepare(self, k: ir.Kernel) -> None:
        """Count the uses of every value of ``k`` (once per kernel)."""
        if self.prepared is not k:
            self.uses = use_counts(*k.values, *(k.scan.inits if k.scan else ()))
            self.movable = {}
            self.loop_vars = {
                name for x in postorder(*k.values) if isinstance(x, ir.While) for name in x.names
            }
            self.prepared = k

    def statements(self, pad: str) -> list[str]:
        """The statements the expressions emitted since the last call need, indented by ``pad``."""
        out = [pad + line for line in self.lines]
        self.lines = []
        return out

    @contextmanager
    def scope(self) -> Iterator[None]:
        """A C block: locals emitted inside are not visible after it."""
        self.scopes.append({})
        try:
            yield
        finally:
            self.scopes.pop()

    def block(self, fn: Callable[[], Any]) -> tuple[list[str], Any]:
        """Emit ``fn()`` inside a new block: its statements and its value."""
        saved, self.lines = self.lines, []
        try:
            with self.scope():
                value = fn()
            return self.lines, value
        finally:
            self.lines = saved

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def _known(self, e: ir.Node) -> Any:
        for s in reversed(self.scopes):
            hit = s.get(id(e))
            if hit is not None:
                return hit
        return None

    def index(self, idx: ir.Index) -> str:
        if isinstance(idx, ir.Pos):
            v = self.index_var[idx.dim.value]
            return v if idx.offset == 0 else f"({v} + {idx.offset})"
        if isinstance(idx, ir.ConstIndex):
            return str(idx.value)
        if isinstance(idx, ir.LocalIndex):
            return self.local_var[(idx.dim.value, idx.var)]
        if isinstance(idx, ir.DynIndex):
            return f"({self.index(idx.base)} + (sk_idx)({self.emit(idx.amount)}))"
        if isinstance(idx, ir.Lookup):
            return f"((sk_idx){self.element(self.layout.field(idx.table), (idx.source, idx.neighbor))})"
        raise InternalError(f"unknown index {idx!r}")

    def element(self, f: FieldSlots, index: tuple[ir.Index, ...]) -> str:
        terms = []
        for axis, i in enumerate(index):
            ix = self.index(i)
            if isinstance(i, ir.DynIndex):  # a position from data: kept inside the field
                g = self.layout.guard(f.name, axis)
                ix = f"sk_guard({ix}, a[{g.slot}], a[{g.slot + 1}], sk_err, {g.code})"
            if isinstance(i, ir.Lookup) and isinstance(i.neighbor, ir.Pos) and not f.is_table:
                # a read through a skipped slot outside a reduction (the output has the local
                # dimension): read the field's first element instead of before its start
                ix = f"(({ix}) < 0 ? (sk_idx)a[{f.origins[axis]}] : ({ix}))"
            terms.append(ix if f.unit_dim == axis else f"{ix} * {f.name}_s{axis}")
        return f"{f.name}_b[{' + '.join(terms) or '0'}]"

    def emit(self, e: ir.Expr) -> str:
        known = self._known(e)
        if known is not None:
            return known  # type: ignore[no-any-return]
        text = self._emit(e)
        if self.uses.get(id(e), 0) > 1 and not isinstance(e, _INLINE):
            if not text.isidentifier():
                name = self.fresh("t")
                self.lines.append(f"const auto {name} = {text};")
                text = name
            self.scopes[-1][id(e)] = text
        return text

    def _emit(self, e: ir.Expr) -> str:
        method = getattr(self, f"_{type(e).__name__}", None)
        if method is None:
            raise InternalError(f"C code generation cannot handle {type(e).__name__}")
        return method(e)  # type: ignore[no-any-return]

    def _Literal(self, e: ir.Literal) -> str:
        return c_literal(e.value, e.type.dtype)

    def _Ref(self, e: ir.Ref) -> str:
        return self.loop_c.get(e.name) or f"{e.name}_v"

    def _Access(self, e: ir.Access) -> str:
        return self.element(self.layout.field(e.field), e.index)

    def _BinOp(self, e: ir.BinOp) -> str:
        t = ctype(e.left.type.dtype)  # type: ignore[union-attr]
        return self.target.binary[e.op].format(self.emit(e.left), self.emit(e.right), t=t)

    def _UnaryOp(self, e: ir.UnaryOp) -> str:
        op = e.op
        if op == "~" and getattr(e.type, "dtype", None) == "bool":
            op = "not"  # C's ~ on a bool promotes to int: ~true == -2, which is true again
        return self.target.unary[op].format(self.emit(e.operand))

    def _IfElse(self, e: ir.IfElse) -> str:
        return self._choice(self.emit(e.cond), e.true, e.false, ctype(e.type.dtype), cast=False)  # type: ignore[union-attr]

    def _choice(
        self, cond: str, t: ir.Expr, f: ir.Expr, ct: str, cast: bool = True, guards: bool = False
    ) -> str:
        """``cond ? t : f``, evaluating only the branch chosen; an if/else where a branch needs
        statements of its own. ``guards``: the branches read where the other may not (a
        ``concat_where``), so nothing that only a branch needs is computed before it."""
        self.hoist_before_choice(t, f, guards)
        t_lines, t_text = self.block(lambda: self.emit(t))
        f_lines, f_text = self.block(lambda: self.emit(f))
        if not t_lines and not f_lines:
            if cast:
                return f"({cond} ? ({ct})({t_text}) : ({ct})({f_text}))"
            return f"({cond} ? {t_text} : {f_text})"
        var = self.fresh("v")
        self.lines += [
            f"{ct} {var};",
            f"if ({cond}) {{",
            *_indent(t_lines),
            f"  {var} = {t_text};",
            "} else {",
            *_indent(f_lines),
            f"  {var} = {f_text};",
            "}",
        ]
        return var

    def hoist_before_choice(self, t: ir.Expr, f: ir.Expr, guards: bool = False) -> None:
        """What a choice's branches share, emitted once before it: every choice hoists what both
        branches compute on every path; a ``where``/``if`` (not ``guards``, a ``concat_where``)
        also what is used in both branches or outside the choice."""
        self.hoist_common(t, f)
        if not guards:
            self.hoist_shared(t, f)

    def hoist_common(self, t: ir.Expr, f: ir.Expr) -> None:
        """Emit before a choice the shared values both branches compute whichever is chosen, so
        that they are computed once, not once in each branch."""
        in_t = self._unconditional(t)
        for x in self._unconditional(f).values():
            if id(x) in in_t and self.uses.get(id(x), 0) > 1 and not isinstance(x, _INLINE):
                if isinstance(getattr(x, "type", None), TupleType):
                    self.emit_tuple(x)  # type: ignore[arg-type]
                else:
                    self.emit(x)  # type: ignore[arg-type]

    def hoist_shared(self, t: ir.Expr, f: ir.Expr) -> None:
        """Emit before a ``where``/``if`` the values its branches use (also in branches nested
        inside them) that are used in both branches, or also outside the choice: once here,
        instead of once in every block that uses them. Left in the branches: what is used in one
        branch only, and values that read through a data-dependent offset or a neighbour loop's
        index (which exist only where the branch runs). The branches of a ``where`` or an ``if``
        read only points their statement's domain covers, so a read moved before the choice is
        valid; a choice nested in ICON's microphysics (graupel) otherwise repeats a shared value
        in each of ~900 blocks."""
        in_t, in_f = self._uses_below(t), self._uses_below(f)
        for key, (node, _) in {**in_t, **in_f}.items():
            total = self.uses.get(key, 0)
            if total < 2 or isinstance(node, _NOT_HOISTED) or self._known(node) is not None:
                continue
            both = key in in_t and key in in_f
            inside = in_t.get(key, (node, 0))[1] + in_f.get(key, (node, 0))[1]
            if (both or inside < total) and self._movable(node):
                if isinstance(getattr(node, "type", None), TupleType):
                    self.emit_tuple(node)  # type: ignore[arg-type]
                else:
                    self.emit(node)  # type: ignore[arg-type]

    def _uses_below(self, root: ir.Expr) -> dict[int, tuple[ir.Node, int]]:
        """Every value not yet emitted in the DAG of ``root`` (children first) with the number of
        its uses from inside that DAG (``root`` itself: one, the choice's)."""
        counts: dict[int, int] = {id(root): 1}
        nodes: dict[int, ir.Node] = {}
        order: list[int] = []
        stack: list[tuple[ir.Node, bool]] = [(root, False)]
        while stack:
            x, done = stack.pop()
            if done:
                order.append(id(x))
                continue
            if id(x) in nodes:
                continue
            nodes[id(x)] = x
            stack.append((x, True))
            if self._known(x) is not None:
                continue  # emitted already: what it is made of needs nothing more
            for c in children(x):
                counts[id(c)] = counts.get(id(c), 0) + 1
                if id(c) not in nodes:
                    stack.append((c, False))
        return {k: (nodes[k], counts[k]) for k in order}

    def _movable(self, node: ir.Node) -> bool:
        """No read through a data-dependent offset, no neighbour-loop index: computable before
        the choice."""
        memo = self.movable
        pending = [(node, False)]
        while pending:
            x, done = pending.pop()
            if id(x) in memo:
                continue
            kids = children(x)
            if done:
                memo[id(x)] = (
                    not isinstance(x, ir.LocalIndex | ir.DynIndex | ir.LocalReduce | ir.While)
                    and not (isinstance(x, ir.Ref) and x.name in self.loop_vars)
                    and all(memo[id(c)] for c in kids)
                )
                continue
            pending.append((x, True))
            pending.extend((c, False) for c in kids if id(c) not in memo)
        return memo[id(node)]

    def _unconditional(self, root: ir.Expr) -> dict[int, ir.Node]:
        """The values not yet emitted that computing ``root`` computes on every path, children
        first: not those only a nested branch or a reduction's body needs."""
        found: dict[int, ir.Node] = {}
        stack: list[tuple[ir.Node, bool]] = [(root, False)]
        while stack:
            x, done = stack.pop()
            if done:
                found[id(x)] = x
                continue
            if id(x) in found or self._known(x) is not None:
                continue
            stack.append((x, True))
            if isinstance(x, ir.IfElse):
                kids: tuple[ir.Node, ...] = (x.cond,)
            elif isinstance(x, ir.Call) and x.fn in ("where", "concat_where"):
                kids = x.args[:1]
            elif isinstance(x, ir.LocalReduce | ir.Lookup | ir.Valid | ir.Access | ir.IndexValue):
                kids = ()
            elif isinstance(x, ir.While):
                kids = x.inits  # the condition and the body run inside the loop
            else:
                kids = tuple(children(x))
            stack.extend((c, False) for c in reversed(kids) if id(c) not in found)
        return found

    def emit_tuple(self, e: ir.Expr) -> tuple[str, ...]:
        """The elements of a tuple value: a tuple chosen by an ``if`` is chosen once, into one
        local per element."""
        known = self._known(e)
        if known is not None:
            return known  # type: ignore[no-any-return]
        if isinstance(e, ir.MakeTuple):
            value = tuple(self.emit(x) for x in e.elems)
        elif isinstance(e, ir.While):
            value = self._While(e)
        elif isinstance(e, ir.IfElse) and isinstance(e.type, TupleType):
            cond = self.emit(e.cond)
            self.hoist_before_choice(e.true, e.false)
            t_lines, ts = self.block(lambda: self.emit_tuple(e.true))
            f_lines, fs = self.block(lambda: self.emit_tuple(e.false))
            value = tuple(self.fresh("v") for _ in ts)
            self.lines += [f"{ctype(t.dtype)} {v};" for v, t in zip(value, e.type.types)]  # type: ignore[union-attr]
            self.lines += [
                f"if ({cond}) {{",
                *_indent(t_lines),
                *(f"  {v} = {x};" for v, x in zip(value, ts)),
                "} else {",
                *_indent(f_lines),
                *(f"  {v} = {x};" for v, x in zip(value, fs)),
                "}",
            ]
        else:
            raise InternalError(f"C code generation cannot make a tuple of {type(e).__name__}")
        self.scopes[-1][id(e)] = value
        return value

    def _TupleGet(self, e: ir.TupleGet) -> str:
        return self.emit_tuple(e.expr)[e.index]

    def _Call(self, e: ir.Call) -> str:
        t = ctype(e.type.dtype)  # type: ignore[union-attr]
        args = [self.emit(a) for a in e.args] if e.fn not in ("where", "concat_where") else []
        if e.fn in ("where", "concat_where"):
            # Only the chosen branch is evaluated: a concat_where branch is read only where its
            # condition selects it.
            return self._choice(
                self.emit(e.args[0]), e.args[1], e.args[2], t, guards=e.fn == "concat_where"
            )
        if e.fn == "astype":
            return f"(({t})({args[0]}))"
        if e.fn == "broadcast":
            return args[0]
        return "(" + self.target.calls[e.fn].format(*args) + ")"

    def _IndexValue(self, e: ir.IndexValue) -> str:
        return f"((int64_t){self.index(e.index)})"

    def _Valid(self, e: ir.Valid) -> str:
        table = self.layout.field(e.table)
        return f"({self.element(table, (e.source, e.neighbor))} >= 0)"

    def _While(self, e: ir.While) -> tuple[str, ...]:
        """``while (cond) { names = body; }`` at the point: the new values are all computed
        from the old ones before any is assigned."""
        types = [ctype(t.dtype) for t in e.type.types]  # type: ignore[union-attr]
        inits = [self.emit(x) for x in e.inits]
        cvars = [self.fresh(f"{name}_") for name in e.names]  # one loop may be emitted twice
        self.lines += [f"{t} {v} = {x};" for t, v, x in zip(types, cvars, inits)]
        saved = {name: self.loop_c.get(name) for name in e.names}
        self.loop_c.update(zip(e.names, cvars))

        # a guarded read (as_offset) gone out of its field reads its first element instead,
        # which can keep the condition true for ever (pyFV3's remapping walking past the top):
        # the loop stops once a guard has fired, and the call raises
        guarded = self.layout.error_slot is not None and any(
            isinstance(x, ir.DynIndex) for x in postorder(e.cond, *e.body)
        )

        def step() -> None:
            cond = self.emit(e.cond)
            self.lines.append(f"if (!({cond})) break;")
            if guarded:
                self.lines.append("if (sk_err && sk_err[0]) break;")
            new = [self.emit(x) for x in e.body]
            fresh = [self.fresh("w") for _ in new]
            self.lines += [f"const {t} {f} = {x};" for t, f, x in zip(types, fresh, new)]
            self.lines += [f"{v} = {f};" for v, f in zip(cvars, fresh)]

        try:
            body_lines, _ = self.block(step)
        finally:
            for name, old in saved.items():
                if old is None:
                    del self.loop_c[name]
                else:
                    self.loop_c[name] = old
        self.lines += ["while (true) {", *_indent(body_lines), "}"]
        return tuple(cvars)

    def _LocalReduce(self, e: ir.LocalReduce) -> str:
        t = ctype(e.type.dtype)
        var = f"n_{e.dim.value}" + (f"_{e.var}" if e.var else "")
        self.local_var[(e.dim.value, e.var)] = var
        acc = self.fresh("acc")
        try:
            # the body is read only where the mask holds (a missing neighbour has no index)
            def masked() -> tuple[str, list[str], str]:
                mask = self.emit(e.mask) if e.mask is not None else "true"
                body_lines, body = self.block(lambda: self.emit(e.body))
                return mask, body_lines, body

            mask_lines, (mask, body_lines, body) = self.block(masked)
        finally:
            del self.local_var[(e.dim.value, e.var)]
        init, update = {
            "sum": ("0", f"{acc} += v;"),
            "max": (f"sk_limits<{t}>::lo", f"{acc} = sk_max<{t}>({acc}, v);"),
            "min": (f"sk_limits<{t}>::hi", f"{acc} = sk_min<{t}>({acc}, v);"),
        }[e.op]
        self.lines += [
            f"{t} {acc} = {init};",
            f"for (int {var} = 0; {var} < {e.size}; ++{var}) {{",
            *_indent(mask_lines),
            f"  if ({mask}) {{",
            *_indent(body_lines, "    "),
            f"    const {t} v = {body}; {update}",
            "  }",
            "}",
        ]
        return acc


def _indent(lines: list[str], pad: str = "  ") -> list[str]:
    return [pad + line for line in lines]


def unpack_args(layout: ArgLayout, written: set[str], const_qual: str = "const") -> list[str]:
    """C statements that read the argument block ``a`` into typed locals."""
    lines = []
    for f in layout.fields:
        t = ctype(f.dtype)
        qual = "" if f.name in written else f"{const_qual} "
        for axis, s in enumerate(f.strides):
            if axis != f.unit_dim:
                lines.append(f"const sk_idx {f.name}_s{axis} = a[{s}];")
        offset = " + ".join(
            [
                f"a[{o}] * " + ("1" if axis == f.unit_dim else f"{f.name}_s{axis}")
                for axis, o in enumerate(f.origins)
            ]
        )
        lines.append(
            f"{qual}{t}* __restrict__ {f.name}_b = reinterpret_cast<{qual}{t}*>(a[{f.ptr}]) - ({offset or '0'});"
        )
    for sc in layout.scalars:
        lines.append(
            f"const {ctype(sc.dtype)} {sc.name}_v = sk_from_slot<{ctype(sc.dtype)}>(a[{sc.slot}]);"
        )
    if layout.error_slot is not None:
        lines.append(
            f"volatile int64_t* const sk_err = reinterpret_cast<volatile int64_t*>(a[{layout.error_slot}]);"
        )
    return lines


# ----------------------------------------------------------------------------- loop bodies
def loop_order(k: ir.Kernel, layout: ArgLayout) -> list[Dimension]:
    """Outer to inner; the unit-stride dimension of the first output innermost, scan axis inside
    the parallel loops."""
    out = layout.field(k.outs[0])
    dims = [out.dims[j] for j in out.order]
    if k.scan is not None:
        dims.remove(k.scan.axis)
        dims.append(k.scan.axis)
    return dims


def emit_values(
    k: ir.Kernel, emit: ExprEmitter, layout: ArgLayout, pad: str
) -> tuple[list[str], list[str]]:
    """The lines that compute every output value of ``k`` at the current point, into locals
    ``r0``, ``r1``, ...; and those locals' C types, one per output."""
    lines = []
    types = []
    emit.prepare(k)
    with emit.scope():  # the locals of one point (the caller's loop body)
        for j, (o, v) in enumerate(zip(k.outs, k.values)):
            t = ctype(layout.field(o).dtype)
            value = emit.emit(v)
            lines += emit.statements(pad)
            lines.append(f"{pad}const {t} r{j} = {value};")
            types.append(t)
    return lines, types


def emit_output_stores(
    k: ir.Kernel,
    emit: ExprEmitter,
    layout: ArgLayout,
    pad: str,
    values: list[str],
    store: str = "{ref} = {val};",
) -> list[str]:
    """Store ``values`` (C expressions, one per output of ``k``) at the current point; ``store``
    formats one store (the CUDA backend may use cache-streaming stores; bool outputs never)."""
    out_index = tuple(ir.Pos(d) for d in k.dims)
    lines = []
    for o, val in zip(k.outs, values):
        f = layout.field(o)
        idx = tuple(out_index[k.dims.index(d)] for d in f.dims)
        fmt = store if f.dtype != "bool" else "{ref} = {val};"
        lines.append(pad + fmt.format(ref=emit.element(f, idx), val=val))
    return lines


def emit_stores(
    k: ir.Kernel, emit: ExprEmitter, layout: ArgLayout, pad: str, store: str = "{ref} = {val};"
) -> list[str]:
    """Compute every output value of ``k`` at the current point, then store them."""
    lines, types = emit_values(k, emit, layout, pad)
    values = [f"r{j}" for j in range(len(types))]
    return lines + emit_output_stores(k, emit, layout, pad, values, store)


def emit_scan_loop(
    k: ir.Kernel, ki: int, emit: ExprEmitter, layout: ArgLayout, pad: str, unroll: int = 1
) -> list[str]:
    """The loop over the scan axis; ``unroll`` > 1 asks the compiler to unroll it (the loads of
    later levels do not depend on the carry, so an unrolled loop issues them early)."""
    scan = k.scan
    assert scan is not None
    ax = scan.axis.value
    lines = []
    emit.prepare(k)
    for c, init, o in zip(scan.carries, scan.inits, k.outs):
        value = emit.emit(init)
        lines += emit.statements(pad)
        lines.append(f"{pad}{ctype(layout.field(o).dtype)} {c}_v = {value};")
    if unroll > 1:
        lines.append(f"{pad}#pragma unroll {unroll}")
    if scan.forward:
        lines.append(f"{pad}for (sk_idx i_{ax} = {ax}_lo{ki}; i_{ax} < {ax}_hi{ki}; ++i_{ax}) {{")
    else:
        lines.append(
            f"{pad}for (sk_idx i_{ax} = {ax}_hi{ki} - 1; i_{ax} >= {ax}_lo{ki}; --i_{ax}) {{"
        )
    inner = emit_stores(k, emit, layout, pad + "  ")
    lines.extend(inner)
    for j, c in enumerate(scan.carries):
        lines.append(f"{pad}  {c}_v = r{j};")
    lines.append(f"{pad}}}")
    return lines
