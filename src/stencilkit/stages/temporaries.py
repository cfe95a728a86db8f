"""A program's temporaries, allocated at run time: fields that statements write and later
statements read, which the caller never sees (a scan's columns passed to another scan inside one
field operator; the intermediate results of a direct call). Each is allocated over the domain
of the output of the statement that consumes it, on that output's device, and reused while that
output's signature repeats; the runners receive them after the caller's arguments
(``ProgramInterface.flat``: temporaries last). Where their kernels run is checked by
``stages/inferred.py`` with every other domain.
"""

from __future__ import annotations

from typing import Any

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
        self.cache: dict[tuple[str, Any], Any] = {}

    def fields(self, flat: list[Any]) -> list[Any]:
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
            key = (t.name, getattr(out, "signature", None))
            f = self.cache.get(key)
            if f is None:
                assert isinstance(t.type, FieldType)
                try:
                    dom = {
                        d: (out.domain.range_of(d).start, out.domain.range_of(d).stop)
                        for d in t.type.dims
                    }
                    f = zeros(dom, t.type.dtype, device=out.device)  # no garbage in unread parts
                except Exception:
                    result.append(None)  # the output is not a field: the runner reports that first
                    continue
                if key[1] is not None:
                    self.cache = {k: v for k, v in self.cache.items() if k[0] != t.name}
                    self.cache[key] = f
            result.append(f)
        return result
