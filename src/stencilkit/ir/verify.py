"""The IR verifier: the structural invariants of both IR levels, checked after every pass.

A pass that breaks an invariant is a bug in stencilkit, never the user's fault, so the verifier
raises ``InternalError`` naming the broken rule and printing the offending node and the
statement or kernel it sits in. It checks

* types: well-formed ``TypeSpec``s (known dtypes, distinct dimensions); every node's type agrees
  with its operands (comparisons are ``bool``, tuple elements match, ``Ref``/``Access`` match
  their parameter, a reduction removes its local dimension, ...);
* names: every ``Ref`` is a parameter, a temporary or a carry in scope; every ``Access``,
  kernel output and domain bound names a parameter; every ``LocalIndex`` is bound by an
  enclosing ``LocalReduce``; carries and temporaries do not shadow parameters;
* levels: operator-level nodes (``Shift``, ``Reduce``, ...) never reach the stencil level and
  stencil-level nodes (``Access``, ``Pos``, ...) never appear at the operator level;
* fields: an ``Access`` has one index per field dimension, at positions of the kernel's own
  dimensions; outputs are fields over the kernel's dimensions;
* neighbour tables: with the tables lowering was given, every ``Lookup``/``Valid`` names one
  of them, constant neighbour slots are in range, masks only for tables with skip values;
* domains: one range per dimension of the output, integer bounds built of scalar parameters;
* scans: the axis is a dimension of the output, one carry (distinct, with an initial value)
  per value, the carry read only inside the step;
* temporaries: each one written before it is read, and read somewhere.

It runs after every pass in ``ir/`` when ``VERIFY_IR`` is true: set by ``STENCILKIT_VERIFY_IR=1``
or ``stencilkit.ir.verify.VERIFY_IR = True`` (the test suite turns it on in ``conftest.py``).

>>> verify_stencil(stencil_program)            # raises InternalError if it is malformed
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..core.dims import Dimension
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec
from . import nodes as n
from .tuples import flat_params
from .verify_exprs import Scope, TableLike, Verifier, check_literal, strip_dims
from .visit import children, deep


#: Verify the IR after every pass (tests, debugging); off by default: it costs a walk per pass.
def _verify_ir_flag() -> bool:
    from ..core.env import yes_no
    from ..core.errors import warn_configuration

    value = os.environ.get("STENCILKIT_VERIFY_IR", "")
    try:
        return yes_no(value)
    except ValueError as err:
        warn_configuration("STENCILKIT_VERIFY_IR", value, str(err), "no")
        return False


VERIFY_IR: bool = _verify_ir_flag()


# ---------------------------------------------------------------- programs
def _declare(v: Verifier, params: tuple[n.Param, ...], at: n.Node) -> dict[str, TypeSpec]:
    names: dict[str, TypeSpec] = {}
    for p in params:
        if not isinstance(p, n.Param):
            v.fail(f"{type(p).__name__} among the parameters", at)
        if not p.name.isidentifier():
            v.fail(f"parameter name {p.name!r} is not an identifier", p)
        if p.name in names:
            v.fail(f"two parameters or temporaries named '{p.name}'", at)
        v.type(p.type, p)
        names[p.name] = p.type
    return names


def _leaves(t: TypeSpec) -> tuple[TypeSpec, ...]:
    return tuple(x for s in t.types for x in _leaves(s)) if isinstance(t, TupleType) else (t,)


def _outputs(
    v: Verifier, outs: tuple[n.Ref, ...], names: Mapping[str, TypeSpec], at: n.Node
) -> tuple[Dimension, ...]:
    """The dimensions of a statement's outputs: fields in scope, distinct, over one set of dimensions."""
    if not outs:
        v.fail("a statement without outputs", at)
    scope = Scope(names)
    for o in outs:
        if not isinstance(o, n.Ref):
            v.fail(f"output {o} is not a name", at)
        v.ref(o, scope)
        if not isinstance(o.type, FieldType):
            v.fail(f"output '{o.name}' is not a field but {o.type}", at)
    if len({o.name for o in outs}) != len(outs):
        v.fail("a statement writes one field twice", at)
    dims = n.field_dims(outs[0].type)
    if any(set(n.field_dims(o.type)) != set(dims) for o in outs):
        v.fail("the outputs of one statement have different dimensions", at)
    return dims


