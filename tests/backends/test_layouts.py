"""Layouts as a per-allocation choice (issue 13): ``layout=`` on the constructors, the GPU's
default for column fields, and programs mixing layouts (inputs in one, outputs in another) on
every backend, against NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_cuda_grid import K, c2e_sum, run_c2e_sum

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda import CudaTarget
from stencilkit.backends.cuda.codegen import grid_dims
from stencilkit.core import DeviceType, DimensionKind, StencilValueError
from stencilkit.fields import FieldConstructor
from stencilkit.meshes import Cell, Edge, periodic_triangular_mesh
from stencilkit.stages.interface import interface_of
from stencilkit.storage import (
    GPU_COLUMN_SCHEME,
    HORIZONTAL_FIRST,
    VERTICAL_FIRST,
    Layout,
    layout_for,
)

NAMES = ["vertical-contiguous", "horizontal-contiguous", "c-contiguous"]


# ----------------------------------------------------------------------------- constructors
@pytest.mark.parametrize(
    "make",
    [
        lambda lay: gtx.empty({Cell: 10, K: 5}, layout=lay),
        lambda lay: gtx.zeros({Cell: 10, K: 5}, layout=lay),
        lambda lay: gtx.ones({Cell: 10, K: 5}, layout=lay),
        lambda lay: gtx.full({Cell: 10, K: 5}, 2.0, layout=lay),
        lambda lay: gtx.as_field([Cell, K], np.ones((10, 5)), layout=lay),
        lambda lay: FieldConstructor(layout=lay).zeros({Cell: 10, K: 5}),
    ],
    ids=["empty", "zeros", "ones", "full", "as_field", "FieldConstructor"],
)
def test_layout_keyword_on_every_constructor(make: Any) -> None:
    assert make("vertical-contiguous").ndarray.strides == (64, 8)  # 5 doubles padded to 8 (32 B)
    assert make("horizontal-contiguous").ndarray.strides == (8, 128)  # 10 doubles padded to 16
    assert make("c-contiguous").ndarray.strides == (40, 8)
    assert make(HORIZONTAL_FIRST).ndarray.strides == (8, 128)
    assert make(Layout((1, 0), alignment=64)).ndarray.strides == (8, 80)
    assert make(None).ndarray.strides == (40, 8)  # the CPU default: C order


def test_layout_values_and_data_survive_a_layout_change(rng) -> None:
    data = rng.standard_normal((7, 3))
    for name in NAMES:
        f = gtx.as_field([Cell, K], data, layout=name)
        np.testing.assert_array_equal(f.asnumpy(), data)
        assert f.ndarray.__array_interface__["data"][0] % 64 == 0


def test_bad_layouts_are_refused() -> None:
    with pytest.raises(StencilValueError, match="unknown layout 'k-first'"):
        gtx.zeros({Cell: 3, K: 2}, layout="k-first")
    with pytest.raises(StencilValueError, match="for 3 axes but the field has 2"):
        gtx.zeros({Cell: 3, K: 2}, layout=Layout((0, 1, 2)))
    with pytest.raises(StencilValueError, match="layout= must be"):
        gtx.zeros({Cell: 3, K: 2}, layout=3)
    with pytest.raises(StencilValueError):
        Layout((0, 1), pad_bytes=24)


def test_as_field_shares_memory_only_in_the_asked_layout(rng) -> None:
    c_order = rng.standard_normal((6, 4))  # 4 doubles: 32 B, so C order is vertical-contiguous too
    assert (
        gtx.as_field([Cell, K], c_order, copy=None, layout="vertical-contiguous").address
        == c_order.__array_interface__["data"][0]
    )
    copied = gtx.as_field([Cell, K], c_order, copy=None, layout="horizontal-contiguous")
    assert not np.shares_memory(copied.ndarray, c_order) and copied.ndarray.strides[0] == 8
    with pytest.raises(StencilValueError, match="not those of layout"):
        gtx.as_field([Cell, K], c_order, copy=False, layout="horizontal-contiguous")


def test_gpu_column_fields_default_to_one_constant() -> None:
    H, V, L = DimensionKind.HORIZONTAL, DimensionKind.VERTICAL, DimensionKind.LOCAL
    assert GPU_COLUMN_SCHEME is HORIZONTAL_FIRST  # gt4py's GPU layout (docs/storage.md)
    assert layout_for((H, V), DeviceType.CUDA) == GPU_COLUMN_SCHEME.layout((H, V))
    assert layout_for((H, H, V), DeviceType.CUDA) == HORIZONTAL_FIRST.layout((H, H, V))
    assert layout_for((H, L), DeviceType.CUDA) == HORIZONTAL_FIRST.layout((H, L))  # tables


# ----------------------------------------------------------------------------- thread mapping
@pytest.mark.parametrize(
    ("out_layout", "x"), [("vertical-contiguous", "K"), ("horizontal-contiguous", "Cell")]
)
@pytest.mark.parametrize("in_layout", ["vertical-contiguous", "horizontal-contiguous"])
def test_gpu_threads_follow_the_output_unit_stride(in_layout: str, out_layout: str, x: str) -> None:
    """Consecutive threads (grid x) walk the output's unit-stride dimension, read from the strides
    of the call: K for K-contiguous outputs, Cell for horizontal-first ones; the generated index
    of a unit-stride dimension has no multiply."""
    mesh = periodic_triangular_mesh(4, 4)
    e = gtx.zeros({Edge: mesh.n_edges, K: 6}, layout=in_layout)
    out = gtx.zeros({Cell: mesh.n_cells, K: 6}, layout=out_layout)
    runner = CompiledRunner(interface_of(run_c2e_sum.definition), CudaTarget(arch="90"))
    planned = runner.stages(
        [e, out], mesh.offset_provider(), check_device=False, until="plan"
    ).planned
    sprog, layout = planned.sprog, planned.layout
    assert grid_dims(sprog.kernels[0], layout)[0].value == x
    source = CudaTarget(arch="90").generate(planned).text
    assert (
        "out_b[i_Cell * out_s0 + i_K]" in source
        if x == "K"
        else "out_b[i_Cell + i_K * out_s1]" in source
    )


# ----------------------------------------------------------------------------- mixed layouts, all backends
@gtx.field_operator
def shift_k(a: Field[Dims[Cell, K], float64]) -> Field[Dims[Cell, K], float64]:
    return 2.0 * a(K + 1) - a


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def cumsum(carry: float, x: float) -> float:
    return carry + x


LAYOUT_PAIRS = [
    ("vertical-contiguous", "horizontal-contiguous"),
    ("horizontal-contiguous", "vertical-contiguous"),
    ("vertical-contiguous", "vertical-contiguous"),
    ("horizontal-contiguous", "horizontal-contiguous"),
]


def _alloc(case: Any, dims: list[Any], data: np.ndarray, layout: str) -> Any:
    return gtx.as_field(dims, data, allocator=case.allocator, layout=layout)


@pytest.mark.parametrize("layouts", LAYOUT_PAIRS, ids=lambda p: f"{p[0][:1]}-in-{p[1][:1]}-out")
def test_programs_mix_layouts(case: Any, rng, layouts: tuple[str, str]) -> None:
    """Inputs in one layout, outputs in the other (and a second output in the first), in one
    program: a gather, a shift along K over a part of the domain, and a scan."""
    mesh = periodic_triangular_mesh(6, 5)
    nk, nc, ne = 7, mesh.n_cells, mesh.n_edges
    provider = mesh.offset_provider(allocator=case.allocator)

    @gtx.program(backend=case.backend)
    def run(
        e: Field[Dims[Edge, K], float64],
        c: Field[Dims[Cell, K], float64],
        s: Field[Dims[Cell, K], float64],
        sh: Field[Dims[Cell, K], float64],
        cs: Field[Dims[Cell, K], float64],
    ):
        c2e_sum(e, out=s)
        shift_k(c, out=sh, domain={Cell: (1, nc - 1), K: (0, nk - 1)})
        cumsum(c, out=cs)

    ed, cd = rng.standard_normal((ne, nk)), rng.standard_normal((nc, nk))
    e, c = _alloc(case, [Edge, K], ed, layouts[0]), _alloc(case, [Cell, K], cd, layouts[0])
    s = _alloc(case, [Cell, K], np.full((nc, nk), np.nan), layouts[1])
    sh = _alloc(case, [Cell, K], np.full((nc, nk), np.nan), layouts[1])
    cs = _alloc(case, [Cell, K], np.full((nc, nk), np.nan), layouts[0])
    run(e, c, s, sh, cs, offset_provider=provider)
    np.testing.assert_allclose(s.asnumpy(), ed[mesh.c2e].sum(axis=1), rtol=1e-13)
    result = sh.asnumpy()
    np.testing.assert_allclose(result[1:-1, :-1], 2.0 * cd[1:-1, 1:] - cd[1:-1, :-1], rtol=1e-14)
    assert (
        np.isnan(result[0]).all() and np.isnan(result[-1]).all() and np.isnan(result[:, -1]).all()
    )
    np.testing.assert_allclose(cs.asnumpy(), np.cumsum(cd, axis=1), rtol=1e-13)
    if case.on_gpu:
        assert e.ndarray.strides[0 if layouts[0] == "horizontal-contiguous" else 1] == 8
        assert s.ndarray.strides[0 if layouts[1] == "horizontal-contiguous" else 1] == 8


@pytest.mark.gpu
def test_gpu_default_allocation_of_column_fields(rng) -> None:
    """Without layout=, column fields on the GPU follow GPU_COLUMN_SCHEME and run correctly
    beside a Cartesian-style [Cell] field and a horizontal-first table."""
    mesh = periodic_triangular_mesh(8, 8)
    data = rng.standard_normal((mesh.n_edges, 9))
    e = gtx.as_field([Edge, K], data, allocator=gtx.gpu)
    out = gtx.full({Cell: mesh.n_cells, K: 9}, np.nan, allocator=gtx.gpu)
    unit = 1 if GPU_COLUMN_SCHEME is VERTICAL_FIRST else 0
    assert e.ndarray.strides[unit] == 8 and out.ndarray.strides[unit] == 8
    run_c2e_sum.with_backend(gtx.gpu)(
        e, out, offset_provider=mesh.offset_provider(allocator=gtx.gpu)
    )
    np.testing.assert_allclose(out.asnumpy(), data[mesh.c2e].sum(axis=1), rtol=1e-13)
