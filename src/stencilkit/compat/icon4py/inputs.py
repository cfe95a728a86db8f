"""Random arguments for an icon4py stencil, from its parameter types, on an ICON-like mesh.

Fields get their sizes from :class:`IconMesh`: along ``K`` a field has ``nlev + 1`` levels if
the stencil writes it and ``nlev + 2`` if it only reads it, so that vertical shifts by one or
two levels from the computed range ``[v0, v1)`` stay inside (ICON's fields on half levels
have ``nlev + 1`` levels too). Integer scalars that bound a domain (found in the program's IR,
else by name: ``*start*`` / ``*end*``) take the range of their dimension; the vertical range
``[v0, v1)`` is one of :data:`VERTICAL_RANGES`, tried in order until the stencil runs.

Values: floats uniform in ``[0.5, 1.5)`` (so that ``sqrt``/``log`` stay real), bools random,
integer fields in ``[0, nlev)`` (``{0, 1}`` for fields named ``*offset*``, which stencils use as
vertical offsets), other integer scalars 2 (``nlev`` for ``*nlev*``).
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.dims import Dimension, DimensionKind
from ...core.types import FieldType, ScalarType, TupleType, TypeSpec
from ...ir import nodes as ir
from .mesh import IconMesh

__all__ = ["VERTICAL_RANGES", "Args", "domain_roles", "make_args", "vertical_range"]

# (lower offset from 0, upper offset from nlev) of the computed vertical range
VERTICAL_RANGES: tuple[tuple[int, int], ...] = ((0, 0), (1, 0), (1, -1), (2, -2), (3, 0), (5, -4))


def vertical_range(mesh: IconMesh, attempt: int) -> tuple[int, int]:
    lo, hi = VERTICAL_RANGES[attempt]
    return lo, mesh.nlev + hi


@dataclass(frozen=True)
class Args:
    """NumPy values of a call, in parameter order (tuples nested), and how to make fields."""

    values: tuple[Any, ...]
    types: tuple[TypeSpec, ...]

    def fields(self, allocator: Any = None) -> tuple[Any, ...]:
        """Fresh stencilkit fields (copies of the NumPy data) for one run."""
        return tuple(_to_field(v, t, allocator) for v, t in zip(self.values, self.types))


def _to_field(v: Any, t: TypeSpec, allocator: Any) -> Any:
    from ...fields import as_field

    if isinstance(t, TupleType):
        return tuple(_to_field(x, s, allocator) for x, s in zip(v, t.types))
    if isinstance(t, FieldType):
        return as_field(list(t.dims), np.array(v, copy=True), allocator=allocator)
    return v


def _refs(e: Any) -> Iterator[str]:
    if isinstance(e, ir.Ref):
        yield e.name
        return
    for name in getattr(e, "__slots__", ()):
        child = getattr(e, name, None)
        if isinstance(child, ir.Node):
            yield from _refs(child)
        elif isinstance(child, tuple):
            for c in child:
                if isinstance(c, ir.Node):
                    yield from _refs(c)


def domain_roles(program: ir.Program) -> dict[str, tuple[Dimension, str]]:
    """Scalar parameter -> (dimension, "start" | "stop") from the statements' ``domain=``."""
    roles: dict[str, tuple[Dimension, str]] = {}
    for stmt in program.body:
        for r in getattr(stmt, "domain", ()):
            for role, e in (("start", r.start), ("stop", r.stop)):
                for name in _refs(e):
                    roles.setdefault(name, (r.dim, role))
    return roles


class _Maker:
    def __init__(
        self,
        mesh: IconMesh,
        rng: np.random.Generator,
        attempt: int,
        roles: dict[str, tuple[Dimension, str]],
    ) -> None:
        self.mesh, self.rng, self.roles = mesh, rng, roles
        self.vrange = vertical_range(mesh, attempt)

    def extent(self, d: Dimension, written: bool) -> int:
        if d.kind == DimensionKind.VERTICAL:
            return self.mesh.nlev + (1 if written else 2)
        if d.kind == DimensionKind.LOCAL:
            n = self.mesh.local_size(d)
            if n is None:
                raise ValueError(f"no neighbour table gives the width of local dimension {d.value}")
            return n
        return self.mesh.size(d)

    def field(self, name: str, t: FieldType, written: bool) -> Any:
        shape = tuple(self.extent(d, written) for d in t.dims)
        dt = np.dtype(t.dtype)
        if dt == np.bool_:
            return self.rng.random(shape) < 0.5
        if dt.kind in "iu":
            top = 2 if "offset" in name.lower() else self.mesh.nlev
            return self.rng.integers(0, top, shape).astype(dt)
        return (0.5 + self.rng.random(shape)).astype(dt)

    def scalar(self, name: str, t: ScalarType) -> Any:
        dt = np.dtype(t.dtype)
        if dt == np.bool_:
            return np.bool_(self.rng.random() < 0.5)
        if dt.kind in "iu":
            return dt.type(self.int_scalar(name))
        return dt.type(0.5 + self.rng.random())

    def int_scalar(self, name: str) -> int:
        low = name.lower()
        dim, role = self.roles.get(name, (None, ""))
        if dim is None:
            if "start" in low or "end" in low:
                role = "start" if "start" in low else "stop"
                dim = (
                    Dimension("K", DimensionKind.VERTICAL)
                    if "vertical" in low or low.startswith("k")
                    else None
                )
            elif "nlev" in low:
                return self.mesh.nlev
            else:
                return 2
        if dim is not None and dim.kind == DimensionKind.VERTICAL:
            return self.vrange[0] if role == "start" else self.vrange[1]
        if role == "start":
            return 0
        if dim is None:  # a horizontal bound of unknown dimension: the smallest full size
            return min(self.mesh.mesh.n_cells, self.mesh.mesh.n_edges, self.mesh.mesh.n_vertices)
        return self.mesh.size(dim)

    def value(self, name: str, t: TypeSpec, written: AbstractSet[str]) -> Any:
        if isinstance(t, TupleType):
            return tuple(self.value(f"{name}__{i}", s, written) for i, s in enumerate(t.types))
        if isinstance(t, FieldType):
            return self.field(name, t, name in written)
        return self.scalar(name, t)


def make_args(
    params: tuple[ir.Param, ...],
    mesh: IconMesh,
    seed: int,
    attempt: int,
    roles: dict[str, tuple[Dimension, str]] | None = None,
    written: AbstractSet[str] | None = None,
) -> Args:
    """Random arguments for ``params``; ``written`` holds the (flattened, ``a__0`` style for
    tuples, as in the IR) names of the parameters the stencil writes."""
    maker = _Maker(mesh, np.random.default_rng(seed), attempt, roles or {})
    values = tuple(maker.value(p.name, p.type, written or set()) for p in params)
    return Args(values, tuple(p.type for p in params))


def horizontal_domain(
    mesh: IconMesh, dims: tuple[Dimension, ...], attempt: int
) -> dict[Dimension, tuple[int, int]]:
    """``domain=`` for a direct call: horizontal dims whole, vertical dims the attempt's range."""
    vr = vertical_range(mesh, attempt)
    return {
        d: vr if d.kind == DimensionKind.VERTICAL else (0, mesh.size(d))
        for d in dims
        if d.kind != DimensionKind.LOCAL
    }
