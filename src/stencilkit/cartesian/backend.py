"""``gt4py.cartesian.backend``: a backend class per gt4py.cartesian backend name.

NDSL asks ``from_name(name).storage_info`` for the layout and device of its storages and checks
its backend strings with it. Each class carries gt4py's class attributes (``name``,
``storage_info``, ``languages``) and the stencilkit record it stands for (``record``).

>>> from_name("gt:gpu").storage_info["device"]
'gpu'
"""

from __future__ import annotations

from typing import Any, ClassVar

from .backend_names import BACKENDS, BackendName, UnknownBackendError
from .layout_registry import LayoutInfo, info_of

__all__ = ["REGISTRY", "Backend", "BackendNotImplementedError", "from_name"]


class BackendNotImplementedError(UnknownBackendError, NotImplementedError):
    """An unknown backend name: a ``ValueError`` and gt4py's ``NotImplementedError``."""


class Backend:
    """Base of the backend classes :func:`from_name` returns (never instantiated by NDSL)."""

    name: ClassVar[str]
    storage_info: ClassVar[LayoutInfo]
    languages: ClassVar[dict[str, Any]]
    record: ClassVar[BackendName]

    def __repr__(self) -> str:
        return f"<gt4py.cartesian backend {self.name!r} on stencilkit {self.record.target}>"


def _backend_class(record: BackendName) -> type[Backend]:
    bindings = [] if record.language == "python" else ["python"]
    attrs = {
        "name": record.name,
        "storage_info": info_of(record),
        "languages": {"computation": record.language, "bindings": bindings},
        "record": record,
        "__doc__": f"gt4py.cartesian's {record.name!r}, run by stencilkit's {record.target}.",
    }
    class_name = "".join(p.capitalize() for p in record.name.replace(":", "_").split("_"))
    return type(f"{class_name}Backend", (Backend,), attrs)


#: the backend class of every name, by name
REGISTRY: dict[str, type[Backend]] = {n: _backend_class(r) for n, r in BACKENDS.items()}


def from_name(name: str) -> type[Backend]:
    """The backend class of a gt4py.cartesian backend name; an unknown name raises an error
    (a ``ValueError`` and a ``NotImplementedError``) listing the known ones."""
    cls = REGISTRY.get(name) if isinstance(name, str) else None
    if cls is None:
        raise BackendNotImplementedError(
            f"backend {name!r} is not implemented",
            hint="use one of " + ", ".join(repr(n) for n in REGISTRY),
        )
    return cls
