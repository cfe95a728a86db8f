"""A plan's kernels bound to one call's fields: straight-line NumPy code over views made once.

The evaluator (``evaluate.py``) walks a kernel's expressions on every call: it slices each read
out of its field, reorders and reshapes it, then applies the operations, then slices the output.
For a time loop calling a stencil with the same fields again and again, all of that but the
operations is the same every call. Here it is done once:

- :func:`kernel_code` turns a kernel into a Python function of straight-line NumPy operations
  (generated once per kernel): its reads, index values and output windows are arguments;
- :func:`bind` makes those arguments for one call's fields (views of their memory: a later
  call sees what earlier kernels wrote) and returns the steps of the call; where the reads'
  shapes and dtypes allow it, the function it binds computes arithmetic into arrays the call
  already has, an operand's or the output's window (``inplace.py``), instead of new ones.

Same results as the evaluator, bit for bit: each read is made by the evaluator's own code, the
same NumPy operations are applied to the same operands, a value used twice is computed once,
and outputs are stored as ``_store`` stores them. Kernels using anything else (reductions over
neighbours, tables, dynamic offsets, conditionals) run on the evaluator, and so do those with a
``concat_where`` branch reading outside a field (the evaluator clamps such reads).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from types import ModuleType
from typing import Any

import numpy as np

from ...core.domain import UnitRange
from ...core.identity import IdentityCache
from ...ir import nodes as ir
from ...ir.ops import array_function
from ...ir.visit import postorder, use_counts
from . import inplace
from .evaluate import _BINARY, _CALLS, _UNARY, KernelEvaluator, _detached, run_kernel

#: operators written as Python operators (what the evaluator's lambdas apply)
_INFIX = {"+", "-", "*", "/", "&", "|", "^", "<", "<=", "==", "!=", ">", ">="}
#: expression nodes the generated code computes; any other node sends the kernel to the evaluator
_OPS = (ir.Literal, ir.Ref, ir.BinOp, ir.UnaryOp, ir.Call, ir.MakeTuple, ir.TupleGet)
_INDICES = (ir.Pos, ir.ConstIndex, ir.LocalIndex, ir.Lookup, ir.DynIndex)
#: a bound kernel: called with the scalars by name, and any further arguments ignored, so that
#: a launch whose scalars are fixed is ``partial(step, scalars)`` (the runner's ``bound_launch``:
#: called with the engine's argument list, no Python frame of its own)
Step = Callable[..., None]
#: nesting beyond which a subexpression gets a name of its own (Python's parser has a limit)
_MAX_NESTING = 40


class KernelCode:
    """A kernel's generated function and the leaves whose values :func:`bind` makes.

    ``fn(R, W, OUTS, DT, S)`` runs a parallel kernel: ``R`` the reads (views), ``W`` the output
    windows, ``S`` the scalars by name (any further arguments are ignored: see :data:`Step`).
    A scan's ``fn(R0, levels, OUTS, DT, S)`` takes the reads of its inits over
    the whole domain and, per level in scan order, the reads and windows of that level.
    ``order`` and ``counts``: the nodes of the values (a scan's level's) as ``_order`` gives
    them, among which :mod:`.inplace` picks the operations computed into memory."""

    __slots__ = ("counts", "fn", "init_leaves", "leaves", "order", "source")

    def __init__(
        self, fn: Callable[..., None], leaves: list[ir.Expr],
        init_leaves: list[ir.Expr], source: str, order: list[ir.Expr], counts: dict[int, int],
    ) -> None:  # fmt: skip
        self.fn = fn
        self.leaves = leaves
        self.init_leaves = init_leaves
        self.source = source
        self.order = order
        self.counts = counts


def _leaf(e: ir.Expr) -> bool:
    """A read or index value whose value depends on the domain and the fields only."""
    if isinstance(e, ir.Access):
        return all(isinstance(i, ir.Pos) for i in e.index)
    if isinstance(e, ir.IndexValue):
        return isinstance(e.index, ir.Pos | ir.ConstIndex)
    return False


def _order(roots: tuple[ir.Expr, ...]) -> tuple[list[ir.Expr], dict[int, int]] | None:
    """The nodes under ``roots`` once each, children first (the indices of leaves left out),
    and how many parents use each; None if a node is not one the generated code computes."""
    order: list[ir.Expr] = []
    for node in postorder(*roots):
        x: Any = node
        if isinstance(x, _INDICES):
            continue
        if not (_leaf(x) or isinstance(x, _OPS)):
            return None
        order.append(x)
    return order, use_counts(*roots)


def _kids(e: ir.Expr) -> tuple[ir.Expr, ...]:
    if _leaf(e) or isinstance(e, ir.Literal | ir.Ref):
        return ()
    if isinstance(e, ir.BinOp):
        return (e.left, e.right)
    if isinstance(e, ir.UnaryOp):
        return (e.operand,)
    if isinstance(e, ir.Call):
        return e.args
    if isinstance(e, ir.MakeTuple):
        return e.elems
    if isinstance(e, ir.TupleGet):
        return (e.expr,)
    return ()


class _Writer:
    """Python source for the nodes of one kernel, one name per shared node. The operations in
    ``into`` (by node id: the text of the array they are computed into, see :mod:`.inplace`)
    are calls of their ufunc with ``out=``; the nodes in ``named`` (operands computed into)
    get a name."""

    def __init__(
        self, ns: dict[str, Any], carries: tuple[str, ...],
        into: dict[int, str | int] | None = None, named: frozenset[int] = frozenset(),
    ) -> None:  # fmt: skip
        self.ns = ns
        self.carries = carries
        self.lines: list[str] = []
        self.scalars: dict[str, str] = {}
        self.text: dict[int, tuple[str, int]] = {}  # node id -> (expression, nesting)
        # an int: that operand's array; a str: that text (an output's window)
        self.into = into or {}
        self.named = named

    def const(self, value: Any) -> str:
        name = f"c{len(self.ns)}"
        self.ns[name] = value
        return name

    def emit(
        self, order: list[ir.Expr], counts: dict[int, int], leaves: list[ir.Expr], indent: str
    ) -> None:
        for e in order:
            if id(e) in self.text:
                continue
            if _leaf(e):
                self.text[id(e)] = (f"R[{len(leaves)}]", 0)
                leaves.append(e)
                continue
            target = self.into.get(id(e))
            if target is not None:
                args = [self.text[id(c)][0] for c in _kids(e)]
                out = args[target] if isinstance(target, int) else target
                fn = self.const(inplace.ufunc_of(e))
                self.lines.append(f"{indent}{fn}({', '.join(args)}, out={out})")
                self.text[id(e)] = (out, 0)
                continue
            expr, depth = self._expr(e)
            if counts.get(id(e), 0) > 1 or depth > _MAX_NESTING or id(e) in self.named:
                name = f"t{len(self.text)}"
                self.lines.append(f"{indent}{name} = {expr}")
                expr, depth = name, 0
            self.text[id(e)] = (expr, depth)

    def _expr(self, e: ir.Expr) -> tuple[str, int]:
        kids = [self.text[id(c)] for c in _kids(e)]
        depth = 1 + max((d for _, d in kids), default=0)
        a = [t for t, _ in kids]
        if isinstance(e, ir.Literal):
            return self.const(np.dtype(e.type.dtype).type(e.value)), 0
        if isinstance(e, ir.Ref):
            if e.name in self.carries:
                return f"k_{self.carries.index(e.name)}", 0
            if e.name not in self.scalars:
                self.scalars[e.name] = f"s{len(self.scalars)}"
            return self.scalars[e.name], 0
        if isinstance(e, ir.BinOp):
            if e.op in _INFIX:
                return f"({a[0]} {e.op} {a[1]})", depth
            return f"{self.const(_BINARY[e.op])}(xp, {a[0]}, {a[1]})", depth
        if isinstance(e, ir.UnaryOp):
            if e.op == "+":
                return a[0], depth - 1
            if e.op in ("-", "~"):
                return f"({e.op}{a[0]})", depth
            return f"{self.const(_UNARY[e.op])}(xp, {a[0]})", depth
        if isinstance(e, ir.MakeTuple):
            return "(" + "".join(f"{x}, " for x in a) + ")", depth
        if isinstance(e, ir.TupleGet):
            return f"{a[0]}[{e.index}]", depth
        assert isinstance(e, ir.Call)
        dt = self.const(np.dtype(e.type.dtype))  # type: ignore[union-attr]
        args = ", ".join(a)
        if e.fn in ("where", "concat_where"):
            # a concat_where's reads were all made inside their fields (``_reads``): its
            # unselected branch's values are the evaluator's, and discarded as there
            return f"xp.where({args}).astype({dt}, copy=False)", depth
        if e.fn == "astype":
            return f"astype({a[0]}, {dt})", depth
        if e.fn == "broadcast":
            return a[0], depth - 1
        fn = getattr(np, _CALLS[e.fn]) if e.fn in _CALLS else array_function(np, e.fn)
        return f"{self.const(fn)}({args})", depth


def _astype(a: Any, dtype: np.dtype[Any]) -> Any:
    return a.astype(dtype) if hasattr(a, "astype") else dtype.type(a)


def _put(w: Any, value: Any, dtype: np.dtype[Any]) -> None:
    """``_store`` of the evaluator on a window made once: cast, broadcast, write."""
    value = np.asarray(value, dtype=dtype)
    if value.shape != w.shape:
        if value.ndim < w.ndim:
            value = value.reshape(value.shape + (1,) * (w.ndim - value.ndim))
        value = np.broadcast_to(value, w.shape)
    w[...] = value


#: generated code per kernel (by identity, as long as the kernel lives) and choice of
#: :mod:`.inplace`
_CODE: IdentityCache[ir.Kernel, dict[inplace.Choice, KernelCode | None]] = IdentityCache(1024)
_NO_CHOICE: inplace.Choice = ((), (), ())


def kernel_code(k: ir.Kernel, choice: inplace.Choice = _NO_CHOICE) -> KernelCode | None:
    """The generated function of ``k`` (made once per ``choice``: the operations computed into
    memory, :func:`.inplace.choose`), or None if the evaluator must run it."""
    per_kernel = _CODE.get(k)
    if per_kernel is None:
        per_kernel = _CODE.put(k, {})
    if choice in per_kernel:
        return per_kernel[choice]
    code = per_kernel[choice] = _generate(k, choice)
    return code


def _generate(k: ir.Kernel, choice: inplace.Choice = _NO_CHOICE) -> KernelCode | None:
    found = _order(k.values)
    scan = k.scan
    inits = _order(scan.inits) if scan is not None else ([], {})
    if found is None or inits is None:
        return None
    ns: dict[str, Any] = {"xp": np, "astype": _astype, "put": _put, "detached": _detached}
    w = _Writer(ns, scan.carries if scan is not None else ())
    leaves: list[ir.Expr] = []
    init_leaves: list[ir.Expr] = []
    indent = "    "
    if scan is not None:
        w.emit(*inits, init_leaves, indent)  # R is the whole domain's reads here
        for j, init in enumerate(scan.inits):
            w.lines.append(f"    k_{j} = {w.text[id(init)][0]}")
        w.lines.append("    for R, W in levels:")
        w.text = {}  # the loop's reads are other views: nothing computed above is reused
        indent = "        "
    order = found[0]
    into_operand, into_window, stored = choice
    w.into = {id(order[pos]): side for pos, side in into_operand}
    w.into.update((id(order[pos]), f"W[{j}]") for pos, j in into_window)
    w.named = frozenset(id(_kids(order[pos])[side]) for pos, side in into_operand)
    w.emit(*found, leaves, indent)
    outs = [w.text[id(v)][0] for v in k.values]
    for j, o in enumerate(outs):
        w.lines.append(f"{indent}v_{j} = {o}")
    names = "".join(f"v_{j}, " for j in range(len(outs)))
    if len(k.outs) > 1:
        w.lines.append(f"{indent}{names}= detached(xp, [{names}], OUTS)")
    computed_into = {j for _, j in into_window}
    for j in range(len(outs)):
        if j in stored:  # the same dtype and shape (or broadcast as put does): no checks
            w.lines.append(f"{indent}W[{j}][...] = v_{j}")
        elif j not in computed_into:
            w.lines.append(f"{indent}put(W[{j}], v_{j}, DT[{j}])")
    if scan is not None:  # each level's values are the next level's carries
        for j in range(min(len(scan.carries), len(outs))):
            w.lines.append(f"{indent}k_{j} = v_{j}")
    head = [f"    {s} = S[{n!r}]" for n, s in w.scalars.items()]
    args = "R, levels, OUTS, DT, S, *_" if scan is not None else "R, W, OUTS, DT, S, *_"
    body = [f"def kernel({args}):", *head, *w.lines, "    return None"]
    source = "\n".join(body)
    # only generated names and repr'd field/parameter names are in the source
    exec(compile(source, f"<kernel {k.name}>", "exec"), ns)
    return KernelCode(ns["kernel"], leaves, init_leaves, source, order, found[1])


class _NotAView(Exception):
    """A read the evaluator made as a copy of the field's data: made once, it would not see
    the writes of later calls."""


def _reads(ev: KernelEvaluator, leaves: list[ir.Expr]) -> list[Any]:
    # as in a concat_where branch: a read that leaves its field is clamped (a copy, so not a
    # view, so the evaluator runs the kernel); elsewhere the engine's checks keep reads inside
    ev.guarded = 1
    out = []
    for e in leaves:
        if isinstance(e, ir.IndexValue):
            out.append(ev._IndexValue(e))  # made of the domain alone
            continue
        assert isinstance(e, ir.Access)
        r = ev._Access(e)
        if r.size and not np.may_share_memory(r, ev.fields[e.field].ndarray):
            raise _NotAView
        out.append(r)
    return out


def _window(out: Any, k: ir.Kernel, domain: tuple[UnitRange, ...]) -> Any:
    """The part of output ``out`` that ``domain`` covers, in the kernel's axis order (a view)."""
    odims = out.domain.dims
    ranges = dict(zip(k.dims, domain))
    slices = tuple(
        slice(ranges[d].start - r.start, ranges[d].stop - r.start)
        for d, r in zip(odims, out.domain.ranges)
    )
    # (the Ellipsis keeps a 0-d output a view: ``a[()]`` would be a copy of its value)
    return out.ndarray[(*slices, Ellipsis)].transpose([list(odims).index(d) for d in k.dims])


