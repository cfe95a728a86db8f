"""Binding call arguments to a stencil program: flattening, checks, concrete domains.

Everything here depends only on the *signature* of the arguments (dimensions, dtypes, shapes,
strides, origins, devices, and the scalar values used in domain bounds), so backends compute a
``Plan`` once per signature and reuse it on every later call with the same signature.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field as dataclass_field
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.dims import Dimension, FieldOffset
from ..core.errors import ArgumentTypeError, StencilTypeError, StencilValueError
from ..core.named_collections import collection_values
from ..core.records import record
from ..core.types import FieldType, ScalarType, TupleType, TypeSpec
from ..fields.signature import FieldSignature
from ..ir import nodes as ir
from ..ir.lower import TableInfo, flat_params
from ..ir.visit import walk


def flatten_args(
    params: tuple[ir.Param, ...], args: Sequence[Any], kwargs: Mapping[str, Any], program: str
) -> list[Any]:
    """Program arguments in the order of the flattened parameters (tuples unpacked)."""
    if (
        not kwargs
        and len(args) == len(params)
        and not any(isinstance(p.type, TupleType) for p in params)
    ):
        return list(args)
    if len(args) > len(params):
        raise StencilTypeError(f"{program}() takes {len(params)} arguments, got {len(args)}")
    values = list(args)
    for p in params[len(args) :]:
        if p.name not in kwargs:
            raise StencilTypeError(f"{program}() is missing the argument '{p.name}'")
        values.append(kwargs[p.name])
    extra = set(kwargs) - {p.name for p in params[len(args) :]}
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
            raise StencilTypeError(
                f"{program}(): argument '{name}' must be a tuple of {len(t.types)}"
            )
        for i, (s, x) in enumerate(zip(t.types, v)):
            _flatten_value(f"{name}[{i}]", s, x, out, program)
        return
    out.append(v)


def wrap_arrays(
    params: tuple[ir.Param, ...], args: list[Any], written: frozenset[str] = frozenset()
) -> list[Any]:
    """``args`` with raw arrays (NumPy, CuPy, PyTorch, JAX: anything speaking DLPack or an array
    interface) given for field parameters wrapped as fields over the parameter's dimensions,
    starting at index 0, sharing the arrays' memory (read-only inputs included). An array given
    for a ``written`` parameter that could only be used through a copy is refused: the results
    would be lost in the copy."""
    from ..fields.constructors import wrap_argument

    out = list(args)
    for i, (p, a) in enumerate(zip(params, args)):
        if (
            isinstance(p.type, FieldType)
            and not p.type.dims
            and type(a) in _PY_SCALAR_DTYPES
            and _PY_SCALAR_DTYPES[type(a)] == p.type.dtype
        ):
            a = np.asarray(
                a, dtype=p.type.dtype
            )  # a scalar for a 0-d field (gt4py: exactly its dtype)
        if (
            isinstance(p.type, FieldType)
            and not hasattr(a, "signature")
            and (
                hasattr(a, "__dlpack__")
                or hasattr(a, "__cuda_array_interface__")
                or hasattr(a, "__array_interface__")
            )
        ):
            if len(getattr(a, "shape", ())) != len(p.type.dims):
                raise StencilTypeError(
                    f"argument '{p.name}' is an array of shape {tuple(a.shape)}, but the parameter is a"
                    f" field over [{', '.join(map(str, p.type.dims))}]",
                    hint="pass an array with one axis per dimension, in that order",
                )
            out[i] = wrap_argument(p.type.dims, a, p.name in written, _shown(p.name))
    return out


_PY_SCALAR_DTYPES = {float: "float64", int: "int32", bool: "bool"}


def _shown(flat_name: str) -> str:
    """A flattened parameter's name as the user wrote it: ``out__1`` -> ``out[1]``."""
    base, *index = flat_name.split("__")
    return base + "".join(f"[{i}]" for i in index) if all(i.isdigit() for i in index) else flat_name


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
        hasattr(v, "domain")
        or hasattr(v, "__array_interface__")
        or hasattr(v, "__cuda_array_interface__")
    ):
        raise _scalar_type_error(
            program, name, t, v, f"argument '{name}' must be a scalar {t}, got an array or field"
        )
    if isinstance(v, np.generic):
        if v.dtype != dtype and not np.can_cast(v.dtype, dtype, "same_kind"):
            raise _scalar_type_error(
                program, name, t, v, f"argument '{name}' must be {t}, got {v.dtype}"
            )
        return dtype.type(v)
    if isinstance(v, float) and dtype.kind in "iub":
        raise _scalar_type_error(
            program, name, t, v, f"argument '{name}' must be an integer ({t}), got {v!r}"
        )
    if not isinstance(v, bool | int | float):
        raise _scalar_type_error(
            program, name, t, v, f"argument '{name}' must be {t}, got {type(v).__name__}"
        )
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


