"""``@field_operator``, ``@scan_operator`` and ``@program``: the user-facing entry points.

The pipeline, stage by stage: parse (at decoration, so errors show up early) -> bind arguments
-> lower -> generate -> build -> load -> call; the last five happen once per argument signature
inside the backend's runner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .backends import Backend, embedded_runner
from .backends.binding import flatten_args, wrap_arrays
from .core.dims import Dimension
from .core.errors import StencilTypeError
from .core.types import FieldType, ScalarType, TupleType, TypeSpec
from .frontend.parse import ProgramParser, build_apply, parse_field_operator
from .frontend.scans import scan_call
from .frontend.source import SourceFunction
from .frontend.typing_rules import TypingError
from .ir import nodes as ir
from .ir.lower import flat_params


def _runner(program: ir.Program, backend: Backend | None) -> Any:
    flat = flat_params(program.params + program.temps)
    if backend is None:
        return embedded_runner(program, flat)
    if not isinstance(backend, Backend):
        raise StencilTypeError(f"backend must be None, gtx.cpu or gtx.gpu, got {backend!r}")
    return backend.runner(program, flat)


class Program:
    """A compiled-on-first-call program; call it with fields and ``offset_provider=``."""

    def __init__(self, definition: ir.Program, backend: Backend | None, fn: Callable[..., Any] | None = None) -> None:
        self.definition = definition
        self.backend = backend
        self.__wrapped__ = fn
        self.__name__ = definition.name
        self.__doc__ = getattr(fn, "__doc__", None)
        self._runner = _runner(definition, backend)
        self._simple = not any(isinstance(p.type, TupleType) for p in definition.params) and not definition.temps
        self._nparams = len(definition.params)
        self._temps = _Temporaries(definition) if definition.temps else None

    def __repr__(self) -> str:
        return f"<stencilkit program {self.definition.name} on {self.backend or 'embedded'}>"

    @property
    def ir_text(self) -> str:
        """The program's IR as text."""
        return str(self.definition)

    def with_backend(self, backend: Backend | None) -> Program:
        return Program(self.definition, backend, self.__wrapped__)

    def __call__(self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        if self._simple and not kwargs and len(args) == self._nparams:
            self._runner(list(args), offset_provider)  # the common case, kept short
            return
        self._runner(self._flat(args, kwargs), offset_provider)

    def _flat(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """The runner's arguments: flattened, with the temporaries appended."""
        flat = flatten_args(self.definition.params, args, kwargs, self.definition.name)
        if self._temps is not None:
            flat.extend(self._temps.fields(flat))
        return flat

    def compile(self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any) -> Program:
        """Build ahead of time for arguments like these (nothing runs); returns ``self``."""
        flat = self._flat(args, kwargs)
        plan_of = getattr(self._runner, "plan_for", None)
        if plan_of is not None:
            plan_of(flat, offset_provider)
        return self

    def inspect(self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any) -> dict[str, str]:
        """The stages for arguments like these: ``ir``, ``stencil_ir`` and, on compiled backends, ``source``."""
        flat = self._flat(args, kwargs)
        out = {"ir": str(self.definition)}
        plan_of = getattr(self._runner, "plan_for", None)
        if plan_of is not None:
            plan = plan_of(flat, offset_provider)
            out["stencil_ir"] = str(plan.sprog)
            out["source"] = plan.loaded.source
        return out


class _Temporaries:
    """Allocates a program's temporaries: each over the domain of the output of the statement
    that consumes it, on that output's device; reused while that output's signature repeats."""

    def __init__(self, definition: ir.Program) -> None:
        self.flat = flat_params(definition.params)
        names = [p.name for p in self.flat]
        temp_names = {t.name for t in definition.temps}
        self.temps = definition.temps
        self.like: dict[str, int] = {}  # temporary -> flat index of the output it is shaped like
        pending: list[str] = []
        for stmt in definition.body:
            written = [o.name for o in stmt.outs]
            if all(w in temp_names for w in written):
                pending.extend(written)
                continue
            for t in pending:
                self.like[t] = names.index(written[0])
            pending = []
        self.cache: dict[tuple[str, Any], Any] = {}

    def fields(self, flat: list[Any]) -> list[Any]:
        from .fields import empty

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
                    dom = {d: (out.domain[d].start, out.domain[d].stop) for d in t.type.dims}
                    f = empty(dom, t.type.dtype, device=out.device)
                except Exception:
                    result.append(None)  # the output is not a field: the runner reports that first
                    continue
                if key[1] is not None:
                    self.cache = {k: v for k, v in self.cache.items() if k[0] != t.name}
                    self.cache[key] = f
            result.append(f)
        return result


def program(definition: Callable[..., Any] | None = None, *, backend: Backend | None = None,
            grid_type: Any = None, **_ignored: Any) -> Any:
    """Decorate a function whose body calls field operators with ``out=`` (and ``domain=``).

    >>> @gtx.program(backend=gtx.cpu)
    ... def run(a: Field[Dims[I], float64], b: Field[Dims[I], float64]):
    ...     double(a, out=b)
    """
    def wrap(fn: Callable[..., Any]) -> Program:
        return Program(ProgramParser(fn).parse(), backend, fn)

    return wrap(definition) if definition is not None else wrap


class FieldOperator:
    """A field operator: call it from a program or field operator, or directly, with ``out=`` or
    without (then it returns new fields over the domain where the result is defined)."""

    def __init__(self, fn: Callable[..., Any], backend: Backend | None, scan: tuple[Any, ...] | None = None,
                 parsed: tuple[ir.FieldOperator, SourceFunction] | None = None) -> None:
        self.definition, self._src = parsed or parse_field_operator(fn)
        self.__stencilkit_operator__ = self.definition
        self.__stencilkit_scan__ = scan
        self.__wrapped__ = fn
        self.__name__ = self.definition.name
        self.__doc__ = fn.__doc__
        self.backend = backend
        self._programs: dict[Any, Program] = {}

    def __repr__(self) -> str:
        return f"<stencilkit field_operator {self.__name__}>"

    def with_backend(self, backend: Backend | None) -> FieldOperator:
        return type(self)(self.__wrapped__, backend, self.__stencilkit_scan__, (self.definition, self._src))

    def __call__(self, *args: Any, out: Any = None, domain: Any = None,
                 offset_provider: Mapping[str, Any] | None = None) -> Any:
        if out is None:
            out = self._allocate_result(args, domain, offset_provider)
            self(*args, out=out, domain=domain, offset_provider=offset_provider)
            return out
        prog = self._program_for(args, out, domain)
        dom_args = _domain_args(domain)
        prog(*args, out, *dom_args, offset_provider=offset_provider)
        return None

    def _result_type(self, arg_types: tuple[TypeSpec, ...]) -> TypeSpec:
        scan = self.__stencilkit_scan__
        if scan is None:
            return self.definition.body.type
        params = self.definition.params[1:]
        try:
            call = scan_call(self.definition, scan, [ir.Ref(p.name, t) for p, t in zip(params, arg_types)])
        except TypingError as err:
            raise StencilTypeError(f"{self.__name__}(): {err.message}", hint=err.hint) from None
        return call.type

    def _allocate_result(self, args: tuple[Any, ...], domain: Any, offset_provider: Mapping[str, Any] | None) -> Any:
        """New fields for the result of a call without ``out=``: over ``domain`` if given, else
        over the largest domain where every read stays inside the arguments, on their device."""
        arg_types = tuple(_type_of_value(a) for a in args)
        rtype = self._result_type(arg_types)
        leaves = _leaves(rtype)
        if not leaves or not all(isinstance(t, FieldType) for t in leaves):
            raise StencilTypeError(f"{self.__name__}() returns {rtype}: call it with out= or from another operator")
        dims = leaves[0].dims  # type: ignore[union-attr]
        fields = [a for a in _leaves_of(args) if hasattr(a, "domain") and hasattr(a, "device")]
        tables = {k: v for k, v in (offset_provider or {}).items() if hasattr(v, "domain") and hasattr(v, "device")}
        devices = [f.device for f in fields] or [t.device for t in tables.values()]
        if not devices:
            raise StencilTypeError(f"{self.__name__}() without out= needs at least one field argument")
        if domain is not None:
            from .core.domain import domain as make_domain

            d = make_domain(domain)
            ranges = {dim: (r.start, r.stop) for dim, r in zip(d.dims, d.ranges)}
        else:
            ranges = self._inferred_domain(args, arg_types, rtype, dims, tables, offset_provider)
        from .fields import empty

        def alloc(t: TypeSpec) -> Any:
            if isinstance(t, TupleType):
                return tuple(alloc(s) for s in t.types)
            assert isinstance(t, FieldType)
            return empty({d: ranges[d] for d in t.dims}, t.dtype, device=devices[0])

        return alloc(rtype)

    def _inferred_domain(self, args: tuple[Any, ...], arg_types: tuple[TypeSpec, ...], rtype: TypeSpec,
                         dims: tuple[Dimension, ...], tables: dict[str, Any],
                         offset_provider: Mapping[str, Any] | None) -> dict[Dimension, tuple[int, int]]:
        from .backends.binding import table_infos
        from .ir.extents import output_domain
        from .ir.lower import lower_program

        prog = self._direct_program(arg_types, rtype, ())
        sprog = lower_program(prog, table_infos(offset_provider, prog))
        values = flatten_args(prog.params[:len(args)], args, {}, self.__name__)
        flat = flat_params(prog.params[:len(args)])
        have = {p.name: {d: v.domain[d] for d in v.domain.dims} for p, v in zip(flat, values)
                if isinstance(p.type, FieldType) and hasattr(v, "domain")}
        have.update({t: {d: v.domain[d] for d in v.domain.dims} for t, v in tables.items()})
        dims_of = {p.name: p.type.dims for p in sprog.params if isinstance(p.type, FieldType)}
        dims_of.update({t: tuple(v.domain.dims) for t, v in tables.items()})
        found = output_domain(sprog.kernels, dims, have, dims_of)
        missing = [d for d in dims if d not in found]
        if missing:
            raise StencilTypeError(
                f"{self.__name__}(): cannot tell the result's range along {', '.join(map(str, missing))}"
                " from the arguments", hint="pass out= (or domain=)")
        return {d: (found[d].start, found[d].stop) for d in dims}

    def _program_for(self, args: tuple[Any, ...], out: Any, domain: Any) -> Program:
        out_type = _type_of_value(out)
        if not (domain is None or hasattr(domain, "dims") or isinstance(domain, Mapping)):
            raise StencilTypeError(f"{self.__name__}(): domain= must be a dict {{Dimension: (start, stop)}} or a"
                                   f" gtx.Domain, got {type(domain).__name__}")
        dom_dims = tuple(domain.dims if hasattr(domain, "dims") else domain) if domain is not None else ()
        arg_types = tuple(_type_of_value(a) for a in args)
        key = (out_type, dom_dims, arg_types)
        prog = self._programs.get(key)
        if prog is None:
            prog = Program(self._direct_program(arg_types, out_type, dom_dims), self.backend, self.__wrapped__)
            self._programs[key] = prog
        return prog

    def _direct_program(self, arg_types: tuple[TypeSpec, ...], out_type: TypeSpec, dom_dims: tuple[Dimension, ...]) -> ir.Program:
        params = self.definition.params[1:] if self.__stencilkit_scan__ else self.definition.params
        if len(arg_types) != len(params):
            raise StencilTypeError(f"{self.__name__}() takes {len(params)} arguments, got {len(arg_types)}")
        out_p = ir.Param("__out", out_type)
        dom_params = [ir.Param(f"__dom_{d.value}_{e}", ScalarType("int64")) for d in dom_dims for e in ("lo", "hi")]
        outs = tuple(ir.Ref(p.name, p.type) for p in flat_params((out_p,)))
        domain = tuple(ir.DomainRange(d, ir.Ref(f"__dom_{d.value}_lo", ScalarType("int64")),
                                      ir.Ref(f"__dom_{d.value}_hi", ScalarType("int64"))) for d in dom_dims)
        user_params = tuple(ir.Param(p.name, t) for p, t in zip(params, arg_types))
        args = [ir.Ref(p.name, p.type) for p in user_params]
        stmts, temps = build_apply(self, args, outs, domain, self._src, self._src.tree, _NoBuilder(self))  # type: ignore[arg-type]
        return ir.Program(self.__name__, (*user_params, out_p, *dom_params), tuple(stmts), tuple(temps))


class _NoBuilder:
    """Argument checks for direct calls, where arguments are already typed values."""

    def __init__(self, op: FieldOperator) -> None:
        self.op = op

    def check_arg(self, node: Any, arg: ir.Expr, p: ir.Param, callee: str) -> ir.Expr:
        if arg.type != p.type:
            raise StencilTypeError(f"{callee}(): argument '{p.name}' must be {p.type}, got {arg.type}")
        return arg


def _leaves(t: TypeSpec) -> list[TypeSpec]:
    return [x for s in t.types for x in _leaves(s)] if isinstance(t, TupleType) else [t]


def _leaves_of(v: Any) -> list[Any]:
    return [x for s in v for x in _leaves_of(s)] if isinstance(v, tuple | list) else [v]


def _type_of_value(v: Any) -> TypeSpec:
    if isinstance(v, tuple | list):
        return TupleType(tuple(_type_of_value(x) for x in v))
    if hasattr(v, "domain") and hasattr(v, "dtype"):
        return FieldType(tuple(v.domain.dims), v.dtype.name)
    import numpy as np

    if isinstance(v, np.generic):
        return ScalarType(v.dtype.name)
    if isinstance(v, bool):
        return ScalarType("bool")
    if isinstance(v, int):
        return ScalarType("int32")
    if isinstance(v, float):
        return ScalarType("float64")
    raise StencilTypeError(f"cannot pass a {type(v).__name__} to a field operator")


def _domain_args(domain: Any) -> list[int]:
    if domain is None:
        return []
    from .core.domain import domain as make_domain

    d = make_domain(domain)
    return [x for r in d.ranges for x in (r.start, r.stop)]


def field_operator(definition: Callable[..., Any] | None = None, *, backend: Backend | None = None,
                   grid_type: Any = None, **_ignored: Any) -> Any:
    """Decorate a function of fields and scalars returning a field (or tuple of fields).

    >>> @gtx.field_operator
    ... def lap(a: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    ...     return -4.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)
    """
    def wrap(fn: Callable[..., Any]) -> FieldOperator:
        return FieldOperator(fn, backend)

    return wrap(definition) if definition is not None else wrap


def scan_operator(definition: Callable[..., Any] | None = None, *, axis: Dimension, forward: bool = True,
                  init: Any = 0.0, backend: Backend | None = None, grid_type: Any = None) -> Any:
    """Decorate ``f(carry, *values) -> new carry``, applied level by level along ``axis``.

    >>> @gtx.scan_operator(axis=K, forward=True, init=0.0)
    ... def cumsum(carry: float, x: float) -> float:
    ...     return carry + x
    """
    from .frontend.expressions import literal

    if not isinstance(axis, Dimension):
        raise StencilTypeError(f"scan_operator(axis=...) must be a Dimension, got {axis!r}", hint="e.g. axis=K")
    if not isinstance(forward, bool):
        raise StencilTypeError(f"scan_operator(forward=...) must be True or False, got {forward!r}")

    def init_expr(v: Any, t: TypeSpec) -> ir.Expr:
        if isinstance(t, TupleType):
            if not isinstance(v, tuple) or len(v) != len(t.types):
                raise StencilTypeError(f"init= of a scan with carry {t} must be a tuple of {len(t.types)}")
            elems = tuple(init_expr(x, s) for x, s in zip(v, t.types))
            return ir.MakeTuple(elems, t)
        if isinstance(v, tuple):
            raise StencilTypeError(f"init={v!r} is a tuple of {len(v)}, but the scan's carry is {t}",
                                   hint="give one init value per carry element, or annotate the carry as a tuple")
        try:
            lit = literal(v)
        except TypeError:
            raise StencilTypeError(f"init={v!r} is not a value of the scan's carry type {t}") from None
        import numpy as np

        if not isinstance(t, ScalarType):
            raise StencilTypeError(f"the carry of a scan must be scalars or a tuple of scalars, not {t}")
        return ir.Literal(np.dtype(t.dtype).type(lit.value).item(), t)

    def wrap(fn: Callable[..., Any]) -> FieldOperator:
        parsed = parse_field_operator(fn)
        carry_t = parsed[0].params[0].type if parsed[0].params else None
        if carry_t is None:
            raise StencilTypeError(f"scan operator {fn.__name__} needs a carry parameter first")
        if carry_t != parsed[0].body.type:
            raise StencilTypeError(f"scan operator {fn.__name__} must return its carry type {carry_t}, returns {parsed[0].body.type}")
        return FieldOperator(fn, backend, (axis, forward, init_expr(init, carry_t)), parsed)

    return wrap(definition) if definition is not None else wrap
