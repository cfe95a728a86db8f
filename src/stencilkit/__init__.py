"""stencilkit: weather and climate stencils in Python on NumPy/CuPy, compiled C++ and CUDA.

Source-compatible with gt4py.next for its common subset: ``import stencilkit as gtx``.
"""

from ._version import __version__
from .backends import Backend, capture_cuda_graph, cpu, gpu, gtfn_cpu, gtfn_gpu
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
from .core.dtypes import (
    bool_,
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
from .decorators import FieldOperator, Program, field_operator, program, scan_operator
from .fields import Connectivity, Field, as_connectivity, as_field, empty, full, ones, zeros
from .frontend.builtins import (
    abs,
    arccos,
    arcsin,
    arctan,
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
    isfinite,
    isinf,
    isnan,
    log,
    max_over,
    maximum,
    min_over,
    minimum,
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

bool = bool_

__all__ = [
    "Backend", "BackendUnavailableError", "BuildError", "Connectivity", "Device", "DeviceType",
    "Dimension", "DimensionKind", "Dims", "Domain", "Field", "FieldOffset", "FieldOperator",
    "Program", "StencilError", "StencilTypeError", "StencilValueError", "UnitRange", "__version__",
    "abs", "capture_cuda_graph", "arccos", "arcsin", "arctan", "as_connectivity", "as_field", "astype", "bool",
    "broadcast", "cbrt", "ceil", "concat_where", "cos", "cosh", "cpu", "domain", "empty", "exp",
    "field_operator", "float32", "float64", "floor", "fmod", "full", "gpu", "gtfn_cpu", "gtfn_gpu",
    "int8", "int16", "int32", "int64", "isfinite", "isinf", "isnan", "log", "max_over", "maximum",
    "min_over", "minimum", "neighbor_sum", "ones", "power", "program", "scan_operator", "sin",
    "sinh", "sqrt", "tan", "tanh", "trunc", "uint8", "uint16", "uint32", "uint64", "where", "zeros",
]
