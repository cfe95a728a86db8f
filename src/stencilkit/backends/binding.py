"""Binding call arguments to a stencil program: flattening, checks, concrete domains.

Everything here depends only on the *signature* of the arguments (dimensions, dtypes, shapes,
strides, origins, devices, and the scalar values used in domain bounds), so backends compute a
``Plan`` once per signature and reuse it on every later call with the same signature.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.dims import Dimension, FieldOffset
from ..core.domain import UnitRange
from ..core.errors import ArgumentTypeError, StencilTypeError, StencilValueError
from ..core.named_collections import collection_values
from ..core.staggered import flip_staggered
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec
from ..ir import nodes as ir
from ..ir.extents import FIELD_START, FIELD_STOP, read_extents
from ..ir.lower import TableInfo, flat_params
from ..ir.visit import walk
from .inferred import check_temporary_domain, read_domain


def flatten_args(params: tuple[ir.Param, ...], args: Sequence[Any], kwargs: Mapping[str, Any],
                 program: str) -> list[Any]:
    """Program arguments in the order of the flattened parameters (tuples unpacked)."""
    if not kwargs and len(args) == len(params) and not any(isinstance(p.type, TupleType) for p in params):
        return list(args)
    if len(args) > len(params):
        raise StencilTypeError(f"{program}() takes {len(params)} arguments, got {len(args)}")
    values = list(args)
    for p in params[len(args):]:
        if p.name not in kwargs:
            raise StencilTypeError(f"{program}() is missing the argument '{p.name}'")
        values.append(kwargs[p.name])
    extra = set(kwargs) - {p.name for p in params[len(args):]}
    if extra:
        raise StencilTypeError(f"{program}() got unexpected argument(s) {', '.join(sorted(extra))}")
    flat: list[Any] = []
    for p, v in zip(params, values):
        _flatten_value(p.name, p.type, v, flat, program)
    return flat


def _flatten_value(name: str, t: TypeSpec, v: Any, out: list[Any], program: str) -> None:
    if isinstance(t, TupleType):
        v = collection_values(v)  # a dataclass instance: its elements
        if not isinstance(v, tuple | list) or len(v) != len(t.types):
            raise StencilTypeError(f"{program}(): argument '{name}' must be a tuple of {len(t.types)}")
        for i, (s, x) in enumerate(zip(t.types, v)):
            _flatten_value(f"{name}[{i}]", s, x, out, program)
        return
    out.append(v)


def wrap_arrays(params: tuple[ir.Param, ...], args: list[Any], written: frozenset[str] = frozenset()) -> list[Any]:
    """``args`` with raw arrays (NumPy, CuPy, PyTorch, JAX: anything speaking DLPack or an array
    interface) given for field parameters wrapped as fields over the parameter's dimensions,
    starting at index 0, sharing the arrays' memory (read-only inputs included). An array given
    for a ``written`` parameter that could only be used through a copy is refused: the results
    would be lost in the copy."""
    from ..fields.constructors import wrap_argument

    out = list(args)
    for i, (p, a) in enumerate(zip(params, args)):
        if isinstance(p.type, FieldType) and not p.type.dims and type(a) in _PY_SCALAR_DTYPES \
                and _PY_SCALAR_DTYPES[type(a)] == p.type.dtype:
            a = np.asarray(a, dtype=p.type.dtype)  # a scalar for a 0-d field (gt4py: exactly its dtype)
        if isinstance(p.type, FieldType) and not hasattr(a, "_sig") and (
            hasattr(a, "__dlpack__") or hasattr(a, "__cuda_array_interface__") or hasattr(a, "__array_interface__")
        ):
            if len(getattr(a, "shape", ())) != len(p.type.dims):
                raise StencilTypeError(
                    f"argument '{p.name}' is an array of shape {tuple(a.shape)}, but the parameter is a"
                    f" field over [{', '.join(map(str, p.type.dims))}]",
                    hint="pass an array with one axis per dimension, in that order")
            out[i] = wrap_argument(p.type.dims, a, p.name in written, _shown(p.name))
    return out


_PY_SCALAR_DTYPES = {float: "float64", int: "int32", bool: "bool"}


def _shown(flat_name: str) -> str:
    """A flattened parameter's name as the user wrote it: ``out__1`` -> ``out[1]``."""
    base, *index = flat_name.split("__")
    return base + "".join(f"[{i}]" for i in index) if all(i.isdigit() for i in index) else flat_name


