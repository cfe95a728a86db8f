"""Calling compiled programs: one plan per argument signature, then a tight per-call path.

The first call with a new signature (dimensions, dtypes, shapes, strides, origins, devices, the
scalars used in domain bounds, the neighbour tables) checks every argument, lowers, generates,
builds (through the persistent cache) and loads the program, and computes the constant part of
the argument block. Later calls with that signature only write addresses and scalar values into
the block and launch: a few microseconds of Python.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import stages
from ..core.device import DeviceType
from ..core.errors import StencilValueError
from ..core.types import FieldType
from ..fields.signature import FieldSignature
from ..ir import nodes as ir
from ..stages import Stages, Target
from ..stages.binding import wrap_arrays
from ..stages.interface import ProgramInterface
from ..stages.runner import PlanCache, Until
from ..toolchain.config import require
from .dynamic_reads import check_call, has_dynamic_reads, stale_dynamic_read


class ArgBlock:
    """One argument block of a plan and the launch bound to it. A call writes the block, then
    runs on it; two threads calling the same plan at once each need their own (the cpu backend
    releases the GIL while its kernels run, so a shared block would be overwritten mid-call)."""

    __slots__ = ("buf", "floats", "ints", "run")

    def __init__(self, buf: np.ndarray, run: Callable[[], None]) -> None:
        self.buf = buf
        self.run = run
        raw = memoryview(buf.data).cast("B")  # type: ignore[arg-type]
        self.ints = raw.cast("q")  # memoryviews of the block: cheap item stores
        self.floats = raw.cast("d")


@dataclass
class Plan:
    """A compiled program ready to call with one argument signature: the pipeline's artefacts
    (``stages``: bound, lowered, planned, source, built, loaded, launches — tuned before the
    first call) and the per-call bookkeeping."""

    stages: Stages
    block: ArgBlock  # the argument block of the thread holding ``lock``
    field_slots: tuple[tuple[int, int], ...]  # (flat arg index, slot)
    scalar_slots: tuple[tuple[int, int, str], ...]  # (flat arg index, slot, dtype)
    table_slots: tuple[tuple[str, int], ...]
    alias_pairs: tuple[tuple[int, int, tuple[int, int], tuple[int, int]], ...]  # see _alias_pairs
    tables: dict[str, Any]  # the neighbour tables checked when the plan was made
    dynamic: bool  # as_offset reads: their positions are data, guarded in the kernels (see _check_offsets)
    same_ok: frozenset[tuple[int, int]]  # (argument, output) pairs that may be one field
    #: the kernels' as_offset guards' error word (two int64, see stages/abi.py ReadGuard)
    errors: np.ndarray | None = None
    errors_at_once: bool = False  # read after each call (cpu); else before the next (gpu)
    check_every: bool = False  # STENCILKIT_OFFSET_CHECKS=every
    offsets_checked: bool = False  # the first call's host check of as_offset reads is done
    #: as_offset reads whose offsets depend on a field the call writes (a host check before the
    #: call would see old values): the probe runs on copies of the written fields instead
    stale_offsets: bool = False
    #: (argument, output) pairs that may be one field if the argument is read from a copy
    copy_ok: frozenset[tuple[int, int]] = frozenset()
    provisional: bool = False  # launches of the plain variants while the others build (gpu)
    store_pointers: Any = field(init=False)
    #: held by the call using ``block``; a call that finds it held takes a spare block
    lock: Any = field(init=False, default_factory=threading.Lock)
    spares: list[ArgBlock] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.store_pointers = _pointer_store(self.field_slots, self.alias_pairs)

    def spare(self) -> ArgBlock:
        """A block no other call is using: a free spare, else a new copy of the constant block
        (the constants are written when the plan is made; addresses and scalars on each call)."""
        try:
            return self.spares.pop()  # atomic: two threads never get the same spare
        except IndexError:
            buf = self.block.buf.copy()
            assert self.stages.loaded is not None and self.stages.launches is not None
            return ArgBlock(buf, self.stages.loaded.bind(self.stages.launches, buf))

    @property
    def sprog(self) -> ir.StencilProgram:
        return self.stages.planned.sprog

    @property
    def domains(self) -> tuple[tuple[Any, ...], ...]:
        return self.stages.planned.domains

    @property
    def loaded(self) -> Any:
        return self.stages.loaded

    @property
    def launches(self) -> Any:
        return self.stages.launches


#: Python and NumPy scalar types accepted without a check, per slot kind (floats, integers).
_SCALAR_TYPES: dict[str, frozenset[type]] = {
    "f": frozenset({float, int, np.float64, np.float32}),
    "i": frozenset(
        {
            int,
            bool,
            np.int8,
            np.int16,
            np.int32,
            np.int64,
            np.uint8,
            np.uint16,
            np.uint32,
            np.uint64,
            np.bool_,
        }
    ),
}


class CompiledRunner:
    """Runs one program on one compiled target.

    A :class:`~stencilkit.stages.runner.Runner`. Thread-safe: the plans are in a
    :class:`~stencilkit.stages.runner.PlanCache` (a plan is made once however many threads ask
    for it), and each call fills an argument block no other call is using (the plan's own while
    its lock is free, else a spare)."""

    def __init__(self, interface: ProgramInterface, target: Target) -> None:
        self.interface = interface
        self.program = interface.program
        self.flat = interface.flat
        self.target = target
        self.plans: PlanCache[Plan] = PlanCache(
            require("STENCILKIT_PLAN_CACHE_SIZE").plan_cache_size
        )
        self.table_names = interface.tables
        self.written = interface.written
        self.signature = interface.key  # the per-call key, bound once
        #: (argument index, type) pairs a plan accepted for a scalar outside _SCALAR_TYPES (an
        #: IntEnum such as icon4py's RayleighType, passed every substep): checked once, not
        #: re-planned at every call
        self._scalar_types_seen: set[tuple[int, type]] = set()
        self._embedded: Any = None  # for calls run in statement order (_in_statement_order)

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
        if plan is None or (self.table_names and not self._same_tables(plan, offset_provider)):
            plan = self._new_plan(key, args, offset_provider or {})
        if plan.lock.acquire(False):
            try:
                if plan.provisional and self.target.ready_to_retune(plan.stages.loaded):
                    self._retune(plan, args, offset_provider)
                self._run(plan, plan.block, args, offset_provider)
            finally:
                plan.lock.release()
        else:  # another thread is in a call of this plan: a block of our own
            block = plan.spare()
            try:
                self._run(plan, block, args, offset_provider)
            finally:
                plan.spares.append(block)

    def bound_launch(
        self, args: list[Any], fixed: frozenset[int] = frozenset()
    ) -> Callable[[list[Any]], None] | None:
        """A launch of the plan of ``args`` on an argument block of its own, with their
        addresses written (and their overlaps checked) once, for a caller that will pass these
        very field objects again (it checks that: the launch does not), and the same values at
        the positions ``fixed``; each call writes only the other scalars, then runs. A call
        while another thread is in one runs the general way. None where the plan is not made
        yet, or its calls need more (neighbour tables, as_offset reads, a provisional GPU
        tuning)."""
        try:
            plan = self.plans.get(self.signature(args, None))
        except (AttributeError, KeyError, TypeError):
            return None
        if plan is None or self.table_names or plan.dynamic or plan.provisional:
            return None
        buf = plan.block.buf.copy()  # the constant part; the addresses are written next
        assert plan.stages.loaded is not None and plan.stages.launches is not None
        block = ArgBlock(buf, plan.stages.loaded.bind(plan.stages.launches, buf))
        if (
            plan.store_pointers(args, block.ints)
            and self._check_aliasing(plan, args, block.ints) != []
        ):
            return None  # an argument read from a copy, or the call run in statement order
        lock = threading.Lock()
        ints, floats, run = block.ints, block.floats, block.run
        self._store_scalars(plan.scalar_slots, args, ints, floats, None)
        slots = tuple(s for s in plan.scalar_slots if s[0] not in fixed)  # the others stay
        errors = plan.errors if plan.errors_at_once else None
        # the scalars the plan's domains depend on: another value is another plan
        bounds = tuple(i for i in self.interface.domain_scalar_idx if i not in fixed)
        made_for = tuple([(type(args[i]), args[i]) for i in bounds])

        def launch(args: list[Any]) -> None:
            if (bounds and tuple([(type(args[i]), args[i]) for i in bounds]) != made_for) or (
                not lock.acquire(False)
            ):
                self(args, None)
                return
            try:
                if slots:
                    self._store_scalars(slots, args, ints, floats, None)
                run()
                if errors is not None and errors[0]:
                    self._guard_failed(plan, "this call")
            finally:
                lock.release()

        return launch

    def _retune(
        self, plan: Plan, args: list[Any], offset_provider: Mapping[str, Any] | None
    ) -> None:
        """A provisional plan (its kernels' variants were building): the final search, with
        this call's arguments, then the plan's block launches the choice. Blocks other threads
        hold launch the provisional choice, which computes the same values."""
        st = plan.stages
        bound = stages.bind(self.program, args, offset_provider, self.target)
        launches = self.target.tune(st.loaded, st.planned, bound, final=True)
        plan.stages = dataclasses.replace(st, launches=launches)
        assert plan.stages.loaded is not None
        plan.block.run = plan.stages.loaded.bind(launches, plan.block.buf)
        plan.spares = []
        plan.provisional = False

    def _same_tables(self, plan: Plan, offset_provider: Mapping[str, Any] | None) -> bool:
        """A table's entries are checked when a plan is made; another table object of the same
        layout must be checked again (out-of-range entries would be read). The plan holds its
        tables, so no other table can reuse their address or identity meanwhile."""
        return all(offset_provider[n] is t for n, t in plan.tables.items())  # type: ignore[index]

    def _new_plan(self, key: Any, args: list[Any], offset_provider: Mapping[str, Any]) -> Plan:
        """The plan for a call that found none (or one checked with other tables), made once
        when several threads arrive with the same new signature."""
        if key is None:  # no signature (unhashable arguments): checked every time
            return self.make_plan(args, offset_provider)
        return self.plans.find_or_make(
            key, offset_provider, lambda: self.make_plan(args, offset_provider)
        )

    def _run(
        self,
        plan: Plan,
        block: ArgBlock,
        args: list[Any],
        offset_provider: Mapping[str, Any] | None,
    ) -> None:
        """Write this call's addresses and scalars into ``block`` and launch on it."""
        ints, floats = block.ints, block.floats
        copies: list[Any] | None = []
        if plan.store_pointers(args, ints):  # True: an output is also another argument
            copies = self._check_aliasing(plan, args, ints)
            if copies is None:
                self._in_statement_order(args, offset_provider)
                return
        if plan.scalar_slots:
            self._store_scalars(plan.scalar_slots, args, ints, floats, offset_provider)
        for name, slot in plan.table_slots:
            ints[slot] = offset_provider[name].address  # type: ignore[index]
        if plan.dynamic:  # as_offset: the read positions are data
            self._check_offsets(plan, block, args, offset_provider)
        block.run()
        del copies  # after the launch (a GPU's frees are ordered on its stream)
        if plan.errors_at_once and plan.errors[0]:  # type: ignore[index]
            self._guard_failed(plan, "this call")

    def _store_scalars(
        self, slots: tuple[tuple[int, int, str], ...], args: list[Any], ints: Any, floats: Any,
        offset_provider: Mapping[str, Any] | None,
    ) -> None:  # fmt: skip
        """Write the scalar arguments into their slots of an argument block."""
        for i, slot, kind in slots:
            value = args[i]
            if type(value) not in _SCALAR_TYPES[kind] and (i, type(value)) not in (
                seen := self._scalar_types_seen
            ):
                self.make_plan(list(args), offset_provider)  # raises the precise error
                seen.add((i, type(value)))  # accepted: a plan was made with it
            if kind == "f":
                floats[slot] = value
            else:
                ints[slot] = int(value)

    def _check_offsets(
        self,
        plan: Plan,
        block: ArgBlock,
        args: list[Any],
        offset_provider: Mapping[str, Any] | None,
    ) -> None:
        """Before a call with as_offset reads: the plan's first call runs its kernels once on
        scratch outputs and reads their guards (``_probe``), every call with
        STENCILKIT_OFFSET_CHECKS=every checks every read on the host; both raise before anything
        is written. Later calls rely on the kernels' guards, whose errors a GPU reports at the
        next call. Offsets that depend on what the call writes (``plan.stale_offsets``) cannot be
        checked on the host before it: the probe, run on copies of the written fields, stands
        for the host check there (every call with STENCILKIT_OFFSET_CHECKS=every)."""
        if plan.check_every and not plan.stale_offsets:
            check_call(
                plan.sprog,
                plan.domains,
                self.flat,
                args,
                {t: offset_provider[t] for t in self.table_names},  # type: ignore[index]
            )
        elif plan.errors[0]:  # type: ignore[index]  # set by a kernel of an earlier call
            self._guard_failed(plan, "an earlier call")
        elif plan.check_every or not plan.offsets_checked:
            self._probe(plan, block)
            plan.offsets_checked = True

    def _probe(self, plan: Plan, block: ArgBlock) -> None:
        """A plan's first call with as_offset reads: its kernels run once on scratch outputs
        (the call's own inputs, this call's block otherwise; copies of the written fields where
        the offsets depend on them), and their guards' error word is read after a
        synchronisation; a read outside a field raises before anything of the caller's is
        written. Exact (the kernels' own reads) and cheap: one extra run of the kernels, no host
        evaluation of the offsets (which costs NumPy or CuPy time per call, and CuPy's kernel
        compilation on first use)."""
        st = plan.stages
        assert st.loaded is not None and st.launches is not None
        probe = block.buf.copy()
        copy = self.target.copy_memory if plan.stale_offsets else None
        scratch = stages.with_scratch_outputs(
            st.planned, st.bound, probe, self.target.scratch, copy
        )
        st.loaded.bind(st.launches, probe)()
        self.target.synchronize()
        del scratch
        if plan.errors[0]:  # type: ignore[index]
            self._guard_failed(plan, "this call", written=False)

    def _guard_failed(self, plan: Plan, which: str, written: bool = True) -> None:
        """A kernel's guard found an as_offset read outside its field (and read inside it
        instead): raise with the field, the axis and the index, and clear the error word."""
        errors = plan.errors
        assert errors is not None
        code, index = int(errors[0]), int(errors[1])
        errors[0] = errors[1] = 0
        layout = plan.stages.planned.layout
        assert layout is not None
        g = layout.guards[code - 1]
        f = layout.field(g.field)
        lo, hi = plan.block.buf[g.slot], plan.block.buf[g.slot + 1]
        what = "neighbour table" if f.is_table else "field"
        raise StencilValueError(
            f"{self.program.name}(): in {which}, an as_offset read of {what} '{g.field}' along"
            f" {f.dims[g.axis]} was at index {index}, outside the {what}'s range [{lo}, {hi});"
            + (
                f" the kernel read at {lo} instead, so the outputs of {which} are not valid"
                if written
                else " nothing was written"
            ),
            hint="check the offsets' values; STENCILKIT_OFFSET_CHECKS=every checks every call"
            " on the host before it runs (slower; nothing is written on a bad offset)",
        )

    def _check_aliasing(self, plan: Plan, args: list[Any], ints: Any) -> list[Any] | None:
        """Two parameters can be one field only if their signatures are equal, so only those
        pairs (found once per plan) are compared on each call. An argument in ``copy_ok`` is
        read from a copy (its slot in ``ints`` pointed at it): the memory, to keep until the
        launch. None: the call must run in statement order (``_in_statement_order``)."""
        copies: list[Any] = []
        copied: set[int] = set()
        for i, j, (ilo, ihi), (jlo, jhi) in plan.alias_pairs:
            pi, pj = args[i].address, args[j].address
            if pi == pj and args[i].signature == args[j].signature:
                if (i, j) in plan.same_ok:
                    continue  # read only where it is written, before the write: an in-place update
                if (i, j) in plan.copy_ok:
                    # read only before the output is written (pyFV3's corner fills, which
                    # read the field at offsets and write it in the corner regions): the
                    # argument's values before the call, as gt4py's statements see them
                    if i not in copied and ihi > ilo:
                        mem, address = self.target.scratch(ihi - ilo)
                        self.target.copy_memory(address, pi + ilo, ihi - ilo)
                        ints[dict(plan.field_slots)[i]] = address - ilo
                        copies.append(mem)
                        copied.add(i)
                    continue
                if self.program.alias_reads_before:
                    return None
                raise StencilValueError(
                    f"{self.program.name}(): argument '{self.flat[i].name}' is the same field as output"
                    f" '{self.flat[j].name}'; the compiled code assumes they do not overlap",
                    hint="pass a separate output field",
                )
            if pi + ilo < pj + jhi and pj + jlo < pi + ihi and not _interleaved(args[i], args[j]):
                raise StencilValueError(
                    f"{self.program.name}(): argument '{self.flat[i].name}' shares memory with output"
                    f" '{self.flat[j].name}' (another view of the same buffer); the compiled code"
                    " assumes they do not overlap",
                    hint="pass an output field with memory of its own (e.g. a copy)",
                )
        return copies

    def _in_statement_order(
        self, args: list[Any], offset_provider: Mapping[str, Any] | None
    ) -> None:
        """A GTScript call passing one field as an input and an output, read where the output
        may already be written (NDSL's ``fill_corners_dgrid_defn(x, x, y, y)``: each statement
        reads the other field at offsets): gt4py's statements run one after the other, so this
        call runs on the embedded evaluator, which follows them (the compiled kernels fuse
        them). Exact, slower; calls without the overlap stay compiled."""
        from .embedded.runner import EmbeddedRunner

        if self._embedded is None:
            self._embedded = EmbeddedRunner(self.interface)
        self._embedded(args, offset_provider)

    # ------------------------------------------------------------------ slow path
    def stages_for(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> Stages:
        """Every stage for these arguments, run ahead of time if needed (``Program.compile``)."""
        return self.plan_for(args, offset_provider).stages

    def plan_for(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> Plan:
        """The plan for these arguments, built if needed (ahead-of-time compilation)."""
        args = wrap_arrays(self.flat, list(args), self.written)
        try:
            key = self.signature(args, offset_provider)
        except (AttributeError, KeyError, TypeError):
            return self.make_plan(args, offset_provider)
        plan = self.plans.find_or_make(
            key, offset_provider or {}, lambda: self.make_plan(args, offset_provider)
        )
        if plan.provisional:  # ahead of time: the final choice now, waiting for the variants
            with plan.lock:
                if plan.provisional:
                    self._retune(plan, args, offset_provider)
        return plan

    def stages(
        self,
        args: list[Any],
        offset_provider: Mapping[str, Any] | None,
        check_device: bool = True,
        until: Until = "tune",
    ) -> Stages:
        """The pipeline's artefacts for these arguments (``stencilkit.stages``), up to the stage
        ``until`` ("plan" or "generate": nothing built, no device needed with
        check_device=False); nothing kept."""
        return stages.run_stages(
            self.program, args, offset_provider, self.target, check_device=check_device, until=until
        )

    def make_plan(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> Plan:
        done = self.stages(args, offset_provider)
        done = dataclasses.replace(
            done, bound=done.bound.without_fields()
        )  # the plan must not keep the fields alive
        assert (
            done.loaded is not None
            and done.launches is not None
            and done.planned.layout is not None
        )
        layout, sprog, bound = done.planned.layout, done.planned.sprog, done.bound
        buf = done.planned.new_block()
        errors = None
        if layout.error_slot is not None:
            errors = self.target.error_word()
            buf[layout.error_slot] = errors.ctypes.data
        index = {p.name: i for i, p in enumerate(self.flat)}
        written = {o for k in sprog.kernels for o in k.outs}
        return Plan(
            done,
            ArgBlock(buf, done.loaded.bind(done.launches, buf)),
            tuple((index[f.name], f.ptr) for f in layout.fields if not f.is_table),
            tuple(
                (index[s.name], s.slot, "f" if s.dtype.startswith("float") else "i")
                for s in layout.scalars
            ),
            tuple((f.name, f.ptr) for f in layout.fields if f.is_table),
            _alias_pairs(args, self.flat, written),
            dict(bound.tables),
            has_dynamic_reads(sprog),
            frozenset(
                (index[a], index[o]) for a, o in same_field_ok(sprog) if a in index and o in index
            ),
            errors,
            errors is not None and self.target.device_type is DeviceType.CPU,
            require("STENCILKIT_OFFSET_CHECKS").offset_checks == "every",
            offsets_checked=False,
            stale_offsets=stale_dynamic_read(sprog.kernels) is not None,
            copy_ok=frozenset(
                (index[a], index[o])
                for a, o in (copy_field_ok(sprog) if self.program.alias_reads_before else ())
                if a in index and o in index
            ),
            provisional=bool(getattr(done.launches, "provisional", False)),
        )


def same_field_ok(sprog: ir.StencilProgram) -> set[tuple[str, str]]:
    """(input, output) parameter pairs that may be one field: the input is never written, is not
    read after the first kernel writing the output, and that kernel writes one output and reads
    the input only at the point it writes (or not at all)."""
    kernels = sprog.kernels
    written = {o for k in kernels for o in k.outs}
    reads = [_field_reads(k) for k in kernels]
    ok: set[tuple[str, str]] = set()
    for out in written:
        w = next(i for i, k in enumerate(kernels) if out in k.outs)
        later = set().union(*reads[w + 1 :])
        for p in sprog.params:
            name = p.name
            if name in written or name in later or not isinstance(p.type, FieldType):
                continue
            at = reads[w].get(name)
            if at is None or (at and len(kernels[w].outs) == 1):
                ok.add((name, out))
    return ok


def copy_field_ok(sprog: ir.StencilProgram) -> set[tuple[str, str]]:
    """(input, output) parameter pairs that may be one field if the input is read from a copy
    made before the call: the input is never written, is not read after the first kernel
    writing the output, and in that kernel (not a scan) only by the output's own value; every
    read then sees the values before the write, as in gt4py's statement order."""
    from ..ir.visit import walk

    kernels = sprog.kernels
    written = {o for k in kernels for o in k.outs}
    reads = [_field_reads(k) for k in kernels]
    ok: set[tuple[str, str]] = set()
    for out in written:
        w = next(i for i, k in enumerate(kernels) if out in k.outs)
        k = kernels[w]
        if k.scan is not None:
            continue
        later = set().union(*reads[w + 1 :])
        others = {
            x.field
            for o, v in zip(k.outs, k.values)
            if o != out
            for x in walk(v)
            if isinstance(x, ir.Access)
        }
        for p in sprog.params:
            name = p.name
            if isinstance(p.type, FieldType) and name not in written | later | others:
                ok.add((name, out))
    return ok


def _field_reads(k: ir.Kernel) -> dict[str, bool]:
    """The fields ``k`` reads, each with whether every read is at the point written."""
    from ..ir.visit import walk

    found: dict[str, bool] = {}
    for v in (*k.values, *(k.scan.inits if k.scan else ())):
        for x in walk(v):
            if isinstance(x, ir.Access):
                zero = all(isinstance(i, ir.Pos) and i.offset == 0 for i in x.index) and len(
                    x.index
                ) == len(k.dims)
                found[x.field] = found.get(x.field, True) and zero
    return found


def _interleaved(a: Any, b: Any) -> bool:
    """Views of one buffer with the same strides whose elements sit between each other's (the
    elements of a data dimension, ``q[..., 0]`` and ``q[..., 1]``): no element of one overlaps
    one of the other, so the compiled code may treat them as separate."""
    sa, sb = a.signature, b.signature
    if sa.strides != sb.strides or sa.dtype != sb.dtype:
        return False
    item = np.dtype(sa.dtype).itemsize
    step = math.gcd(*(abs(s) for s, n in zip(sa.strides, sa.shape) if n > 1)) * item
    if step == 0:
        return False
    r = int(b.address - a.address) % step
    return bool(item <= r <= step - item)


def _alias_pairs(
    args: list[Any], flat: tuple[ir.Param, ...], written: set[str]
) -> tuple[tuple[int, int, tuple[int, int], tuple[int, int]], ...]:
    """(argument, output, span of the argument, span of the output) for every output and every
    other field on the same device: their memory could overlap (the same field, or another view
    of the same buffer), which the compiled code must never see."""
    fields = [i for i, p in enumerate(flat) if isinstance(p.type, FieldType)]
    outs = [i for i in fields if flat[i].name in written]
    sigs: dict[int, FieldSignature] = {i: args[i].signature for i in fields}
    return tuple(
        (i, j, sigs[i].span(), sigs[j].span())
        for j in outs
        for i in fields
        if i != j and sigs[i].device == sigs[j].device
    )


def _pointer_store(
    slots: tuple[tuple[int, int], ...],
    alias_pairs: tuple[tuple[int, int, tuple[int, int], tuple[int, int]], ...],
) -> Any:
    """A function writing each field argument's address into its slot and returning whether an
    output's memory overlaps another argument's: the per-call path's inner loop, unrolled once
    per plan, one statement per field (several times faster than a loop over the slots)."""
    lines = [f"    p{i} = ints[{slot}] = args[{i}].address" for i, slot in slots]
    tests = [
        f"(p{i} + {si[0]} < p{j} + {sj[1]} and p{j} + {sj[0]} < p{i} + {si[1]})"
        for i, j, si, sj in alias_pairs
        if si[1] > si[0] and sj[1] > sj[0]
    ]
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
    exec(
        "def store_pointers(args, ints):\n" + "\n".join(lines), namespace
    )  # only integers interpolated
    return namespace["store_pointers"]
