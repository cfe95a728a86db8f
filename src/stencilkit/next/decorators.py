"""``@field_operator``, ``@scan_operator`` and ``@program``: the gt4py.next language's entry points.
``backend=`` omitted: ``stencilkit.config.DEFAULT_BACKEND``, read at decoration.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .. import config
from ..backends import Backend
from ..core.dims import Dimension
from ..core.errors import StencilTypeError
from ..core.tracebacks import api_boundary
from .decoration import check_at_decoration
from .decorator_keywords import check_decorator_keywords
from .operator import FieldOperator
from .parse import parse_field_operator
from .program import Program
from .scans import scan_init


class _DefaultBackend:
    """``backend=`` omitted: take ``stencilkit.config.DEFAULT_BACKEND`` (which
    ``stencilkit.ffront.decorator.DEFAULT_BACKEND`` sets, gt4py's name) at decoration."""

    def __repr__(self) -> str:
        return "<DEFAULT_BACKEND>"


_DEFAULT: Any = _DefaultBackend()


def _backend_arg(backend: Any) -> Backend | None:
    if backend is _DEFAULT:
        chosen: Backend | None = config.DEFAULT_BACKEND
        return chosen
    return backend  # type: ignore[no-any-return]


@api_boundary
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

    @api_boundary
    def wrap(fn: Callable[..., Any]) -> Program:
        prog = Program(None, chosen, fn, grid_type)
        compilation = {k: v for k, v in options.items() if k != "frozen"}
        if compilation:  # @program(enable_jit=False, static_params=[...]), as gt4py takes them
            prog.compilation_options = dataclasses.replace(prog.compilation_options, **compilation)
        check_at_decoration(fn, lambda: prog.definition)
        return prog

    return wrap(definition) if definition is not None else wrap


@api_boundary
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

    @api_boundary
    def wrap(fn: Callable[..., Any]) -> FieldOperator:
        op = FieldOperator(fn, chosen, grid_type=grid_type)
        check_at_decoration(fn, op._parse)
        return op

    return wrap(definition) if definition is not None else wrap


@api_boundary
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

    @api_boundary
    def wrap(fn: Callable[..., Any]) -> FieldOperator:
        parsed = parse_field_operator(fn)
        scan = (axis, forward, scan_init(fn, *parsed, init))
        return FieldOperator(fn, _backend_arg(backend), scan, parsed, grid_type)

    return wrap(definition) if definition is not None else wrap
