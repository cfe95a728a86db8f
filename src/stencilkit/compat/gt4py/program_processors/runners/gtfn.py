"""gt4py.next's gtfn backends under their gt4py names: stencilkit's ``cpu`` and ``gpu``.

``GTFNBackendFactory(gpu=..., ...)`` is gt4py 1.2.1's way to make a gtfn backend (icon4py
0.4.1 builds its ``gtfn_cpu``/``gtfn_gpu`` backends with it); gt4py 1.2.3 dropped the name.
It gives stencilkit's ``cpu`` or ``gpu`` backend:

>>> GTFNBackendFactory(gpu=False) is cpu
True
"""

from __future__ import annotations

from typing import Any

from .....backends import Backend, cpu
from .....backends import gpu as gpu_backend

run_gtfn = cpu
run_gtfn_cpu = cpu
run_gtfn_gpu = gpu_backend
run_gtfn_cached = cpu
run_gtfn_gpu_cached = gpu_backend

# gt4py's factory options that describe its own build (caching, the otf workflow, the C++
# build type): stencilkit's build cache and flags cover them, so they are accepted and ignored.
_IGNORED_OPTIONS = frozenset({"cached", "name", "name_postfix", "otf_workflow", "cmake_build_type"})


def GTFNBackendFactory(*, gpu: bool = False, **options: Any) -> Backend:  # gt4py's name
    """The gtfn backend for a device: stencilkit's ``gpu`` backend with ``gpu=True``, else ``cpu``.
    Options other than gt4py's build settings (``cached``, ``name``, ``name_postfix``,
    ``otf_workflow``, ``cmake_build_type``, and ``otf_workflow__...`` overrides) are refused."""
    unknown = sorted(
        k for k in options if k not in _IGNORED_OPTIONS and not k.startswith("otf_workflow__")
    )
    if unknown:
        raise TypeError(
            f"GTFNBackendFactory(): unexpected option(s) {', '.join(unknown)}; stencilkit accepts"
            " gpu= and gt4py's build settings (cached, name, name_postfix, otf_workflow...)"
        )
    return gpu_backend if gpu else cpu


__all__ = [
    "GTFNBackendFactory",
    "run_gtfn",
    "run_gtfn_cached",
    "run_gtfn_cpu",
    "run_gtfn_gpu",
    "run_gtfn_gpu_cached",
]
