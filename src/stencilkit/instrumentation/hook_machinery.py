"""Hooks: named callbacks registered on a hook point, gt4py.next's ``hook_machinery``.

An :class:`EventHook` calls every callback; a :class:`ContextHook` enters every callback's
context manager around the hooked code. A callback must take the hook's parameters (same
names, same kinds), else ``register`` raises ``ValueError``.

>>> @event_hook
... def compiled(name: str) -> None:
...     '''A program was compiled.'''
>>> compiled.register(lambda name: print("built", name), name="printer")
>>> compiled("run")
built run
>>> compiled.remove("printer")
"""

from __future__ import annotations

import contextlib
import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def _unique_name(func: Callable[..., Any]) -> str:
    qualname = getattr(func, "__qualname__", type(func).__qualname__)
    return f"{func.__module__}.{qualname}#{id(func)}"


def _same_parameters(a: Callable[..., Any], b: Callable[..., Any]) -> bool:
    pa = list(inspect.signature(a).parameters.values())
    pb = list(inspect.signature(b).parameters.values())
    return len(pa) == len(pb) and all(
        x.replace(annotation=inspect.Parameter.empty)
        == y.replace(annotation=inspect.Parameter.empty)
        for x, y in zip(pa, pb)
    )


@dataclass(slots=True)
class _Hook:
    """The callbacks of one hook point. The definition gives the parameters and documentation;
    it is the first callback (gt4py's hooks collect metrics in theirs)."""

    definition: Callable[..., Any]
    registry: dict[str, Callable[..., Any]] = field(default_factory=dict)
    callbacks: tuple[Callable[..., Any], ...] = ()

    def __post_init__(self) -> None:
        self.callbacks = (self.definition,)

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return self.definition.__doc__

    def register(
        self, callback: Callable[..., Any], *, name: str | None = None, index: int | None = None
    ) -> None:
        """Add ``callback`` (under ``name``; at position ``index``, else last)."""
        if not _same_parameters(callback, self.definition):
            raise ValueError(
                f"Callback signature {inspect.signature(callback)} does not match hook signature"
                f" {inspect.signature(self.definition)}"
            )
        name = name or _unique_name(callback)
        if index is None:
            self.callbacks += (callback,)
        else:
            index += 1  # the definition stays first
            self.callbacks = (*self.callbacks[:index], callback, *self.callbacks[index:])
        self.registry[name] = callback

    def remove(self, callback: str | Callable[..., Any]) -> None:
        """Remove a callback, given as itself or by its registered name (``KeyError`` if absent)."""
        name = callback if isinstance(callback, str) else _unique_name(callback)
        if name not in self.registry:
            raise KeyError(f"No callback registered under the name '{name}'")
        removed = self.registry.pop(name)
        self.callbacks = tuple(cb for cb in self.callbacks if cb is not removed)


@dataclass(slots=True)
class EventHook(_Hook):
    """Calls each callback with the hook's arguments."""

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        for func in self.callbacks:
            func(*args, **kwargs)


@dataclass(slots=True)
class ContextHook(_Hook):
    """``with hook(*args): ...`` enters each callback's context manager, in order, and leaves
    them in reverse order."""

    _stack: list[contextlib.ExitStack] = field(default_factory=list)
    _pending: list[Any] = field(default_factory=list)

    def __call__(self, *args: Any, **kwargs: Any) -> ContextHook:
        stack = contextlib.ExitStack()
        self._stack.append(stack)
        self._pending = [func(*args, **kwargs) for func in self.callbacks]
        return self

    def __enter__(self) -> None:
        stack = self._stack[-1]
        for manager in self._pending:
            stack.enter_context(manager)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> bool:
        return bool(self._stack.pop().__exit__(exc_type, exc, tb))


def event_hook(definition: Callable[..., None]) -> EventHook:
    """Make an :class:`EventHook` from a function giving its parameters and documentation."""
    return EventHook(definition)


def context_hook(definition: Callable[..., Any]) -> ContextHook:
    """Make a :class:`ContextHook` from a function giving its parameters and documentation."""
    return ContextHook(definition)
