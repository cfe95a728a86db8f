"""The argument block shared by the generated C++ and CUDA code and the Python caller.

Every compiled program takes one array of 64-bit slots: for each field (and neighbour table) its
address, strides (in elements) and domain origin; each scalar (floats bit-cast); and each kernel's
domain bounds. The Python side fills the constant slots once per argument signature and only the
addresses and scalar values on each call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core.dims import Dimension
from ..core.records import record
from ..core.types import FieldType, ScalarType
from ..fields.signature import FieldSignature
from ..ir import nodes as ir
from ..ir.visit import walk


@record
class FieldSlots:
    """Where one field's pointer, strides and origins sit in the argument block."""

    name: str
    dims: tuple[Dimension, ...]
    dtype: str
    ptr: int
    strides: tuple[int, ...]
    origins: tuple[int, ...]
    unit_dim: int | None  # the dimension with stride 1, fixed at compile time; None if none
    order: tuple[int, ...]  # axes (of ``dims``) from the largest stride to the smallest
    is_table: bool = False


@record
class ScalarSlot:
    """Where one scalar argument sits in the argument block."""

    name: str
    dtype: str
    slot: int


@record
class ReadGuard:
    """A field axis read at data-dependent positions (``as_offset``): ``a[slot]``, ``a[slot + 1]``
    hold the field's index range along ``axis``; a read outside it is reported as ``code``
    (the guard's number + 1) in the error word."""

    field: str
    axis: int
    slot: int
    code: int


@record
class ArgLayout:
    """The argument block of a program: its fields, scalars, domain bounds and guards."""

    fields: tuple[FieldSlots, ...]
    scalars: tuple[ScalarSlot, ...]
    bounds: tuple[tuple[int, ...], ...]  # per kernel: slots of start, stop for each dim
    size: int
    guards: tuple[ReadGuard, ...] = ()
    #: the slot of the error word's address (two int64: guard code, index), if there are guards
    error_slot: int | None = None

    def field(self, name: str) -> FieldSlots:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def guard(self, name: str, axis: int) -> ReadGuard:
        for g in self.guards:
            if g.field == name and g.axis == axis:
                return g
        raise KeyError((name, axis))


def dynamic_axes(prog: ir.StencilProgram) -> list[tuple[str, int]]:
    """(field or table, axis) read at a data-dependent index anywhere in ``prog``, in order of
    first appearance."""
    found: dict[tuple[str, int], None] = {}
    for k in prog.kernels:
        for v in (*k.values, *(k.scan.inits if k.scan else ())):
            for x in walk(v):
                if isinstance(x, ir.Access):
                    for axis, i in enumerate(x.index):
                        if isinstance(i, ir.DynIndex):
                            found[(x.field, axis)] = None
                elif isinstance(x, ir.Lookup | ir.Valid):
                    for axis, i in enumerate((x.source, x.neighbor)):
                        if isinstance(i, ir.DynIndex):
                            found[(x.table, axis)] = None
    return list(found)


@record
class Specialization:
    """What the generated code is specialized on, beyond the IR: per field (by name) its dims
    order in memory and which dimension is unit-stride."""

    field_dims: tuple[tuple[str, tuple[Dimension, ...], int | None, tuple[int, ...]], ...]
    table_dtypes: tuple[tuple[str, str], ...] = ()
    narrow_index: bool = False  # every index of the call fits 32-bit arithmetic (fits_narrow_index)
    device_id: int = 0  # the GPU holding the call's fields (the code is loaded there)

    def of(self, name: str) -> tuple[tuple[Dimension, ...], int | None, tuple[int, ...]]:
        for n, dims, unit, order in self.field_dims:
            if n == name:
                return dims, unit, order
        raise KeyError(name)


def arg_layout(prog: ir.StencilProgram, spec: Specialization, tables: tuple[str, ...]) -> ArgLayout:
    slot = 0
    fields: list[FieldSlots] = []
    scalars: list[ScalarSlot] = []
    for p in prog.params:
        if isinstance(p.type, FieldType):
            dims, unit, order = spec.of(p.name)
            n = len(dims)
            fields.append(
                FieldSlots(
                    p.name,
                    dims,
                    p.type.dtype,
                    slot,
                    tuple(range(slot + 1, slot + 1 + n)),
                    tuple(range(slot + 1 + n, slot + 1 + 2 * n)),
                    unit,
                    order,
                )
            )
            slot += 1 + 2 * n
        elif isinstance(p.type, ScalarType):
            scalars.append(ScalarSlot(p.name, p.type.dtype, slot))
            slot += 1
    for t in tables:
        dims, unit, order = spec.of(t)
        fields.append(
            FieldSlots(
                t,
                dims,
                dict(spec.table_dtypes)[t],
                slot,
                (slot + 1, slot + 2),
                (slot + 3, slot + 4),
                unit,
                order,
                True,
            )
        )
        slot += 5
    bounds = []
    for k in prog.kernels:
        bounds.append(tuple(range(slot, slot + 2 * len(k.dims))))
        slot += 2 * len(k.dims)
    guards = []
    for n, (name, axis) in enumerate(dynamic_axes(prog)):
        guards.append(ReadGuard(name, axis, slot, n + 1))
        slot += 2
    error_slot = None
    if guards:
        error_slot, slot = slot, slot + 1
    return ArgLayout(tuple(fields), tuple(scalars), tuple(bounds), slot, tuple(guards), error_slot)


#: Bound on index values for 32-bit index arithmetic, with room below 2**31 for the threads that
#: run past a domain's end before they return and for a row start rounded down to a cache line.
NARROW_INDEX_LIMIT = 2**31 - 2**24


def fits_narrow_index(sigs: Iterable[FieldSignature], domains: Iterable[Iterable[Any]]) -> bool:
    """Whether 32-bit index arithmetic is exact for a call: every element offset a kernel can
    form, ``sum(i_d * stride_d)`` with ``i_d`` inside the field's domain (reads outside it are
    refused before launch), and every domain bound stay below ``NARROW_INDEX_LIMIT``.

    ``sigs``: the fields' signatures (strides in elements), tables included; ``domains``: each
    kernel's ranges."""
    for sig in sigs:
        shape, strides, origin = sig.shape, sig.strides, sig.origin
        span = sum(max(abs(o), abs(o + n)) * abs(s) for n, s, o in zip(shape, strides, origin))
        if span >= NARROW_INDEX_LIMIT:
            return False
    return all(
        abs(r.start) < NARROW_INDEX_LIMIT and abs(r.stop) < NARROW_INDEX_LIMIT
        for dom in domains
        for r in dom
    )
