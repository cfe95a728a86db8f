"""The pipeline, stage by stage: every way of running a program goes through these functions.

    bind -> lower -> plan -> generate -> build -> load -> tune

``run_stages`` lists them in order (``until=`` stops early). Each stage takes and returns a frozen artefact (see
``artefacts.py``) that prints itself with ``as_text()``; ``Program.inspect(...)`` returns them.
The embedded backend stops after ``plan`` (it evaluates the planned kernels with NumPy/CuPy);
the compiled runners (``backends/compiled.py``) run every stage once per argument signature
and keep the result, so later calls only write addresses and scalars and launch.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..core.cuda_probe import usable_cupy
from ..core.device import DeviceType
from ..core.errors import StencilTypeError, StencilValueError
from ..core.identity import IdentityCache
from ..core.log import get_logger
from ..core.records import record
from ..core.types import FieldType
from ..fields.signature import FieldSignature
from ..ir import nodes as ir
from ..ir.fuse import fuse_kernels
from ..ir.lower import TableInfo, lower_program
from .abi import Specialization, arg_layout, fits_narrow_index
from .artefacts import Built, Launches, Loaded, Lowered, Planned, Source, Target
from .binding import Bound, bind_checked
from .domains import checked_domains
from .interface import interface_of

_log = get_logger("stages")

#: Programs remembered per cache below (by identity; the oldest are dropped beyond this).
_CACHE_SIZE = 1024
_LOCK = threading.Lock()  # ahead-of-time compilation runs stages in threads


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    with _LOCK:
        if len(cache) >= _CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = value


# ----------------------------------------------------------------------------- 1. bind
def bind(
    program: ir.Program,
    args: Sequence[Any],
    offset_provider: Mapping[str, Any] | None,
    target: Target | None = None,
    *,
    check_device: bool = True,
) -> Bound:
    """Check every argument of a call: dimensions, dtypes, scalars, the neighbour tables and,
    for a compiled ``target``, that each field lives where the target runs. ``args``: fields
    in the order of the flattened parameters (temporaries included)."""
    face = interface_of(program)

    def on_device(what: str, value: Any) -> None:
        assert target is not None
        check_device_of(program.name, target, what, value.signature)

    checker = on_device if target is not None and check_device else None
    return bind_checked(program, face.flat, face.tables, args, offset_provider, checker)


def check_device_of(name: str, target: Target, what: str, sig: FieldSignature) -> None:
    """Refuse an argument that lives on another device than ``target`` runs on."""
    want = target.device_type
    if sig.on_gpu != (want == DeviceType.CUDA):
        if want == DeviceType.CUDA:
            # no usable GPU here: say that first (the hint below, allocating on the backend's
            # device, would only lead to this same missing GPU or CuPy)
            usable_cupy(f"backend '{target.name}' of {name}()")
        where = "GPU" if sig.on_gpu else "host"
        raise StencilTypeError(
            f"{name}(): {what} lives on the {where}, but backend '{target.name}'"
            f" runs on the {'GPU' if want == DeviceType.CUDA else 'host'}",
            hint="allocate with allocator=<the backend> or move it with field.to(...)",
        )
    current = getattr(target, "current_device", None)
    if sig.on_gpu and current is not None and sig.device_id != current():
        # Like a CuPy kernel, a program runs on the current CUDA device; handing it another
        # GPU's memory would be an illegal address, not an error message: refuse before anything runs.
        here, there = current(), sig.device_id
        raise StencilValueError(
            f"{name}(): {what} lives on GPU {there}, but the current CUDA device is"
            f" GPU {here}; the gpu backend runs a program on the current device, as CuPy does",
            hint=f"call it under `with cupy.cuda.Device({there}):` (or after cupy.cuda.Device({there}).use()),"
            f" or move the field with field.to(gtx.Device(gtx.DeviceType.CUDA, {here}))",
        )


# ----------------------------------------------------------------------------- 2. lower
#: per program (by identity, as long as it lives): its lowering per shape of neighbour tables
_LOWERED: IdentityCache[ir.Program, dict[tuple[tuple[str, TableInfo], ...], Lowered]] = (
    IdentityCache(_CACHE_SIZE)
)


def lower(program: ir.Program, bound: Bound | Mapping[str, TableInfo]) -> Lowered:
    """Program IR -> stencil IR (kernels over index spaces), then kernel fusion; one cache for
    every caller, keyed by the program and the neighbour tables' shapes (``bound.infos``, or
    the table descriptions themselves where there are no arguments to bind)."""
    infos = bound.infos if isinstance(bound, Bound) else dict(bound)
    key = tuple(sorted(infos.items()))
    per_program = _LOWERED.get(program)
    if per_program is None:
        per_program = _LOWERED.put(program, {})
    hit = per_program.get(key)
    if hit is not None:
        return hit
    stencil = lower_program(program, infos)
    lowered = per_program[key] = Lowered(stencil, fuse_kernels(stencil))
    return lowered


# ----------------------------------------------------------------------------- 3. plan
def plan(lowered: Lowered, bound: Bound, target: Target | None) -> Planned:
    """Concrete domains (every read and write checked against the arguments) and, for a
    compiled target, what its code is specialized on and the argument block's constant slots.
    ``target=None``: the embedded backend, which evaluates the unfused kernels."""
    if target is None:
        sprog = lowered.stencil
        return Planned("embedded", sprog, tuple(dom for _, dom in checked_domains(sprog, bound)))
    sprog = lowered.fused
    domains = tuple(dom for _, dom in checked_domains(sprog, bound))
    sigs = bound.signatures()
    device = next((s.device_id for s in sigs if s.on_gpu), 0)  # all on one GPU: see bind
    spec = _specialize(sprog, bound, fits_narrow_index(sigs, domains), device)
    layout = arg_layout(sprog, spec, tuple(bound.tables))
    block = [0] * layout.size
    for f in layout.fields:
        sig = bound.signature(f.name)
        for axis, d in enumerate(f.dims):
            a = sig.axis(d.value)
            block[f.strides[axis]] = sig.strides[a]
            block[f.origins[axis]] = sig.origin[a]
    for ki, dom in enumerate(domains):
        for j, r in enumerate(dom):
            block[layout.bounds[ki][2 * j]] = r.start
            block[layout.bounds[ki][2 * j + 1]] = r.stop
    for g in layout.guards:  # the index range of each axis read at data-dependent positions
        f = layout.field(g.field)
        sig = bound.signature(g.field)
        a = sig.axis(f.dims[g.axis].value)
        block[g.slot] = sig.origin[a]
        block[g.slot + 1] = sig.origin[a] + sig.shape[a]
    return Planned(target.name, sprog, domains, layout, spec, tuple(block))


def _specialize(
    sprog: ir.StencilProgram, bound: Bound, narrow: bool, device: int
) -> Specialization:
    entries = []
    for p in sprog.params:
        if isinstance(p.type, FieldType):
            sig = bound.signature(p.name)
            entries.append(
                (p.name, p.type.dims, unit_axis(p.type.dims, sig), memory_order(p.type.dims, sig))
            )
    table_dtypes = []
    for t, table in bound.tables.items():
        dims = tuple(table.domain.dims)
        sig = bound.signature(t)
        entries.append((t, dims, unit_axis(dims, sig), memory_order(dims, sig)))
        table_dtypes.append((t, sig.dtype))
    return Specialization(tuple(entries), tuple(table_dtypes), narrow, device)


def unit_axis(dims: tuple[Any, ...], sig: FieldSignature) -> int | None:
    """Index (in ``dims`` order) of the unit-stride dimension of a field with signature ``sig``."""
    for j, d in enumerate(dims):
        a = sig.axis(d.value)
        if sig.strides[a] == 1 and sig.shape[a] > 1:
            return j
    return None


def memory_order(dims: tuple[Any, ...], sig: FieldSignature) -> tuple[int, ...]:
    """Axes of ``dims`` from the largest stride to the smallest (ties keep declaration order)."""
    strides = [sig.stride_of(d.value) for d in dims]
    return tuple(sorted(range(len(dims)), key=lambda j: -strides[j]))


# ----------------------------------------------------------------------------- 4-7. per target
def generate(planned: Planned, target: Target) -> Source:
    """Stencil IR -> C++ or CUDA source for this plan."""
    return target.generate(planned)


def build(source: Source, target: Target) -> Built:
    """Source -> binary, through the content-addressed build cache."""
    return target.build(source)


def load(built: Built, target: Target) -> Loaded:
    """Binary -> a program loaded into this process (a shared library, a CUDA module)."""
    return target.load(built)


def tune(loaded: Loaded, planned: Planned, bound: Bound, target: Target) -> Launches:
    """The launch configuration: GPU block shapes (timed on large domains, remembered beside
    the binary); nothing on the CPU. Runs before the first call, never during one."""
    return target.tune(loaded, planned, bound)


# ----------------------------------------------------------------------------- all of them
@record
class Stages:
    """Every stage's artefact for one call signature (``Program.inspect(...)``)."""

    program: ir.Program
    bound: Bound
    lowered: Lowered
    planned: Planned
    source: Source | None = None
    built: Built | None = None
    loaded: Loaded | None = None
    launches: Launches | None = None

    def as_text(self) -> str:
        parts = [
            ("program", str(self.program)),
            ("bind", self.bound.as_text()),
            ("lower", self.lowered.as_text()),
            ("plan", self.planned.as_text()),
        ]
        if self.source is not None:
            parts.append(("generate", self.source.as_text()))
        if self.built is not None:
            parts.append(("build", self.built.as_text()))
        if self.launches is not None:
            parts.append(("tune", self.launches.as_text()))
        return "\n".join(f"== {name} ==\n{text}" for name, text in parts)

    def __str__(self) -> str:
        return self.as_text()


