"""gt4py.next's exception classes (``from stencilkit import errors``; ``except errors.DSLError``).

Every stencilkit user error (``StencilError`` and its subclasses) is a ``DSLError``; a failed
C++/CUDA build (``BuildError``) is a ``CompilationError``.
"""

from ...core.errors import (
    CompilationError,
    DSLError,
    DSLTypeError,
    GT4PyError,
    InvalidAnnotationError,
    InvalidParameterAnnotationError,
    MissingArgumentError,
    MissingAttributeError,
    MissingParameterAnnotationError,
    UndefinedSymbolError,
    UnsupportedPythonFeatureError,
)

__all__ = [
    "CompilationError",
    "DSLError",
    "DSLTypeError",
    "GT4PyError",
    "InvalidAnnotationError",
    "InvalidParameterAnnotationError",
    "MissingArgumentError",
    "MissingAttributeError",
    "MissingParameterAnnotationError",
    "UndefinedSymbolError",
    "UnsupportedPythonFeatureError",
]
