"""A program's temporaries, allocated at run time: fields that statements write and later
statements read, which the caller never sees (a scan's columns passed to another scan inside one
field operator; the intermediate results of a direct call). Each is allocated over the domain
of the output of the statement that consumes it, on that output's device, and reused while that
output's signature repeats (per thread: calls from two threads at once have temporaries of their
own); the runners receive them after the caller's arguments
(``ProgramInterface.flat``: temporaries last). Where their kernels run is checked by
``stages/inferred.py`` with every other domain.

A temporary over a location the output does not have (a value at vertices that an edge
statement reads through E2V, ``ir/neighbour_values.py``) spans, along that dimension, the
range shared by the fields its statement reads there and the neighbour tables it reduces over
(the vertices of V2E).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ..core.dims import Dimension
from ..core.domain import UnitRange
from ..core.errors import StencilValueError
from ..core.types import FieldType
from ..ir import nodes as ir
from ..ir.tuples import flat_params
from ..ir.visit import walk
from .binding import wrap_arrays


class Temporaries:
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
        # along a dimension the output lacks: the fields (flat index) read over it and the
        # neighbour tables (by offset name) whose rows are over it, in the temporary's statement
        self.over: dict[str, dict[Dimension, tuple[list[int], list[str]]]] = {}
        for t in definition.temps:
            assert isinstance(t.type, FieldType)
            out_dims = set(ir.field_dims(self.flat[self.like[t.name]].type))
            extra = [d for d in t.type.dims if d not in out_dims]
            writer = next((s for s in body if t.name in {o.name for o in s.outs}), None)
            if not extra or writer is None:
                continue
            nodes = list(walk(writer))
            self.over[t.name] = {
                d: (
                    sorted(
                        {
                            names.index(x.name)
                            for x in nodes
                            if isinstance(x, ir.Ref)
                            and x.name in names
                            and d in ir.field_dims(x.type)
                        }
                    ),
                    sorted(
                        {
                            x.offset
                            for x in nodes
                            if isinstance(x, ir.NeighborShift) and x.target[:1] == (d,)
                        }
                    ),
                )
                for d in extra
            }
        # per thread: two threads calling the program at once must not share its temporaries
        # (one call's kernels would read what the other's wrote)
        self._local = threading.local()

    def _cache(self) -> dict[tuple[str, Any, tuple[tuple[int, int], ...]], Any]:
        """This thread's temporaries, by name, output signature and extra ranges."""
        cache = getattr(self._local, "cache", None)
        if cache is None:
            cache = self._local.cache = {}
        return cache  # type: ignore[no-any-return]

    def _range_over(
        self, t: str, d: Dimension, flat: list[Any], provider: Mapping[str, Any]
    ) -> tuple[int, int]:
        """The range along ``d`` (which the output lacks) of temporary ``t``: shared by the
        fields its statement reads over ``d`` and the tables whose rows are over ``d``."""
        fields, tables = self.over[t][d]
        ranges: list[UnitRange] = []
        for i in fields:
            dom = getattr(flat[i], "domain", None)
            if dom is not None and d in dom.dims:
                ranges.append(dom.range_of(d))
        for name in tables:
            dom = getattr(provider.get(name), "domain", None)
            if dom is not None and dom.dims and dom.dims[0] == d:
                ranges.append(dom.range_of(d))
        if not ranges:
            raise StencilValueError(
                f"a value over {d} is computed for every point of {d}, but neither a field nor a"
                f" neighbour table of this call tells the range of {d}",
                hint=f"pass the neighbour tables over {d} in offset_provider",
            )
        lo, hi = max(r.start for r in ranges), min(r.stop for r in ranges)
        return lo, max(lo, hi)

    def fields(
        self, flat: list[Any], offset_provider: Mapping[str, Any] | None = None
    ) -> list[Any]:
        from ..fields import zeros

        result: list[Any] = []
        for t in self.temps:
            i = self.like[t.name]
            out = flat[i]
            if not hasattr(out, "domain"):
                try:  # a raw array given for the output: the runner wraps it the same way
                    out = wrap_arrays((self.flat[i],), [out], frozenset({self.flat[i].name}))[0]
                except Exception:
                    pass
            over: tuple[tuple[int, int], ...] = ()
            if t.name in self.over:
                over = tuple(
                    self._range_over(t.name, d, flat, offset_provider or {})
                    for d in self.over[t.name]
                )
            key = (t.name, getattr(out, "signature", None), over)
            cache = self._cache()
            f = cache.get(key)
            if f is None:
                assert isinstance(t.type, FieldType)
                try:
                    extra = dict(zip(self.over.get(t.name, {}), over))
                    dom = {
                        d: extra[d]
                        if d in extra
                        else (out.domain.range_of(d).start, out.domain.range_of(d).stop)
                        for d in t.type.dims
                    }
                    f = zeros(dom, t.type.dtype, device=out.device)  # no garbage in unread parts
                except Exception:
                    result.append(None)  # the output is not a field: the runner reports that first
                    continue
                if key[1] is not None:
                    for k in [k for k in cache if k[0] == t.name]:
                        del cache[k]
                    cache[key] = f
            result.append(f)
        return result
