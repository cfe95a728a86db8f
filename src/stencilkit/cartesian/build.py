"""``gtscript.stencil``: parse, lower and bind a definition to a stencilkit backend at
decoration; one ``StencilObject`` per (definition, externals, dtypes, backend, options)."""

from __future__ import annotations

import hashlib
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir.lower import flat_params
from . import gt_cache
from .backend_names import lookup
from .definitions import GTScriptCallError
from .lowering import lower_definition
from .parse import parse_definition
from .stencil_object import StencilObject

#: stencilkit's own backend names, accepted beside gt4py.cartesian's (``backend_names.py``).
_NATIVE = {"embedded": "embedded", "cpu": "cpu", "gpu": "gpu"}
#: Backend options gt4py users pass that change nothing here (accepted as hints).
_HINT_OPTIONS = frozenset(
    {"format_source", "device_sync", "ignore_np_errstate", "oir_pipeline", "verbose", "clean", "skip_passes", "opt_level",
     "extra_opt_flags", "add_profile_info", "log_level", "cache_settings", "raise_if_not_cached"}
)  # fmt: skip
_PRIVATE_OPTIONS = frozenset({"_impl_opts"})
_CACHE: dict[Any, StencilObject] = {}


def _precision(value: int | None, env: str) -> int:
    if value is None:
        value = int(os.environ.get(env, "64"))
    if value not in (32, 64):
        raise ValueError(f"literal precision must be 32 or 64, got {value}")
    return value


def literal_dtypes(options: dict[str, Any]) -> tuple[str, str]:
    """The dtypes of untyped int and float literals for these stencil options."""
    ip = _precision(options.get("literal_int_precision"), "GT4PY_LITERAL_INT_PRECISION")
    fp = _precision(options.get("literal_float_precision"), "GT4PY_LITERAL_FLOAT_PRECISION")
    return f"int{ip}", f"float{fp}"


def _key_part(v: Any) -> Any:
    if isinstance(v, dict):
        return tuple(sorted((repr(k), _key_part(x)) for k, x in v.items()))
    if isinstance(v, list | tuple):
        return tuple(_key_part(x) for x in v)
    if callable(v):
        return ("callable", id(v))
    return (type(v).__name__, repr(v))


def build_stencil(
    backend: str,
    definition: Callable[..., Any],
    *,
    build_info: dict[str, Any] | None = None,
    dtypes: dict[Any, Any] | None = None,
    externals: dict[str, Any] | None = None,
    name: str | None = None,
    rebuild: bool = False,
    literal_int_precision: int | None = None,
    literal_float_precision: int | None = None,
    **kwargs: Any,
) -> StencilObject:
    kind = _NATIVE.get(backend) if isinstance(backend, str) else None
    if kind is None:
        kind = lookup(backend).target  # UnknownBackendError (a ValueError) names the known ones
    for k in list(kwargs):
        if (k.startswith("_") and k not in _PRIVATE_OPTIONS) or (
            not k.startswith("_") and k not in _HINT_OPTIONS
        ):
            # gt4py warns and goes on (a backend option another backend does not know)
            known = ", ".join(sorted(_HINT_OPTIONS | _PRIVATE_OPTIONS))
            warnings.warn(
                f"Unknown option {k!r} of gtscript.stencil for backend {backend!r}, ignored;"
                f" the known options are: {known}",
                RuntimeWarning,
                stacklevel=3,
            )
            del kwargs[k]
    ip = _precision(literal_int_precision, "GT4PY_LITERAL_INT_PRECISION")
    fp = _precision(literal_float_precision, "GT4PY_LITERAL_FLOAT_PRECISION")
    externals = dict(externals or {})
    dtypes = dict(dtypes or {})
    key = (
        id(definition), getattr(definition, "__code__", None), _key_part(externals), _key_part(dtypes),
        backend, ip, fp, name,
    )  # fmt: skip
    if not rebuild and key in _CACHE:
        return _indexed(_CACHE[key], backend, name, definition)
    t0 = time.perf_counter()
    parsed = parse_definition(definition, externals, dtypes, f"int{ip}", f"float{fp}")
    t1 = time.perf_counter()
    lowered = lower_definition(parsed)
    t2 = time.perf_counter()
    runner, on_gpu = _runner(kind, lowered.program)
    if kind == "embedded" and kwargs.get("ignore_np_errstate", True):
        runner = _QuietRunner(runner)
    t3 = time.perf_counter()
    options = {
        "literal_int_precision": ip,
        "literal_float_precision": fp,
        "name": name or definition.__name__,
        **kwargs,
    }
    obj = _stencil_class(definition, backend, key)(
        parsed, lowered, runner, backend, on_gpu, options, definition
    )
    if build_info is not None:
        build_info.update(
            parse_time=t1 - t0, module_time=t2 - t1, codegen_time=0.0,
            build_time=t3 - t2, load_time=0.0,
        )  # fmt: skip
    _CACHE[key] = obj
    return _indexed(obj, backend, name, definition)