def written_params(program: ir.Program) -> frozenset[str]:
    """Names of the (flattened) parameters a program writes: the ``out=`` of its calls."""
    return frozenset(o.name for stmt in program.body for o in stmt.outs)


def as_declared(field: Any, dims: tuple[Dimension, ...]) -> Any:
    """``field`` with its axes in the order of the parameter's declared dimensions: the IR indexes
    fields in that order. A field stored in another order (``as_field([J, I], ...)`` for a
    ``Field[Dims[I, J], ...]`` parameter) becomes a transposed view of the same memory."""
    own = tuple(field.domain.dims)
    if own == dims:
        return field
    from ..core.domain import Domain
    from ..fields import Field

    perm = [own.index(d) for d in dims]
    domain = Domain(dims, tuple(field.domain.ranges[a] for a in perm))
    return Field(domain, field.ndarray.transpose(perm))


def check_scalar(name: str, t: ScalarType, v: Any, program: str) -> Any:
    """``v`` as a NumPy scalar of ``t``; refuses values that would change meaning."""
    dtype = np.dtype(t.dtype)
    if not isinstance(v, np.generic) and (
        hasattr(v, "domain") or hasattr(v, "__array_interface__") or hasattr(v, "__cuda_array_interface__")
    ):
        raise _scalar_type_error(program, name, t, v, f"argument '{name}' must be a scalar {t}, got an array or field")
    if isinstance(v, np.generic):
        if v.dtype != dtype and not np.can_cast(v.dtype, dtype, "same_kind"):
            raise _scalar_type_error(program, name, t, v, f"argument '{name}' must be {t}, got {v.dtype}")
        return dtype.type(v)
    if isinstance(v, float) and dtype.kind in "iub":
        raise _scalar_type_error(program, name, t, v, f"argument '{name}' must be an integer ({t}), got {v!r}")
    if not isinstance(v, bool | int | float):
        raise _scalar_type_error(program, name, t, v, f"argument '{name}' must be {t}, got {type(v).__name__}")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= v <= info.max:
            raise StencilValueError(f"{program}(): argument '{name}' = {v} does not fit in {t}")
    return dtype.type(v)


def _type_name(v: Any) -> str:
    """How gt4py.next prints the type of the value ``v``: ``Field[[X], float64]``, ``int32``."""
    if hasattr(v, "domain") and hasattr(v, "dtype"):
        return f"Field[[{', '.join(d.value for d in v.domain.dims)}], {v.dtype.name}]"
    if isinstance(v, np.generic) or hasattr(v, "dtype"):
        return str(np.dtype(v.dtype).name)
    if isinstance(v, bool):
        return "bool"
    return {int: "int32", float: "float64"}.get(type(v), type(v).__name__)


def _scalar_type_error(program: str, name: str, t: ScalarType, v: Any, detail: str) -> ArgumentTypeError:
    line = f"  - Expected argument '{name}' to be of type '{t}', got '{_type_name(v)}'."
    err = ArgumentTypeError(f"Invalid argument types in call to '{program}'.\n{line}", hint=f"{program}(): {detail}")
    err.__cause__ = ValueError(line)
    return err


def check_field(name: str, t: FieldType, v: Any, program: str) -> None:
    if not hasattr(v, "_sig") or not hasattr(v, "domain"):
        kind = type(v).__name__
        hint = "wrap arrays with gtx.as_field([dims...], array)"
        raise StencilTypeError(f"{program}(): argument '{name}' must be a field {t}, got {kind}", hint=hint)
    dims = tuple(v.domain.dims)
    if dims != t.dims:
        if set(dims) == set(t.dims):
            return _check_dtype(name, t, v, program)  # a permuted layout is fine: strides say where
        raise _argument_type_error(program, name, t, v, f"argument '{name}' has dimensions"
                                   f" [{', '.join(map(str, dims))}], expected [{', '.join(map(str, t.dims))}]")
    _check_dtype(name, t, v, program)


