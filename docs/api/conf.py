"""Sphinx configuration of the stencilkit API reference (``pip install 'stencilkit[docs]'``).

Build: ``python -m sphinx -W -b html docs/api docs/api/_build`` (CI builds it with warnings as
errors through tests/docs/test_docs_api.py).
"""

from __future__ import annotations

import stencilkit

project = "stencilkit"
author = "stencilkit developers"
copyright = "stencilkit developers"
release = version = stencilkit.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = True
# docstrings use ``...`` for code; a bare `name` would be a cross reference in Sphinx
default_role = "literal"
html_theme = "alabaster"
html_static_path: list[str] = []
exclude_patterns = ["_build"]
autodoc_preserve_defaults = True
# NumPy's dtype-like union, shown by its name rather than expanded over a line
autodoc_type_aliases = {"DTypeLike": "numpy.typing.DTypeLike", "npt.DTypeLike": "numpy.typing.DTypeLike"}
# Every cross reference must resolve (nitpicky, with -W: a broken link fails the build), except
# those to other projects' objects (no intersphinx: CI has no network) and to stencilkit's
# internal classes that the reference does not document.
nitpicky = True
nitpick_ignore_regex = [
    ("py:.*", r"(numpy|np|npt|os|types|collections|typing|cupy|xarray|matplotlib|mpi4py)\..*"),
    ("py:.*", r"stencilkit\.(core|ir|next|stages|backends|fields\.signature|distributed\.(base|comm|plans))\..*"),
    ("py:.*", r"_.*|.*\._.*"),
    ("py:class", r"scalar|Message|Plan|SourceLocation|Infinity|TypeAliasForwardRef|PathLike|Any"),
    # internal types in signatures, and the builtins' parameter descriptions (frontend/builtin_docs.py)
    ("py:class", r"Param|SourceFunction|ProgramWithBoundArgs|Stages|Domain condition"),
    # the engine's interface and runner protocol (stages/interface.py, stages/runner.py)
    ("py:class", r"ProgramInterface|Runner"),
]
# a type named in a signature that two documented classes define as a member (``dtype``) is
# ambiguous to Sphinx; the signature still shows it, unlinked
suppress_warnings = ["ref.python"]


def _plain_signature(app, what, name, obj, options, signature, return_annotation):  # type: ignore[no-untyped-def]
    """Signatures Sphinx cannot parse back (a dataclass field's ``<factory>`` default) are shown
    as text, with its ``~module.`` markers; show ``...`` and the short names instead."""
    import re

    def plain(text: str | None) -> str | None:
        if text is None:
            return None
        text = text.replace("<factory>", "...")
        return re.sub(r"~(?:\w+\.)*(\w+)", r"\1", text)

    return plain(signature), plain(return_annotation)


def setup(app):  # type: ignore[no-untyped-def]
    app.connect("autodoc-process-signature", _plain_signature)
