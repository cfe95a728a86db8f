"""Run a field operator of scalars (icon4py's microphysics helpers, ``sat_pres_ice(t)``) the
way icon4py uses it: called from a scan operator, column by column.

:func:`column_wrapper` writes (to a temporary file, so that its source can be parsed) and
imports

    @gtx.scan_operator(axis=K, forward=True, init=<zeros of the result type>)
    def _column_of_f(_carry: R, a: A, b: B) -> R:
        return f(a, b)

whose columns the acceptance run feeds like any scan's.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Any

from ...core.types import ScalarType, TupleType, TypeSpec
from ...ir import nodes as ir

__all__ = ["column_wrapper", "is_scalar_type"]

_DIR: list[Path] = []


def is_scalar_type(t: TypeSpec) -> bool:
    """A scalar or a (nested) tuple of scalars."""
    if isinstance(t, TupleType):
        return all(is_scalar_type(s) for s in t.types)
    return isinstance(t, ScalarType)


def _annotation(t: TypeSpec) -> str:
    if isinstance(t, TupleType):
        return f"tuple[{', '.join(_annotation(s) for s in t.types)}]"
    assert isinstance(t, ScalarType)
    return "bool" if t.dtype == "bool" else f"_sk.{t.dtype}"


def _zeros(t: TypeSpec) -> str:
    if isinstance(t, TupleType):
        return "(" + "".join(f"{_zeros(s)}, " for s in t.types) + ")"
    assert isinstance(t, ScalarType)
    return "False" if t.dtype == "bool" else f"_sk.{t.dtype}(0)"


def column_wrapper(obj: Any, defn: ir.FieldOperator) -> Any:
    """A scan operator over ``K`` that applies the scalar field operator ``obj`` level by level."""
    fn = obj.__wrapped__
    ret = defn.body.type
    params = ", ".join(f"{p.name}: {_annotation(p.type)}" for p in defn.params)
    names = ", ".join(p.name for p in defn.params)
    wrapper = f"_column_of_{fn.__name__}"
    source = (
        "import importlib\n\nimport stencilkit as _sk\n\n"
        f"_target = getattr(importlib.import_module({fn.__module__!r}), {fn.__name__!r})\n"
        "_K = _sk.Dimension('K', _sk.DimensionKind.VERTICAL)\n\n\n"
        f"@_sk.scan_operator(axis=_K, forward=True, init={_zeros(ret)})\n"
        f"def {wrapper}(_carry: {_annotation(ret)}, {params}) -> {_annotation(ret)}:\n"
        f"    return _target({names})\n"
    )
    if not _DIR:
        _DIR.append(Path(tempfile.mkdtemp(prefix="stencilkit-icon4py-")))
    name = f"_stencilkit_column_{fn.__module__.replace('.', '_')}_{fn.__name__}"
    path = _DIR[0] / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return getattr(module, wrapper)
