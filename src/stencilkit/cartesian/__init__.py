"""GTScript (gt4py.cartesian's language) on stencilkit's engine: ``from stencilkit.cartesian
import gtscript``."""

from . import definitions, gtscript

__all__ = ["definitions", "gtscript"]
