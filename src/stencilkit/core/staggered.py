"""Staggered dimensions: a dimension at the half-integer positions of a base dimension.

gt4py.next names the staggered counterpart of ``X`` ``_StaggeredX`` (same kind); index ``i`` of it
is position ``i - 1/2`` of ``X``.

>>> X = Dimension("X")
>>> flip_staggered(X).value
'_StaggeredX'
>>> as_non_staggered(flip_staggered(X)) == X
True
"""

from __future__ import annotations

from .dims import Dimension

STAGGERED_PREFIX = "_Staggered"


def is_staggered(dim: Dimension) -> bool:
    """Whether ``dim`` is the staggered counterpart of another dimension."""
    return dim.value.startswith(STAGGERED_PREFIX)


def flip_staggered(dim: Dimension) -> Dimension:
    """The staggered counterpart of ``dim``, or the base dimension of a staggered one."""
    if is_staggered(dim):
        return Dimension(dim.value[len(STAGGERED_PREFIX) :], dim.kind)
    return Dimension(STAGGERED_PREFIX + dim.value, dim.kind)


def as_non_staggered(dim: Dimension) -> Dimension:
    """The base dimension of ``dim`` (``dim`` itself when it is not staggered)."""
    return flip_staggered(dim) if is_staggered(dim) else dim
