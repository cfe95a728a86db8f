"""What icon4py 0.4.1's own test suite needs of gt4py.next (issue 22, item 3): the annotation
forms of its geometry module, ``compile`` with static-argument lists, ``where`` on concrete
fields, the gt4py modules its testing code imports (``instrumentation``, ``eve``, the DaCe
runner) and gt4py 1.2.1's ``GTFNBackendFactory``."""

from __future__ import annotations

import contextlib
import importlib
import typing
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32

Cell = gtx.Dimension("Cell")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
FCK = Field[Dims[Cell, K], float64]
FK = Field[Dims[K], float64]


# ------------------------------------------------------------------------- annotation forms
def test_field_of_any_dimension_and_union_dtype_annotations() -> None:
    # icon4py.model.common.grid.geometry annotates a plain Python function this way
    scalar_type = float64 | float | bool | int32 | gtx.int64 | int
    any_field = Field[Dims[gtx.Dimension], scalar_type]
    dims, dtype = typing.get_args(any_field)
    assert typing.get_args(dims) == (gtx.Dimension,)
    assert set(typing.get_args(dtype)) >= {np.float64, np.int32, bool}
    assert typing.get_args(Field[Dims[Cell], float64 | int32])[1] == np.float64 | np.int32


def test_union_dtype_with_a_non_scalar_is_refused() -> None:
    with pytest.raises(TypeError, match="dtype str is not supported"):
        Field[Dims[Cell], float64 | str]


@gtx.field_operator
def _identity(a: FCK) -> FCK:
    return a


def test_field_of_any_dimension_is_refused_as_a_parameter_type() -> None:
    from stencilkit.core.types import field_type_of

    with pytest.raises(TypeError, match=r"Dims\[Dimension\].*needs its dimensions"):
        field_type_of(typing.get_args(Field[Dims[gtx.Dimension], float64]))
    with pytest.raises(TypeError, match="allows several dtypes"):
        field_type_of(typing.get_args(Field[Dims[Cell], float64 | int32]))


# ----------------------------------------------------------- compile(name=[value, ...]) lists
@gtx.field_operator
def _scale(a: FCK, factor: float64) -> FCK:
    return factor * a


@gtx.program
def scale_program(
    a: FCK,
    out: FCK,
    factor: float64,
    horizontal_start: int32,
    horizontal_end: int32,
    vertical_start: int32,
    vertical_end: int32,
) -> None:
    _scale(
        a,
        factor,
        out=out,
        domain={Cell: (horizontal_start, horizontal_end), K: (vertical_start, vertical_end)},
    )


@pytest.mark.parametrize(
    "static",
    [
        (),
        (
            "horizontal_start",
            "horizontal_end",
            "vertical_start",
            "vertical_end",
        ),  # compile_time_domain
        ("vertical_start", "vertical_end"),  # compile_time_vertical
    ],
    ids=["none", "compile_time_domain", "compile_time_vertical"],
)
@pytest.mark.parametrize("backend", [None, gtx.cpu], ids=["embedded", "cpu"])
def test_compile_with_static_argument_lists(
    backend: Any, static: tuple[str, ...], rng: np.random.Generator
) -> None:
    # icon4py's StencilTest: program.compile(offset_provider=..., **{name: [value]}), then calls
    a = rng.random((7, 5))
    values = {
        "factor": 1.5,
        "horizontal_start": 1,
        "horizontal_end": int32(6),
        "vertical_start": 0,
        "vertical_end": int32(4),
    }
    prog = scale_program.with_backend(backend)
    assert prog.compile(offset_provider={}, **{n: [values[n]] for n in static}) is prog
    out = gtx.zeros({Cell: 7, K: 5}, allocator=backend)
    prog(gtx.as_field([Cell, K], a, allocator=backend), out, **values, offset_provider={})
    expected = np.zeros((7, 5))
    expected[1:6, 0:4] = 1.5 * a[1:6, 0:4]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-15)


def test_compile_static_lists_are_checked() -> None:
    with pytest.raises(TypeError, match="'nope' is not a parameter"):
        scale_program.compile(offset_provider={}, nope=[1])
    with pytest.raises(TypeError, match="must be a scalar parameter; it is a field"):
        scale_program.compile(offset_provider={}, a=[1.0])
    with pytest.raises(TypeError, match="takes scalar values"):
        scale_program.compile(offset_provider={}, factor=[np.ones(3)])
    with pytest.raises(ValueError, match="without connectivities"):
        scale_program.compile(factor=[1.0])


# --------------------------------------------------------------- where on concrete fields
def test_where_on_concrete_fields_matches_numpy(rng: np.random.Generator) -> None:
    a_np, b_np, c_np = rng.random((6, 4)), rng.random(4), rng.random((6, 4))
    a = gtx.as_field([Cell, K], a_np)
    b = gtx.as_field([K], b_np)
    c = gtx.as_field([Cell, K], c_np)
    mask = a > c
    r = gtx.where(mask, a, b)  # broadcast by dimension names, as gt4py's embedded backend does
    assert r.domain == a.domain
    np.testing.assert_array_equal(r.asnumpy(), np.where(a_np > c_np, a_np, b_np[None, :]))
    np.testing.assert_array_equal(
        gtx.where(mask, 0.0, c).asnumpy(), np.where(a_np > c_np, 0.0, c_np)
    )
    t = gtx.where(mask, (a, 1.0), (c, b))
    assert isinstance(t, tuple) and len(t) == 2
    np.testing.assert_array_equal(t[1].asnumpy(), np.where(a_np > c_np, 1.0, b_np[None, :]))


