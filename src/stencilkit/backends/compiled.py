"""Calling compiled programs: one plan per argument signature, then a tight per-call path.

The first call with a new signature (dimensions, dtypes, shapes, strides, origins, devices, the
scalars used in domain bounds, the neighbour tables) checks every argument, lowers, generates,
builds (through the persistent cache) and loads the program, and computes the constant part of
the argument block. Later calls with that signature only write addresses and scalar values into
the block and launch: a few microseconds of Python.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..core.device import DeviceType
from ..core.dims import Dimension
from ..core.errors import StencilTypeError, StencilValueError
from ..core.types import FieldType, ScalarType
from ..ir import nodes as ir
from ..ir.extents import bound_scalars
from ..ir.fuse import fuse_kernels
from ..ir.lower import TableInfo, lower_program
from .abi import ArgLayout, Specialization, arg_layout, fits_narrow_index
from .binding import Bound, bind, checked_domains, used_tables, wrap_arrays, written_params
from .dynamic_reads import check_call, has_dynamic_reads


class Loaded(Protocol):
    def launch(self, plan: Plan, buf: np.ndarray) -> None: ...


class Target(Protocol):
    """What a compiled backend provides: code generation, building and loading."""

    name: str
    device_type: DeviceType

    def compile(self, sprog: ir.StencilProgram, layout: ArgLayout, spec: Specialization) -> Loaded: ...


@dataclass
class Plan:
    """Everything fixed for one argument signature."""

    sprog: ir.StencilProgram
    layout: ArgLayout
    loaded: Loaded
    domains: tuple[tuple[Any, ...], ...]
    buf: np.ndarray
    field_slots: tuple[tuple[int, int], ...]  # (flat arg index, slot)
    scalar_slots: tuple[tuple[int, int, str], ...]  # (flat arg index, slot, dtype)
    table_slots: tuple[tuple[str, int], ...]
    alias_pairs: tuple[tuple[int, int, tuple[int, int], tuple[int, int]], ...]  # see _alias_pairs
    extra: dict[str, Any]
    ints: Any = field(init=False)  # memoryview of int64 slots
    floats: Any = field(init=False)  # memoryview of the same slots as float64
    store_pointers: Any = field(init=False)

    def __post_init__(self) -> None:
        self.store_pointers = _pointer_store(self.field_slots, self.alias_pairs)
        raw = memoryview(self.buf.data).cast("B")  # type: ignore[arg-type]
        self.ints = raw.cast("q")
        self.floats = raw.cast("d")


#: Python and NumPy scalar types accepted without a check, per slot kind (floats, integers).
_SCALAR_TYPES: dict[str, frozenset[type]] = {
    "f": frozenset({float, int, np.float64, np.float32}),
    "i": frozenset({int, bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                    np.uint64, np.bool_}),
}


class CompiledRunner:
    """Runs one program on one compiled target."""

    def __init__(self, program: ir.Program, flat: tuple[ir.Param, ...], target: Target) -> None:
        self.program = program
        self.flat = flat
        self.target = target
        self.plans: dict[Any, Plan] = {}
        self.field_idx = tuple(i for i, p in enumerate(flat) if isinstance(p.type, FieldType))
        self.scalar_idx = tuple(i for i, p in enumerate(flat) if isinstance(p.type, ScalarType))
        used = bound_scalars(program)
        self.domain_scalar_idx = tuple(i for i in self.scalar_idx if flat[i].name in used)
        self.table_names = used_tables(program)
        self.written = written_params(program)
        self.lowered: dict[Any, ir.StencilProgram] = {}

    def signature(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> Any:
        # ``_key`` is a small integer per distinct field signature: it hashes much faster than
        # the signature tuples (and needs no call: id() is unexpectedly slow on some Pythons).
        key: list[Any] = [args[i]._key for i in self.field_idx]
        for i in self.domain_scalar_idx:
            key.append((type(args[i]), args[i]))  # 8.0 must not reuse the plan checked for 8
        for t in self.table_names:
            key.append(offset_provider[t]._key)  # type: ignore[index]
        return tuple(key)

    def __call__(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> None:
        try:
            key = self.signature(args, offset_provider)
            plan = self.plans.get(key)
        except AttributeError:  # raw arrays instead of fields: wrap them, then look again
            args = wrap_arrays(self.flat, args, self.written)
            try:
                key = self.signature(args, offset_provider)
                plan = self.plans.get(key)
            except (AttributeError, KeyError, TypeError):
                key, plan = None, None
        except (KeyError, TypeError):
            key, plan = None, None
        if plan is not None and self.table_names and any(
                offset_provider[n] is not t for n, t in plan.extra["tables"].items()):  # type: ignore[index]
            # A table's entries are checked when a plan is made; another table object of the same
            # layout must be checked again (out-of-range entries would be read). The plan holds its
            # tables, so no other table can reuse their address or identity meanwhile.
            plan = None
        if plan is None:
            plan = self.make_plan(args, offset_provider)
            if key is not None:
                self.plans[key] = plan
        ints, floats = plan.ints, plan.floats  # memoryviews of the block: cheap item stores
        if plan.store_pointers(args, ints):  # True: an output is also another argument
            self._check_aliasing(plan, args)
        for i, slot, kind in plan.scalar_slots:
            value = args[i]
            if type(value) not in _SCALAR_TYPES[kind]:
                self.make_plan(list(args), offset_provider)  # raises the precise error
            if kind == "f":
                floats[slot] = value
            else:
                ints[slot] = int(value)
        for name, slot in plan.table_slots:
            ints[slot] = offset_provider[name]._ptr  # type: ignore[index]
        if plan.extra["dynamic"]:  # as_offset: the read positions are data, checked on every call
            check_call(plan.sprog, plan.domains, self.flat, args, {t: offset_provider[t] for t in self.table_names})  # type: ignore[index]
        plan.loaded.launch(plan, plan.buf)

    def _check_aliasing(self, plan: Plan, args: list[Any]) -> None:
        """Two parameters can be one field only if their signatures are equal, so only those
        pairs (found once per plan) are compared on each call."""
        for i, j, (ilo, ihi), (jlo, jhi) in plan.alias_pairs:
            pi, pj = args[i]._ptr, args[j]._ptr
            if pi == pj and args[i]._sig == args[j]._sig:
                raise StencilValueError(
                    f"{self.program.name}(): argument '{self.flat[i].name}' is the same field as output"
                    f" '{self.flat[j].name}'; the compiled code assumes they do not overlap",
                    hint="pass a separate output field")
            if pi + ilo < pj + jhi and pj + jlo < pi + ihi:
                raise StencilValueError(
                    f"{self.program.name}(): argument '{self.flat[i].name}' shares memory with output"
                    f" '{self.flat[j].name}' (another view of the same buffer); the compiled code"
                    " assumes they do not overlap",
                    hint="pass an output field with memory of its own (e.g. a copy)")

    # ------------------------------------------------------------------ slow path
    def plan_for(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> Plan:
        """The plan for these arguments, built if needed (ahead-of-time compilation)."""
        args = wrap_arrays(self.flat, list(args), self.written)
        try:
            key = self.signature(args, offset_provider)
        except (AttributeError, KeyError, TypeError):
            return self.make_plan(args, offset_provider)
        if key not in self.plans:
            self.plans[key] = self.make_plan(args, offset_provider)
        return self.plans[key]

    def prepare(self, args: list[Any], offset_provider: Mapping[str, Any] | None,
                check_device: bool = True) -> tuple[ir.StencilProgram, ArgLayout, Specialization, Bound]:
        """Check the arguments and lower: everything before code generation."""
        bound = bind(self.program, self.flat, self.table_names, args, offset_provider,
                     self._check_device if check_device else None)
        sprog = self._lower(bound.infos)
        spec = self._specialize(bound.fields, bound.tables)
        layout = arg_layout(sprog, spec, self.table_names)
        return sprog, layout, spec, bound

    def make_plan(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> Plan:
        sprog, layout, spec, bound = self.prepare(args, offset_provider)
        fields, tables = bound.fields, bound.tables
        domains = [dom for _, dom in checked_domains(sprog, bound)]
        sigs = [f._sig for f in (*fields.values(), *tables.values())]
        gpu = next((s[6] for s in sigs if s[5] == DeviceType.CUDA), 0)  # all on one GPU: _check_device
        spec = dataclasses.replace(spec, narrow_index=fits_narrow_index(sigs, domains), device_id=gpu)
        loaded = self.target.compile(sprog, layout, spec)
        buf = np.zeros(layout.size, dtype=np.int64)
        for f in layout.fields:
            sig = (fields[f.name] if f.name in fields else tables[f.name])._sig
            actual = sig[0]
            for axis, d in enumerate(f.dims):
                a = actual.index(d.value)
                buf[f.strides[axis]] = sig[3][a]
                buf[f.origins[axis]] = sig[4][a]
        for ki, dom in enumerate(domains):
            for j, r in enumerate(dom):
                buf[layout.bounds[ki][2 * j]] = r.start
                buf[layout.bounds[ki][2 * j + 1]] = r.stop
        index = {p.name: i for i, p in enumerate(self.flat)}
        written = {o for k in sprog.kernels for o in k.outs}
        return Plan(
            sprog, layout, loaded, tuple(domains), buf,
            tuple((index[f.name], f.ptr) for f in layout.fields if not f.is_table),
            tuple((index[s.name], s.slot, "f" if s.dtype.startswith("float") else "i") for s in layout.scalars),
            tuple((f.name, f.ptr) for f in layout.fields if f.is_table),
            _alias_pairs(args, self.flat, written),
            {"table_sigs": {name: t._sig for name, t in tables.items()}, "tables": dict(tables), "dynamic": has_dynamic_reads(sprog)},
        )

    def _check_device(self, what: str, value: Any) -> None:
        dev = value._sig[5]
        want = self.target.device_type
        if (dev == DeviceType.CUDA) != (want == DeviceType.CUDA):
            where = "GPU" if dev == DeviceType.CUDA else "host"
            raise StencilTypeError(
                f"{self.program.name}(): {what} lives on the {where}, but backend '{self.target.name}'"
                f" runs on the {'GPU' if want == DeviceType.CUDA else 'host'}",
                hint="allocate with allocator=<the backend> or move it with field.to(...)")
        current = getattr(self.target, "current_device", None)
        if dev == DeviceType.CUDA and current is not None and value._sig[6] != current():
            # Like a CuPy kernel, a program runs on the current CUDA device; handing it another
            # GPU's memory would be an illegal address, not an error message: refuse before anything runs.
            here, there = current(), value._sig[6]
            raise StencilValueError(
                f"{self.program.name}(): {what} lives on GPU {there}, but the current CUDA device is"
                f" GPU {here}; the gpu backend runs a program on the current device, as CuPy does",
                hint=f"call it under `with cupy.cuda.Device({there}):` (or after cupy.cuda.Device({there}).use()),"
                f" or move the field with field.to(gtx.Device(gtx.DeviceType.CUDA, {here}))")

    def _lower(self, infos: dict[str, TableInfo]) -> ir.StencilProgram:
        key = tuple(sorted(infos.items()))
        if key not in self.lowered:
            self.lowered[key] = fuse_kernels(lower_program(self.program, infos))
        return self.lowered[key]

    def _specialize(self, fields: Mapping[str, Any], tables: Mapping[str, Any]) -> Specialization:
        entries = []
        for p in self.flat:
            if isinstance(p.type, FieldType):
                sig = fields[p.name]._sig
                entries.append((p.name, p.type.dims, _unit_of(p.type.dims, sig), _order_of(p.type.dims, sig)))
        tdtypes = []
        for t, table in tables.items():
            dims = tuple(table.domain.dims)
            entries.append((t, dims, _unit_of(dims, table._sig), _order_of(dims, table._sig)))
            tdtypes.append((t, table._sig[1]))
        return Specialization(tuple(entries), tuple(tdtypes))


def _unit_of(dims: tuple[Dimension, ...], sig: tuple[Any, ...]) -> int | None:
    """Index (in ``dims`` order) of the unit-stride dimension of a field with signature ``sig``."""
    names = sig[0]
    for j, d in enumerate(dims):
        a = names.index(d.value)
        if sig[3][a] == 1 and sig[2][a] > 1:
            return j
    return None



def _order_of(dims: tuple[Dimension, ...], sig: tuple[Any, ...]) -> tuple[int, ...]:
    """Axes of ``dims`` from the largest stride to the smallest (ties keep declaration order)."""
    names = sig[0]
    strides = [sig[3][names.index(d.value)] for d in dims]
    return tuple(sorted(range(len(dims)), key=lambda j: -strides[j]))


def _span(sig: tuple[Any, ...]) -> tuple[int, int]:
    """The bytes a field's buffer covers, relative to its data pointer: ``[lo, hi)``."""
    shape, strides = sig[2], sig[3]
    if any(n == 0 for n in shape):
        return 0, 0
    itemsize = np.dtype(sig[1]).itemsize
    lo = sum(min(0, (n - 1) * st) for n, st in zip(shape, strides))
    hi = sum(max(0, (n - 1) * st) for n, st in zip(shape, strides)) + 1
    return lo * itemsize, hi * itemsize


