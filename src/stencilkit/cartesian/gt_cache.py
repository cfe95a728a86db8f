"""gt4py's on-disk cache layout, kept as an index while stencilkit serves ``gt4py``.

Programs written for gt4py read its cache folder: NDSL's run mode checks that each rank's
``<root_path>/.gt_cache_<rank>`` exists before it runs, and its tests look for a stencil's
package folder there. gt4py puts each stencil's generated module at

    <root_path>/<dir_name>/py<major><minor>_<api version>/<backend slug>/<qualified name as folders>/

(``cache_settings`` of :mod:`.config`; the slug is the backend name without ``:``). stencilkit
keeps its builds in its own content-addressed cache; while the gt4py alias is active (the
program imports ``gt4py`` served by stencilkit), each ``gtscript.stencil`` build also makes that
folder and writes one small text file in it naming the stencil, its backend and where the
generated code lives. Used directly (``from stencilkit.cartesian import gtscript``), nothing is
written outside stencilkit's cache.
"""

from __future__ import annotations

import os
import string
import sys
from pathlib import Path
from typing import Any

from .config import cache_settings

_SLUG = set("-_.()" + string.ascii_letters + string.digits)


def alias_active() -> bool:
    """Whether stencilkit's gt4py alias is installed in this process. Looked up, not imported:
    the alias (``stencilkit.compat``) sits above this frontend and is loaded when installed."""
    alias = sys.modules.get("stencilkit.compat.gt4py.alias")
    return alias is not None and bool(alias.gt4py_alias_installed())


def qualified_name(name: str | None, definition: Any) -> str:
    """gt4py's ``module.name`` of a stencil: ``name`` if it has dots (NDSL passes
    ``"<module>.<function>"``), else the definition's module and ``name`` or its own name."""
    if name and "." in name:
        return name
    module = getattr(definition, "__module__", None) or "__main__"
    return f"{module}.{name or getattr(definition, '__name__', 'stencil')}"


def package_path(backend: str, qualified: str) -> Path:
    """The folder gt4py keeps a stencil's module in, from the current ``cache_settings``."""
    v = sys.version_info
    root = Path(str(cache_settings["root_path"])) / str(cache_settings["dir_name"])
    slug = "".join(c for c in str(backend) if c in _SLUG).replace(" ", "_")
    return root.joinpath(f"py{v.major}{v.minor}_{sys.api_version}", slug, *qualified.split("."))


def record_build(backend: str, qualified: str, class_name: str) -> Path | None:
    """Make the stencil's folder in gt4py's layout and write its index file there, while the
    alias is active (else nothing: None). Returns the index file."""
    if not alias_active():
        return None
    folder = package_path(backend, qualified)
    index = folder / f"m_{class_name}.stencilkit.txt"
    if index.exists():
        return index
    folder.mkdir(parents=True, exist_ok=True)
    text = (
        f"{qualified} on backend {backend!r}, built by stencilkit serving gt4py.\n"
        "stencilkit keeps the generated code and binaries in its own cache"
        " (`stencilkit cache --help`; STENCILKIT_CACHE_DIR overrides its place).\n"
    )
    tmp = index.with_name(f"{index.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    tmp.replace(index)  # atomic: ranks sharing a folder see a whole file
    return index