def test_where_on_fields_of_different_ranges_takes_their_intersection(
    rng: np.random.Generator,
) -> None:
    a_np, c_np = rng.random(6), rng.random(4)
    a = gtx.as_field([K], a_np)
    c = gtx.as_field(gtx.domain({K: (1, 5)}), c_np)
    r = gtx.where(a > 0.5, a, c)
    assert r.domain == gtx.domain({K: (1, 5)})
    np.testing.assert_array_equal(r.asnumpy(), np.where(a_np[1:5] > 0.5, a_np[1:5], c_np))


def test_where_on_fields_needs_a_bool_mask() -> None:
    a = gtx.ones({K: 3})
    with pytest.raises(TypeError, match="mask must be a field of bool"):
        gtx.where(a, a, a)


# ------------------------------------------------------------------- gt4py modules served
def test_eve_strenum() -> None:
    from stencilkit import eve

    class Variant(eve.StrEnum):
        NONE = "none"
        COMPILE_TIME_DOMAIN = "compile_time_domain"

    assert str(Variant.COMPILE_TIME_DOMAIN) == "compile_time_domain"
    assert Variant.NONE == "none" and isinstance(Variant.NONE, str)
    assert not eve.NOTHING


def test_program_call_context_hook_wraps_each_call() -> None:
    from stencilkit.instrumentation import hooks

    seen = []

    @contextlib.contextmanager
    def around(program, args, offset_provider, enable_jit, kwargs):  # type: ignore[no-untyped-def]
        seen.append(("enter", program.__name__))
        yield
        seen.append(("exit", program.__name__))

    hooks.program_call_context.register(around, name="test-around")
    try:
        a = gtx.ones({Cell: 3, K: 2})
        scale_program(a, gtx.zeros({Cell: 3, K: 2}), 2.0, 0, 3, 0, 2, offset_provider={})
    finally:
        hooks.program_call_context.remove("test-around")
    assert seen == [("enter", "scale_program"), ("exit", "scale_program")]
    with pytest.raises(ValueError, match="does not match hook signature"):
        hooks.program_call_context.register(lambda program: None)
    with pytest.raises(KeyError):
        hooks.program_call_context.remove("test-around")


def test_metrics_collect_call_times_when_enabled(monkeypatch: pytest.MonkeyPatch) -> None:
    from stencilkit.instrumentation import metrics

    assert not metrics.is_any_level_enabled()
    monkeypatch.setattr(gtx.config, "COLLECT_METRICS_LEVEL", metrics.PERFORMANCE)
    a = gtx.ones({Cell: 3, K: 2})
    for _ in range(3):
        scale_program(a, gtx.zeros({Cell: 3, K: 2}), 2.0, 0, 3, 0, 2, offset_provider={})
    key = metrics.get_current_source_key()
    assert key == "scale_program<'embedded'>"
    samples = metrics.sources[key].metrics[metrics.COMPUTE_METRIC].samples
    assert len(samples) >= 3 and all(s > 0 for s in samples)
    assert key in metrics.dumps()


def test_dace_runner_imports_and_refuses_clearly() -> None:
    from stencilkit.program_processors.runners import dace
    from stencilkit.program_processors.runners.dace import transformations

    assert transformations.GT4PyAutoOptHook.TopLevelDataFlowStep.name == "TopLevelDataFlowStep"
    with pytest.raises(dace.DaceNotAvailableError, match="no DaCe backend; use stencilkit's cpu"):
        dace.make_dace_backend(gpu=False, auto_optimize=True)
    with pytest.raises(dace.DaceNotAvailableError, match="run_dace_cpu"):
        _ = dace.run_dace_cpu
    with pytest.raises(dace.DaceNotAvailableError):
        transformations.RemoveAccessNodeCopies()
    assert issubclass(dace.DaceNotAvailableError, NotImplementedError)


def test_gtfn_backend_factory() -> None:
    from stencilkit.program_processors.runners import gtfn

    assert gtfn.GTFNBackendFactory(gpu=False) is gtx.cpu
    assert gtfn.GTFNBackendFactory(gpu=True, cached=True, name_postfix="_x") is gtx.gpu
    with pytest.raises(TypeError, match="unexpected option"):
        gtfn.GTFNBackendFactory(gpu=False, device_type="cpu")


@pytest.mark.parametrize(
    ("gt4py_name", "served_by"),
    [
        ("gt4py.eve", "stencilkit.eve"),
        ("gt4py.next.instrumentation.hooks", "stencilkit.instrumentation.hooks"),
        ("gt4py.next.instrumentation.metrics", "stencilkit.instrumentation.metrics"),
        (
            "gt4py.next.program_processors.runners.dace",
            "stencilkit.program_processors.runners.dace",
        ),
        (
            "gt4py.next.program_processors.runners.dace.transformations",
            "stencilkit.program_processors.runners.dace.transformations",
        ),
    ],
)
def test_the_alias_serves_these_modules(gt4py_name: str, served_by: str) -> None:
    from stencilkit.compat.gt4py import alias

    if alias.real_gt4py_location() is not None:
        pytest.skip("a real gt4py is installed here")
    installed = alias.gt4py_alias_installed()
    alias.install_gt4py_alias()
    try:
        assert importlib.import_module(gt4py_name) is importlib.import_module(served_by)
    finally:
        if not installed:
            alias.uninstall_gt4py_alias()
