"""pytest plugin: GT4Py's own gt4py.next feature tests, with gt4py served by stencilkit.

Loaded by ``scripts/gt4py_next_suite.sh`` (``-p sk_gt4py_next_plugin``) in a process started
through ``python -m stencilkit.gt4py_run`` (the ``gt4py`` alias is installed before pytest
imports anything). Two jobs:

1. GT4Py's test helpers (``next_tests/definitions.py``, ``integration_tests/cases.py``,
   ``cases_utils.py``) import a few gt4py *internals* that are not part of gt4py.next's user API
   and that stencilkit does not serve (``type_system.type_specifications``,
   ``type_translation``, ``otf.arguments``, ``embedded.nd_array_field``, ``field_utils``,
   ``named_collections``, ``eve.extended_typing``, ``iterator.ir``). This plugin registers small
   stand-ins for exactly what those helpers use, written over stencilkit's own types, before
   the helpers are imported. Nothing in stencilkit is replaced (one internal name,
   ``utils.IDGeneratorPool``, is added for a fixture's annotation).
2. Backend selection. The helpers parametrize the ``exec_alloc_descriptor`` fixture by gt4py's
   backend names; ``--sk-backend`` keeps the items of one of them and deselects the others:

   ==================  ===============================================  ====================
   ``--sk-backend``    gt4py's id (``next_tests.definitions``)          stencilkit serves it
   ==================  ===============================================  ====================
   ``embedded``        ``EmbeddedIds.NUMPY_EXECUTION``                  embedded, NumPy
   ``embedded-cupy``   ``EmbeddedIds.CUPY_EXECUTION``                   embedded, CuPy
   ``cpu``             ``ProgramBackendId.GTFN_CPU`` (``run_gtfn``)     ``stencilkit.cpu``
   ``gpu``             ``ProgramBackendId.GTFN_GPU`` (``run_gtfn_gpu``) ``stencilkit.gpu``
   ==================  ===============================================  ====================

   gt4py's own skip/xfail matrix (``BACKEND_SKIP_TEST_MATRIX``) applies unchanged, under the id.
   Tests that take no backend (decoration-time errors) run in every run.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import pkgutil
import sys
import types
import typing
from typing import Any

import pytest

BACKEND_IDS = {
    "embedded": "next_tests.definitions.numpy_execution",
    "embedded-cupy": "next_tests.definitions.cupy_execution",
    "cpu": "gt4py.next.program_processors.runners.gtfn.run_gtfn",
    "gpu": "gt4py.next.program_processors.runners.gtfn.run_gtfn_gpu",
}

#: Tests of gt4py internals stencilkit does not have, deselected (test name -> reason).
DESELECT = {
    "test_program_gtir_regression": "checks `.gtir`, gt4py's IR (stencilkit's IR is its own)",
}


# ------------------------------------------------------------------ stand-ins for gt4py internals
class ScalarKind(enum.IntEnum):
    BOOL = 1
    INT8 = 2
    UINT8 = 3
    INT16 = 4
    UINT16 = 5
    INT32 = 6
    UINT32 = 7
    INT64 = 8
    UINT64 = 9
    FLOAT32 = 10
    FLOAT64 = 11
    STRING = 12


@dataclasses.dataclass(frozen=True)
class ScalarType:
    kind: ScalarKind
    shape: Any = None


@dataclasses.dataclass(frozen=True)
class FieldType:
    dims: list
    dtype: ScalarType


@dataclasses.dataclass(frozen=True)
class TupleType:
    types: list


@dataclasses.dataclass(frozen=True)
class NamedCollectionType:
    types: list
    keys: list
    original_python_type: str


def _translate(sk_type: Any) -> Any:
    from stencilkit.core.named_collections import NamedCollectionType as SkNamed
    from stencilkit.core.types import FieldType as SkField
    from stencilkit.core.types import ScalarType as SkScalar

    if isinstance(sk_type, SkField):
        return FieldType(list(sk_type.dims), ScalarType(ScalarKind[sk_type.dtype.upper()]))
    if isinstance(sk_type, SkScalar):
        return ScalarType(ScalarKind[sk_type.dtype.upper()])
    if isinstance(sk_type, SkNamed):
        cls = sk_type.cls
        return NamedCollectionType(
            [_translate(t) for t in sk_type.types],
            list(sk_type.names),
            f"{cls.__module__}:{cls.__qualname__}",
        )
    return TupleType([_translate(t) for t in sk_type.types])


def from_type_hint(hint: Any) -> Any:
    """gt4py's ``type_translation.from_type_hint`` over stencilkit's annotation reader."""
    from stencilkit.next.annotations import type_from_annotation

    if hint is None or hint is type(None):
        return None
    return _translate(type_from_annotation(hint))


def extract(value: Any, pass_through_values: bool = True) -> Any:
    """gt4py's ``otf.arguments.extract``: named collections (nested) become tuples."""
    from stencilkit.core.named_collections import field_names, is_collection_class

    if is_collection_class(type(value)):
        return tuple(extract(getattr(value, n)) for n in field_names(type(value)))
    if isinstance(value, tuple):
        return tuple(extract(v) for v in value)
    return value


