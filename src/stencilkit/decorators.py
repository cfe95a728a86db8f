"""``@field_operator``, ``@scan_operator`` and ``@program``: the user-facing entry points.

The pipeline, stage by stage: parse (at decoration, so errors show up early) -> bind arguments
-> lower -> generate -> build -> load -> call; the last five happen once per argument signature
inside the backend's runner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .backends import Backend, embedded_runner
from .backends.binding import flatten_args
from .core.dims import Dimension
from .core.errors import StencilTypeError
from .core.types import FieldType, ScalarType, TupleType, TypeSpec
from .frontend.parse import ProgramParser, build_apply, parse_field_operator
from .frontend.source import SourceFunction
from .ir import nodes as ir
from .ir.lower import flat_params


def _runner(program: ir.Program, backend: Backend | None) -> Any:
    flat = flat_params(program.params)
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
        self._simple = not any(isinstance(p.type, TupleType) for p in definition.params)
        self._nparams = len(definition.params)

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
        flat = flatten_args(self.definition.params, args, kwargs, self.definition.name)
        self._runner(flat, offset_provider)

    def compile(self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any) -> Program:
        """Build ahead of time for arguments like these (nothing runs); returns ``self``."""
        flat = flatten_args(self.definition.params, args, kwargs, self.definition.name)
        plan_of = getattr(self._runner, "plan_for", None)
        if plan_of is not None:
            plan_of(flat, offset_provider)
        return self

    def inspect(self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any) -> dict[str, str]:
        """The stages for arguments like these: ``ir``, ``stencil_ir`` and, on compiled backends, ``source``."""
        flat = flatten_args(self.definition.params, args, kwargs, self.definition.name)
        out = {"ir": str(self.definition)}
        plan_of = getattr(self._runner, "plan_for", None)
        if plan_of is not None:
            plan = plan_of(flat, offset_provider)
            out["stencil_ir"] = str(plan.sprog)
            out["source"] = plan.loaded.source
        return out


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
    """A field operator: call it from a program or field operator, or directly with ``out=``."""

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
            raise StencilTypeError(
                f"{self.__name__}() called outside a program needs out=",
                hint=f"{self.__name__}(..., out=result_field, offset_provider={{...}})")
        prog = self._program_for(args, out, domain)
        dom_args = _domain_args(domain)
        prog(*args, out, *dom_args, offset_provider=offset_provider)
        return None

    def _program_for(self, args: tuple[Any, ...], out: Any, domain: Any) -> Program:
        out_type = _type_of_value(out)
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
        out_ref = ir.Ref("__out", out_type)
        outs_expr: ir.Expr = out_ref
        if isinstance(out_type, TupleType):
            outs_expr = ir.MakeTuple(tuple(ir.TupleGet(out_ref, i, t) for i, t in enumerate(out_type.types)), out_type)
        from .frontend.parse import _flatten_refs

        outs = _flatten_refs(outs_expr) or ()
        outs = tuple(ir.Ref(f"__out__{i}", o.type) if isinstance(out_type, TupleType) else o for i, o in enumerate(outs))
        domain = tuple(ir.DomainRange(d, ir.Ref(f"__dom_{d.value}_lo", ScalarType("int64")),
                                      ir.Ref(f"__dom_{d.value}_hi", ScalarType("int64"))) for d in dom_dims)
        user_params = tuple(ir.Param(p.name, t) for p, t in zip(params, arg_types))
        args = [ir.Ref(p.name, p.type) for p in user_params]
        apply = build_apply(self, args, outs, domain, self._src, self._src.tree, _NoBuilder(self))  # type: ignore[arg-type]
        return ir.Program(self.__name__, (*user_params, out_p, *dom_params), (apply,))


class _NoBuilder:
    """Argument checks for direct calls, where arguments are already typed values."""

    def __init__(self, op: FieldOperator) -> None:
        self.op = op

    def check_arg(self, node: Any, arg: ir.Expr, p: ir.Param, callee: str) -> ir.Expr:
        if arg.type != p.type:
            raise StencilTypeError(f"{callee}(): argument '{p.name}' must be {p.type}, got {arg.type}")
        return arg


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

    def init_expr(v: Any, t: TypeSpec) -> ir.Expr:
        if isinstance(t, TupleType):
            if not isinstance(v, tuple) or len(v) != len(t.types):
                raise StencilTypeError(f"init= of a scan with carry {t} must be a tuple of {len(t.types)}")
            elems = tuple(init_expr(x, s) for x, s in zip(v, t.types))
            return ir.MakeTuple(elems, t)
        lit = literal(v)
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
