"""Which halos a program needs, derived from its IR, and running it on decomposed fields.

A program's stencil-level IR says how far from each output point every field is read
(``ir.extents.read_extents``). Composed backwards through the program (a temporary read at
``I - 1`` that was computed from ``h(I + 1)`` makes ``h`` needed over ``[-1, +1]``), this gives,
for every field the program reads before writing it, the halo it needs: offsets per dimension
on Cartesian grids, layers of neighbours (table hops) on meshes.

>>> halo_requirements(lax_wendroff_step)["h"]
HaloNeed(offsets={I: (-1, 1), J: (-1, 1)}, layers=0)
>>> step = distribute(lax_wendroff_step)     # checks halos, marks written fields stale
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.dims import Dimension, FieldOffset
from ..ir import nodes as n
from ..ir.extents import read_extents
from ..ir.lower import TableInfo, flat_params
from ..stages.interface import written_params
from ..stages.pipeline import lower
from .comm import DistributedError
from .field import DecomposedField


@dataclass(frozen=True)
class HaloNeed:
    """How far around the points a program computes it reads a field: ``offsets`` per
    dimension (``lo <= 0 <= hi``), ``layers`` of neighbour-table hops on a mesh."""

    offsets: dict[Dimension, tuple[int, int]] = field(default_factory=dict)
    layers: int = 0

    def __repr__(self) -> str:
        offs = ", ".join(f"{d.value}: ({lo}, {hi})" for d, (lo, hi) in self.offsets.items())
        return f"HaloNeed(offsets={{{offs}}}, layers={self.layers})"

    def width(self, dim: Dimension) -> int:
        """The halo width ``dim`` needs: the largest offset either way."""
        lo, hi = self.offsets.get(dim, (0, 0))
        return max(-lo, hi, 0)

    def union(self, other: HaloNeed) -> HaloNeed:
        """The halo that serves both needs: the wider offsets per dimension, the more layers."""
        offs = dict(self.offsets)
        for d, (lo, hi) in other.offsets.items():
            a, b = offs.get(d, (0, 0))
            offs[d] = (min(a, lo), max(b, hi))
        return HaloNeed(offs, max(self.layers, other.layers))


def _tables(
    offset_provider: Mapping[str, Any] | None,
) -> tuple[dict[str, TableInfo], dict[str, tuple[Dimension, ...]]]:
    infos: dict[str, TableInfo] = {}
    dims: dict[str, tuple[Dimension, ...]] = {}
    for name, table in (offset_provider or {}).items():
        if isinstance(table, Dimension | FieldOffset) or not hasattr(table, "max_neighbors"):
            continue
        infos[name] = TableInfo(int(table.max_neighbors), table.skip_value is not None)
        dims[name] = tuple(table.domain.dims)
    return infos, dims


def halo_requirements(
    program: Any, offset_provider: Mapping[str, Any] | None = None
) -> dict[str, HaloNeed]:
    """The halo each field parameter needs that ``program`` reads before it writes it.

    ``offset_provider`` is needed for programs that read through neighbour tables (its tables'
    shapes are part of the IR). Fields the program only writes need none.
    """
    prog: n.Program = program.definition
    infos, table_dims = _tables(offset_provider)
    sprog = lower(prog, infos).stencil  # the lowering every runner shares (cached)
    dims_of: dict[str, tuple[Dimension, ...]] = {p.name: n.field_dims(p.type) for p in sprog.params}
    dims_of.update(table_dims)
    extents = [read_extents(k, dims_of) for k in sprog.kernels]
    need: dict[str, HaloNeed] = {}
    for k, ext in zip(reversed(sprog.kernels), reversed(extents)):
        own = HaloNeed()
        for o in k.outs:
            if o in need:
                own = own.union(need[o])
        for name, e in ext.items():
            if name in table_dims:
                continue
            offs = {}
            for d, (lo, hi) in e.offsets.items():
                a, b = own.offsets.get(d, (0, 0))
                offs[d] = (min(a + lo, 0), max(b + hi, 0))
            demand = HaloNeed(offs, own.layers + (1 if e.indirect else 0))
            need[name] = need[name].union(demand) if name in need else demand
    written: set[str] = set()
    inputs: list[str] = []
    for k, ext in zip(sprog.kernels, extents):
        inputs.extend(
            x
            for x in ext
            if x not in written and x in dims_of and x not in table_dims and x not in inputs
        )
        written.update(k.outs)
    params = {p.name for p in flat_params(prog.params)}
    return {x: need[x] for x in inputs if x in params and x in need}


class DistributedProgram:
    """A program run on decomposed fields: before each call it checks that every field the
    program reads with offsets has a halo wide enough and fresh (exchanged since its last
    write), and after the call marks the fields it wrote stale. Other arguments pass through.

    >>> step = distribute(lax_wendroff_step)
    >>> step.halos()                             # what it needs, per field parameter
    >>> step(h, hu, hv, ..., offset_provider={})
    """

    def __init__(self, program: Any) -> None:
        self.program = program
        self.__name__ = getattr(program, "__name__", "program")
        self._names = [p.name for p in program.definition.params]
        self._written = written_params(program.definition)
        self._needs: dict[tuple[Any, ...], dict[str, HaloNeed]] = {}

    def halos(self, offset_provider: Mapping[str, Any] | None = None) -> dict[str, HaloNeed]:
        """The halo each field parameter needs (see :func:`halo_requirements`)."""
        key = tuple(sorted((k, id(v)) for k, v in (offset_provider or {}).items()))
        if key not in self._needs:
            self._needs[key] = halo_requirements(self.program, offset_provider)
        return self._needs[key]

    def with_backend(self, backend: Any) -> DistributedProgram:
        """This distributed program run by ``backend`` instead."""
        return DistributedProgram(self.program.with_backend(backend))

    def check(self, bound: Mapping[str, Any], offset_provider: Mapping[str, Any] | None) -> None:
        """Refuse decomposed arguments from different decompositions or on another device than
        their rank's, and those whose halo is narrower than the program reads, or stale."""
        first: tuple[str, DecomposedField] | None = None
        for name, f in bound.items():
            if not isinstance(f, DecomposedField):
                continue
            d = f.decomposition
            where = f"{self.__name__}() on rank {d.rank} of {d.size}"
            if first is None:
                first = (name, f)
            elif (
                d is not first[1].decomposition
                and d.signature() != first[1].decomposition.signature()
            ):
                raise DistributedError(
                    f"{where}: parameter '{name}' (field '{f.name}') is decomposed as {d.describe()}, parameter"
                    f" '{first[0]}' (field '{first[1].name}') as {first[1].decomposition.describe()}",
                    hint="make every field of one run from the same decomposition",
                )
            err = d.check_device(f)
            if err:
                raise DistributedError(f"{where}: parameter '{name}': {err}")
        for name, need in self.halos(offset_provider).items():
            f = bound.get(name)
            if not isinstance(f, DecomposedField):
                continue
            rank = f.decomposition.rank
            where = f"{self.__name__}() on rank {rank} of {f.decomposition.size}: parameter '{name}' (field '{f.name}')"
            reads = []
            for d, w in f.halo.items():
                want = need.layers if f.decomposition.kind == "mesh" else need.width(d)
                if want > w:
                    unit = "layers" if f.decomposition.kind == "mesh" else "points"
                    raise DistributedError(
                        f"{where} has a halo of {w} {unit} along {d.value}, the program reads {want}",
                        hint=f"make the field with halo={want} or more",
                    )
                if want:
                    reads.append(d.value)
            if reads and not f.halo_fresh:
                raise DistributedError(
                    f"{where} is read in its halo along {', '.join(reads)}, but the halo is stale:"
                    " the field was written after its last exchange",
                    hint=f"call exchange({f.name}) (or exchange_start(...).wait()) before this program",
                )

    def __call__(
        self, *args: Any, offset_provider: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        bound = dict(zip(self._names, args))
        bound.update(kwargs)
        self.check(bound, offset_provider)
        plain = [a.field if isinstance(a, DecomposedField) else a for a in args]
        plain_kw = {k: v.field if isinstance(v, DecomposedField) else v for k, v in kwargs.items()}
        self.program(*plain, offset_provider=offset_provider, **plain_kw)
        for name in self._written:
            f = bound.get(name)
            if isinstance(f, DecomposedField):
                f.mark_written()


def distribute(program: Any) -> DistributedProgram:
    """``program`` taking decomposed fields (see :class:`DistributedProgram`)."""
    if not hasattr(program, "definition") or inspect.isfunction(program):
        raise DistributedError(f"distribute() takes a @program, got {program!r}")
    return DistributedProgram(program)
