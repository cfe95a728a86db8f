"""The decorators, and ``DEFAULT_BACKEND``: the backend ``@field_operator``, ``@scan_operator``
and ``@program`` use when ``backend=`` is omitted, read at decoration time.

>>> import stencilkit.ffront.decorator as decorator
>>> decorator.DEFAULT_BACKEND = gtx.cpu     # every later decoration without backend= uses cpu

It is ``stencilkit.config.DEFAULT_BACKEND``: setting either sets both.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .... import config
from ....next.decorators import field_operator, program, scan_operator
from ....next.operator import FieldOperator
from ....next.program import Program, ProgramWithBoundArgs


class _DecoratorModule(types.ModuleType):
    """This module, with ``DEFAULT_BACKEND`` held by ``stencilkit.config``: setting it here
    (gt4py's spelling, also through the gt4py alias) sets ``config.DEFAULT_BACKEND``."""

    @property
    def DEFAULT_BACKEND(self) -> Any:  # gt4py's name
        return config.DEFAULT_BACKEND

    @DEFAULT_BACKEND.setter
    def DEFAULT_BACKEND(self, backend: Any) -> None:
        config.DEFAULT_BACKEND = backend


sys.modules[__name__].__class__ = _DecoratorModule

#: gt4py's name for anything a field operator or program can call.
GTCallable = FieldOperator

__all__ = [
    "DEFAULT_BACKEND",  # noqa: F822  # a property of this module (_DecoratorModule)
    "FieldOperator",
    "GTCallable",
    "Program",
    "ProgramWithBoundArgs",
    "field_operator",
    "program",
    "scan_operator",
]
