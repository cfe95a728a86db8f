"""The embedded backend: checks arguments and evaluates kernels with NumPy or CuPy arrays."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from ...core.errors import StencilTypeError
from ...core.records import record
from ...core.types import FieldType, ScalarType
from ...fields import Field
from ...ir import nodes as ir
from ...stages import Stages, run_stages
from ...stages.binding import as_declared, check_scalar, wrap_arrays
from ...stages.interface import ProgramInterface
from ...stages.runner import PlanCache, Until
from ...toolchain.config import require
from ..dynamic_reads import check_dynamic_reads, stale_dynamic_read, uses_as_offset
from . import bound
from .evaluate import run_kernel

#: calls bound to their fields kept per runner (a time loop's few sets of fields)
BOUND_CALLS = 64


@record
class EvaluationPlan:
    """The checked plan of one argument signature: the array namespace of the fields, the
    kernels with their concrete domains, the neighbour tables checked."""

    xp: Any
    kernels: list[tuple[ir.Kernel, Any]]
    tables: dict[str, Any]


class BoundCall:
    """A call's kernels bound to its fields (``bound.bind``): what a later call with the very
    same field objects (and domain scalars) runs, checking only its scalars."""

    __slots__ = ("fields", "scalars", "steps")

    def __init__(
        self, fields: tuple[Any, ...], scalars: tuple[tuple[int, str, Callable[[Any], Any]], ...],
        steps: list[bound.Step],
    ) -> None:  # fmt: skip
        self.fields = fields  # held, so that no other object takes their ids meanwhile
        self.scalars = scalars
        self.steps = steps

    def __call__(self, args: list[Any]) -> None:
        values = {name: check(args[i]) for i, name, check in self.scalars}
        for step in self.steps:
            step(values)


def scalar_check(p: ir.Param, program: str) -> Callable[[Any], Any]:
    """``check_scalar`` of parameter ``p``, with the common cases (a value of the very type, a
    Python number that fits) decided without the general checks."""
    dtype = np.dtype(p.type.dtype)  # type: ignore[union-attr]
    exact, kind = dtype.type, dtype.kind
    lo, hi = (np.iinfo(dtype).min, np.iinfo(dtype).max) if kind in "iu" else (0, 0)

    def check(v: Any) -> Any:
        t = type(v)
        if t is exact:
            return v
        if (t is int and kind in "iu" and lo <= v <= hi) or (t is float and kind == "f"):
            return exact(v)
        return check_scalar(p.name, p.type, v, program)  # type: ignore[arg-type]

    return check


class EmbeddedRunner:
    """Runs a program on the arrays its fields hold; no compilation.

    A :class:`~stencilkit.stages.runner.Runner`. The stages ``bind``, ``lower`` and ``plan``
    (``stencilkit.stages``: the checks of dimensions, dtypes, devices, domains, bounds; the
    lowering) run once per argument signature and are kept in a
    :class:`~stencilkit.stages.runner.PlanCache`, as on the compiled backends; later calls only
    evaluate the planned kernels."""

    def __init__(self, interface: ProgramInterface) -> None:
        self.interface = interface
        self.program = interface.program
        self.flat = interface.flat
        self.table_names = interface.tables
        self.written = interface.written
        self.plans: PlanCache[EvaluationPlan] = PlanCache(
            require("STENCILKIT_PLAN_CACHE_SIZE").plan_cache_size
        )
        self.dynamic = uses_as_offset(self.program)
        self.checks = tuple(
            (i, p.name, scalar_check(p, self.program.name))
            for i, p in enumerate(self.flat)
            if isinstance(p.type, ScalarType)
        )
        # calls bound to their fields (see bound.py): not with tables or as_offset reads, whose
        # checks depend on the data
        self.bindable = not self.table_names and not self.dynamic
        self.bound: dict[tuple[Any, ...], BoundCall] = {}
        self.field_idx = interface.field_idx
        self.domain_idx = interface.domain_scalar_idx

    def _bound_key(self, args: list[Any]) -> tuple[Any, ...]:
        """The fields by identity and the domain scalars by value (TypeError if unhashable)."""
        ids = tuple([id(args[i]) for i in self.field_idx])
        if not self.domain_idx:
            return ids
        return ids + tuple([(type(args[i]), args[i]) for i in self.domain_idx])

    def bound_launch(
        self, args: list[Any], fixed: frozenset[int] = frozenset()
    ) -> Callable[[list[Any]], None] | None:
        """The call bound to these very field objects (made by an earlier call with them), for
        a caller that will pass them again (it checks that: the launch does not), and the same
        values at the positions ``fixed``: each call checks its other scalars and runs the
        bound kernels. None if there is none."""
        if not self.bindable:
            return None
        try:
            call = self.bound.get(self._bound_key(args))
        except (TypeError, IndexError):
            return None
        if call is None:
            return None
        bounds = tuple(i for i in self.domain_idx if i not in fixed)
        made_for = tuple([(type(args[i]), args[i]) for i in bounds])
        # the domain scalars' and fixed values are those checked now; the others, per call
        same = set(bounds) | fixed
        values0 = {name: check(args[i]) for i, name, check in call.scalars if i in same}
        rest = tuple(c for c in call.scalars if c[0] not in same)
        steps = call.steps
        if not bounds and not rest:  # nothing checked per call
            if len(steps) == 1:  # a C call into the kernel (bound.Step ignores the args)
                return partial(steps[0], values0)

            def launch_all(args: list[Any]) -> None:
                for step in steps:
                    step(values0)

            return launch_all

        def launch(args: list[Any]) -> None:
            if bounds and tuple([(type(args[i]), args[i]) for i in bounds]) != made_for:
                self(args, None)  # other domain scalars: other kernels
                return
            values = dict(values0)
            for i, name, check in rest:
                values[name] = check(args[i])
            for step in steps:
                step(values)

        return launch

    def __call__(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> None:
        bkey: tuple[Any, ...] | None = None
        if self.bindable:
            try:
                bkey = self._bound_key(args)
                hit = self.bound.get(bkey)
            except (TypeError, IndexError):
                bkey = hit = None
            if hit is not None:
                hit(args)
                return
        provider = offset_provider or {}
        try:
            key = self.interface.key(args, provider)
            cached = self.plans.find(key, provider)
        except (AttributeError, KeyError, TypeError):
            key, cached = None, None
        if cached is None:
            args = wrap_arrays(self.flat, args, self.written)
            cached = self._evaluation_plan(self.stages(args, provider))
            if key is not None:
                self.plans.put(key, cached)
        xp, kernels = cached.xp, cached.kernels
        fields: dict[str, Any] = {}
        for p, a in zip(self.flat, args):
            if isinstance(p.type, FieldType):
                fields[p.name] = as_declared(a, p.type.dims)
        scalars = {name: check(args[i]) for i, name, check in self.checks}
        tables = {t: provider[t] for t in self.table_names}
        if bkey is not None and key is not None and xp is np:
            held = tuple(args[i] for i in self.field_idx)
            if (
                all(isinstance(f, Field) for f in held)
                and tuple(map(id, held)) == bkey[: len(held)]
            ):
                call = BoundCall(held, self.checks, bound.bind(xp, kernels, fields, tables))
                if len(self.bound) >= BOUND_CALLS:
                    self.bound.clear()
                self.bound[bkey] = call
                call(args)
                return
        if self.dynamic and stale_dynamic_read([k for k, _ in kernels]) is None:
            # as_offset: check before any write (else each kernel checks its reads before its own writes)
            check_dynamic_reads(kernels, fields, scalars, tables, xp)
        for k, dom in kernels:
            run_kernel(xp, k, dom, fields, scalars, tables)

    def stages_for(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> Stages:
        """The stages for these arguments (``Program.compile``), kept for the calls that follow."""
        provider = offset_provider or {}
        args = wrap_arrays(self.flat, list(args), self.written)
        done = self.stages(args, provider)
        try:
            key = self.interface.key(args, provider)
        except (AttributeError, KeyError, TypeError):
            return done
        self.plans.put(key, self._evaluation_plan(done))
        return done

    def stages(
        self,
        args: list[Any],
        offset_provider: Mapping[str, Any] | None,
        check_device: bool = True,
        until: Until = "tune",
    ) -> Stages:
        """bind, lower and plan (the embedded backend generates nothing); nothing kept."""
        return run_stages(self.program, args, offset_provider or {}, None)

    def _evaluation_plan(self, done: Stages) -> EvaluationPlan:
        bound = done.bound
        xps = {f.xp for f in bound.fields.values()} | {t.xp for t in bound.tables.values()}
        if len(xps) > 1:
            raise StencilTypeError(
                f"{self.program.name}(): fields live on different devices (host and GPU)",
                hint="move them to one device with field.to(...) first",
            )
        xp = xps.pop() if xps else __import__("numpy")
        return EvaluationPlan(xp, done.planned.kernels(), dict(bound.tables))
