"""The icon4py acceptance run: every stencil of an installed icon4py, imported through the gt4py
alias, run on random inputs on embedded and compiled backends, compared
(``python -m stencilkit.compat.icon4py --help``; ``acceptance.py``). ``discover`` finds the
stencils in icon4py's source, ``mesh`` builds an ICON-like mesh, ``inputs`` random arguments,
``run`` runs one stencil, ``report`` writes the results, ``scalar`` wraps column scalars."""

from .acceptance import main, run_all, stencil_sources

__all__ = ["main", "run_all", "stencil_sources"]