def run_stages(
    program: ir.Program,
    args: Sequence[Any],
    offset_provider: Mapping[str, Any] | None,
    target: Target | None,
    *,
    check_device: bool = True,
    until: str = "tune",
) -> Stages:
    """The pipeline for one call signature, up to the stage ``until``: ``"plan"`` (nothing
    generated), ``"generate"`` (the source, nothing built: no compiler or device needed with
    ``check_device=False``) or ``"tune"`` (everything). The embedded backend (``target=None``)
    stops after ``plan``."""
    if until not in ("plan", "generate", "tune"):
        raise ValueError(f"until= is 'plan', 'generate' or 'tune', not {until!r}")
    clock = _StageClock()
    bound = clock("bind", bind(program, args, offset_provider, target, check_device=check_device))
    lowered = clock("lower", lower(program, bound))
    planned = clock("plan", plan(lowered, bound, target))
    if target is None or until == "plan":
        return Stages(program, bound, lowered, planned)
    source = clock("generate", generate(planned, target))
    if until == "generate":
        return Stages(program, bound, lowered, planned, source)
    built = clock("build", build(source, target))
    loaded = clock("load", load(built, target))
    launches = clock("tune", tune(loaded, planned, bound, target))
    clock.report(program.name, target.name)
    return Stages(program, bound, lowered, planned, source, built, loaded, launches)