def _check_dtype(name: str, t: FieldType, v: Any, program: str) -> None:
    if v.dtype.name != t.dtype:
        raise _argument_type_error(program, name, t, v, f"argument '{name}' has dtype {v.dtype.name},"
                                   f" expected {t.dtype}; convert with gtx.as_field(..., dtype={t.dtype})")


def _argument_type_error(program: str, name: str, t: FieldType, v: Any, detail: str) -> ArgumentTypeError:
    """gt4py.next's error for a wrong argument type: the problem lines are a ``ValueError`` cause."""
    got = f"Field[[{', '.join(d.value for d in v.domain.dims)}], {v.dtype.name}]"
    line = f"  - Expected argument '{name}' to be of type '{t}', got '{got}'."
    err = ArgumentTypeError(f"Invalid argument types in call to '{program}'.\n{line}", hint=detail)
    err.__cause__ = ValueError(line)
    return err


# ------------------------------------------------------------------------- offset providers
def table_infos(offset_provider: Mapping[str, Any] | None, program: ir.Program) -> dict[str, TableInfo]:
    """Describe the neighbour tables of ``offset_provider`` that ``program`` uses."""
    provider = offset_provider or {}
    check_provider(provider, program.name, program)
    infos: dict[str, TableInfo] = {}
    for name, table in provider.items():
        if isinstance(table, Dimension | FieldOffset):
            continue
        if hasattr(table, "max_neighbors"):
            infos[name] = TableInfo(int(table.max_neighbors), table.skip_value is not None)
        else:
            raise StencilTypeError(
                f"offset_provider['{name}'] is a {type(table).__name__}, not a neighbour table",
                hint="pass gtx.as_connectivity([Edge, E2CDim], Cell, table) or a Dimension")
    return infos


def _wrap_hint(name: str, program: ir.Program | None) -> str:
    """How to wrap a raw table for offset ``name``, with the dimensions the program shifts by."""
    body = program.body if program is not None else ()
    shift = next((n for stmt in body for n in walk(stmt) if isinstance(n, ir.NeighborShift) and n.offset == name),
                 None)
    if shift is None:
        return f"wrap it: gtx.as_connectivity([FromDim, {name}Dim], ToDim, table, skip_value=-1)"
    dims = ", ".join(d.value for d in shift.target)
    return (f"wrap it: gtx.as_connectivity([{dims}], {shift.source.value}, table) (add skip_value=-1"
            " if it has missing neighbours)")


def check_provider(provider: Any, program: str, definition: ir.Program | None = None) -> None:
    """Refuse an ``offset_provider`` that is not a mapping, or that holds raw arrays as tables."""
    if not isinstance(provider, Mapping):
        raise StencilTypeError(
            f"{program}(): offset_provider must be a dict from offset names to connectivities or"
            f" dimensions, got a {type(provider).__name__}",
            hint='e.g. offset_provider={"E2C": gtx.as_connectivity([Edge, E2CDim], Cell, table), "Koff": K}')
    for name, table in provider.items():
        raw = isinstance(table, list | tuple) or hasattr(table, "shape")
        if raw and not hasattr(table, "max_neighbors"):
            kind = type(table).__name__ if isinstance(table, list | tuple) else \
                f"{type(table).__module__.split('.')[0]} array"
            raise StencilTypeError(
                f"{program}(): offset_provider['{name}'] is a raw {kind}; a neighbour table must say"
                " which dimensions it maps",
                hint=_wrap_hint(name, definition))


