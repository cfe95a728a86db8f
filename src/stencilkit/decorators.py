"""``@field_operator``, ``@scan_operator`` and ``@program``: the user-facing entry points.

A program is parsed on first use (or at decoration); then, once per argument signature, the
backend's runner takes it through the stages of ``stencilkit.stages`` (bind -> lower -> plan ->
generate -> build -> load -> tune; the embedded backend stops after plan) and keeps the result.
``Program.compile(...)`` runs them ahead of time and ``Program.inspect(...)`` returns them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from . import config, stages
from .backends import Backend, embedded_runner
from .core.dims import Dimension
from .core.errors import MissingOutError, StencilTypeError
from .core.named_collections import NamedCollectionType, collection_values
from .core.types import FieldType, ScalarType, TupleType, TypeSpec, scalar_type_of_value
from .frontend.decorator_keywords import check_decorator_keywords
from .frontend.parse import ProgramParser, build_apply, parse_field_operator
from .frontend.scans import own_domains, scan_call, scan_init, shared_domain_groups
from .frontend.source import SourceFunction
from .frontend.typing_rules import TypingError
from .instrumentation import hooks as _hooks
from .ir import nodes as ir
from .ir.lower import flat_params
from .ir.visit import walk
from .stages.binding import flatten_args, wrap_arrays


def _runner(program: ir.Program, backend: Backend | None) -> Any:
    flat = flat_params(program.params + program.temps)
    if backend is None:
        return embedded_runner(program, flat)
    if not isinstance(backend, Backend):
        raise StencilTypeError(f"backend must be None, gtx.cpu or gtx.gpu, got {backend!r}")
    return backend.runner(program, flat)


class _DefaultBackend:
    """``backend=`` omitted: take ``stencilkit.config.DEFAULT_BACKEND`` (which
    ``stencilkit.ffront.decorator.DEFAULT_BACKEND`` sets, gt4py's name) at decoration."""

    def __repr__(self) -> str:
        return "<DEFAULT_BACKEND>"


_DEFAULT: Any = _DefaultBackend()


def _backend_arg(backend: Any) -> Backend | None:
    if backend is _DEFAULT:
        from . import config

        chosen: Backend | None = config.DEFAULT_BACKEND
        return chosen
    return backend  # type: ignore[no-any-return]


def _parse_now() -> bool:
    from . import config

    return bool(config.PARSE_AT_DECORATION)


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
        self._temps = _Temporaries(definition) if definition.temps else None
        names = [p.name for p in flat_params(definition.params)]
        self._groups = [tuple(names.index(n) for n in g) for g in shared_domain_groups(definition)]
        self._own: Program | None = None
        self._simple = self._simple and not self._groups
        self._run = _runner(definition, self.backend)

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
        return Program(self._definition, backend, self.__wrapped__, self.grid_type, self._deferred)

    def __deepcopy__(self, memo: dict[int, Any]) -> Program:
        """``copy.deepcopy(prog)`` (gt4py copies programs): the same program, its IR shared
        (frozen), without the compiled code, which the copy loads again (from the build cache)
        on its first call. The compiled code holds loaded libraries, which cannot be copied."""
        return self.with_backend(self.backend)

    def with_grid_type(self, grid_type: Any) -> Program:
        """This program with gt4py.next's ``grid_type`` recorded (``.grid_type``)."""
        return Program(self._definition, self.backend, self.__wrapped__, grid_type, self._deferred)

    def with_bound_args(self, **kwargs: Any) -> ProgramWithBoundArgs:
        """This program with some parameters fixed: ``prog.with_bound_args(factor=10.0)``."""
        return ProgramWithBoundArgs(self, kwargs)

    def __call__(
        self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        if _hooks.program_call_context.registry or config.COLLECT_METRICS_LEVEL:
            # gt4py.next's hook around each call (instrumentation.hooks), only when used
            with _hooks.program_call_context(self, args, offset_provider, True, kwargs):
                self._call(args, offset_provider, kwargs)
            return
        self._call(args, offset_provider, kwargs)

    def _call(
        self,
        args: tuple[Any, ...],
        offset_provider: Mapping[str, Any] | None,
        kwargs: dict[str, Any],
    ) -> None:
        run = self._run
        if run is None:
            run = self._runner
        if self._simple and not kwargs and len(args) == self._nparams:
            run(list(args), offset_provider)  # the common case, kept short
            return
        flat = self._flat(args, kwargs)
        if self._groups and any(len({_extent(flat[i]) for i in g}) > 1 for g in self._groups):
            if self._own is None:  # tuple outputs of different extents: each over its own domain
                self._own = Program(
                    own_domains(self.definition), self.backend, self.__wrapped__, self.grid_type
                )
            self._own(*args, offset_provider=offset_provider, **kwargs)
            return
        run(flat, offset_provider)

    def _flat(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], placeholders: bool = False
    ) -> list[Any]:
        """The runner's arguments: flattened, with the temporaries appended. ``placeholders``:
        a domain given for a field parameter stands for a field over it (``compile``)."""
        if self._run is None:
            self._prepare()
        flat = flatten_args(self.definition.params, args, kwargs, self.definition.name)
        if placeholders:
            flat = self._placeholder_fields(flat)
        if self._temps is not None:
            flat.extend(self._temps.fields(flat))
        return flat

    def compile(
        self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Program:
        """Parse, and run every stage ahead of time for arguments like these (nothing runs):
        bind, lower, plan and, on compiled backends, generate, build, load and tune (GPU block
        shapes are chosen now, on scratch outputs, so the first real call pays no tuning).
        A field parameter may be given as its domain (a ``Domain`` or ``{I: 64, K: (0, 80)}``):
        it then stands for a field the backend's allocator makes over that domain, which is
        what the calls must pass to use this plan. Returns ``self``; without arguments it only
        parses (and reports DSL errors).

        >>> run.compile({I: 256, J: 256}, {I: 256, J: 256}, offset_provider={})
        """
        if not args and not kwargs:
            _ = self.definition
            if self._deferred is not None:
                raise self._deferred
            return self
        if not args and all(isinstance(v, list) for v in kwargs.values()):
            return self._compile_static_variants(kwargs, offset_provider)
        flat = self._flat(args, kwargs, placeholders=True)
        stages_for = getattr(self._runner, "stages_for", None)  # None: a runner of a user's backend
        if stages_for is not None:
            stages_for(flat, offset_provider)
        return self

    def _compile_static_variants(
        self, static_args: dict[str, list[Any]], offset_provider: Mapping[str, Any] | None
    ) -> Program:
        """gt4py.next's ``compile(offset_provider=..., name=[value, ...])``: the values each
        scalar parameter will take. stencilkit checks them (names, scalar parameters, values of
        the parameter's dtype) and parses the program; it builds on the first call, where the
        fields' layout is known, and every call runs whatever value it is given (as gt4py does
        with ``enable_jit``, its default)."""
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
        return self

    def _placeholder_fields(self, flat: list[Any]) -> list[Any]:
        """``flat`` with each domain given for a field parameter replaced by a field of zeros over
        it, allocated as the backend allocates (zeros: index fields read by ``as_offset`` stay in
        range while kernels are timed)."""
        from .core.domain import Domain
        from .fields import zeros

        out = list(flat)
        for i, (p, v) in enumerate(zip(flat_params(self.definition.params), flat)):
            if isinstance(p.type, FieldType) and isinstance(v, Domain | Mapping):
                out[i] = zeros(v, p.type.dtype, allocator=self.backend)
        return out

    def inspect(
        self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> stages.Stages:
        """Every stage's artefact for arguments like these (``stencilkit.stages.Stages``), each
        printable with ``.as_text()``: ``program`` (IR), ``bound``, ``lowered``, ``planned`` and, on
        compiled backends, ``source``, ``built``, ``loaded``, ``launches`` (built ahead of time).

        >>> print(run.inspect(a, out, offset_provider={}).source.as_text())
        """
        flat = self._flat(args, kwargs)
        stages_for = getattr(self._runner, "stages_for", None)
        if stages_for is None:
            raise StencilTypeError(
                f"{self.__name__}.inspect(): the runner of backend {self.backend!r} has no stages"
            )
        found: stages.Stages = stages_for(flat, offset_provider)
        return found


class ProgramWithBoundArgs:
    """``prog.with_bound_args(factor=10.0)``: the program with some parameters fixed; call it
    with the remaining ones (positionally in their order, or by keyword)."""

    def __init__(self, program: Program, bound: dict[str, Any]) -> None:
        names = _param_names(program.__wrapped__)
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


def _param_names(fn: Callable[..., Any] | None) -> list[str]:
    import inspect

    return list(inspect.signature(fn).parameters) if fn is not None else []


class _Temporaries:
    """Allocates a program's temporaries: each over the domain of the output of the statement
    that consumes it, on that output's device; reused while that output's signature repeats."""

    def __init__(self, definition: ir.Program) -> None:
        self.flat = flat_params(definition.params)
        names = [p.name for p in self.flat]
        temp_names = {t.name for t in definition.temps}
        self.temps = definition.temps
        self.like: dict[str, int] = {}  # temporary -> flat index of the output it is shaped like
        body = definition.body

        def like(t: str) -> int:  # the output of the first statement reading it
            if t not in self.like:
                reader = next(
                    (
                        s
                        for s in body
                        if t not in {o.name for o in s.outs}
                        and any(isinstance(x, ir.Ref) and x.name == t for x in walk(s))
                    ),
                    None,
                )
                if reader is None:  # written, never read: like the writer's output
                    reader = next(
                        (
                            s
                            for s in body
                            if t in {o.name for o in s.outs}
                            and any(o.name not in temp_names for o in s.outs)
                        ),
                        body[-1],
                    )
                out = next((o.name for o in reader.outs if o.name not in temp_names), None)
                self.like[t] = names.index(out) if out is not None else like(reader.outs[0].name)
            return self.like[t]

        for t in definition.temps:
            like(t.name)
        self.cache: dict[tuple[str, Any], Any] = {}

    def fields(self, flat: list[Any]) -> list[Any]:
        from .fields import zeros

        result: list[Any] = []
        for t in self.temps:
            i = self.like[t.name]
            out = flat[i]
            if not hasattr(out, "domain"):
                try:  # a raw array given for the output: the runner wraps it the same way
                    out = wrap_arrays((self.flat[i],), [out], frozenset({self.flat[i].name}))[0]
                except Exception:
                    pass
            key = (t.name, getattr(out, "_sig", None))
            f = self.cache.get(key)
            if f is None:
                assert isinstance(t.type, FieldType)
                try:
                    dom = {
                        d: (out.domain.range_of(d).start, out.domain.range_of(d).stop)
                        for d in t.type.dims
                    }
                    f = zeros(dom, t.type.dtype, device=out.device)  # no garbage in unread parts
                except Exception:
                    result.append(None)  # the output is not a field: the runner reports that first
                    continue
                if key[1] is not None:
                    self.cache = {k: v for k, v in self.cache.items() if k[0] != t.name}
                    self.cache[key] = f
            result.append(f)
        return result


def program(
    definition: Callable[..., Any] | None = None,
    *,
    backend: Any = _DEFAULT,
    grid_type: Any = None,
    **options: Any,
) -> Any:
    """Decorate a function whose body calls field operators with ``out=`` (and ``domain=``).
    ``backend=`` omitted: ``stencilkit.config.DEFAULT_BACKEND`` (``None``, embedded), also set as
    gt4py's ``ffront.decorator.DEFAULT_BACKEND``.

    >>> @gtx.program(backend=gtx.cpu)
    ... def run(a: Field[Dims[I], float64], b: Field[Dims[I], float64]):
    ...     double(a, out=b)
    """
    check_decorator_keywords("program", options)
    chosen = _backend_arg(backend)

    def wrap(fn: Callable[..., Any]) -> Program:
        prog = Program(None, chosen, fn, grid_type)
        if _parse_now():
            _ = prog.definition
        return prog

    return wrap(definition) if definition is not None else wrap


class FieldOperator:
    """A field operator: call it from a program or field operator, or directly with ``out=``.
    It is parsed on first use (a call, ``.compile()``, ``.ir_text()``, or when another operator
    or a program uses it), so a module with one unsupported operator still imports."""

    def __init__(
        self,
        fn: Callable[..., Any],
        backend: Backend | None,
        scan: tuple[Any, ...] | None = None,
        parsed: tuple[ir.FieldOperator, SourceFunction] | None = None,
        grid_type: Any = None,
    ) -> None:
        self._parsed = parsed
        self.__stencilkit_scan__ = scan
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "field_operator")
        self.__doc__ = fn.__doc__
        self.backend = backend
        self.grid_type = grid_type
        self._programs: dict[Any, Program] = {}
        self._result_programs: dict[Any, ir.Program] = {}  # behind calls without out=

    def _parse(self) -> tuple[ir.FieldOperator, SourceFunction]:
        if self._parsed is None:
            self._parsed = parse_field_operator(self.__wrapped__)
        return self._parsed

    @property
    def definition(self) -> ir.FieldOperator:
        """The operator's IR (parsed on first access)."""
        return self._parse()[0]

    @property
    def _src(self) -> SourceFunction:
        return self._parse()[1]

    @property
    def __stencilkit_operator__(self) -> ir.FieldOperator:
        return self._parse()[0]

    @property
    def ir_text(self) -> IRText:
        """The operator's IR as text (``op.ir_text`` or ``op.ir_text()``); parses the operator,
        raising its DSL error if it has one."""
        return IRText(str(self.definition))

    def compile(self, *args: Any, **kwargs: Any) -> FieldOperator:
        """Parse now (reporting DSL errors); returns ``self``."""
        self._parse()
        return self

    def __repr__(self) -> str:
        return f"<stencilkit field_operator {self.__name__}>"

    def with_backend(self, backend: Backend | None) -> FieldOperator:
        """This operator run by ``backend`` (``None``: embedded) instead; the original is unchanged."""
        return type(self)(
            self.__wrapped__, backend, self.__stencilkit_scan__, self._parsed, self.grid_type
        )

    def with_grid_type(self, grid_type: Any) -> FieldOperator:
        """This operator with gt4py.next's ``grid_type`` recorded (``.grid_type``)."""
        return type(self)(
            self.__wrapped__, self.backend, self.__stencilkit_scan__, self._parsed, grid_type
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> FieldOperator:
        """``copy.deepcopy(op)`` (gt4py copies operators): the same operator, its IR shared
        (frozen), without the programs compiled for direct calls (they hold loaded libraries,
        which cannot be copied); the copy builds or loads them again on its first call."""
        return self.with_grid_type(self.grid_type)

    def _positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Keyword arguments placed after the positional ones, in parameter order (the carry of a
        scan is not a parameter of the call)."""
        if not kwargs:
            return args
        names = _param_names(self.__wrapped__)[1 if self.__stencilkit_scan__ else 0 :]
        if len(args) > len(names):
            raise TypeError(
                f"{self.__name__}() takes {len(names)} arguments but {len(args)} were given"
            )
        for k in kwargs:
            if k not in names:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument '{k}'")
            if names.index(k) < len(args):
                raise TypeError(f"{self.__name__}() got multiple values for argument '{k}'")
        missing = [n for n in names[len(args) :] if n not in kwargs]
        if missing:
            raise TypeError(
                f"{self.__name__}() missing {len(missing)} required argument(s): "
                + ", ".join(f"'{m}'" for m in missing)
            )
        return (*args, *(kwargs[n] for n in names[len(args) :]))

    def __call__(
        self,
        *args: Any,
        out: Any = None,
        domain: Any = None,
        offset_provider: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        if out is None:
            raise MissingOutError(
                "Expected keyword-argument 'out'.",
                hint=f"call {self.__name__}(..., out=result_field); or use {self.__name__}.returning(...)"
                " to get new fields over the domain where the result is defined",
            )
        args = self._positional(args, kwargs)
        prog = self._program_for(args, out, domain)
        dom_args = _domain_args(domain)
        prog(*args, out, *dom_args, offset_provider=offset_provider)
        return None

    def returning(
        self,
        *args: Any,
        domain: Any = None,
        offset_provider: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Call without ``out=`` (a stencilkit extension): the result in new fields over ``domain``
        if given, else over the largest domain where every read stays inside the arguments, on
        the arguments' device.

        >>> r = lap.returning(a, offset_provider={})
        """
        args = self._positional(args, kwargs)
        out = self._allocate_result(args, domain, offset_provider)
        self(*args, out=out, domain=domain, offset_provider=offset_provider)
        return out

    def _result_type(self, arg_types: tuple[TypeSpec, ...]) -> TypeSpec:
        scan = self.__stencilkit_scan__
        if scan is None:
            return self.definition.body.type
        params = self.definition.params[1:]
        try:
            call = scan_call(
                self.definition, scan, [ir.Ref(p.name, t) for p, t in zip(params, arg_types)]
            )
        except TypingError as err:
            raise StencilTypeError(f"{self.__name__}(): {err.message}", hint=err.hint) from None
        return call.type

    def _allocate_result(
        self, args: tuple[Any, ...], domain: Any, offset_provider: Mapping[str, Any] | None
    ) -> Any:
        """New fields for the result of a call without ``out=``: over ``domain`` if given, else
        over the largest domain where every read stays inside the arguments, on their device."""
        arg_types = tuple(_type_of_value(a) for a in args)
        rtype = self._result_type(arg_types)
        leaves = _leaves(rtype)
        if not leaves or not all(isinstance(t, FieldType) for t in leaves):
            raise StencilTypeError(
                f"{self.__name__}() returns {rtype}: call it with out= or from another operator"
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
            raise StencilTypeError(
                f"{self.__name__}() without out= needs at least one field argument"
            )
        if domain is not None:  # one domain, or one per element
            from .core.domain import domain as make_domain

            given = [make_domain(d) for d in _domain_leaves(domain)]
            per_leaf = [{dim: (r.start, r.stop) for dim, r in zip(d.dims, d.ranges)} for d in given]
            if len(per_leaf) == 1:
                per_leaf *= len(leaves)
            elif len(per_leaf) != len(leaves):
                raise StencilTypeError(
                    f"{self.__name__}(): domain= gives {len(per_leaf)} domains for"
                    f" {len(leaves)} results",
                    hint="give one domain, or one per result",
                )
        else:
            per_leaf = [
                self._inferred_domain(args, arg_types, rtype, dims, tables, offset_provider)
            ] * len(leaves)
        from .fields import empty

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

    def _inferred_domain(
        self,
        args: tuple[Any, ...],
        arg_types: tuple[TypeSpec, ...],
        rtype: TypeSpec,
        dims: tuple[Dimension, ...],
        tables: dict[str, Any],
        offset_provider: Mapping[str, Any] | None,
    ) -> dict[Dimension, tuple[int, int]]:
        from .ir.extents import output_domain
        from .stages.binding import table_infos

        key = (arg_types, rtype)
        prog = self._result_programs.get(key)
        if prog is None:  # kept: the lowering cache knows programs by identity
            prog = self._result_programs[key] = self._direct_program(arg_types, rtype, ())
        sprog = stages.lower(prog, table_infos(offset_provider, prog)).stencil
        values = flatten_args(prog.params[: len(args)], args, {}, self.__name__)
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
                f"{self.__name__}(): cannot tell the result's range along {', '.join(map(str, missing))}"
                " from the arguments",
                hint="pass out= (or domain=)",
            )
        return {d: (found[d].start, found[d].stop) for d in dims}

    def _program_for(self, args: tuple[Any, ...], out: Any, domain: Any) -> Program:
        out_type = _type_of_value(out)
        arg_types = tuple(_type_of_value(a) for a in args)
        alias = _aliases(args, out)
        key = (out_type, _domain_key(domain), arg_types, alias)
        prog = self._programs.get(key)
        if prog is None:
            prog = Program(
                self._direct_program(arg_types, out_type, key[1], alias),
                self.backend,
                self.__wrapped__,
            )
            self._programs[key] = prog
        return prog

    def _direct_program(
        self,
        arg_types: tuple[TypeSpec, ...],
        out_type: TypeSpec,
        dom_key: tuple[tuple[Dimension, ...], ...],
        alias: tuple[tuple[int, int], ...] = (),
    ) -> ir.Program:
        """The program behind a direct call; ``dom_key`` lists the dimensions of each domain given
        (none; one for every output; or one per output), passed as ``__dom{i}_{dim}_lo/hi``.
        ``alias``: (argument leaf, output leaf) pairs that are the same field (``op(q, out=q)``):
        the operator reads the output there, as a program statement ``op(q, out=q)`` does."""
        params = self.definition.params[1:] if self.__stencilkit_scan__ else self.definition.params
        if len(arg_types) != len(params):
            raise StencilTypeError(
                f"{self.__name__}() takes {len(params)} arguments, got {len(arg_types)}"
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
                f"{self.__name__}(): domain= gives {len(domains)} domains for {len(outs)}"
                " output fields",
                hint="give one domain, or one per output field",
            )
        user_params = tuple(ir.Param(p.name, t) for p, t in zip(params, arg_types))
        targets = {a: outs[o] for a, o in alias}
        counter = iter(range(1 << 30))
        args = [_arg_expr(ir.Ref(p.name, p.type), targets, counter) for p in user_params]
        stmts, temps = build_apply(
            self,
            args,
            outs,
            domains,
            self._src,
            self._src.tree,
            _NoBuilder(self),  # type: ignore[arg-type]
            may_alias=True,
        )
        return ir.Program(
            self.__name__, (*user_params, out_p, *dom_params), tuple(stmts), tuple(temps)
        )


class _NoBuilder:
    """Argument checks for direct calls, where arguments are already typed values."""

    def __init__(self, op: FieldOperator) -> None:
        self.op = op

    def check_arg(self, node: Any, arg: ir.Expr, p: ir.Param, callee: str) -> ir.Expr:
        if (
            isinstance(p.type, FieldType)
            and not p.type.dims
            and arg.type == ScalarType(p.type.dtype)
        ):
            return arg  # a scalar for a 0-d field
        if arg.type != p.type:
            raise StencilTypeError(
                f"{callee}(): argument '{p.name}' must be {p.type}, got {arg.type}"
            )
        return arg


def _extent(value: Any) -> Any:
    dom = getattr(value, "domain", None)
    return tuple(dom.items()) if dom is not None else getattr(value, "shape", None)


def _aliases(args: tuple[Any, ...], out: Any) -> tuple[tuple[int, int], ...]:
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
        return bool(a._ptr == b._ptr and a._sig == b._sig)
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


def _type_of_value(v: Any) -> TypeSpec:
    v = collection_values(v)
    if isinstance(v, tuple | list):
        return TupleType(tuple(_type_of_value(x) for x in v))
    if hasattr(v, "domain") and hasattr(v, "dtype"):
        return FieldType(tuple(v.domain.dims), v.dtype.name)
    scalar = scalar_type_of_value(v)
    if scalar is not None:
        return scalar
    raise StencilTypeError(f"cannot pass a {type(v).__name__} to a field operator")


def _domain_leaves(domain: Any) -> list[Any]:
    """The domains in ``domain=``: one, or a (nested) tuple of them, one per output field."""
    from .core.domain import Domain

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


def _domain_key(domain: Any) -> tuple[tuple[Dimension, ...], ...]:
    from .core.domain import domain as make_domain

    try:
        return tuple(tuple(make_domain(d).dims) for d in _domain_leaves(domain))
    except TypeError as err:
        raise StencilTypeError(f"domain=: {err}") from None


def _domain_args(domain: Any) -> list[int]:
    from .core.domain import domain as make_domain

    return [
        x for d in _domain_leaves(domain) for r in make_domain(d).ranges for x in (r.start, r.stop)
    ]


def field_operator(
    definition: Callable[..., Any] | None = None,
    *,
    backend: Any = _DEFAULT,
    grid_type: Any = None,
    **options: Any,
) -> Any:
    """Decorate a function of fields and scalars returning a field (or tuple of fields).
    ``backend=`` omitted: ``stencilkit.config.DEFAULT_BACKEND`` (``None``, embedded), also set as
    gt4py's ``ffront.decorator.DEFAULT_BACKEND``.

    >>> @gtx.field_operator
    ... def lap(a: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    ...     return -4.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)
    """
    check_decorator_keywords("field_operator", options)
    chosen = _backend_arg(backend)

    def wrap(fn: Callable[..., Any]) -> FieldOperator:
        op = FieldOperator(fn, chosen, grid_type=grid_type)
        if _parse_now():
            op._parse()
        return op

    return wrap(definition) if definition is not None else wrap


def scan_operator(
    definition: Callable[..., Any] | None = None,
    *,
    axis: Dimension,
    forward: bool = True,
    init: Any = 0.0,
    backend: Any = _DEFAULT,
    grid_type: Any = None,
    **options: Any,
) -> Any:
    """Decorate ``f(carry, *values) -> new carry``, applied level by level along ``axis``.

    >>> @gtx.scan_operator(axis=K, forward=True, init=0.0)
    ... def cumsum(carry: float, x: float) -> float:
    ...     return carry + x
    """
    check_decorator_keywords("scan_operator", options)
    if not isinstance(axis, Dimension):
        raise StencilTypeError(
            f"scan_operator(axis=...) must be a Dimension, got {axis!r}", hint="e.g. axis=K"
        )
    if not isinstance(forward, bool):
        raise StencilTypeError(f"scan_operator(forward=...) must be True or False, got {forward!r}")

    def wrap(fn: Callable[..., Any]) -> FieldOperator:
        parsed = parse_field_operator(fn)
        scan = (axis, forward, scan_init(fn, *parsed, _plain_values(init)))
        return FieldOperator(fn, _backend_arg(backend), scan, parsed, grid_type)

    return wrap(definition) if definition is not None else wrap


def _plain_values(v: Any) -> Any:
    """``init=`` with named-collection instances (dataclasses) turned into tuples, at any depth."""
    v = collection_values(v)
    return tuple(_plain_values(x) for x in v) if isinstance(v, tuple) else v