def _alias_pairs(args: list[Any], flat: tuple[ir.Param, ...], written: set[str]
                 ) -> tuple[tuple[int, int, tuple[int, int], tuple[int, int]], ...]:
    """(argument, output, span of the argument, span of the output) for every output and every
    other field on the same device: their memory could overlap (the same field, or another view
    of the same buffer), which the compiled code must never see."""
    fields = [i for i, p in enumerate(flat) if isinstance(p.type, FieldType)]
    outs = [i for i in fields if flat[i].name in written]
    return tuple((i, j, _span(args[i]._sig), _span(args[j]._sig)) for j in outs for i in fields
                 if i != j and args[i]._sig[5:7] == args[j]._sig[5:7])


def _pointer_store(slots: tuple[tuple[int, int], ...],
                   alias_pairs: tuple[tuple[int, int, tuple[int, int], tuple[int, int]], ...]) -> Any:
    """A function writing each field argument's address into its slot and returning whether an
    output's memory overlaps another argument's: the per-call path's inner loop, unrolled once
    per plan, one statement per field (several times faster than a loop over the slots)."""
    lines = [f"    p{i} = ints[{slot}] = args[{i}]._ptr" for i, slot in slots]
    tests = [f"(p{i} + {si[0]} < p{j} + {sj[1]} and p{j} + {sj[0]} < p{i} + {si[1]})"
             for i, j, si, sj in alias_pairs if si[1] > si[0] and sj[1] > sj[0]]
    if tests:
        # The addresses checked last are remembered: a time loop passing the same fields again
        # pays one tuple comparison, not one test per pair.
        involved = sorted({k for i, j, _, _ in alias_pairs for k in (i, j)})
        lines.append("    seen = (" + "".join(f"p{k}, " for k in involved) + ")")
        lines.append("    if seen == checked[0]:\n        return False")
        lines.append("    if " + " or ".join(tests) + ":\n        return True")
        lines.append("    checked[0] = seen")
    lines.append("    return False")
    namespace: dict[str, Any] = {"checked": [None]}
    exec("def store_pointers(args, ints):\n" + "\n".join(lines), namespace)  # only integers interpolated
    return namespace["store_pointers"]
