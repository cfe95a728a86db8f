"""gt4py.storage's layout registry: a ``LayoutInfo`` dict per backend name.

Filled from :mod:`.backend_names`, so ``gt4py.storage.from_name("gt:gpu")`` and the storage
allocators read the same table as the GTScript frontend. ``register`` adds (or, with ``None``,
removes) a name, as in gt4py; the allocators honour registered names.

>>> from_name("gt:cpu_ifirst")["layout_map"](("I", "J", "K"))
(2, 1, 0)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypedDict

from ..core.errors import StencilValueError
from .backend_names import BACKENDS, BackendName, UnknownBackendError

__all__ = ["REGISTRY", "LayoutInfo", "from_name", "info_of", "register"]


class LayoutInfo(TypedDict):
    """gt4py's storage info of a backend: ``alignment`` in elements, ``device`` (``"cpu"`` or
    ``"gpu"``), ``layout_map(dimensions)`` and ``is_optimal_layout(array, dimensions)``."""

    alignment: int
    device: Literal["cpu", "gpu"]
    layout_map: Callable[[tuple[str, ...]], tuple[int, ...]]
    is_optimal_layout: Callable[[Any, tuple[str, ...]], bool]


def info_of(record: BackendName) -> LayoutInfo:
    """The ``LayoutInfo`` dict of a backend-name record."""
    return LayoutInfo(
        alignment=record.alignment,
        device=record.device,
        layout_map=record.layout_map,
        is_optimal_layout=record.is_optimal_layout,
    )


#: every registered layout, by backend name (gt4py's ``REGISTRY``)
REGISTRY: dict[str, LayoutInfo] = {name: info_of(rec) for name, rec in BACKENDS.items()}

_KEYS = frozenset(LayoutInfo.__annotations__)


def from_name(name: str) -> LayoutInfo:
    """The layout info registered under ``name``; an unknown name raises a ``ValueError``
    listing the registered ones."""
    info = REGISTRY.get(name) if isinstance(name, str) else None
    if info is None:
        raise UnknownBackendError(
            f"no storage layout is registered for backend {name!r}",
            hint="use one of " + ", ".join(repr(n) for n in REGISTRY),
        )
    return info


def register(name: str, info: LayoutInfo | None) -> None:
    """Register ``info`` under ``name`` (``None`` removes the name)."""
    if not isinstance(name, str):
        raise StencilValueError(f"a layout is registered under a string name, not {name!r}")
    if info is None:
        REGISTRY.pop(name, None)
        return
    missing = sorted(_KEYS - set(info)) if isinstance(info, dict) else sorted(_KEYS)
    if missing:
        raise StencilValueError(
            f"layout info for {name!r} lacks {', '.join(missing)}",
            hint="give a dict with alignment, device, layout_map and is_optimal_layout",
        )
    if info["device"] not in ("cpu", "gpu"):
        raise StencilValueError(
            f"layout info for {name!r} has device {info['device']!r}; use 'cpu' or 'gpu'"
        )
    REGISTRY[name] = info
