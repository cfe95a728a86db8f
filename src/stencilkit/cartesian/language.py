"""The objects a GTScript definition refers to: ``Field[...]`` descriptors, ``computation``,
``interval``, ``horizontal``, ``region``, the iteration orders, the math builtins and
``gtscript.function``. The parser recognises them by identity, whatever name they are
imported under; calling them outside a stencil definition is an error."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .axes import IJ, IJK, IK, JK, I, J, K, axes_names

#: GTScript's math builtins: GTScript name -> stencilkit builtin (``ir/ops.py``), or None where
#: stencilkit has none yet (refused at decoration, naming the builtin).
MATH_BUILTINS: dict[str, str | None] = {
    "abs": "abs",
    "min": "minimum",
    "max": "maximum",
    "mod": "%",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "sqrt": "sqrt",
    "exp": "exp",
    "log": "log",
    "log10": "log10",
    "gamma": "gamma",
    "cbrt": "cbrt",
    "isfinite": "isfinite",
    "isinf": "isinf",
    "isnan": "isnan",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "erf": "erf",
    "erfc": "erfc",
    "round": "round",  # composed in lower_exprs.py from trunc (exact)
    "round_away_from_zero": "round_away_from_zero",
}


class _Marker:
    """A name that only means something inside a stencil definition."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"gtscript.{self.name}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"gtscript.{self.name}(...) can only be used inside a stencil definition"
            " (a function decorated with gtscript.stencil or gtscript.function)"
        )


class _Subscriptable(_Marker):
    __slots__ = ()

    def __getitem__(self, item: Any) -> Any:
        return self(item)


class IterationOrder:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


PARALLEL = IterationOrder("PARALLEL")
FORWARD = IterationOrder("FORWARD")
BACKWARD = IterationOrder("BACKWARD")

computation = _Marker("computation")
interval = _Marker("interval")
horizontal = _Marker("horizontal")
region = _Subscriptable("region")
compile_assert = _Marker("compile_assert")
INLINED = _Marker("__INLINED")
builtins: dict[str, _Marker] = {name: _Marker(name) for name in MATH_BUILTINS}

#: GTScript's keywords, which gt4py's frontend knows by name: a definition may use
#: ``computation``, ``interval``, ``PARALLEL``, ``horizontal``, ``region``, ``__INLINED``, ``I``
#: ... without importing them (a name the definition's module or closure binds wins)
BY_NAME: dict[str, Any] = {
    "computation": computation, "interval": interval, "horizontal": horizontal,
    "region": region, "compile_assert": compile_assert, "__INLINED": INLINED,
    "PARALLEL": PARALLEL, "FORWARD": FORWARD, "BACKWARD": BACKWARD,
    "I": I, "J": J, "K": K, "IJ": IJ, "IK": IK, "JK": JK, "IJK": IJK,
    **builtins,
}  # fmt: skip


# ---------------------------------------------------------------- Field[...]
class _FieldDescriptor:
    """``Field[dtype]``, ``Field[IJ, dtype]``, ``Field[(dtype, (3,))]``: what a field parameter
    is. ``dtype`` is a NumPy dtype, or a string looked up in the stencil's ``dtypes``."""

    __slots__ = ("axes", "data_dims", "dtype")

    def __init__(self, dtype: Any, axes: tuple[str, ...], data_dims: tuple[int, ...] = ()) -> None:
        self.dtype = dtype if isinstance(dtype, str) else np.dtype(dtype)
        self.axes = axes
        self.data_dims = data_dims

    def __repr__(self) -> str:
        return (
            f"_FieldDescriptor(dtype={self.dtype!r}, axes={self.axes}, data_dims={self.data_dims})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _FieldDescriptor) and (
            (str(self.dtype), self.axes, self.data_dims)
            == (str(other.dtype), other.axes, other.data_dims)
        )

    def __hash__(self) -> int:
        return hash((str(self.dtype), self.axes, self.data_dims))


def data_dims_of(spec: Any) -> tuple[int, ...]:
    """The sizes of data dimensions written ``(3, 2)``, ``[3]`` or one bare integer (``3``,
    ``np.int32(3)``: gt4py writes ``(np.float64, (4))``, which is ``(np.float64, 4)``)."""
    if isinstance(spec, int | np.integer):
        return (int(spec),)
    if isinstance(spec, tuple | list) and all(isinstance(n, int | np.integer) for n in spec):
        return tuple(int(n) for n in spec)
    raise ValueError(f"data dimensions {spec!r} must be integers, e.g. (3,) or (3, 2)")


class _FieldDescriptorMaker:
    def __getitem__(self, spec: Any) -> _FieldDescriptor:
        axes: tuple[str, ...] = ("I", "J", "K")
        dtype = spec
        if isinstance(spec, tuple) and len(spec) == 2 and axes_names(spec[0]) is not None:
            axes = axes_names(spec[0]) or axes
            dtype = spec[1]
        elif isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], (tuple, list)):
            if len(spec[0]) == 0:
                # Field[[], (dtype, (n,))]: no spatial axis, a GlobalTable (gt4py reads an empty
                # collection as an axes spec; NDSL's DataDimensionsField registers tables so)
                axes, dtype = (), spec[1]
        data_dims: tuple[int, ...] = ()
        if isinstance(dtype, tuple):
            if len(dtype) != 2:
                raise ValueError(f"Field[{spec!r}]: data dimensions are written (dtype, (n, ...))")
            dtype, dd = dtype
            data_dims = data_dims_of(dd)
        if isinstance(dtype, _FieldDescriptor):
            raise ValueError(f"Field[{spec!r}]: a field of fields")
        if not isinstance(dtype, str):
            try:
                np.dtype(dtype)
            except TypeError as err:
                raise ValueError(f"Field[{spec!r}]: {dtype!r} is not a dtype") from err
        return _FieldDescriptor(dtype, axes, data_dims)


Field = _FieldDescriptorMaker()


# ---------------------------------------------------------------- gtscript.function
class GTScriptFunction:
    """A ``gtscript.function``: inlined at every call inside a stencil."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.__name__ = fn.__name__
        self.__wrapped__ = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"gtscript.function {self.__name__}() can only be called inside a stencil definition"
        )

    def __repr__(self) -> str:
        return f"<gtscript.function {self.__name__}>"


def function(fn: Callable[..., Any]) -> GTScriptFunction:
    """Mark ``fn`` as a GTScript function, inlined where a stencil calls it."""
    return GTScriptFunction(fn)
