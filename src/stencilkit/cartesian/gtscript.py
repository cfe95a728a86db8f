"""``gtscript``: GTScript, gt4py.cartesian's stencil language, on stencilkit's engine.

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import Field, computation, interval, PARALLEL

@gtscript.stencil(backend="numpy")
def lap(a: Field[float], out: Field[float]):
    with computation(PARALLEL), interval(...):
        out = a[1, 0, 0] + a[-1, 0, 0] + a[0, 1, 0] + a[0, -1, 0] - 4.0 * a
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.tracebacks import api_boundary
from .axes import IJ, IJK, IK, JK, Axis, AxisIndex, I, J, K
from .build import build_stencil
from .language import (
    BACKWARD,
    FORWARD,
    INLINED,
    PARALLEL,
    Field,
    GTScriptFunction,
    _FieldDescriptor,
    _FieldDescriptorMaker,
    builtins,
    compile_assert,
    computation,
    data_dims_of,
    function,
    horizontal,
    interval,
    region,
)
from .stencil_object import FrozenStencil, StencilObject

__INLINED = INLINED
int32 = np.int32
int64 = np.int64
float32 = np.float32
float64 = np.float64
Sequence = typing.Sequence
externals = types.SimpleNamespace()  # ``from __externals__ import ...`` names this module

abs = builtins["abs"]
min = builtins["min"]
max = builtins["max"]
mod = builtins["mod"]
sin, cos, tan = builtins["sin"], builtins["cos"], builtins["tan"]
asin, acos, atan = builtins["asin"], builtins["acos"], builtins["atan"]
sinh, cosh, tanh = builtins["sinh"], builtins["cosh"], builtins["tanh"]
asinh, acosh, atanh = builtins["asinh"], builtins["acosh"], builtins["atanh"]
sqrt, exp, log, log10 = builtins["sqrt"], builtins["exp"], builtins["log"], builtins["log10"]
gamma, cbrt = builtins["gamma"], builtins["cbrt"]
isfinite, isinf, isnan = builtins["isfinite"], builtins["isinf"], builtins["isnan"]
floor, ceil, trunc = builtins["floor"], builtins["ceil"], builtins["trunc"]
erf, erfc = builtins["erf"], builtins["erfc"]
round = builtins["round"]
round_away_from_zero = builtins["round_away_from_zero"]


@api_boundary
def stencil(
    backend: str | None = None,
    definition: Callable[..., Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Build a GTScript stencil for ``backend``: ``@stencil(backend="numpy")``,
    ``@stencil("gt:cpu_ifirst", externals={...})`` or ``stencil(backend, definition=f)``."""
    if callable(backend) and definition is None:
        raise TypeError("gtscript.stencil needs a backend: @gtscript.stencil(backend='numpy')")
    if backend is None:
        raise TypeError("gtscript.stencil() missing the backend (e.g. 'numpy', 'gt:cpu_ifirst')")
    if definition is not None:
        return build_stencil(backend, definition, **kwargs)

    @api_boundary
    def wrap(fn: Callable[..., Any]) -> StencilObject:
        return build_stencil(backend, fn, **kwargs)

    return wrap


@api_boundary
def lazy_stencil(
    backend: str | None = None,
    definition: Callable[..., Any] | None = None,
    *,
    eager: bool = False,
    check_syntax: bool = True,
    **kwargs: Any,
) -> Any:
    """``stencil`` with the build deferred to the first call or to the first access of
    ``.implementation``, ``.backend`` or ``.field_info``; ``check_syntax`` parses at decoration.
    Without a backend it builds for ``"numpy"``, as gt4py's ``StencilBuilder`` does."""
    if backend is None:
        backend = "numpy"

    @api_boundary
    def wrap(fn: Callable[..., Any]) -> LazyStencil:
        lazy = LazyStencil(backend, fn, kwargs)
        if eager:
            lazy.implementation  # noqa: B018
        elif check_syntax:
            lazy.check_syntax()
        return lazy

    return wrap(definition) if definition is not None else wrap


class LazyStencil:
    """A stencil built on first use (``gtscript.lazy_stencil``)."""

    def __init__(self, backend: str, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self._backend = backend
        self.definition = fn
        self._kwargs = kwargs
        self._built: StencilObject | None = None

    def check_syntax(self) -> None:
        from .build import literal_dtypes
        from .parse import parse_definition

        ints, floats = literal_dtypes(self._kwargs)
        parse_definition(
            self.definition, dict(self._kwargs.get("externals") or {}),
            dict(self._kwargs.get("dtypes") or {}), ints, floats,
        )  # fmt: skip

    @property
    def implementation(self) -> StencilObject:
        if self._built is None:
            self._built = build_stencil(self._backend, self.definition, **self._kwargs)
        return self._built

    @property
    def backend(self) -> str:
        return self.implementation.backend

    @property
    def field_info(self) -> Any:
        return self.implementation.field_info

    @api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.implementation(*args, **kwargs)


class _GlobalTableMaker:
    """``GlobalTable[dtype, (n, m)]``: a read-only array with no spatial axis (a lookup table),
    read in a stencil as ``t.A[i, j]`` at absolute, possibly run-time, indices."""

    def __getitem__(self, spec: Any) -> Any:
        if not isinstance(spec, tuple) or len(spec) != 2:
            raise ValueError("GlobalTable is defined by a tuple (type, [axes_size..])")
        dtype, data_dims = spec
        return _FieldDescriptor(dtype, (), data_dims_of(data_dims))


GlobalTable = _GlobalTableMaker()


def enum(cls: type) -> type:
    """``gtscript.enum``: an ``IntEnum`` whose members stencils use as integers (externals,
    scalar arguments and constants)."""
    return cls


__all__ = [
    "GlobalTable", "LazyStencil", "enum", "lazy_stencil",
    "BACKWARD", "FORWARD", "PARALLEL", "I", "J", "K", "IJ", "IK", "JK", "IJK", "Axis", "AxisIndex",
    "Field", "FrozenStencil", "GTScriptFunction", "Sequence", "StencilObject", "_FieldDescriptor",
    "_FieldDescriptorMaker",
    "compile_assert", "computation", "externals", "function", "horizontal", "interval", "region",
    "stencil", "float32", "float64", "int32", "int64", "types", "__INLINED",
    "abs", "min", "max", "mod", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "sqrt", "exp", "log", "log10", "gamma", "cbrt", "isfinite", "isinf",
    "isnan", "floor", "ceil", "trunc", "erf", "erfc", "round", "round_away_from_zero",
]  # fmt: skip