# ------------------------------------------------------------------------- domains and extents
#: Builtins allowed in domain bounds, evaluated on integers.
_BOUND_CALLS: dict[str, Callable[..., int]] = {
    "minimum": min, "maximum": max, "abs": abs, "neg": lambda a: -a,
    "floor": lambda a: a, "ceil": lambda a: a, "trunc": lambda a: a,
    "power": lambda a, b: a ** b, "fmod": lambda a, b: int(np.fmod(a, b)),
}
_BOUND_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "//": lambda a, b: a // b if b else 0, "%": lambda a, b: a % b if b else 0, "**": lambda a, b: a ** b,
}


def _eval_bound(e: ir.Expr, scalars: Mapping[str, Any], fields: Mapping[str, Any] | None = None) -> int:
    """A domain bound's value: integer arithmetic and builtins on literals and scalar
    arguments, and the ends of fields (a sliced ``out=``)."""
    if isinstance(e, ir.Literal):
        return int(e.value)
    if isinstance(e, ir.Ref):
        return int(scalars[e.name])
    if isinstance(e, ir.BinOp) and e.op in _BOUND_OPS:
        return _BOUND_OPS[e.op](_eval_bound(e.left, scalars, fields), _eval_bound(e.right, scalars, fields))
    if isinstance(e, ir.UnaryOp) and e.op in ("-", "+"):
        v = _eval_bound(e.operand, scalars, fields)
        return -v if e.op == "-" else v
    if isinstance(e, ir.Call) and e.fn in (FIELD_START, FIELD_STOP) and fields is not None:
        ref, dim = e.args
        r = fields[ref.name].domain[dim.dim]  # type: ignore[union-attr]
        return int(r.start if e.fn == FIELD_START else r.stop)
    if isinstance(e, ir.Call) and e.fn == "astype":
        return _eval_bound(e.args[0], scalars, fields)
    if isinstance(e, ir.Call) and e.fn in _BOUND_CALLS:
        return int(_BOUND_CALLS[e.fn](*(_eval_bound(a, scalars, fields) for a in e.args)))
    raise StencilTypeError(f"domain bound {e} is not a simple integer expression of scalar arguments",
                           hint="use + - * // %, minimum, maximum, abs on integer literals and scalar parameters")


def kernel_domain(k: ir.Kernel, fields: Mapping[str, Any], scalars: Mapping[str, Any]) -> tuple[UnitRange, ...]:
    """The concrete index ranges of ``k``, in the order of ``k.dims``."""
    out = fields[k.outs[0]]
    if not k.domain:
        return tuple(out.domain.range_of(d) for d in k.dims)
    given = {r.dim: UnitRange(_eval_bound(r.start, scalars, fields), _eval_bound(r.stop, scalars, fields))
             for r in k.domain}
    extra = [d for d in given if d not in k.dims]
    if extra:
        raise StencilValueError(
            f"{_where(k)}domain= names {', '.join(map(str, extra))}, which the output"
            f" [{', '.join(map(str, k.dims))}] does not have")
    # a dimension left out of domain= spans the output's whole range along it, as in gt4py
    return tuple(given[d] if d in given else out.domain.range_of(d) for d in k.dims)


def check_kernel_bounds(k: ir.Kernel, dom: tuple[UnitRange, ...], fields: Mapping[str, Any],
                        tables: Mapping[str, Any], scalars: Mapping[str, Any] | None = None) -> None:
    """Refuse writes outside an output and reads outside an input, before anything runs."""
    where = dict(zip(k.dims, dom))
    if any(len(r) == 0 for r in dom):
        return
    _check_no_missing_neighbours(k, where, tables)
    for name in k.outs:
        f = fields[name]
        for d, r in where.items():
            if r not in f.domain.range_of(d):
                raise StencilValueError(
                    f"{_where(k)}the domain {d}: {r} lies outside the output '{name}', whose {d} range"
                    f" is {f.domain.range_of(d)}", hint="shrink domain= or allocate a larger output field")
    dims_of = {n: tuple(f.domain.dims) for n, f in fields.items() if hasattr(f, "domain")}
    dims_of.update({n: tuple(t.domain.dims) for n, t in tables.items() if hasattr(t, "domain")})
    # reads guarded by concat_where conditions count only where their condition selects them
    for name, ext in read_extents(k, dims_of, where, scalars).items():
        f = fields.get(name, tables.get(name))
        if f is None or not hasattr(f, "domain"):
            continue
        for d, (lo, hi) in ext.offsets.items():
            dd = d if d in where else flip_staggered(d)  # a staggered read: indexed by the base's loop
            if dd not in where:
                continue
            need = UnitRange(where[dd].start + lo, where[dd].stop + hi)
            have = f.domain.range_of(d)
            if need not in have:
                what = "neighbour table" if name in tables else "field"
                raise StencilValueError(
                    f"{_where(k)}reads {what} '{name}' along {d} over {need} (offsets {lo:+d}..{hi:+d}"
                    f" around the domain {where[dd]}), but '{name}' is defined only on {have}",
                    hint=f"shrink domain= along {d}, or give '{name}' a halo of"
                    f" {max(0, have.start - need.start)} below and {max(0, need.stop - have.stop)} above")
        for d, table_names in ext.indirect.items():
            for t in table_names:
                _check_table_targets(t, tables[t], name, f, d)


