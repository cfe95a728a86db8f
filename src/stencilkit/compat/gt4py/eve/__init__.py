"""gt4py's ``eve`` names that gt4py.next user code imports (``from gt4py import eve``).

Served as ``gt4py.eve`` by the alias (``stencilkit.compat.gt4py.alias``); ``gt4py.eve.utils`` is
``stencilkit.utils``. Only the small type definitions are here, with gt4py's behaviour:

>>> class Variant(StrEnum):
...     NONE = "none"
>>> str(Variant.NONE), Variant.NONE == "none"
('none', True)
"""

from __future__ import annotations

import enum
from enum import Enum, IntEnum
from typing import NoReturn, final


class StrEnum(enum.StrEnum):
    """An :class:`enum.Enum` whose members are real strings; ``str(member)`` is its value."""


class NothingType(type):
    """Metaclass of :class:`NOTHING`: the marker is false."""

    def __bool__(cls) -> bool:
        return False


@final
class NOTHING(metaclass=NothingType):
    """A marker for "no value" where ``None`` is a valid value (gt4py's ``eve.NOTHING``)."""

    def __new__(cls: type) -> NoReturn:
        raise TypeError(f"{cls.__name__} is used as a sentinel value and cannot be instantiated.")


__all__ = ["NOTHING", "Enum", "IntEnum", "NothingType", "StrEnum"]
