"""Generated C++17 + OpenMP backend."""

from .backend import CppTarget

__all__ = ["CppTarget"]