class _StageClock:
    """Seconds per stage of one pass through the pipeline (a plan's first call), logged at INFO
    on the ``stencilkit.stages`` logger: where a slow first call spends its time."""

    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.spent: list[tuple[str, float]] = []

    def __call__(self, stage: str, artefact: Any) -> Any:
        now = time.perf_counter()
        self.spent.append((stage, now - self.last))
        self.last = now
        return artefact

    def report(self, name: str, target: str) -> None:
        total = sum(t for _, t in self.spent)
        parts = ", ".join(f"{s} {t:.3f}" for s, t in self.spent)
        _log.info("plan of %s on %s in %.3f s: %s", name, target, total, parts)


def argument_block(planned: Planned, bound: Bound) -> np.ndarray:
    """The argument block of ``planned`` filled completely for the arguments of ``bound``:
    constants, addresses and scalars (what a call writes; ``tune`` times kernels with it)."""
    assert planned.layout is not None
    block = planned.new_block()
    floats = block.view(np.float64)
    for f in planned.layout.fields:
        block[f.ptr] = (
            bound.fields[f.name] if f.name in bound.fields else bound.tables[f.name]
        ).address
    for s in planned.layout.scalars:
        if s.dtype.startswith("float"):
            floats[s.slot] = float(bound.scalars[s.name])
        else:
            block[s.slot] = int(bound.scalars[s.name])
    return block


def with_scratch_outputs(
    planned: Planned,
    bound: Bound,
    block: np.ndarray,
    allocate: Callable[[int], tuple[Any, int]],
    copy: Callable[[int, int, int], None] | None = None,
) -> list[Any]:
    """Point every field a kernel of ``planned`` writes, in ``block``, at zeroed scratch memory
    of the field's span (``allocate(nbytes)`` gives the memory and its address): kernels then
    read the call's inputs and never write the caller's fields (the tune stage's timing runs,
    the as_offset probe of a first call). With ``copy(dst, src, nbytes)`` the scratch starts as
    a copy of the field (a probe whose read offsets depend on what the call writes). The
    memory, to keep alive while ``block`` is used."""
    assert planned.layout is not None
    written = {o for k in planned.sprog.kernels for o in k.outs}
    scratch = []
    for f in planned.layout.fields:
        if f.name in written:
            lo, hi = bound.signature(f.name).span()
            mem, address = allocate(max(hi - lo, 1))
            scratch.append(mem)
            if copy is not None and hi > lo:
                copy(address, int(block[f.ptr]) + lo, hi - lo)
            block[f.ptr] = address - lo
    return scratch
