"""The user documentation where a user has it: ``stencilkit help TOPIC`` prints a page.

The pages are ``docs/*.md`` of the source tree. A wheel installs them as data files under
``<prefix>/share/stencilkit/docs/`` (pyproject.toml's ``[tool.setuptools.data-files]``), found
through the installed distribution's file list; a checkout (editable install, or ``src`` on
``PYTHONPATH``) reads its own ``docs/``. Error hints name a page as ``stencilkit help TOPIC``,
which works for both.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from .errors import StencilValueError

DISTRIBUTION = "stencilkit"
#: the source tree's pages: docs/ beside src/
SOURCE_DOCS = Path(__file__).resolve().parents[3] / "docs"


def pages() -> dict[str, Path]:
    """Every documentation page by topic (``"configuration"``: its file), installed or in the
    checkout; empty where neither is there."""
    found: dict[str, Path] = {}
    if SOURCE_DOCS.is_dir() and (SOURCE_DOCS.parent / "pyproject.toml").exists():
        found = {p.stem: p for p in sorted(SOURCE_DOCS.glob("*.md"))}
    if found:
        return found
    from importlib import metadata

    try:
        files = metadata.files(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return {}
    for f in files:
        parts = Path(str(f)).parts
        if f.name.endswith(".md") and parts[-3:-1] == ("stencilkit", "docs"):
            path = Path(str(f.locate()))
            if path.exists():
                found[path.stem] = path
    return dict(sorted(found.items()))


def page(topic: str) -> str:
    """The text of the page ``topic``; an unknown topic is a ``StencilValueError`` that lists
    the topics and suggests the nearest."""
    known = pages()
    if topic in known:
        return known[topic].read_text()
    close = difflib.get_close_matches(topic, list(known), n=1)
    if not known:
        raise StencilValueError(
            "no documentation pages found in this installation",
            hint="reinstall stencilkit from its wheel or checkout (pip install .)",
        )
    raise StencilValueError(
        f"no documentation page {topic!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
        hint=f"stencilkit help lists the pages: {', '.join(known)}",
    )


def hint(topic: str) -> str:
    """How a user reads the page ``topic``: ``stencilkit help TOPIC``."""
    return f"stencilkit help {topic}"
