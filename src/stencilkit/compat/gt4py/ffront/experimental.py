"""gt4py.next's ``ffront.experimental``: ``concat_where`` (and ``as_offset`` where available)."""

from __future__ import annotations

from typing import Any

from ....next import builtins as _builtins
from ....next.builtins import concat_where

__all__ = ["concat_where"]

# ``as_offset`` is a frontend builtin added separately; re-exported when present.
if hasattr(_builtins, "as_offset"):
    as_offset: Any = _builtins.as_offset
    __all__ += ["as_offset"]
