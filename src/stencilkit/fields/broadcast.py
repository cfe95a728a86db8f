"""Broadcasting by dimension names: line up buffers of differently-dimensioned fields.

Operands are matched by dimension, not by position: a ``[I, K]`` field and a ``[K]`` field
combine into ``[I, K]``. The result covers the intersection of the operands' index ranges on
every shared dimension; a dimension only one operand has keeps that operand's range.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.dims import Dimension
from ..core.domain import Domain, UnitRange
from ..core.errors import StencilValueError
from ..core.types import promote_dims


def result_domain(domains: Sequence[Domain]) -> Domain:
    """The domain of an operation on fields with these domains."""
    try:
        dims = promote_dims(*(d.dims for d in domains))
    except ValueError as err:
        raise StencilValueError(
            str(err), hint="give the fields compatible dimension orders"
        ) from None
    ranges: list[UnitRange] = []
    for dim in dims:
        rng: UnitRange | None = None
        for d in domains:
            if dim in d.dims:
                rng = d.range_of(dim) if rng is None else rng & d.range_of(dim)
        assert rng is not None
        ranges.append(rng)
    return Domain(dims, tuple(ranges))


def view_on(buffer: Any, domain: Domain, target: Domain) -> Any:
    """A view of ``buffer`` (laid out on ``domain``) that broadcasts against ``target``.

    Slices ``buffer`` to ``target``'s ranges on its own dimensions, orders its axes like
    ``target`` and inserts length-1 axes for the dimensions it lacks. Never copies.
    """
    if domain == target:
        return buffer
    index = tuple(
        slice(target.range_of(dim).start - rng.start, target.range_of(dim).stop - rng.start)
        for dim, rng in domain.items()
    )
    view = buffer[index] if index else buffer
    own = [target.dims.index(dim) for dim in domain.dims]
    order = sorted(range(len(own)), key=lambda axis: own[axis])
    if order != list(range(len(own))):
        view = view.transpose(order)
    present = set(domain.dims)
    expand = tuple(slice(None) if dim in present else None for dim in target.dims)
    if len(present) != len(target.dims):
        view = view[expand]
    return view


def absolute_index(
    domain: Domain, key: Domain | dict[Dimension, Any]
) -> tuple[tuple[slice | int, ...], Domain]:
    """Buffer index and resulting domain for selecting absolute ranges or single indices.

    ``key`` maps dimensions to an absolute ``(start, stop)``/``range``/``UnitRange`` (the
    dimension stays) or an ``int`` (the dimension is dropped). Dimensions not named stay whole.
    """
    from ..core.domain import unit_range

    items = list(key.items())
    for dim, _ in items:
        if dim not in domain.dims:
            raise StencilValueError(
                f"cannot select along {dim!r}: the field's dimensions are"
                f" [{', '.join(map(str, domain.dims))}]",
            )
    chosen = dict(items)
    index: list[slice | int] = []
    dims: list[Dimension] = []
    ranges: list[UnitRange] = []
    for dim, rng in domain.items():
        if dim not in chosen:
            index.append(slice(None))
            dims.append(dim)
            ranges.append(rng)
            continue
        want = chosen[dim]
        if isinstance(want, int) and not isinstance(want, bool):
            if want not in rng:
                raise StencilValueError(
                    f"index {dim}={want} is outside the field's domain {domain}",
                    hint=f"use an index in {rng.start}..{rng.stop - 1}",
                )
            index.append(want - rng.start)
            continue
        sub = unit_range(want)
        if sub not in rng:
            raise StencilValueError(
                f"slice {dim}: {sub} is outside the field's domain {domain}",
                hint=f"select within {dim}: {rng}; indices are absolute domain indices",
            )
        index.append(slice(sub.start - rng.start, sub.stop - rng.start))
        dims.append(dim)
        ranges.append(sub)
    return tuple(index), Domain(tuple(dims), tuple(ranges))
