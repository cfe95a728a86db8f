"""``gt4py.cartesian.utils`` as the alias serves it: the helpers GT4Py's own test-suite and
NDSL reach through it (``Registry``, ``slugify``, ``shashed_id``, ``is_iterable_of``).

>>> r = Registry()
>>> r.register("copy", print)
>>> list(r)
['copy']
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["Registry", "is_iterable_of", "shash", "shashed_id", "slugify"]


class Registry(dict[str, Any]):
    """A dict with ``register(name, value)`` that refuses a name given twice."""

    def register(self, name: str, value: Any) -> Any:
        if name in self:
            raise ValueError(f"name {name!r} is already registered")
        self[name] = value
        return value


def slugify(value: str, *, replace_spaces: bool = True, valid_symbols: str = "-_.") -> str:
    """``value`` lowercased with every character outside ``[a-z0-9]`` and ``valid_symbols``
    dropped (spaces become ``_`` first): ``slugify("gt:cpu_ifirst", valid_symbols="")``
    gives ``'gtcpuifirst'``."""
    text = str(value).strip().lower()
    if replace_spaces:
        text = re.sub(r"\s+", "_", text)
    keep = re.escape(valid_symbols)
    return re.sub(f"[^a-z0-9{keep}]", "", text)


def shash(*args: Any, length: int | None = None) -> str:
    """A short stable hash (SHA-256, hex) of the ``repr`` of the arguments."""
    digest = hashlib.sha256(repr(args).encode()).hexdigest()
    return digest[:length] if length else digest


def shashed_id(*args: Any, length: int = 10) -> str:
    """``shash`` cut to ``length`` characters: an id for a build or a test run."""
    return shash(*args, length=length)


def is_iterable_of(value: Any, item_class: type | tuple[type, ...]) -> bool:
    """True if ``value`` is iterable (not a string) and every item is an ``item_class``."""
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return False
    return all(isinstance(v, item_class) for v in value)