def bind(
    xp: ModuleType,
    kernels: list[tuple[ir.Kernel, tuple[UnitRange, ...]]],
    fields: Mapping[str, Any],
    tables: Mapping[str, Any],
) -> list[Step]:
    """The steps of a call with these fields: each takes the scalars (checked) by name."""
    steps: list[Step] = []
    for k, dom in kernels:
        if any(len(r) == 0 for r in dom):
            continue
        code = kernel_code(k) if xp is np else None
        step = _bound_step(code, k, dom, fields) if code is not None else None
        if step is None:
            step = _evaluated(xp, k, dom, fields, tables)
        steps.append(step)
    return steps


def _evaluated(
    xp: ModuleType, k: ir.Kernel, dom: Any, fields: Mapping[str, Any], tables: Mapping[str, Any]
) -> Step:
    def step(scalars: dict[str, Any], *_: Any) -> None:
        run_kernel(xp, k, dom, fields, scalars, tables)

    return step


def _computing_into(
    code: KernelCode, k: ir.Kernel, reads: list[Any], wins: list[Any]
) -> KernelCode:
    """``code``, or its form computing operations into memory (:mod:`.inplace`) where these
    reads and windows allow it."""
    carries = k.scan.carries if k.scan is not None else ()
    info = inplace.infos(code.order, code.leaves, reads, carries)
    choice = inplace.choose(code.order, code.counts, k.values, info, wins)
    if choice == _NO_CHOICE:
        return code
    special = kernel_code(k, choice)
    if special is None or list(map(id, special.leaves)) != list(map(id, code.leaves)):
        return code  # (never: the same nodes in the same order give the same leaves)
    return special