def _check_table_targets(tname: str, table: Any, fname: str, f: Any, d: Dimension) -> None:
    # Not cached by table identity: ids are reused after a table is freed. Compiled backends
    # run this once per argument signature anyway.
    data = table.asnumpy()
    skip = table.skip_value
    valid = data[data != skip] if skip is not None else data
    rng = f.domain.range_of(d)
    if valid.size and (valid.min() < rng.start or valid.max() >= rng.stop):
        raise StencilValueError(
            f"neighbour table '{tname}' holds indices {valid.min()}..{valid.max()}, but '{fname}' is"
            f" defined on {d}: {rng}", hint="check that the table matches the mesh of the field")
    if skip is None and (data < 0).any():
        raise StencilValueError(f"neighbour table '{tname}' holds negative indices but no skip_value",
                                hint="pass skip_value=-1 to as_connectivity")


def _where(k: ir.Kernel) -> str:
    return f"{k.where}: in {k.name}(): " if k.where else f"{k.name}(): "


def _check_no_missing_neighbours(k: ir.Kernel, where: Mapping[Dimension, UnitRange],
                                 tables: Mapping[str, Any]) -> None:
    """A read through one chosen neighbour (``c(E2C[1])``) outside a reduction has no value where
    the table holds its skip value: refuse the call if that happens inside the domain."""
    from ..ir.visit import walk

    for value in k.values:
        for x in walk(value):
            if not (isinstance(x, ir.Lookup) and isinstance(x.neighbor, ir.ConstIndex)
                    and isinstance(x.source, ir.Pos)):
                continue
            table = tables[x.table]
            if table.skip_value is None or x.source.dim not in where:
                continue
            rows = where[x.source.dim].shifted(x.source.offset)
            start = rows.start - table.domain.ranges[0].start
            column = table.asnumpy()[start:start + len(rows), x.neighbor.value]
            missing = (column == table.skip_value).nonzero()[0]
            if missing.size:
                first = rows.start + int(missing[0])
                raise StencilValueError(
                    f"{_where(k)}reads through {x.table}[{x.neighbor.value}], but the table has no"
                    f" neighbour there (skip value {table.skip_value}) at {missing.size} of the"
                    f" {len(rows)} points of the domain along {x.source.dim}, the first at {first}",
                    hint="restrict domain= to points that have this neighbour, or use a reduction"
                    " (neighbor_sum, max_over, min_over), which skips missing neighbours")


# ------------------------------------------------------------------------- one binding for every runner
def used_tables(program: ir.Program) -> tuple[str, ...]:
    """The names of the neighbour tables ``program`` shifts through, sorted."""
    return tuple(sorted({x.by.offset for s in program.body for x in walk(s)
                         if isinstance(x, ir.Shift) and isinstance(x.by, ir.NeighborShift)}))