def _scalar_type_error(
    program: str, name: str, t: ScalarType, v: Any, detail: str
) -> ArgumentTypeError:
    line = f"  - Expected argument '{name}' to be of type '{t}', got '{_type_name(v)}'."
    err = ArgumentTypeError(
        f"Invalid argument types in call to '{program}'.\n{line}", hint=f"{program}(): {detail}"
    )
    err.__cause__ = ValueError(line)
    return err


def check_field(name: str, t: FieldType, v: Any, program: str) -> None:
    if not hasattr(v, "signature") or not hasattr(v, "domain"):
        kind = type(v).__name__
        hint = "wrap arrays with gtx.as_field([dims...], array)"
        raise StencilTypeError(
            f"{program}(): argument '{name}' must be a field {t}, got {kind}", hint=hint
        )
    dims = tuple(v.domain.dims)
    if dims != t.dims:
        if set(dims) == set(t.dims):
            return _check_dtype(name, t, v, program)  # a permuted layout is fine: strides say where
        raise _argument_type_error(
            program,
            name,
            t,
            v,
            f"argument '{name}' has dimensions"
            f" [{', '.join(map(str, dims))}], expected [{', '.join(map(str, t.dims))}]",
        )
    _check_dtype(name, t, v, program)


def _check_dtype(name: str, t: FieldType, v: Any, program: str) -> None:
    if v.dtype.name != t.dtype:
        raise _argument_type_error(
            program,
            name,
            t,
            v,
            f"argument '{name}' has dtype {v.dtype.name},"
            f" expected {t.dtype}; convert with gtx.as_field(..., dtype={t.dtype})",
        )


def _argument_type_error(
    program: str, name: str, t: FieldType, v: Any, detail: str
) -> ArgumentTypeError:
    """gt4py.next's error for a wrong argument type: the problem lines are a ``ValueError`` cause."""
    got = f"Field[[{', '.join(d.value for d in v.domain.dims)}], {v.dtype.name}]"
    line = f"  - Expected argument '{name}' to be of type '{t}', got '{got}'."
    err = ArgumentTypeError(f"Invalid argument types in call to '{program}'.\n{line}", hint=detail)
    err.__cause__ = ValueError(line)
    return err


# ------------------------------------------------------------------------- offset providers
def table_infos(
    offset_provider: Mapping[str, Any] | None, program: ir.Program
) -> dict[str, TableInfo]:
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
                hint="pass gtx.as_connectivity([Edge, E2CDim], Cell, table) or a Dimension",
            )
    return infos


def _wrap_hint(name: str, program: ir.Program | None) -> str:
    """How to wrap a raw table for offset ``name``, with the dimensions the program shifts by."""
    body = program.body if program is not None else ()
    shift = next(
        (
            n
            for stmt in body
            for n in walk(stmt)
            if isinstance(n, ir.NeighborShift) and n.offset == name
        ),
        None,
    )
    if shift is None:
        return f"wrap it: gtx.as_connectivity([FromDim, {name}Dim], ToDim, table, skip_value=-1)"
    dims = ", ".join(d.value for d in shift.target)
    return (
        f"wrap it: gtx.as_connectivity([{dims}], {shift.source.value}, table) (add skip_value=-1"
        " if it has missing neighbours)"
    )


def check_provider(provider: Any, program: str, definition: ir.Program | None = None) -> None:
    """Refuse an ``offset_provider`` that is not a mapping, or that holds raw arrays as tables."""
    if not isinstance(provider, Mapping):
        raise StencilTypeError(
            f"{program}(): offset_provider must be a dict from offset names to connectivities or"
            f" dimensions, got a {type(provider).__name__}",
            hint='e.g. offset_provider={"E2C": gtx.as_connectivity([Edge, E2CDim], Cell, table), "Koff": K}',
        )
    for name, table in provider.items():
        raw = isinstance(table, list | tuple) or hasattr(table, "shape")
        if raw and not hasattr(table, "max_neighbors"):
            kind = (
                type(table).__name__
                if isinstance(table, list | tuple)
                else f"{type(table).__module__.split('.')[0]} array"
            )
            raise StencilTypeError(
                f"{program}(): offset_provider['{name}'] is a raw {kind}; a neighbour table must say"
                " which dimensions it maps",
                hint=_wrap_hint(name, definition),
            )


