"""Caches by object identity whose entries go when the object goes.

The engine caches what it derives from an IR object (a program's lowering, a kernel's
generated code) by the object's identity: structural hashing of a large IR costs more than the
work saved, and two equal programs written in different places differ in their source
locations anyway. A plain ``dict`` keyed by ``id()`` must hold the object, or a new object
could reuse the id: then every program ever defined stays alive with all it derived (a
notebook cell re-run 1,500 times kept 1,500 of everything). :class:`IdentityCache` holds its
keys weakly instead: an entry is removed when its key is collected, and nothing in it keeps
the key alive (a value that refers to its key is held weakly: ``weak_values=True``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class IdentityCache(Generic[K, V]):
    """``cache.get(obj)`` / ``cache.put(obj, value)`` by ``id(obj)``; ``obj`` must be weakly
    referenceable (a ``@record(weakref=True)`` class). At most ``size`` entries (the oldest
    dropped first); ``weak_values``: the values are held weakly too (for values that refer
    to their key, which would otherwise keep it alive)."""

    def __init__(self, size: int = 1024, weak_values: bool = False) -> None:
        self.size = size
        self.weak_values = weak_values
        self._entries: dict[int, tuple[weakref.ref[Any], Any]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        hit = self._entries.get(id(key))
        if hit is None or hit[0]() is not key:
            return None
        value = hit[1]() if self.weak_values else hit[1]
        return value  # type: ignore[no-any-return]

    def put(self, key: K, value: V) -> V:
        i = id(key)
        entries = self._entries

        def gone(ref: weakref.ref[Any], i: int = i) -> None:
            hit = entries.get(i)
            if hit is not None and hit[0] is ref:
                entries.pop(i, None)

        held = weakref.ref(value, self._drop_value(i)) if self.weak_values else value
        with self._lock:
            if len(entries) >= self.size:
                entries.pop(next(iter(entries)), None)
            entries[i] = (weakref.ref(key, gone), held)
        return value

    def _drop_value(self, i: int) -> Callable[[weakref.ref[Any]], None]:
        entries = self._entries

        def gone(ref: weakref.ref[Any]) -> None:
            hit = entries.get(i)
            if hit is not None and hit[1] is ref:
                entries.pop(i, None)

        return gone

    def clear(self) -> None:
        self._entries.clear()
