"""``gt4py.cartesian.definitions``: what a built stencil reports about its fields, parameters
and domain, and GTScript's error classes (each a stencilkit error with the user's source
location, caught as gt4py's ``GTError`` family too)."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ..core.errors import StencilError, StencilTypeError, StencilValueError
from ..core.records import record


class GTError(Exception):
    """gt4py.cartesian's base error."""


class GTSyntaxError(GTError):
    pass


class GTSemanticError(GTError):
    pass


class GTSpecificationError(GTError):
    pass


class GTScriptSyntaxError(StencilTypeError, GTSyntaxError):
    """A construct GTScript does not allow, at its place in the definition."""


class GTScriptSymbolError(StencilTypeError, GTSemanticError):
    """An unknown name (a missing external, an undefined variable)."""


class GTScriptDefinitionError(StencilValueError, GTSemanticError):
    """A definition that parses but breaks a rule of GTScript (intervals, offsets, writes)."""


class GTScriptNotSupportedError(StencilTypeError, GTSemanticError):
    """GTScript that stencilkit does not support yet; the message says what."""


class GTScriptCallError(StencilValueError, GTSpecificationError):
    """A stencil call with bad arguments, refused before anything runs."""


class GTScriptCallTypeError(GTScriptCallError, TypeError):
    """A scalar argument of the wrong type (None included): a ``TypeError`` too, as gt4py's."""


class AccessKind(enum.IntFlag):
    NONE = 0
    READ = 1
    WRITE = 2
    READ_WRITE = 3


@record
class Boundary:
    """The halo a field is read in: ``((i_minus, i_plus), (j_minus, j_plus), (k_minus, k_plus))``
    over the field's axes."""

    extents: tuple[tuple[int, int], ...]

    def __getitem__(self, i: int) -> tuple[int, int]:
        return self.extents[i]

    def __iter__(self) -> Any:
        return iter(self.extents)

    def __len__(self) -> int:
        return len(self.extents)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Boundary):
            return self.extents == other.extents
        if isinstance(other, tuple):
            return self.extents == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.extents)

    @property
    def lower_indices(self) -> tuple[int, ...]:
        return tuple(lo for lo, _ in self.extents)

    @property
    def upper_indices(self) -> tuple[int, ...]:
        return tuple(hi for _, hi in self.extents)

    def __repr__(self) -> str:
        return f"Boundary({self.extents})"


@record
class FieldInfo:
    """gt4py's ``field_info`` entry: access, boundary (halo), axes, data dims, dtype."""

    access: AccessKind
    boundary: Boundary
    axes: tuple[str, ...]
    data_dims: tuple[int, ...]
    dtype: np.dtype[Any]

    @property
    def domain_mask(self) -> tuple[bool, ...]:
        return tuple(a in self.axes for a in ("I", "J", "K"))

    @property
    def domain_ndim(self) -> int:
        return len(self.axes)

    @property
    def mask(self) -> tuple[bool, ...]:
        return (*self.domain_mask, *(True,) * len(self.data_dims))

    @property
    def ndim(self) -> int:
        return len(self.axes) + len(self.data_dims)


@record
class ParameterInfo:
    """gt4py's ``parameter_info`` entry of a scalar: access and dtype."""

    access: AccessKind
    dtype: np.dtype[Any]


@record
class DomainInfo:
    """gt4py's ``domain_info``: the parallel and sequential axes."""

    parallel_axes: tuple[str, ...] = ("I", "J")
    sequential_axis: str = "K"
    min_sequential_axis_size: int = 0
    ndim: int = 3


class CartesianSpace:
    """gt4py's names of the cartesian axes."""

    names = ("I", "J", "K")


__all__ = [
    "AccessKind",
    "Boundary",
    "CartesianSpace",
    "DomainInfo",
    "FieldInfo",
    "GTError",
    "GTScriptCallError",
    "GTScriptDefinitionError",
    "GTScriptNotSupportedError",
    "GTScriptSymbolError",
    "GTScriptSyntaxError",
    "GTSemanticError",
    "GTSpecificationError",
    "GTSyntaxError",
    "ParameterInfo",
    "StencilError",
]