# ------------------------------------------------------------------------- one binding for every runner
def _check_table_kind(t: str, table: Any, program: ir.Program, name: str) -> None:
    """The table given for offset ``t`` must map the offset's target to its source dimension."""
    shifts = {
        x.by
        for s in program.body
        for x in walk(s)
        if isinstance(x, ir.Shift) and isinstance(x.by, ir.NeighborShift) and x.by.offset == t
    }
    for by in shifts:
        codomain = getattr(table, "codomain", None)
        if codomain is not None and codomain != by.source:
            raise StencilValueError(
                f"{name}(): offset_provider['{t}'] maps to {codomain}, but the offset {t} reads fields"
                f" over {by.source}",
                hint=f"build the table with codomain {by.source}",
            )
        dims = tuple(table.domain.dims) if hasattr(table, "domain") else ()
        if dims and dims[0] != by.target[0]:
            raise StencilValueError(
                f"{name}(): offset_provider['{t}'] is a table over {dims[0]}, but the offset {t} goes"
                f" from {by.target[0]}",
                hint=f"pass the {t} table of dimensions {list(map(str, by.target))}",
            )
        if len(dims) == 2 and len(by.target) == 2 and dims[1] != by.target[1]:
            raise StencilValueError(
                f"{name}(): offset_provider['{t}'] has the local dimension {dims[1]}, but the offset {t}"
                f" declares {by.target[1]}",
                hint=f"pass the {t} table of dimensions {list(map(str, by.target))}",
            )


@record
class Bound:
    """The ``bind`` stage's artefact: checked arguments by parameter name: fields (viewed in
    their declared dimension order), scalars (as NumPy scalars of their type), the neighbour
    tables used and their descriptions. ``signature(name)`` is a field's (or table's) typed
    :class:`~stencilkit.fields.signature.FieldSignature`."""

    fields: dict[str, Any]
    scalars: dict[str, Any]
    tables: dict[str, Any]
    infos: dict[str, TableInfo]
    temps: frozenset[str] = frozenset()  # the program's temporaries (flattened names)
    program: str = ""
    sigs: dict[str, FieldSignature] = dataclass_field(default_factory=dict)  # fields', then tables'

    def __post_init__(self) -> None:
        if not self.sigs:
            self.sigs.update(
                {n: v.signature for n, v in (*self.fields.items(), *self.tables.items())}
            )

    def signature(self, name: str) -> FieldSignature:
        return self.sigs[name]

    def signatures(self) -> tuple[FieldSignature, ...]:
        """Every field's and table's signature, fields first."""
        return tuple(self.sigs.values())

    def without_fields(self) -> Bound:
        """This binding without the argument fields (their signatures stay): what a kept plan
        holds, so that it does not keep the first call's fields alive."""
        return replace(self, fields={}, sigs=dict(self.sigs))

    def as_text(self) -> str:
        lines = [f"bound {self.program}("]
        for name in (n for n in self.sigs if n not in self.tables):
            temp = "  (temporary)" if name in self.temps else ""
            lines.append(f"  {name}: {self.signature(name).as_text()}{temp}")
        for name, value in self.scalars.items():
            lines.append(f"  {name} = {value} ({np.asarray(value).dtype.name})")
        for name, info in self.infos.items():
            skip = ", skip values" if info.has_skip else ""
            lines.append(
                f"  offset {name}: table {self.signature(name).as_text()},"
                f" {info.max_neighbors} neighbours{skip}"
            )
        return "\n".join([*lines, ")"])


def bind_checked(
    program: ir.Program,
    flat: tuple[ir.Param, ...],
    tables_used: tuple[str, ...],
    args: Sequence[Any],
    offset_provider: Mapping[str, Any] | None,
    check_device: Callable[[str, Any], None] | None = None,
) -> Bound:
    """Check every argument of a call (and, with ``check_device``, where it lives); the
    ``bind`` stage (``stencilkit.stages.bind``) with the program's facts worked out."""
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
            raise StencilValueError(
                f"{name}(): offset_provider has no entry for '{t}'",
                hint=f"pass offset_provider={{'{t}': connectivity}}",
            )
        tables[t] = provider[t]
        _check_table_kind(t, tables[t], program, name)
        if check_device is not None:
            check_device(f"offset_provider['{t}']", tables[t])
    infos = {k: v for k, v in table_infos(provider, program).items() if k in tables}
    temps = frozenset(p.name for p in flat_params(program.temps))
    return Bound(fields, scalars, tables, infos, temps, name)
