"""The decorators, and ``DEFAULT_BACKEND``: the backend ``@field_operator``, ``@scan_operator``
and ``@program`` use when ``backend=`` is omitted, read at decoration time.

>>> import stencilkit.ffront.decorator as decorator
>>> decorator.DEFAULT_BACKEND = gtx.cpu     # every later decoration without backend= uses cpu
"""

from __future__ import annotations

from typing import Any

from ..decorators import (
    FieldOperator,
    Program,
    ProgramWithBoundArgs,
    field_operator,
    program,
    scan_operator,
)

#: ``None`` is the embedded backend. Defined here (not re-exported) so that patching it works.
DEFAULT_BACKEND: Any = None

#: gt4py's name for anything a field operator or program can call.
GTCallable = FieldOperator

__all__ = [
    "DEFAULT_BACKEND",
    "FieldOperator",
    "GTCallable",
    "Program",
    "ProgramWithBoundArgs",
    "field_operator",
    "program",
    "scan_operator",
]
