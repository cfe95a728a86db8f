"""Read extents: how far from the output point each field is read, per dimension."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.dims import Dimension
from . import nodes as n
from .visit import walk


@dataclass
class FieldExtent:
    """Offsets read along each dimension (``lo <= 0 <= hi`` not required); ``indirect`` lists
    dimensions indexed through a neighbour table, and ``tables`` the tables read at the rows."""

    offsets: dict[Dimension, tuple[int, int]] = field(default_factory=dict)
    indirect: dict[Dimension, set[str]] = field(default_factory=dict)


def _note_index(ext: FieldExtent, d: Dimension, idx: n.Index) -> None:
    if isinstance(idx, n.Pos):
        lo, hi = ext.offsets.get(d, (idx.offset, idx.offset))
        ext.offsets[d] = (min(lo, idx.offset), max(hi, idx.offset))
    elif isinstance(idx, n.Lookup):
        ext.indirect.setdefault(d, set()).add(idx.table)


def read_extents(kernel: n.Kernel, dims_of: dict[str, tuple[Dimension, ...]]) -> dict[str, FieldExtent]:
    """Extents of every field and neighbour table read by ``kernel``.

    ``dims_of`` maps field and table names to their dimensions; tables are indexed by
    (row dimension, local dimension)."""
    result: dict[str, FieldExtent] = {}
    for value in kernel.values:
        for x in walk(value):
            if isinstance(x, n.Access):
                ext = result.setdefault(x.field, FieldExtent())
                for d, idx in zip(dims_of[x.field], x.index):
                    _note_index(ext, d, idx)
            if isinstance(x, n.Lookup | n.Valid):
                ext = result.setdefault(x.table, FieldExtent())
                rows = dims_of[x.table][0]
                _note_index(ext, rows, x.source)
    return result
