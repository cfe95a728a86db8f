"""What the engine needs of a program, whichever frontend wrote it.

A frontend (the gt4py.next language in ``stencilkit.next``, GTScript in ``stencilkit.cartesian``)
produces an ``ir.Program``: typed parameters, the temporaries it allocates at run time, and a
body of statements (``Apply``/``ScanApply``) with their domains. From that program alone the
engine reads four facts, collected once here in :class:`ProgramInterface`:

- ``flat``: the parameters as the runners receive the arguments, tuples flattened
  (``out`` of ``tuple[Field, Field]`` becomes ``out__0``, ``out__1``), temporaries last;
- ``tables``: the neighbour tables the program shifts through (names in ``offset_provider``);
- ``written``: the flat parameters some statement writes (outputs; an array given for one must
  not be copied, else the results would be lost in the copy);
- ``domain_scalars``: the scalar parameters that decide which points are read or written
  (domain bounds, ``concat_where(K < n, ...)``); a plan is valid only while they keep their values.

A runner is called with ``args`` in ``flat`` order; :meth:`ProgramInterface.key` is the plan
cache key of one call (the fields' signatures, the domain scalars' values, the tables).

>>> face = interface_of(program)        # doctest: +SKIP
>>> face.flat, face.tables, face.written, face.domain_scalars
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.identity import IdentityCache
from ..core.records import record
from ..core.types import FieldType, ScalarType
from ..ir import nodes as ir
from ..ir.extents import bound_scalars
from ..ir.tuples import flat_params
from ..ir.visit import walk


@record(weakref=True)  # the cache below holds it weakly: it refers to its program
class ProgramInterface:
    """The facts the engine reads of one ``ir.Program`` (see the module docstring)."""

    program: ir.Program
    flat: tuple[ir.Param, ...]
    tables: tuple[str, ...]
    written: frozenset[str]
    domain_scalars: frozenset[str]
    #: positions in ``flat`` of the field parameters, of the scalars, of the domain scalars
    field_idx: tuple[int, ...]
    scalar_idx: tuple[int, ...]
    domain_scalar_idx: tuple[int, ...]

    def key(self, args: list[Any], offset_provider: Mapping[str, Any] | None) -> tuple[Any, ...]:
        """The plan cache key of a call: raises AttributeError for a raw array (not yet wrapped
        as a field), KeyError for a missing table, TypeError for an unhashable scalar.

        A field's ``signature_key`` is a small integer per distinct field signature (see
        ``fields/signature.py``): it hashes much faster than the signature itself."""
        key: list[Any] = [args[i].signature_key for i in self.field_idx]
        for i in self.domain_scalar_idx:
            key.append((type(args[i]), args[i]))  # 8.0 must not reuse the plan checked for 8
        for t in self.tables:
            key.append(offset_provider[t].signature_key)  # type: ignore[index]
        return tuple(key)


def interface_of(program: ir.Program) -> ProgramInterface:
    """The :class:`ProgramInterface` of ``program``, computed once per program object."""
    hit = _SEEN.get(program)
    if hit is not None:
        return hit
    flat = flat_params(program.params + program.temps)
    domain = bound_scalars(program)
    face = ProgramInterface(
        program,
        flat,
        used_tables(program),
        written_params(program, flat),
        frozenset(domain),
        tuple(i for i, p in enumerate(flat) if isinstance(p.type, FieldType)),
        tuple(i for i, p in enumerate(flat) if isinstance(p.type, ScalarType)),
        tuple(i for i, p in enumerate(flat) if isinstance(p.type, ScalarType) and p.name in domain),
    )
    return _SEEN.put(program, face)


#: programs' interfaces by identity, as long as the program and its interface are used
_SEEN: IdentityCache[ir.Program, ProgramInterface] = IdentityCache(1024, weak_values=True)


def used_tables(program: ir.Program) -> tuple[str, ...]:
    """The names of the neighbour tables ``program`` shifts through, sorted."""
    return tuple(
        sorted(
            {
                x.by.offset
                for s in program.body
                for x in walk(s)
                if isinstance(x, ir.Shift) and isinstance(x.by, ir.NeighborShift)
            }
        )
    )


def written_params(program: ir.Program, flat: tuple[ir.Param, ...] | None = None) -> frozenset[str]:
    """The flat parameters (``flat``: those of ``program``, temporaries included) some statement
    of ``program`` writes; a statement writing a tuple parameter ``out`` writes every
    ``out__i``."""
    names = [p.name for p in (flat if flat is not None else flat_params(program.params))]
    out: set[str] = set()
    for stmt in program.body:
        for ref in stmt.outs:
            out.update(x for x in names if x == ref.name or x.startswith(ref.name + "__"))
    return frozenset(out)
