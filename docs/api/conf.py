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
