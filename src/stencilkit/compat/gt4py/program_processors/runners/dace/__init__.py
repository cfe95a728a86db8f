"""gt4py.next's DaCe backends: not available in stencilkit.

The module imports (code such as icon4py imports it to offer a DaCe backend among others), and
every DaCe backend it names refuses with :class:`DaceNotAvailableError`, saying what to use
instead. stencilkit's compiled backends are ``cpu`` (C++/OpenMP) and ``gpu`` (CUDA)::

    >>> make_dace_backend(gpu=False)
    Traceback (most recent call last):
    ...
    stencilkit.program_processors.runners.dace.DaceNotAvailableError: ...
"""

from __future__ import annotations

from typing import Any, NoReturn

from . import transformations


class DaceNotAvailableError(NotImplementedError):
    """A DaCe backend was asked for; stencilkit has none."""


def _refuse(what: str) -> NoReturn:
    raise DaceNotAvailableError(
        f"{what}: stencilkit has no DaCe backend; use stencilkit's cpu backend (gtx.cpu, alias"
        " gtx.gtfn_cpu; icon4py: --backend=gtfn_cpu) or gpu backend (gtx.gpu, --backend=gtfn_gpu)"
    )


def make_dace_backend(gpu: bool = False, **options: Any) -> NoReturn:
    """gt4py's DaCe backend factory: refuses (:class:`DaceNotAvailableError`)."""
    _refuse(f"make_dace_backend(gpu={gpu!r})")


def make_dace_toolchain(*args: Any, **kwargs: Any) -> NoReturn:
    """gt4py's DaCe toolchain factory: refuses (:class:`DaceNotAvailableError`)."""
    _refuse("make_dace_toolchain()")


# gt4py's ready-made DaCe backends, and its DaCe workflow pieces: named, so that using one says why it fails
_DACE_NAMES = frozenset(
    {
        "run_dace_cpu",
        "run_dace_cpu_noopt",
        "run_dace_gpu",
        "run_dace_gpu_noopt",
        "get_sdfg_args",
        "DaCeBindingsBuilder",
        "DaCeCompilationBuilder",
        "DaCeConfig",
        "DaCeTranslationBuilder",
        "make_dace_bindings",
        "make_dace_compile_workflow",
        "make_dace_compiler",
        "make_dace_translator",
    }
)


def __getattr__(name: str) -> Any:
    if name in _DACE_NAMES:
        _refuse(f"gt4py.next.program_processors.runners.dace.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DaceNotAvailableError", "make_dace_backend", "make_dace_toolchain", "transformations"]
