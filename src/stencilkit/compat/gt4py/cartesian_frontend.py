"""``gt4py.cartesian.frontend.exceptions`` and ``...frontend.gtscript_frontend`` as the alias
serves them: GTScript's error classes, where gt4py's users and tests import them from.

>>> GTScriptSyntaxError.__mro__[1].__name__
'StencilTypeError'
"""

from __future__ import annotations

from ...cartesian.definitions import (
    GTScriptDefinitionError,
    GTScriptSymbolError,
    GTScriptSyntaxError,
    GTSemanticError,
    GTSpecificationError,
    GTSyntaxError,
)

#: the Python ast module's version gt4py's frontend checks against
PYTHON_AST_VERSION = (3, 11)
GTScriptAssertionError = GTScriptDefinitionError
GTScriptDataTypeError = GTScriptDefinitionError
GTScriptValueError = GTScriptDefinitionError
GTScriptFrontendError = GTSemanticError

__all__ = [
    "GTScriptAssertionError",
    "GTScriptDataTypeError",
    "GTScriptDefinitionError",
    "GTScriptFrontendError",
    "GTScriptSymbolError",
    "GTScriptSyntaxError",
    "GTScriptValueError",
    "GTSemanticError",
    "GTSpecificationError",
    "GTSyntaxError",
    "PYTHON_AST_VERSION",
]
