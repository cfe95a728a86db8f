"""Constructors that can be partially applied by attribute, as gt4py's are:
``zeros.partial(allocator=gpu)`` is ``zeros`` with ``allocator`` fixed, and the result can be
narrowed again with its own ``.partial``. icon4py's factories hold their allocators this way.

>>> def scale(x, *, by=1):
...     return x * by
>>> triple = with_fluid_partial(scale).partial(by=3)
>>> triple(2), triple.partial(by=4)(2)
(6, 8)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


class fluid_partial(functools.partial[Any]):
    """A :class:`functools.partial` that has ``.partial`` too, to fix more arguments later."""

    def partial(self, *args: Any, **kwargs: Any) -> fluid_partial:
        return fluid_partial(self, *args, **kwargs)


def with_fluid_partial(func: _F) -> _F:
    """Give ``func`` a ``.partial(*args, **kwargs)`` attribute returning a :class:`fluid_partial`."""
    func.partial = fluid_partial(fluid_partial, func)  # type: ignore[attr-defined]
    return func