def make_named_collection_constructor_from_type_spec(spec: Any, nested: bool = True) -> Any:
    cls = pkgutil.resolve_name(spec.original_python_type)

    def construct(values: tuple) -> Any:
        items = list(values)
        if nested:
            items = [
                make_named_collection_constructor_from_type_spec(t)(v)
                if isinstance(t, NamedCollectionType)
                else v
                for t, v in zip(spec.types, items, strict=True)
            ]
        return cls(**dict(zip(spec.keys, items, strict=True)))

    return construct


def asnumpy(value: Any) -> Any:
    return value.asnumpy() if hasattr(value, "asnumpy") else value


def get_type_hints(obj: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """gt4py's ``extended_typing.get_type_hints``. GT4Py's ``cases.get_param_types`` reads the
    parameter types from ``prog.definition``: gt4py's is the Python function, stencilkit's the
    parsed IR (``.__wrapped__`` is the function); from the IR, each parameter's DSL type (and the
    operator's result as ``return``), which ``from_type_hint`` translates."""
    if callable(obj) and not hasattr(obj, "params"):
        return typing.get_type_hints(obj, *args, **kwargs)
    hints = {p.name: p.type for p in obj.params}
    body = getattr(obj, "body", None)
    if hasattr(body, "type"):  # a field operator: its result
        hints["return"] = body.type
    return hints


def _module(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name, "stencilkit suite harness: stand-in for a gt4py internal")
    module.__dict__.update(attrs)
    if name not in sys.modules:
        sys.modules[name] = module
    parent, _, leaf = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], leaf, sys.modules[name])
    return sys.modules[name]


def _optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def install_stand_ins() -> None:
    import gt4py.eve
    import gt4py.next

    try:
        import typing_extensions

        self_type = typing_extensions.Self
    except ImportError:  # pragma: no cover
        self_type = typing.Any
    _module(
        "gt4py.eve.extended_typing",
        Self=self_type,
        get_type_hints=get_type_hints,
    )
    del gt4py
    pkg = _module("gt4py.next.type_system")
    pkg.__path__ = []
    _module(
        "gt4py.next.type_system.type_specifications",
        ScalarKind=ScalarKind,
        ScalarType=ScalarType,
        FieldType=FieldType,
        TupleType=TupleType,
        NamedCollectionType=NamedCollectionType,
        TypeSpec=object,
        DataType=object,
    )
    _module("gt4py.next.type_system.type_translation", from_type_hint=from_type_hint)
    pkg = _module("gt4py.next.otf")
    pkg.__path__ = []
    _module("gt4py.next.otf.arguments", extract=extract)
    pkg = _module("gt4py.next.embedded")
    pkg.__path__ = []
    import numpy

    _module(
        "gt4py.next.embedded.nd_array_field",
        np=numpy,
        cp=_optional("cupy"),
        jnp=None,  # JAX is not a stencilkit array namespace; its tests are deselected
    )
    _module("gt4py.next.field_utils", asnumpy=asnumpy)
    _module(
        "gt4py.next.named_collections",
        make_named_collection_constructor_from_type_spec=(
            make_named_collection_constructor_from_type_spec
        ),
    )
    # test_decorator.py imports ``gt4py.next.iterator.ir`` (GTIR) at module level for one test
    # (test_program_gtir_regression, deselected); an empty stand-in lets its other tests run.
    # fixtures/common.py annotates a fixture with gt4py.next.utils.IDGeneratorPool (an internal
    # helper of gt4py's IR passes; no feature test uses the fixture)
    import gt4py.next.utils as next_utils

    if not hasattr(next_utils, "IDGeneratorPool"):  # added (a name only), nothing replaced
        next_utils.IDGeneratorPool = object  # type: ignore[attr-defined]
    pkg = _module("gt4py.next.iterator")
    pkg.__path__ = []
    _module("gt4py.next.iterator.ir")


# before pytest loads GT4Py's conftest files (they import the helpers)
install_stand_ins()


# ------------------------------------------------------------------ pytest hooks
def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--sk-backend",
        choices=sorted(BACKEND_IDS),
        default="embedded",
        help="which of gt4py's backend ids to run (the others are deselected)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = BACKEND_IDS[config.getoption("--sk-backend")]
    keep, drop = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        param = callspec.params.get("exec_alloc_descriptor") if callspec else None
        # a test without the backend fixture (decoration-time errors) runs in every run
        chosen = param is None or str(param.value) == wanted
        (keep if chosen and item.originalname not in DESELECT else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