def _check_table_kind(t: str, table: Any, program: ir.Program, name: str) -> None:
    """The table given for offset ``t`` must map the offset's target to its source dimension."""
    shifts = {x.by for s in program.body for x in walk(s)
              if isinstance(x, ir.Shift) and isinstance(x.by, ir.NeighborShift) and x.by.offset == t}
    for by in shifts:
        codomain = getattr(table, "codomain", None)
        if codomain is not None and codomain != by.source:
            raise StencilValueError(
                f"{name}(): offset_provider['{t}'] maps to {codomain}, but the offset {t} reads fields"
                f" over {by.source}", hint=f"build the table with codomain {by.source}")
        dims = tuple(table.domain.dims) if hasattr(table, "domain") else ()
        if dims and dims[0] != by.target[0]:
            raise StencilValueError(
                f"{name}(): offset_provider['{t}'] is a table over {dims[0]}, but the offset {t} goes"
                f" from {by.target[0]}", hint=f"pass the {t} table of dimensions {list(map(str, by.target))}")
        if len(dims) == 2 and len(by.target) == 2 and dims[1] != by.target[1]:
            raise StencilValueError(
                f"{name}(): offset_provider['{t}'] has the local dimension {dims[1]}, but the offset {t}"
                f" declares {by.target[1]}", hint=f"pass the {t} table of dimensions {list(map(str, by.target))}")


@dataclass(frozen=True, slots=True)
class Bound:
    """Checked arguments by parameter name: fields (viewed in their declared dimension order),
    scalars (as NumPy scalars of their type), the neighbour tables used and their descriptions."""

    fields: dict[str, Any]
    scalars: dict[str, Any]
    tables: dict[str, Any]
    infos: dict[str, TableInfo]
    temps: frozenset[str] = frozenset()  # the program's temporaries (flattened names)


def bind(program: ir.Program, flat: tuple[ir.Param, ...], tables_used: tuple[str, ...], args: Sequence[Any],
         offset_provider: Mapping[str, Any] | None,
         check_device: Callable[[str, Any], None] | None = None) -> Bound:
    """Check every argument of a call (and, with ``check_device``, where it lives)."""
    name = program.name
    check_provider(offset_provider or {}, name, program)
    fields: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    for p, a in zip(flat, args):
        if isinstance(p.type, FieldType):
            check_field(p.name, p.type, a, name)
            if check_device is not None:
                check_device(f"argument '{p.name}'", a)
            fields[p.name] = as_declared(a, p.type.dims)
        elif isinstance(p.type, ScalarType):
            scalars[p.name] = check_scalar(p.name, p.type, a, name)
    provider = dict(offset_provider or {})
    tables: dict[str, Any] = {}
    for t in tables_used:
        if t not in provider:
            raise StencilValueError(f"{name}(): offset_provider has no entry for '{t}'",
                                    hint=f"pass offset_provider={{'{t}': connectivity}}")
        tables[t] = provider[t]
        _check_table_kind(t, tables[t], program, name)
        if check_device is not None:
            check_device(f"offset_provider['{t}']", tables[t])
    infos = {k: v for k, v in table_infos(provider, program).items() if k in tables}
    temps = frozenset(p.name for p in flat_params(program.temps))
    return Bound(fields, scalars, tables, infos, temps)


def checked_domains(sprog: ir.StencilProgram, bound: Bound) -> list[tuple[ir.Kernel, tuple[UnitRange, ...]]]:
    """Each kernel with its concrete domain, after refusing writes and reads out of bounds. A
    kernel without a domain that writes only temporaries runs where later kernels read them."""
    doms: list[tuple[UnitRange, ...]] = []
    kernels = sprog.kernels
    for i in reversed(range(len(kernels))):
        k = kernels[i]
        if not k.domain and bound.temps and all(o in bound.temps for o in k.outs):
            later = list(zip(kernels[i + 1:], reversed(doms)))
            dom = read_domain(k, later, bound.fields, bound.tables, bound.scalars)
            check_temporary_domain(k, dom, bound.fields)
        else:
            dom = kernel_domain(k, bound.fields, bound.scalars)
        doms.append(dom)
    doms.reverse()
    for k, dom in zip(kernels, doms):
        check_kernel_bounds(k, dom, bound.fields, bound.tables, bound.scalars)
    return list(zip(kernels, doms))
