"""The public names of stencilkit that the API reference must document, and a check of a built
reference against them (run by tests/test_docs_api.py in CI):

    python docs/api/public_names.py docs/api/_build     # lists what the build leaves out

A name is public when a module below lists it (``__all__``, or the names given here); it is
documented when the built HTML has its anchor (``id="stencilkit.as_field"``), under the module
that exports it or the one that defines it. Each public method and property of a public class
must be documented too: autodoc leaves out members without a docstring, so a missing anchor
means a missing docstring.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: module -> its public names (None: the module's ``__all__``)
SURFACES: dict[str, list[str] | None] = {
    "stencilkit": None,
    "stencilkit.distributed": None,
    "stencilkit.aot": None,
    "stencilkit.meshes": None,
    "stencilkit.meshes.plot": [
        "triangulation",
        "plot_cell_field",
        "plot_vertex_field",
        "plot_edge_field",
    ],
    "stencilkit.io": None,
    "stencilkit.config": [
        "PARSE_AT_DECORATION",
        "DEFAULT_BACKEND",
        "BUILD_CACHE_DIR",
        "BUILD_CACHE_MAX_SIZE",
        "DEBUG",
        "VERBOSE_EXCEPTIONS",
        "BUILD_CACHE_LIFETIME",
        "CMAKE_BUILD_TYPE",
        "COLLECT_METRICS_LEVEL",
        "UNSTRUCTURED_HORIZONTAL_HAS_UNIT_STRIDE",
    ],
}


def public_names() -> Iterator[tuple[str, str, Any]]:
    """(module, name, object) for every public name."""
    for module_name, names in SURFACES.items():
        module = importlib.import_module(module_name)
        for name in names if names is not None else module.__all__:
            yield module_name, name, getattr(module, name)


def _members(cls: type) -> Iterator[str]:
    """The public methods and properties a class defines (not its dataclass fields)."""
    if issubclass(cls, enum.Enum | BaseException):
        return
    seen: set[str] = set()
    for base in cls.__mro__:  # its own and those of stencilkit's base classes
        if not base.__module__.startswith("stencilkit"):
            continue
        for name, value in vars(base).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if isinstance(value, property | classmethod | staticmethod) or inspect.isfunction(
                value
            ):
                yield name


def _anchors(build: Path) -> set[str]:
    ids: set[str] = set()
    for page in build.glob("*.html"):
        ids |= set(re.findall(r'id="(?:module-)?(stencilkit[\w.]*)"', page.read_text()))
    return ids


def _places(module: str, name: str, obj: Any) -> list[str]:
    """Where the reference may document ``module.name``: there, or where it is defined."""
    places = [f"{module}.{name}"]
    defined = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if (
        isinstance(defined, str)
        and isinstance(qualname, str)
        and (inspect.isclass(obj) or inspect.isfunction(obj))
    ):
        places.append(f"{defined}.{qualname}")
    return places


def _has_docstring(obj: Any) -> bool:
    """A docstring of its own: not inherited from a builtin (``object``, ``int``, ``Enum``)."""
    doc = obj.__doc__ if isinstance(obj, property) else getattr(obj, "__doc__", None)
    if isinstance(obj, property) and obj.fget is not None:
        doc = obj.fget.__doc__
    if not doc or not doc.strip():
        return False
    if inspect.isclass(obj) or inspect.isroutine(obj) or isinstance(obj, property):
        return True
    return False  # a data value: documented by the reference's own text, not a docstring


def undocumented(build: Path) -> list[str]:
    """The public names and members without an entry in the built reference ``build``. A
    member inherited from another public class may be documented there (``Connectivity.sum``
    as ``Field.sum``)."""
    ids = _anchors(build)
    missing: list[str] = []
    documented: dict[type, list[str]] = {}
    classes = []
    for module, name, obj in public_names():
        places = [p for p in _places(module, name, obj) if p in ids]
        if not places:
            missing.append(f"{module}.{name}")
            continue
        ours = getattr(obj, "__module__", "") or ""
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and ours.startswith("stencilkit"):
            if not _has_docstring(obj):
                missing.append(f"{module}.{name} (no docstring)")
        if inspect.isclass(obj) and ours.startswith("stencilkit"):
            documented.setdefault(obj, []).extend(places)
            classes.append(obj)
    for cls in classes:
        for member in _members(cls):
            places = [p for base in cls.__mro__ for p in documented.get(base, [])]
            if not any(f"{p}.{member}" in ids for p in places):
                missing.append(f"{documented[cls][0]}.{member}")
            elif not _has_docstring(inspect.getattr_static(cls, member)):
                owner = next(b for b in cls.__mro__ if member in vars(b))
                missing.append(f"{owner.__module__}.{owner.__qualname__}.{member} (no docstring)")
    return sorted(set(missing))


if __name__ == "__main__":
    left_out = undocumented(Path(sys.argv[1]))
    print("\n".join(left_out) or "every public name is documented")
    sys.exit(1 if left_out else 0)
