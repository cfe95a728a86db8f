"""Embedded backend: whole-array evaluation on NumPy or CuPy."""

from .runner import EmbeddedRunner

__all__ = ["EmbeddedRunner"]
