"""gt4py.next's hook points around program calls (``gt4py.next.instrumentation.hooks``).

``program_call_context`` wraps every call of a ``@program``; register a context manager factory
with the same parameters to run code around each call:

>>> @contextlib.contextmanager
... def timed(program, args, offset_provider, enable_jit, kwargs):
...     yield
...     print("ran", program.__name__)
>>> program_call_context.register(timed, name="timed")
>>> program_call_context.remove("timed")

The other hook points are gt4py's and kept for code that registers on them: stencilkit calls
``embedded_program_call_context`` around embedded runs; it has no compiled-program pool, so
``compile_variant_hook`` and ``compiled_program_call_context`` are never called.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from . import metrics
from .hook_machinery import context_hook, event_hook


@contextlib.contextmanager
def _timed(key: str) -> Iterator[None]:
    """Sets the current source key (left set after the call, where gt4py's collectors leave it:
    ``metrics.get_current_source_key()`` names the last program run) and adds the call's time."""
    metrics.set_current_source_key(key)
    start = time.perf_counter()
    yield
    elapsed = time.perf_counter() - start
    source = metrics.sources[key]
    # gt4py's levels: MINIMAL collects the call's total, PERFORMANCE and above also compute
    if metrics.get_current_level() >= metrics.PERFORMANCE:
        source.metrics[metrics.COMPUTE_METRIC].add_sample(elapsed)
    source.metrics[metrics.TOTAL_METRIC].add_sample(elapsed)


@context_hook
def program_call_context(
    program: Any,
    args: tuple[Any, ...],
    offset_provider: Any,
    enable_jit: bool,
    kwargs: dict[str, Any],
) -> contextlib.AbstractContextManager[Any]:
    """Hook called at the beginning and end of a program call."""
    if not metrics.is_any_level_enabled():
        return contextlib.nullcontext()
    backend = getattr(program, "backend", None)
    name = "embedded" if backend is None else getattr(backend, "name", str(backend))
    return _timed(f"{program.__name__}<'{name}'>")


@context_hook
def embedded_program_call_context(
    program: Any,
    args: tuple[Any, ...],
    offset_provider: Any,
    kwargs: dict[str, Any],
) -> contextlib.AbstractContextManager[Any]:
    """Hook called at the beginning and end of an embedded program call."""
    return contextlib.nullcontext()


@event_hook
def compile_variant_hook(
    program_pool: Any,
    key: Any,
    backend: Any,
    argument_descriptors: Any,
    offset_provider: Any,
) -> None:
    """Callback hook invoked before compiling a program variant (never called by stencilkit)."""


@context_hook
def compiled_program_call_context(
    program_pool: Any,
    key: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    offset_provider: Any,
) -> contextlib.AbstractContextManager[Any]:
    """Hook called around a compiled program call (never called by stencilkit)."""
    return contextlib.nullcontext()


__all__ = [
    "compile_variant_hook",
    "compiled_program_call_context",
    "embedded_program_call_context",
    "program_call_context",
]
