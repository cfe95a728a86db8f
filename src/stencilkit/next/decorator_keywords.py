"""The keywords of ``@field_operator``, ``@program`` and ``@scan_operator``, as gt4py.next 1.2.3
spells them; a keyword outside them is refused, naming the valid ones (a typo such as
``backed=gtx.cpu`` would otherwise run on the embedded backend without a word).

gt4py.next 1.2.3: ``program`` and ``field_operator`` take ``backend``, ``grid_type`` and the
compilation options (``enable_jit``, ``static_params``, ``connectivities``, ``static_domains``);
``scan_operator`` takes ``axis``, ``forward``, ``init``, ``backend``, ``grid_type``. ``frozen``
(``program`` in gt4py 1.0) is accepted so that older code ports. stencilkit builds on first call
whatever these say: the compilation options are accepted and checked for their type only
(docs/configuration.md, "Decorator keywords").
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import SourceLocation, StencilTypeError


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_names(v: Any) -> bool:
    return v is None or (isinstance(v, list | tuple) and all(isinstance(x, str) for x in v))


def _is_mapping(v: Any) -> bool:
    return v is None or isinstance(v, Mapping)


#: compilation option -> (check of its value, what it must be)
_OPTIONS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "enable_jit": (_is_bool, "True or False"),
    "static_params": (_is_names, "a list of parameter names"),
    "connectivities": (_is_mapping, "an offset provider (a dict)"),
    "static_domains": (_is_bool, "True or False"),
}
#: decorator -> its keywords besides ``definition`` (in the order of gt4py's signature)
KEYWORDS: dict[str, tuple[str, ...]] = {
    "program": ("backend", "grid_type", *_OPTIONS, "frozen"),
    "field_operator": ("backend", "grid_type", *_OPTIONS),
    "scan_operator": ("axis", "forward", "init", "backend", "grid_type"),
}


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _caller() -> SourceLocation | None:
    """The user's line that called the decorator: the nearest frame outside stencilkit (the
    decorators' wrappers, such as the API boundary, add frames of their own)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None
    return SourceLocation(frame.f_code.co_filename, frame.f_lineno, 1)


def check_decorator_keywords(decorator: str, options: Mapping[str, Any]) -> None:
    """Refuse keywords ``decorator`` does not take, and compilation options of the wrong type."""
    valid = KEYWORDS[decorator]
    for name, value in options.items():
        if name not in valid:
            close = difflib.get_close_matches(name, valid, n=1)
            guess = f" (did you mean '{close[0]}'?)" if close else ""
            raise StencilTypeError(
                f"{decorator}() got an unexpected keyword argument '{name}'{guess}",
                _caller(),
                hint=f"{decorator}() takes: {', '.join(valid)}",
            )
        if name in _OPTIONS and not _OPTIONS[name][0](value):
            raise StencilTypeError(
                f"{decorator}({name}=...) must be {_OPTIONS[name][1]}, not {value!r}", _caller()
            )
        if name == "frozen" and not _is_bool(value):
            raise StencilTypeError(
                f"{decorator}(frozen=...) must be True or False, not {value!r}", _caller()
            )