def _bound_step(
    code: KernelCode, k: ir.Kernel, dom: tuple[UnitRange, ...], fields: Mapping[str, Any]
) -> Step | None:
    """The kernel's function with its reads and windows made for these fields, or None where a
    read cannot be made as a view (the evaluator then runs the kernel and raises what it raises)."""
    outs = [fields[o] for o in k.outs]
    dts = [o.dtype for o in outs]
    try:
        if k.scan is None:
            reads = _reads(KernelEvaluator(np, k.dims, dom, fields, {}, {}), code.leaves)
            wins = [_window(o, k, dom) for o in outs]
            rest: Any = (reads, wins)
            code = _computing_into(code, k, reads, wins)
        else:
            axis = k.dims.index(k.scan.axis)
            init = _reads(KernelEvaluator(np, k.dims, dom, fields, {}, {}), code.init_leaves)
            levels = list(dom[axis])
            if not k.scan.forward:
                levels.reverse()
            per_level = []
            for level in levels:
                ldom = tuple(
                    UnitRange(level, level + 1) if a == axis else r for a, r in enumerate(dom)
                )
                ev = KernelEvaluator(np, k.dims, ldom, fields, {}, {})
                per_level.append((_reads(ev, code.leaves), [_window(o, k, ldom) for o in outs]))
            rest = (init, per_level)
            first = per_level[0] if per_level else None
            if first is not None and all(
                inplace.same_infos(r, first[0]) and inplace.same_infos(w, first[1])
                for r, w in per_level[1:]
            ):  # every level's reads and windows alike: one choice for all
                code = _computing_into(code, k, *first)
    except Exception:
        return None
    fn = code.fn
    if any(isinstance(x, ir.Call) and x.fn == "concat_where" for x in postorder(*k.values)):

        def guarded(scalars: dict[str, Any], *_: Any) -> None:
            # the evaluator computes a concat_where's branches with errors ignored: their
            # values are discarded where the branch is not selected
            with np.errstate(all="ignore"):
                fn(*rest, outs, dts, scalars)

        return guarded

    return partial(fn, *rest, outs, dts)