@deep
def verify_program(prog: n.Program, after: str = "") -> None:
    """Check an operator-level program; raise ``InternalError`` naming the broken invariant."""
    v = Verifier(stencil=False, context=prog, after=after)
    if not isinstance(prog, n.Program):
        v.fail(f"expected a Program, found {type(prog).__name__}", prog)
    names = _declare(v, prog.params + prog.temps, prog)
    # a tuple parameter is also known by the flat names of its elements (``out=`` of a direct
    # call with a tuple result writes ``__out__0``, ``__out__1``)
    names |= {p.name: p.type for p in flat_params(prog.params) if p.name not in names}
    temps = {t.name for t in prog.temps}
    for t in prog.temps:
        if not isinstance(t.type, FieldType):
            v.fail(f"temporary '{t.name}' is not a field but {t.type}", prog)
    written: set[str] = set()
    read: set[str] = set()
    scratch: set[str] = set()  # columns a scan must write somewhere though nothing reads them
    for stmt in prog.body:
        v.context = stmt
        if not isinstance(stmt, n.Apply | n.ScanApply):
            v.fail(f"{type(stmt).__name__} is not a program statement", stmt)
        dims = _outputs(v, stmt.outs, names, stmt)
        scope = Scope(names)
        v.domain(stmt.domain, dims, scope, stmt)
        if isinstance(stmt, n.Apply):
            roots: tuple[n.Expr, ...] = (stmt.expr,)
            v.expr(stmt.expr, scope)
            values = _leaves(stmt.expr.type)
        else:
            roots = (stmt.init, stmt.step)
            if stmt.carry_name in names:
                v.fail(f"the carry '{stmt.carry_name}' shadows a parameter", stmt)
            if stmt.axis not in dims:
                v.fail(
                    f"a scan along {stmt.axis} writing fields over {', '.join(map(str, dims))}",
                    stmt,
                )
            v.expr(stmt.init, scope)
            v.expr(stmt.step, Scope({**names, stmt.carry_name: stmt.init.type}, pointwise=True))
            if strip_dims(stmt.step.type) != strip_dims(stmt.init.type):
                v.fail(
                    f"the step gives {stmt.step.type} but the carry starts as {stmt.init.type}",
                    stmt,
                )
            values = _leaves(stmt.init.type)
        if len(values) != len(stmt.outs):
            v.fail(f"{len(values)} values written to {len(stmt.outs)} outputs", stmt)
        for vt, o in zip(values, stmt.outs):
            if isinstance(vt, FieldType) and not set(vt.dims) <= set(n.field_dims(o.type)):
                v.fail(
                    f"a value over {', '.join(map(str, vt.dims))} written to '{o.name}': {o.type}",
                    stmt,
                )
        used = {x.name for x in _refs(roots)} | {
            x.name for r in stmt.domain for x in _refs((r.start, r.stop))
        }
        early = sorted((used & temps) - written)
        if early:
            v.fail(f"temporary '{early[0]}' is read before any statement writes it", stmt)
        read |= used & temps
        written |= {o.name for o in stmt.outs}
        if isinstance(stmt, n.ScanApply) and len(stmt.outs) > 1:
            scratch |= {o.name for o in stmt.outs}
    v.context = prog
    for t in prog.temps:
        if t.name not in written:
            v.fail(f"temporary '{t.name}' is never written", prog)
        if t.name not in read and t.name not in scratch:
            v.fail(f"temporary '{t.name}' is written but never read (a dangling temporary)", prog)


def _refs(roots: tuple[n.Node, ...]) -> list[n.Ref]:
    from .visit import postorder

    return [x for x in postorder(*roots) if isinstance(x, n.Ref)]


