"""``gt4py.cartesian.config``: cache, build and code settings as gt4py.cartesian exposes them.

NDSL rewrites ``cache_settings["dir_name"]`` per rank and reads ``root_path``; both start from
``GT_CACHE_ROOT`` / ``GT_CACHE_DIR_NAME`` as in gt4py. These are mutable dicts by gt4py's
design: GTScript builds read them when they build.

>>> sorted(cache_settings)
['dir_name', 'load_retries', 'load_retry_delay', 'root_path']
"""

from __future__ import annotations

import os
from typing import Any

from .compiler import cxx_compiler_defaults, gpu_configuration

GT4PY_COMPILE_OPT_LEVEL: str = os.environ.get("GT4PY_COMPILE_OPT_LEVEL", "3")
GT4PY_EXTRA_COMPILE_OPT_FLAGS: str = os.environ.get("GT4PY_EXTRA_COMPILE_OPT_FLAGS", "")
GT4PY_EXTRA_LINK_ARGS: str = os.environ.get("GT4PY_EXTRA_LINK_ARGS", "")
GT_CPP_TEMPLATE_DEPTH: int = 1024
DACE_DEFAULT_BLOCK_SIZE: str = os.environ.get("DACE_DEFAULT_BLOCK_SIZE", "64,8,1")

_gpu = gpu_configuration(GT4PY_COMPILE_OPT_LEVEL)
_cxx = cxx_compiler_defaults(GT4PY_COMPILE_OPT_LEVEL)

GT4PY_EXTRA_COMPILE_ARGS: str = os.environ.get("GT4PY_EXTRA_COMPILE_ARGS", _cxx.cxx_compile_flags)
GT4PY_CARTESIAN_ENABLE_OPENMP: bool = os.environ.get(
    "GT4PY_CARTESIAN_ENABLE_OPENMP", str(_cxx.enable_openmp)
).lower() not in ("0", "false", "off")

_openmp_flags = _cxx.open_mp_flag.split() if GT4PY_CARTESIAN_ENABLE_OPENMP else []

build_settings: dict[str, Any] = {
    "cuda_bin_path": _gpu.binary_path,
    "cuda_include_path": _gpu.include_path,
    "cuda_library_path": _gpu.library_path,
    "cuda_arch": _gpu.arch,
    "openmp": {
        "use_openmp": GT4PY_CARTESIAN_ENABLE_OPENMP,
        "cppflags": os.environ.get("OPENMP_CPPFLAGS", " ".join(_openmp_flags)).split(),
        "ldflags": os.environ.get("OPENMP_LDFLAGS", " ".join(_openmp_flags)).split(),
    },
    "extra_compile_args": {
        "cxx": GT4PY_EXTRA_COMPILE_ARGS.split(),
        "cuda": list(_gpu.gpu_compile_flags),
    },
    "extra_link_args": GT4PY_EXTRA_LINK_ARGS.split(),
    "parallel_jobs": os.cpu_count() or 1,
    "cpp_template_depth": int(os.environ.get("GT_CPP_TEMPLATE_DEPTH", GT_CPP_TEMPLATE_DEPTH)),
}

cache_settings: dict[str, Any] = {
    "dir_name": os.environ.get("GT_CACHE_DIR_NAME", ".gt_cache"),
    "root_path": os.environ.get("GT_CACHE_ROOT", os.path.abspath(".")),
    "load_retries": int(os.environ.get("GT_CACHE_LOAD_RETRIES", "3")),
    "load_retry_delay": int(os.environ.get("GT_CACHE_LOAD_RETRY_DELAY", "100")),  # ms
}

code_settings: dict[str, Any] = {"root_package_name": "_GT_"}
