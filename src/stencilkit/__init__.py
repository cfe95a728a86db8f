"""stencilkit: weather and climate stencils in Python on NumPy/CuPy, compiled C++ and CUDA.

Source-compatible with gt4py.next for its common subset: ``import stencilkit as gtx``.
"""

import builtins as _builtins
import importlib.util as _importlib_util
from typing import Any as _Any

from . import config
from ._version import __version__
from .backends import Backend, capture_cuda_graph, cpu, gpu, gtfn_cpu, gtfn_gpu, wait_for_tuning

# gt4py.next's re-exports of bool/float/int/tuple and its ``IndexType``: defined once, in fbuiltins
from .compat.gt4py.ffront.fbuiltins import IndexType, bool, float, int, tuple
from .core import (
    BackendUnavailableError,
    BuildError,
    Device,
    DeviceType,
    Dimension,
    DimensionKind,
    Dims,
    Domain,
    FieldOffset,
    StencilError,
    StencilTypeError,
    StencilValueError,
    UnitRange,
    domain,
)
from .core.dims import NamedIndex
from .core.domain import NamedRange, unit_range
from .core.dtypes import (
    bool_ as bool_,
)
from .core.dtypes import (
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .core.grid import CartesianConnectivity, GridType
from .core.staggered import as_non_staggered, flip_staggered, is_staggered
from .fields import (
    Connectivity,
    Field,
    FieldConstructor,
    as_connectivity,
    as_field,
    empty,
    full,
    ones,
    zeros,
)
from .fields.xarray import from_xarray
from .next.builtins import (
    abs,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    astype,
    broadcast,
    cbrt,
    ceil,
    concat_where,
    cos,
    cosh,
    exp,
    floor,
    fmod,
    gamma,
    isfinite,
    isinf,
    isnan,
    log,
    max_over,
    maximum,
    min_over,
    minimum,
    neg,
    neighbor_sum,
    power,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
    where,
)
from .next.decorators import field_operator, program, scan_operator
from .next.operator import FieldOperator
from .next.program import Program

#: ``DeviceType.CUDA`` when CuPy is installed, else None (found without importing CuPy).
CUPY_DEVICE_TYPE = DeviceType.CUDA if _importlib_util.find_spec("cupy") is not None else None

#: gt4py's Python round-trip backend; stencilkit's embedded backend stands in for it.
itir_python = None


def wait_for_compilation() -> None:
    """Block until background compilations finish; stencilkit compiles synchronously."""


def is_scalar_type(value: _Any) -> _builtins.bool:
    """Whether ``value`` is a scalar the DSL supports (bool, int, float or a NumPy scalar of a DSL dtype)."""
    import numpy as np

    from .core.dtypes import DTYPES

    if isinstance(value, np.generic):
        return value.dtype.name in DTYPES
    return isinstance(value, _builtins.bool | _builtins.int | _builtins.float)


__all__ = [
    "Backend",
    "BackendUnavailableError",
    "BuildError",
    "Connectivity",
    "Device",
    "DeviceType",
    "Dimension",
    "DimensionKind",
    "Dims",
    "Domain",
    "Field",
    "FieldOffset",
    "FieldOperator",
    "Program",
    "StencilError",
    "StencilTypeError",
    "StencilValueError",
    "UnitRange",
    "__version__",
    "abs",
    "capture_cuda_graph",
    "wait_for_tuning",
    "arccos",
    "arccosh",
    "arcsinh",
    "arctanh",
    "arcsin",
    "arctan",
    "as_connectivity",
    "as_field",
    "astype",
    "bool",
    "broadcast",
    "cbrt",
    "ceil",
    "concat_where",
    "cos",
    "cosh",
    "cpu",
    "domain",
    "empty",
    "exp",
    "field_operator",
    "float32",
    "from_xarray",
    "float64",
    "floor",
    "fmod",
    "gamma",
    "full",
    "gpu",
    "gtfn_cpu",
    "gtfn_gpu",
    "int8",
    "int16",
    "int32",
    "int64",
    "isfinite",
    "isinf",
    "isnan",
    "log",
    "max_over",
    "maximum",
    "min_over",
    "minimum",
    "neg",
    "neighbor_sum",
    "ones",
    "power",
    "program",
    "scan_operator",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "where",
    "zeros",
    "CUPY_DEVICE_TYPE",
    "CartesianConnectivity",
    "FieldConstructor",
    "GridType",
    "IndexType",
    "NamedIndex",
    "NamedRange",
    "as_non_staggered",
    "backend",
    "common",
    "config",
    "constructors",
    "custom_layout_allocators",
    "errors",
    "ffront",
    "flip_staggered",
    "float",
    "int",
    "is_scalar_type",
    "is_staggered",
    "itir_python",
    "program_processors",
    "tuple",
    "typing",
    "unit_range",
    "utils",
    "wait_for_compilation",
]

# Threads of the cpu backend, logging, configuration errors (docs/configuration.md).
from .core.errors import ConfigurationError  # noqa: E402
from .core.log import configure_from_environment as _configure_logging  # noqa: E402
from .core.log import set_log_level  # noqa: E402
from .toolchain.threads import (  # noqa: E402
    get_num_threads,
    get_parallel_min_work,
    set_num_threads,
    set_parallel_min_work,
    threads,
)

_configure_logging()
__all__ += [
    "ConfigurationError",
    "get_num_threads",
    "get_parallel_min_work",
    "set_log_level",
    "set_num_threads",
    "set_parallel_min_work",
    "threads",
]

# gt4py.next's module layout (compat/gt4py/): user-facing as ``gtx.common``, ``stencilkit.errors``,
# ``from stencilkit.experimental import as_offset``..., the same module objects the gt4py alias
# serves as ``gt4py.next.<name>``.
import importlib as _importlib  # noqa: E402
import sys as _sys  # noqa: E402

from .compat.gt4py import MIRRORS as _MIRRORS  # noqa: E402

for _name in _MIRRORS:
    _module = _importlib.import_module(f"{__name__}.compat.gt4py.{_name}")
    _sys.modules[f"{__name__}.{_name}"] = _module
from .compat.gt4py import (  # noqa: E402
    backend,
    common,
    constructors,
    custom_layout_allocators,
    errors,
    ffront,
    program_processors,
    typing,
    utils,
)
from .compat.gt4py import eve as eve  # noqa: E402
from .compat.gt4py import experimental as experimental  # noqa: E402