@deep
def verify_stencil(
    prog: n.StencilProgram, tables: Mapping[str, TableLike] | None = None, after: str = ""
) -> None:
    """Check a stencil-level program; with ``tables`` (what lowering was given) also its
    neighbour-table reads. Raises ``InternalError`` naming the broken invariant."""
    v = Verifier(stencil=True, tables=tables, context=prog, after=after)
    if not isinstance(prog, n.StencilProgram):
        v.fail(f"expected a StencilProgram, found {type(prog).__name__}", prog)
    names = _declare(v, prog.params, prog)
    for p in prog.params:
        if isinstance(p.type, TupleType):
            v.fail(f"tuple parameter '{p.name}' is not flattened", prog)
    for k in prog.kernels:
        v.context = k
        if not isinstance(k, n.Kernel):
            v.fail(f"{type(k).__name__} is not a kernel", k)
        _kernel(v, k, names)


def _kernel(v: Verifier, k: n.Kernel, names: dict[str, TypeSpec]) -> None:
    if len(set(k.dims)) != len(k.dims):  # none: a zero-dimensional field, one point
        v.fail(f"kernel dimensions [{', '.join(map(str, k.dims))}] repeat one", k)
    if len(k.outs) != len(k.values):
        v.fail(f"{len(k.values)} values for {len(k.outs)} outputs", k)
    dims = _outputs(
        v,
        tuple(n.Ref(o, names.get(o, ScalarType("bool"))) for o in k.outs),
        {o: t for o, t in names.items() if o in k.outs},
        k,
    )
    if set(dims) != set(k.dims):
        v.fail(
            f"kernel over [{', '.join(map(str, k.dims))}] writes fields over [{', '.join(map(str, dims))}]",
            k,
        )
    v.domain(k.domain, k.dims, Scope(names), k)
    scope = Scope(names, dims=k.dims)
    if k.scan is not None:
        sc = k.scan
        if sc.axis not in k.dims:
            v.fail(f"a scan along {sc.axis} in a kernel over [{', '.join(map(str, k.dims))}]", k)
        if not (len(sc.carries) == len(sc.inits) == len(k.values)):
            v.fail(
                f"{len(sc.carries)} carries, {len(sc.inits)} initial values and {len(k.values)} values",
                k,
            )
        if len(set(sc.carries)) != len(sc.carries) or set(sc.carries) & names.keys():
            v.fail("scan carries must be distinct and not shadow a parameter", k)
        carries: dict[str, TypeSpec] = {}
        for c, init in zip(sc.carries, sc.inits):
            _init(v, init, names, k)
            carries[c] = init.type
        scope = Scope({**names, **carries}, dims=k.dims)
    for o, value in zip(k.outs, k.values):
        v.expr(value, scope)
        if isinstance(value.type, TupleType):
            v.fail(f"'{o}' is given a tuple of type {value.type}", k)


def _init(v: Verifier, e: n.Expr, names: Mapping[str, TypeSpec], k: n.Kernel) -> None:
    """A scan's initial value: a scalar computed from literals and scalar parameters (tuple
    parameters by their flattened names)."""
    from .tuples import flat_name

    if not isinstance(e.type, ScalarType):
        v.fail(f"a scan's initial value of type {e.type}", k)
    name = flat_name(e)
    if name is not None:
        if not isinstance(names.get(name), ScalarType):
            v.fail(f"the scan's initial value reads '{name}', which is not a scalar parameter", k)
        return
    if isinstance(e, n.Literal):
        check_literal(v, e, Scope(names))
    elif isinstance(e, n.BinOp | n.UnaryOp | n.Call | n.IfElse):
        for c in children(e):
            if isinstance(c, n.Expr):
                _init(v, c, names, k)
    else:
        v.fail(f"{type(e).__name__} in a scan's initial value", k)


# ---------------------------------------------------------------- the hooks the passes call
def check_program(prog: n.Program, after: str) -> None:
    """``verify_program`` when ``VERIFY_IR`` is on (``after``: the pass that produced ``prog``)."""
    if VERIFY_IR:
        verify_program(prog, after)


def check_stencil(
    prog: n.StencilProgram, after: str, tables: Mapping[str, TableLike] | None = None
) -> None:
    """``verify_stencil`` when ``VERIFY_IR`` is on (``after``: the pass that produced ``prog``)."""
    if VERIFY_IR:
        verify_stencil(prog, tables, after)
