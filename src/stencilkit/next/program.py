"""``Program``: a gt4py.next program, parsed on first use; then, once per argument signature, the
backend's runner (a :class:`~stencilkit.stages.runner.Runner`) takes it through the stages of
``stencilkit.stages`` (bind -> lower -> plan -> generate -> build -> load -> tune; the embedded
backend stops after plan) and keeps the result. ``Program.compile(...)`` runs them ahead of time
and ``Program.inspect(...)`` returns them.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Callable, Mapping
from typing import Any

from .. import config, stages
from ..backends import Backend, runner_for
from ..core.cuda_probe import usable_cupy
from ..core.device import DeviceType
from ..core.errors import BackendUnavailableError, DSLError, StencilTypeError
from ..core.tracebacks import api_boundary, shorten
from ..core.types import FieldType, TupleType, scalar_type_of_value
from ..instrumentation import hooks as _hooks
from ..ir import nodes as ir
from ..ir.lower import flat_params
from ..ir.own_domains import own_domains, shared_domain_groups
from ..stages.binding import flatten_args
from ..stages.interface import interface_of
from ..stages.runner import Runner, Until
from ..stages.temporaries import Temporaries
from .compilation_options import CompilationOptions
from .parse import ProgramParser
from .static_args import static_definition, static_key, static_value


class IRText(str):
    """The IR of an operator or program as text; also callable (``prog.ir_text()``)."""

    __slots__ = ()

    def __call__(self) -> str:
        return str(self)


class Program:
    """A program: parsed on first use (call, ``.compile()``, ``.ir_text()``), compiled on first
    call per argument signature; call it with fields and ``offset_provider=``."""

    def __init__(
        self,
        definition: ir.Program | None,
        backend: Backend | None,
        fn: Callable[..., Any] | None = None,
        grid_type: Any = None,
        deferred: Exception | None = None,
    ) -> None:
        self._definition = definition
        self._deferred = deferred  # an error raised by every call (frontend ProgramParser.deferred)
        self.backend = backend
        self.grid_type = grid_type
        self.__wrapped__ = fn
        self.__name__ = (
            definition.name if definition is not None else getattr(fn, "__name__", "program")
        )
        self.__doc__ = getattr(fn, "__doc__", None)
        self._run: Any = None  # the backend's runner, made on first use
        # compile(name=[values]): the static parameters, and a program per their values
        self._static: tuple[str, ...] | None = None
        self._variants: dict[tuple[Any, ...], Program] = {}
        self._compiled = False  # compile() ran with arguments: what enable_jit=False calls need

    @property
    def definition(self) -> ir.Program:
        """The program's IR (parsed from the Python function on first access)."""
        if self._definition is None:
            assert self.__wrapped__ is not None
            parser = ProgramParser(self.__wrapped__)
            self._definition = parser.parse()
            self._deferred = parser.deferred
        return self._definition

    def _prepare(self) -> None:
        definition = self.definition
        if self._deferred is not None:
            raise self._deferred
        self._simple = (
            not any(isinstance(p.type, TupleType) for p in definition.params)
            and not definition.temps
        )
        self._nparams = len(definition.params)
        self._temps = Temporaries(definition) if definition.temps else None
        names = [p.name for p in flat_params(definition.params)]
        self._groups = [tuple(names.index(n) for n in g) for g in shared_domain_groups(definition)]
        self._own: Program | None = None
        self._simple = self._simple and not self._groups
        self._run = runner_for(self.backend, interface_of(definition))

    @property
    def _runner(self) -> Any:
        if self._run is None:
            self._prepare()
        return self._run

    def __repr__(self) -> str:
        return f"<stencilkit program {self.__name__} on {self.backend or 'embedded'}>"

    @property
    def ir_text(self) -> IRText:
        """The program's IR as text (``prog.ir_text`` or ``prog.ir_text()``); parses the program,
        raising its DSL error if it has one."""
        return IRText(str(self.definition))

    def with_backend(self, backend: Backend | None) -> Program:
        """This program run by ``backend`` (``None``: embedded; ``gtx.cpu``, ``gtx.gpu``); the
        original is unchanged."""
        prog = Program(self._definition, backend, self.__wrapped__, self.grid_type, self._deferred)
        prog._static = self._static
        prog.compilation_options = self.compilation_options
        return prog

    def __deepcopy__(self, memo: dict[int, Any]) -> Program:
        """``copy.deepcopy(prog)`` (gt4py copies programs): the same program, its IR shared
        (frozen), without the compiled code, which the copy loads again (from the build cache)
        on its first call. The compiled code holds loaded libraries, which cannot be copied.
        What ``compile(...)`` made stays callable under ``enable_jit=False``."""
        copy_ = self.with_backend(self.backend)
        copy_._compiled = self._compiled
        for key in self._variants:
            copy_._variant(key)
        return copy_

    def with_grid_type(self, grid_type: Any) -> Program:
        """This program with gt4py.next's ``grid_type`` recorded (``.grid_type``)."""
        return Program(self._definition, self.backend, self.__wrapped__, grid_type, self._deferred)

    #: gt4py.next's compilation options (``enable_jit``, ``static_params``, ``connectivities``,
    #: ``static_domains``), as ``with_compilation_options`` set them
    compilation_options: CompilationOptions = CompilationOptions()

    def with_compilation_options(self, **options: Any) -> Program:
        """This program with gt4py.next's compilation options replaced, e.g.
        ``prog.with_compilation_options(enable_jit=False)`` (icon4py's ``setup_program``); an
        unknown option is a TypeError, as in gt4py. With ``enable_jit=False`` (and a backend), a
        call must find what ``compile(...)`` made: static values not compiled, or no compile at
        all, raise gt4py's ``RuntimeError``."""
        copy_ = self.with_backend(self.backend)
        copy_.compilation_options = dataclasses.replace(self.compilation_options, **options)
        return copy_

    def with_bound_args(self, **kwargs: Any) -> ProgramWithBoundArgs:
        """This program with some parameters fixed: ``prog.with_bound_args(factor=10.0)``."""
        return ProgramWithBoundArgs(self, kwargs)

    def __call__(
        self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        try:
            if _hooks.program_call_context.registry or config.COLLECT_METRICS_LEVEL:
                # gt4py.next's hook around each call (instrumentation.hooks), only when used
                with _hooks.program_call_context(self, args, offset_provider, True, kwargs):
                    self._call(args, offset_provider, kwargs)
                return
            self._call(args, offset_provider, kwargs)
        except DSLError as err:  # the API boundary: the user's frames only (core/tracebacks.py)
            shorten(err)
            raise

    def _call(
        self,
        args: tuple[Any, ...],
        offset_provider: Mapping[str, Any] | None,
        kwargs: dict[str, Any],
    ) -> None:
        jit = self.compilation_options.enable_jit or self.backend is None
        if self._static is not None:
            key = static_key(self.definition, self._static, args, kwargs)
            if not jit and key not in self._variants:
                self._not_compiled(key)
            self._variant(key)._call(args, offset_provider, kwargs)
            return
        if not jit and not self._compiled:
            self._not_compiled(None)
        run = self._run
        if run is None:
            run = self._runner
        if self._simple and not kwargs and len(args) == self._nparams:
            run(list(args), offset_provider)  # the common case, kept short
            return
        flat = self._flat(args, kwargs, offset_provider=offset_provider)
        if self._groups and any(len({_extent(flat[i]) for i in g}) > 1 for g in self._groups):
            if self._own is None:  # tuple outputs of different extents: each over its own domain
                self._own = Program(
                    own_domains(self.definition), self.backend, self.__wrapped__, self.grid_type
                )
            self._own(*args, offset_provider=offset_provider, **kwargs)
            return
        run(flat, offset_provider)

    def _not_compiled(self, key: tuple[Any, ...] | None) -> None:
        """gt4py's error for a call that ``enable_jit=False`` forbids to compile."""
        assert self.compilation_options.enable_jit is False
        if key is None:
            hint = f"call {self.__name__}.compile(...) first, or leave enable_jit at True"
        else:
            values = ", ".join(f"{n}={v!r}" for n, v in zip(self._static or (), key))
            compiled = "; ".join(
                ", ".join(f"{n}={v!r}" for n, v in zip(self._static or (), k))
                for k in self._variants
            )
            hint = (
                f"this call has {values}; {self.__name__}.compile(...) made {compiled or 'none'}:"
                " list these values in compile(), or leave enable_jit at True"
            )
        raise RuntimeError(f"No program compiled for this set of static arguments.\nhint: {hint}")

    def _flat(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        placeholders: bool = False,
        on_host: bool = False,
        offset_provider: Mapping[str, Any] | None = None,
    ) -> list[Any]:
        """The runner's arguments: flattened, with the temporaries appended. ``placeholders``:
        a domain given for a field parameter stands for a field over it (``compile``,
        ``inspect``), on the host in the backend's layout if ``on_host``."""
        if self._run is None:
            self._prepare()
        flat = flatten_args(self.definition.params, args, kwargs, self.definition.name)
        if placeholders:
            flat = self._placeholder_fields(flat, on_host)
        if self._temps is not None:
            flat.extend(self._temps.fields(flat, offset_provider))
        return flat

    @api_boundary
    def compile(
        self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Program:
        """Parse, and run every stage ahead of time for arguments like these (nothing runs):
        bind, lower, plan and, on compiled backends, generate, build, load and tune (GPU block
        shapes are chosen now, on scratch outputs, so the first real call pays no tuning).
        A field parameter may be given as its domain (a ``Domain``, ``{I: 64, K: (0, 80)}``, or
        its sizes in the order of its dimensions, ``(64, 80)``): it then stands for a field the
        backend's allocator makes over that domain, which is what the calls must pass to use
        this plan. Returns ``self``; without arguments it only parses (and reports DSL errors).
        Compiling needs the backend's device (the gpu backend loads and tunes on the GPU);
        ``inspect`` shows the generated source without one.

        >>> run.compile({I: 256, J: 256}, {I: 256, J: 256}, offset_provider={})
        """
        if not args and not kwargs:
            _ = self.definition
            if self._deferred is not None:
                raise self._deferred
            # gt4py's compile(offset_provider=...) of a program without static values: the one
            # variant every call runs (enable_jit=False calls may run it)
            self._compiled = self._compiled or offset_provider is not None
            return self
        if not args and all(isinstance(v, list) for v in kwargs.values()):
            self._compiled = True
            return self._compile_static_variants(kwargs, offset_provider)
        runner = self._runner
        self._compiled = True
        if not isinstance(runner, Runner):  # the runner of a user's backend: nothing ahead of time
            return self
        _device_here(self.backend, f"{self.__name__}.compile()", inspect_hint=True)
        runner.stages_for(
            self._flat(args, kwargs, placeholders=True, offset_provider=offset_provider),
            offset_provider,
        )
        return self

    def _variant(self, key: tuple[Any, ...]) -> Program:
        """The program with the static parameters' values ``key`` in its body (static_args.py)."""
        prog = self._variants.get(key)
        if prog is None:
            assert self._static is not None
            values = dict(zip(self._static, key, strict=True))
            definition = static_definition(self.definition, values)
            prog = Program(definition, self.backend, self.__wrapped__, self.grid_type)
            self._variants[key] = prog
        return prog

    def _compile_static_variants(
        self, static_args: dict[str, list[Any]], offset_provider: Mapping[str, Any] | None
    ) -> Program:
        """gt4py.next's ``compile(offset_provider=..., name=[value, ...])``: the values each
        scalar parameter will take. Each combination is a variant of the program with the values
        in its body (its own build and build-cache key, as gt4py specialises); the variants are
        made now and built at their first call, where the fields' layout is known. A call with
        values not listed makes their variant then (gt4py's ``enable_jit``, its default)."""
        if offset_provider is None:
            raise ValueError(
                "Cannot compile a program without connectivities / OffsetProviderType."
            )
        params = {p.name: p for p in self.definition.params}
        if self._deferred is not None:
            raise self._deferred
        for name, values in static_args.items():
            param = params.get(name)
            if param is None:
                raise TypeError(
                    f"{self.__name__}.compile(): '{name}' is not a parameter of the program"
                    f" (its parameters: {', '.join(params)})"
                )
            if isinstance(param.type, FieldType):
                raise TypeError(
                    f"{self.__name__}.compile(): static argument '{name}' must be a scalar"
                    f" parameter; it is a field ({param.type})"
                )
            for value in values:
                leaves = value if isinstance(value, tuple) else (value,)
                if any(scalar_type_of_value(v) is None for v in leaves):
                    raise TypeError(
                        f"{self.__name__}.compile(): static argument '{name}' takes scalar"
                        f" values, got {value!r}"
                    )
        names = tuple(p.name for p in self.definition.params if p.name in static_args)
        if self._static is not None and self._static != names:
            self._variants.clear()  # other static parameters: other variants
        self._static = names
        for combination in itertools.product(*(static_args[n] for n in names)):
            self._variant(
                tuple(static_value(v, params[n].type) for n, v in zip(names, combination))
            )
        return self

    def _placeholder_fields(self, flat: list[Any], on_host: bool) -> list[Any]:
        """``flat`` with each domain (or tuple of sizes) given for a field parameter replaced by
        a field of zeros over it, allocated as the backend allocates, or on the host in the
        layout the backend's device would use (``on_host``: that device is not here). Zeros:
        index fields read by ``as_offset`` stay in range while kernels are timed."""
        from ..core.domain import Domain
        from ..fields import zeros
        from ..storage.layout import layout_for

        out = list(flat)
        for i, (p, v) in enumerate(zip(flat_params(self.definition.params), flat)):
            if not isinstance(p.type, FieldType):
                continue
            if _sizes(v, len(p.type.dims)):
                v = dict(zip(p.type.dims, v))
            if isinstance(v, Domain | Mapping):
                if on_host and self.backend is not None:
                    kinds = [d.kind for d in p.type.dims]
                    layout = layout_for(kinds, self.backend.device_type)
                    out[i] = zeros(v, p.type.dtype, layout=layout)
                else:
                    out[i] = zeros(v, p.type.dtype, allocator=self.backend)
        return out

    def inspect(
        self,
        *args: Any,
        offset_provider: Mapping[str, Any] | None = None,
        until: Until | None = None,
        **kwargs: Any,
    ) -> stages.Stages:
        """Every stage's artefact for arguments like these (``stencilkit.stages.Stages``), each
        printable with ``.as_text()``: ``program`` (IR), ``bound``, ``lowered``, ``planned`` and, on
        compiled backends, ``source``, ``built``, ``loaded``, ``launches``.

        A field parameter may be given as its domain (a ``Domain``, ``{I: 64, K: (0, 80)}``) or
        its sizes (``(64, 80)``) instead of a field: no arrays are needed to read the generated
        C++ or CUDA. ``until`` stops after a stage: ``"plan"``, ``"generate"`` (the source; no
        compiler, no device) or ``"tune"`` (everything, kept for the calls that follow, as
        ``compile`` does). By default it runs every stage the backend's device allows here: on a
        machine without a usable GPU, the gpu backend stops after ``generate`` (the fields stand
        in the GPU's layout, on the host).

        >>> print(run.inspect({I: 8, J: 5}, {I: 8, J: 5}, offset_provider={}).source.as_text())
        """
        runner = self._runner
        if not isinstance(runner, Runner):
            raise StencilTypeError(
                f"{self.__name__}.inspect(): the runner of backend {self.backend!r} has no stages"
            )
        here = _device_here(self.backend, f"{self.__name__}.inspect()", raise_=False)
        flat = self._flat(
            args, kwargs, placeholders=True, on_host=not here, offset_provider=offset_provider
        )
        if until is None and here:
            return runner.stages_for(flat, offset_provider)  # kept, as compile() does
        return runner.stages(flat, offset_provider, check_device=here, until=until or "generate")


class ProgramWithBoundArgs:
    """``prog.with_bound_args(factor=10.0)``: the program with some parameters fixed; call it
    with the remaining ones (positionally in their order, or by keyword)."""

    def __init__(self, program: Program, bound: dict[str, Any]) -> None:
        names = param_names(program.__wrapped__)
        for k in bound:
            if k not in names:
                raise TypeError(f"Keyword argument '{k}' is not a valid program parameter.")
        self.program = program
        self.bound_args = dict(bound)
        self.__name__ = program.__name__
        self.__wrapped__ = program.__wrapped__
        self._remaining = [n for n in names if n not in bound]

    @property
    def definition(self) -> ir.Program:
        return self.program.definition

    @property
    def backend(self) -> Backend | None:
        return self.program.backend

    @property
    def ir_text(self) -> IRText:
        return self.program.ir_text

    def with_backend(self, backend: Backend | None) -> ProgramWithBoundArgs:
        return ProgramWithBoundArgs(self.program.with_backend(backend), self.bound_args)

    def __deepcopy__(self, memo: dict[int, Any]) -> ProgramWithBoundArgs:
        return ProgramWithBoundArgs(
            copy.deepcopy(self.program, memo), copy.deepcopy(self.bound_args, memo)
        )

    def with_grid_type(self, grid_type: Any) -> ProgramWithBoundArgs:
        return ProgramWithBoundArgs(self.program.with_grid_type(grid_type), self.bound_args)

    @property
    def compilation_options(self) -> CompilationOptions:
        return self.program.compilation_options

    def with_compilation_options(self, **options: Any) -> ProgramWithBoundArgs:
        return ProgramWithBoundArgs(
            self.program.with_compilation_options(**options), self.bound_args
        )

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("compiling a program with bound arguments is not supported")

    def __call__(
        self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        problems = [
            f"Parameter '{k}' already set as a bound argument."
            for k in kwargs
            if k in self.bound_args
        ]
        if not problems and (
            len(args) > len(self._remaining) or len(args) + len(kwargs) != len(self._remaining)
        ):
            problems.append(
                f"Function takes {len(self._remaining)} positional arguments, but {len(args)} were given."
            )
        if problems:
            bound = ", ".join(f"'{k}'" for k in self.bound_args)
            raise TypeError(
                f"Invalid argument types in call to program '{self.__name__}' with bound arguments"
                f" '{bound}'."
            ) from ValueError("\n".join(problems))
        values = dict(zip(self._remaining, args), **kwargs, **self.bound_args)
        self.program(offset_provider=offset_provider, **values)


def param_names(fn: Callable[..., Any] | None) -> list[str]:
    import inspect

    return list(inspect.signature(fn).parameters) if fn is not None else []


def _extent(value: Any) -> Any:
    dom = getattr(value, "domain", None)
    return tuple(dom.items()) if dom is not None else getattr(value, "shape", None)


def _sizes(value: Any, rank: int) -> bool:
    """A field parameter given as its sizes: a tuple of ``rank`` integers."""
    return (
        isinstance(value, tuple)
        and len(value) == rank > 0
        and all(isinstance(n, int) and not isinstance(n, bool) for n in value)
    )


def _device_here(
    backend: Backend | None, what: str, raise_: bool = True, inspect_hint: bool = False
) -> bool:
    """Whether the device ``backend`` runs on is usable here (the host always is). With
    ``raise_``, a missing GPU raises what is missing and how to install it."""
    if backend is None or backend.device_type is not DeviceType.CUDA:
        return True
    try:
        usable_cupy(f"backend '{backend.name}' of {what}")
    except BackendUnavailableError as err:
        if not raise_:
            return False
        if inspect_hint:
            raise BackendUnavailableError(
                err.message,
                hint=(f"{err.hint}; " if err.hint else "")
                + "to read the generated CUDA without a GPU: prog.inspect(domains...,"
                " offset_provider=...).source",
            ) from err
        raise
    return True
