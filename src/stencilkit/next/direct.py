"""Calling a field operator directly, ``op(*args, out=..., domain=...)``: a program of one
statement, made (and kept) per argument types, output type and domain dimensions, whose
parameters are the arguments, the output and the domain bounds (``__dom{i}_{dim}_lo/hi``);
``op.returning(...)`` allocates the output first, over the domain where every read stays inside
the arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import stages
from ..core.dims import Dimension
from ..core.errors import StencilTypeError
from ..core.named_collections import NamedCollectionType, collection_values
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec, scalar_type_of_value
from ..ir import nodes as ir
from ..ir.lower import flat_params
from ..stages.binding import flatten_args
from .parse import build_apply, with_neighbour_temporaries
from .scans import scan_call
from .typing_rules import TypingError

if TYPE_CHECKING:
    from .operator import FieldOperator


def result_type(op: FieldOperator, arg_types: tuple[TypeSpec, ...]) -> TypeSpec:
    scan = op.__stencilkit_scan__
    if scan is None:
        return op.definition.body.type
    params = op.definition.params[1:]
    try:
        call = scan_call(
            op.definition, scan, [ir.Ref(p.name, t) for p, t in zip(params, arg_types)]
        )
    except TypingError as err:
        raise StencilTypeError(f"{op.__name__}(): {err.message}", hint=err.hint) from None
    return call.type


def allocate_result(
    op: FieldOperator, args: tuple[Any, ...], domain: Any, offset_provider: Mapping[str, Any] | None
) -> Any:
    """New fields for the result of a call without ``out=``: over ``domain`` if given, else
    over the largest domain where every read stays inside the arguments, on their device."""
    arg_types = tuple(type_of_value(a) for a in args)
    rtype = result_type(op, arg_types)
    leaves = _leaves(rtype)
    if not leaves or not all(isinstance(t, FieldType) for t in leaves):
        raise StencilTypeError(
            f"{op.__name__}() returns {rtype}: call it with out= or from another operator"
        )
    dims = tuple(dict.fromkeys(d for t in leaves for d in t.dims))  # type: ignore[union-attr]
    fields = [a for a in _leaves_of(args) if hasattr(a, "domain") and hasattr(a, "device")]
    tables = {
        k: v
        for k, v in (offset_provider or {}).items()
        if hasattr(v, "domain") and hasattr(v, "device")
    }
    devices = [f.device for f in fields] or [t.device for t in tables.values()]
    if not devices:
        raise StencilTypeError(f"{op.__name__}() without out= needs at least one field argument")
    if domain is not None:  # one domain, or one per element
        from ..core.domain import domain as make_domain

        given = [make_domain(d) for d in _domain_leaves(domain)]
        per_leaf = [{dim: (r.start, r.stop) for dim, r in zip(d.dims, d.ranges)} for d in given]
        if len(per_leaf) == 1:
            per_leaf *= len(leaves)
        elif len(per_leaf) != len(leaves):
            raise StencilTypeError(
                f"{op.__name__}(): domain= gives {len(per_leaf)} domains for {len(leaves)} results",
                hint="give one domain, or one per result",
            )
    else:
        per_leaf = [
            inferred_domain(op, args, arg_types, rtype, dims, tables, offset_provider)
        ] * len(leaves)
    from ..fields import empty

    todo = iter(per_leaf)

    def alloc(t: TypeSpec) -> Any:
        if isinstance(t, NamedCollectionType) and t.cls is not None:
            return t.cls(*(alloc(s) for s in t.types))  # an instance of the user's class
        if isinstance(t, TupleType):
            return tuple(alloc(s) for s in t.types)
        assert isinstance(t, FieldType)
        ranges = next(todo)
        return empty({d: ranges[d] for d in t.dims}, t.dtype, device=devices[0])

    return alloc(rtype)


def inferred_domain(
    op: FieldOperator,
    args: tuple[Any, ...],
    arg_types: tuple[TypeSpec, ...],
    rtype: TypeSpec,
    dims: tuple[Dimension, ...],
    tables: dict[str, Any],
    offset_provider: Mapping[str, Any] | None,
) -> dict[Dimension, tuple[int, int]]:
    from ..ir.extents import output_domain
    from ..stages.binding import table_infos

    key = (arg_types, rtype)
    prog = op._result_programs.get(key)
    if prog is None:  # kept: the lowering cache knows programs by identity
        prog = op._result_programs[key] = direct_program(op, arg_types, rtype, ())
    sprog = stages.lower(prog, table_infos(offset_provider, prog)).stencil
    values = flatten_args(prog.params[: len(args)], args, {}, op.__name__)
    flat = flat_params(prog.params[: len(args)])
    have = {
        p.name: dict(v.domain.items())
        for p, v in zip(flat, values)
        if isinstance(p.type, FieldType) and hasattr(v, "domain")
    }
    have.update({t: dict(v.domain.items()) for t, v in tables.items()})
    dims_of = {p.name: p.type.dims for p in sprog.params if isinstance(p.type, FieldType)}
    dims_of.update({t: tuple(v.domain.dims) for t, v in tables.items()})
    found = output_domain(sprog.kernels, dims, have, dims_of)
    missing = [d for d in dims if d not in found]
    if missing:
        raise StencilTypeError(
            f"{op.__name__}(): cannot tell the result's range along {', '.join(map(str, missing))}"
            " from the arguments",
            hint="pass out= (or domain=)",
        )
    return {d: (found[d].start, found[d].stop) for d in dims}


def direct_program(
    op: FieldOperator,
    arg_types: tuple[TypeSpec, ...],
    out_type: TypeSpec,
    dom_key: tuple[tuple[Dimension, ...], ...],
    alias: tuple[tuple[int, int], ...] = (),
) -> ir.Program:
    """The program behind a direct call; ``dom_key`` lists the dimensions of each domain given
    (none; one for every output; or one per output), passed as ``__dom{i}_{dim}_lo/hi``.
    ``alias``: (argument leaf, output leaf) pairs that are the same field (``op(q, out=q)``):
    the operator reads the output there, as a program statement ``op(q, out=q)`` does."""
    params = op.definition.params[1:] if op.__stencilkit_scan__ else op.definition.params
    if len(arg_types) != len(params):
        raise StencilTypeError(
            f"{op.__name__}() takes {len(params)} arguments, got {len(arg_types)}"
        )
    out_p = ir.Param("__out", out_type)
    outs = tuple(ir.Ref(p.name, p.type) for p in flat_params((out_p,)))
    dom_params: list[ir.Param] = []
    domains: list[tuple[ir.DomainRange, ...]] = []
    for i, dims in enumerate(dom_key):
        ranges = []
        for d in dims:
            lo, hi = (
                ir.Param(f"__dom{i}_{d.value}_{e}", ScalarType("int64")) for e in ("lo", "hi")
            )
            dom_params += [lo, hi]
            ranges.append(ir.DomainRange(d, ir.Ref(lo.name, lo.type), ir.Ref(hi.name, hi.type)))
        domains.append(tuple(ranges))
    if len(domains) <= 1:
        domains = [domains[0] if domains else ()] * len(outs)
    elif len(domains) != len(outs):
        raise StencilTypeError(
            f"{op.__name__}(): domain= gives {len(domains)} domains for {len(outs)} output fields",
            hint="give one domain, or one per output field",
        )
    user_params = tuple(ir.Param(p.name, t) for p, t in zip(params, arg_types))
    targets = {a: outs[o] for a, o in alias}
    counter = iter(range(1 << 30))
    args = [_arg_expr(ir.Ref(p.name, p.type), targets, counter) for p in user_params]
    stmts, temps = build_apply(
        op,
        args,
        outs,
        domains,
        op._src,
        op._src.tree,
        _TypedArgs(),
        may_alias=True,
    )
    return with_neighbour_temporaries(
        ir.Program(op.__name__, (*user_params, out_p, *dom_params), tuple(stmts), tuple(temps))
    )


class _TypedArgs:
    """Argument checks for direct calls, where arguments are already typed values."""

    def check_arg(self, node: Any, arg: ir.Expr, p: ir.Param, callee: str) -> ir.Expr:
        if (
            isinstance(p.type, FieldType)
            and not p.type.dims
            and arg.type == ScalarType(p.type.dtype)
        ):
            return arg  # a scalar for a 0-d field
        if _widens(arg.type, p.type):
            # gt4py runs a direct call on the arguments as given: an int32 field where the
            # operator declares float64 computes as NumPy promotes it, exactly as the cast does
            return ir.Call("astype", (arg,), p.type)
        if arg.type != p.type:
            raise StencilTypeError(
                f"{callee}(): argument '{p.name}' must be {p.type}, got {arg.type}"
            )
        return arg


def _widens(given: TypeSpec, declared: TypeSpec) -> bool:
    """Whether a field of ``given`` type converts to the ``declared`` one without changing a
    value: the same dimensions, and a dtype NumPy promotes to the declared one (int32 ->
    float64, float32 -> float64), never a narrowing or a bool."""
    if not (isinstance(given, FieldType) and isinstance(declared, FieldType)):
        return False
    if (
        given.dims != declared.dims
        or given.dtype == declared.dtype
        or "bool" in (given.dtype, declared.dtype)
    ):
        return False
    import numpy as np

    return bool(np.promote_types(given.dtype, declared.dtype) == np.dtype(declared.dtype))


def aliases(args: tuple[Any, ...], out: Any) -> tuple[tuple[int, int], ...]:
    """(argument leaf, output leaf) index pairs of fields passed both as an argument and in
    ``out=`` (the same object, or the same memory seen the same way)."""
    outs = _leaves_of(out)
    found = []
    for i, a in enumerate(_leaves_of(args)):
        if not hasattr(a, "domain"):
            continue
        for j, o in enumerate(outs):
            if a is o or _same_view(a, o):
                found.append((i, j))
                break
    return tuple(found)


def _same_view(a: Any, b: Any) -> bool:
    try:
        return bool(a.address == b.address and a.signature == b.signature)
    except Exception:
        return False


def _arg_expr(e: ir.Expr, targets: dict[int, ir.Ref], counter: Any) -> ir.Expr:
    """The argument ``e`` with its leaves numbered by ``counter`` (in flattening order), the
    leaves in ``targets`` replaced by the output they are the same field as."""
    if isinstance(e.type, TupleType):
        elems = tuple(
            _arg_expr(ir.TupleGet(e, i, t), targets, counter) for i, t in enumerate(e.type.types)
        )
        if all(isinstance(x, ir.TupleGet) and x.expr is e for x in elems):
            return e
        return ir.MakeTuple(elems, e.type)
    return targets.get(next(counter), e)


def _leaves(t: TypeSpec) -> list[TypeSpec]:
    return [x for s in t.types for x in _leaves(s)] if isinstance(t, TupleType) else [t]


def _leaves_of(v: Any) -> list[Any]:
    v = collection_values(v)
    return [x for s in v for x in _leaves_of(s)] if isinstance(v, tuple | list) else [v]


def type_of_value(v: Any) -> TypeSpec:
    v = collection_values(v)
    if isinstance(v, tuple | list):
        return TupleType(tuple(type_of_value(x) for x in v))
    if hasattr(v, "domain") and hasattr(v, "dtype"):
        return FieldType(tuple(v.domain.dims), v.dtype.name)
    scalar = scalar_type_of_value(v)
    if scalar is not None:
        return scalar
    raise StencilTypeError(f"cannot pass a {type(v).__name__} to a field operator")


def _domain_leaves(domain: Any) -> list[Any]:
    """The domains in ``domain=``: one, or a (nested) tuple of them, one per output field."""
    from ..core.domain import Domain

    if domain is None:
        return []
    if isinstance(domain, Domain | Mapping):
        return [domain]
    if isinstance(domain, tuple | list) and all(
        isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], Dimension) for p in domain
    ):
        return [domain]  # (dim, range) pairs
    if isinstance(domain, tuple | list):
        return [x for d in domain for x in _domain_leaves(d)]
    return [domain]


def domain_key(domain: Any) -> tuple[tuple[Dimension, ...], ...]:
    from ..core.domain import domain as make_domain

    try:
        return tuple(tuple(make_domain(d).dims) for d in _domain_leaves(domain))
    except TypeError as err:
        raise StencilTypeError(f"domain=: {err}") from None


def domain_args(domain: Any) -> list[int]:
    from ..core.domain import domain as make_domain

    return [
        x for d in _domain_leaves(domain) for r in make_domain(d).ranges for x in (r.start, r.stop)
    ]