def _indexed(obj: StencilObject, backend: str, name: str | None, definition: Any) -> StencilObject:
    """``obj``, its folder made in gt4py's cache layout while the gt4py alias serves (as gt4py
    makes it on every ``stencil`` call, under the current ``cache_settings``: gt_cache.py)."""
    gt_cache.record_build(
        str(backend), gt_cache.qualified_name(name, definition), type(obj).__name__
    )
    return obj


def _stencil_class(definition: Any, backend: Any, key: tuple[Any, ...]) -> type[StencilObject]:
    """A subclass of ``StencilObject`` per build, named like gt4py's generated classes
    (``<definition>__<backend>_<hash>``): NDSL names stencils in its build and run reports by
    ``type(stencil_object).__name__`` and aggregates ``exec_info`` under it, so the name must
    tell builds apart (a shared class name would merge every stencil's timings into one).
    ``_gt_id_`` (a class attribute, as gt4py's) identifies the build: NDSL's
    ``CompareToNumpyStencil`` keys its reports by it."""
    tag = "".join(c if c.isalnum() else "_" for c in str(backend))
    code = getattr(definition, "__code__", None)
    where = (code.co_filename, code.co_firstlineno) if code is not None else ()
    what = repr((getattr(definition, "__qualname__", ""), where, key[2:])).encode()
    digest = hashlib.sha1(what).hexdigest()
    if code is not None:  # the stencil's identity (gt4py's ``_gt_id_``): its code too
        what += code.co_code + repr(code.co_consts).encode()
    name = f"{getattr(definition, '__name__', 'stencil')}__{tag}_{digest[:10]}"
    attrs = {"__slots__": (), "__module__": StencilObject.__module__}
    attrs["_gt_id_"] = hashlib.sha1(what).hexdigest()
    return type(name, (StencilObject,), attrs)


class _QuietRunner:
    """An embedded runner whose launches run under ``numpy.errstate(all="ignore")``: gt4py's
    NumPy backends do so unless ``ignore_np_errstate=False`` (then NumPy's warnings show)."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.runner, name)

    def __call__(self, *args: Any) -> Any:
        with np.errstate(all="ignore"):
            return self.runner(*args)

    def bound_launch(self, flat: Any, fixed: Any) -> Any:
        fn = self.runner.bound_launch(flat, fixed)
        if fn is None:
            return None

        def quiet(args: Any) -> Any:
            with np.errstate(all="ignore"):
                return fn(args)

        return quiet


def _runner(kind: str, program: Any) -> tuple[Any, bool]:
    from ..backends import cpu, embedded_runner, gpu

    try:  # the engine's program interface (stages/interface.py), where the engine has it
        from ..stages.interface import interface_of  # type: ignore[import-not-found]

        args: tuple[Any, ...] = (interface_of(program),)
    except ImportError:
        args = (program, flat_params(program.params + program.temps))
    if kind == "embedded":
        return embedded_runner(*args), False
    if kind == "cpu":
        return cpu.runner(*args), False
    if kind == "gpu":
        return gpu.runner(*args), True
    raise GTScriptCallError(f"unknown stencilkit backend {kind}")
