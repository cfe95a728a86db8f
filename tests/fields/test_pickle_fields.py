"""Fields and connectivities pickle and copy (GPU ones restore on their GPU); NumPy reductions
over fields; ``float()`` / ``int()`` of 0-d fields and point selections."""

from __future__ import annotations

import copy
import pickle
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.core import StencilTypeError, StencilValueError

I = gtx.Dimension("I")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Edge, Cell = gtx.Dimension("Edge"), gtx.Dimension("Cell")
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)


@gtx.field_operator
def _smooth(a: Field[Dims[I, K], float64]) -> Field[Dims[I, K], float64]:
    return 0.5 * a + 0.25 * (a(I + 1) + a(I - 1))


@gtx.program
def smooth(a: Field[Dims[I, K], float64], out: Field[Dims[I, K], float64]) -> None:
    _smooth(out=out, domain={I: (4, 11), K: (0, 5)}, a=a)


def _computed(case: Any, rng: np.random.Generator) -> tuple[Any, np.ndarray]:
    """A field written by a program on ``case``'s backend, on a domain with an origin."""
    data = rng.random((10, 5))
    dom = gtx.domain({I: (3, 13), K: (0, 5)})
    a = gtx.as_field(dom, data, allocator=case.allocator)
    out = gtx.as_field(dom, np.full((10, 5), 7.0), allocator=case.allocator)
    smooth.with_backend(case.backend)(a, out, offset_provider={})
    expect = np.full((10, 5), 7.0)
    expect[1:8] = 0.5 * data[1:8] + 0.25 * (data[2:9] + data[0:7])
    return out, expect


def test_pickle_round_trip_keeps_domain_values_and_device(
    case: Any, rng: np.random.Generator
) -> None:
    out, expect = _computed(case, rng)
    back = pickle.loads(pickle.dumps(out))
    assert type(back) is Field
    assert back.domain == out.domain and back.domain.origin == (3, 0)
    assert back.device == out.device and back.dtype == out.dtype
    np.testing.assert_allclose(back.asnumpy(), expect)
    # the copy is independent of the original
    back[{I: (3, 4)}] = -1.0
    np.testing.assert_allclose(out.asnumpy(), expect)


def test_unpickled_fields_are_program_arguments(case: Any, rng: np.random.Generator) -> None:
    out, _ = _computed(case, rng)  # the program has run (and was built) with these fields
    a, dest = pickle.loads(pickle.dumps(out)), copy.deepcopy(out)
    smooth.with_backend(case.backend)(a, dest, offset_provider={})
    data = out.asnumpy()
    expect = data.copy()
    expect[1:8] = 0.5 * data[1:8] + 0.25 * (data[2:9] + data[0:7])
    np.testing.assert_allclose(dest.asnumpy(), expect, rtol=1e-14)


def test_deepcopy_copies_on_the_device_and_copy_shares(case: Any, rng: np.random.Generator) -> None:
    out, expect = _computed(case, rng)
    deep, shallow = copy.deepcopy(out), copy.copy(out)
    assert deep.device == out.device and deep.domain == out.domain
    deep[{I: (5, 6)}] = 100.0
    np.testing.assert_allclose(out.asnumpy(), expect)
    shallow[{I: (5, 6)}] = 100.0
    assert np.all(out.asnumpy()[2] == 100.0)
    # a deep copy inside a container copies each field once (memo respected by the container)
    box = copy.deepcopy({"a": out, "b": [out]})
    assert box["a"] is box["b"][0]


def test_connectivity_pickles_with_codomain_and_skip_value(
    case: Any, rng: np.random.Generator
) -> None:
    table = rng.integers(-1, 6, size=(8, 2)).astype(np.int32)
    conn = case.connectivity([Edge, E2CDim], Cell, table, skip_value=-1)
    for back in (pickle.loads(pickle.dumps(conn)), copy.deepcopy(conn)):
        assert isinstance(back, gtx.Connectivity)
        assert back.codomain == Cell and back.skip_value == -1 and back.max_neighbors == 2
        assert back.device == conn.device
        np.testing.assert_array_equal(back.asnumpy(), table)


def test_unpickled_connectivity_drives_a_program(case: Any) -> None:
    # a pickled offset provider is as good as the original (e.g. sent to a worker process)
    from stencilkit.meshes import periodic_triangular_mesh

    mesh = periodic_triangular_mesh(4, 3)
    provider = pickle.loads(pickle.dumps(mesh.offset_provider(allocator=case.allocator)))
    assert set(provider) == {"E2C", "C2E", "E2V", "V2E", "C2V", "V2C"}
    assert provider["E2C"].device == mesh.offset_provider(allocator=case.allocator)["E2C"].device


def test_deepcopy_keeps_the_buffer_layout() -> None:
    data = np.asfortranarray(np.arange(12.0).reshape(3, 4))  # K varies slowest: column-major
    f = gtx.as_field([I, K], data, copy=None)
    deep = copy.deepcopy(f)
    assert deep.ndarray.strides == f.ndarray.strides and deep.ndarray.flags.f_contiguous
    back = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(back.asnumpy(), data)


def test_gpu_pickle_without_cupy_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from stencilkit.core import BackendUnavailableError
    from stencilkit.fields.interop import _restore

    monkeypatch.setitem(sys.modules, "cupy", None)  # as on a machine without CuPy
    dom = gtx.domain({I: (0, 2)})
    with pytest.raises(
        BackendUnavailableError,
        match=r"(?s)pickled on GPU 1.*(?:stencilkit's cuda extra|\.\[cuda\])",
    ):
        _restore(dom, np.zeros(2), (int(gtx.DeviceType.CUDA), 1), ())


def _total(field: Any) -> float:
    return float(np.sum(field))


def test_fields_cross_process_boundaries() -> None:
    # multiprocessing pickles arguments: the reason pickling matters (dask, checkpoints too)
    f = gtx.as_field([I, K], np.arange(12.0).reshape(3, 4))
    with ProcessPoolExecutor(1, mp_context=get_context("fork")) as pool:
        assert pool.submit(_total, f).result() == 66.0


REDUCTIONS = ["sum", "prod", "mean", "std", "var", "min", "max"]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_over_all_dimensions(case: Any, rng: np.random.Generator, name: str) -> None:
    out, expect = _computed(case, rng)
    ref = getattr(np, name)(expect)
    method, function = getattr(out, name)(), getattr(np, name)(out)
    for value in (method, function):
        assert getattr(value, "ndim", 0) == 0
        assert float(value) == pytest.approx(float(ref), rel=1e-12)
    if not case.on_gpu:
        assert isinstance(method, np.generic) and isinstance(function, np.generic)


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_over_a_dimension_give_a_field(
    case: Any, rng: np.random.Generator, name: str
) -> None:
    out, expect = _computed(case, rng)
    for axis in (K, 1, -1, (K,)):
        red = getattr(np, name)(out, axis=axis)
        assert isinstance(red, Field) and red.domain == gtx.domain({I: (3, 13)})
        np.testing.assert_allclose(red.asnumpy(), getattr(np, name)(expect, axis=1), rtol=1e-12)
    by_i = getattr(out, name)(axis=I)
    assert by_i.domain == gtx.domain({K: (0, 5)})
    np.testing.assert_allclose(by_i.asnumpy(), getattr(np, name)(expect, axis=0), rtol=1e-12)
    both = getattr(out, name)(axis=(I, K))
    assert float(both) == pytest.approx(float(getattr(np, name)(expect)), rel=1e-12)


def test_more_numpy_reductions_and_dtypes(rng: np.random.Generator) -> None:
    data = rng.random((4, 3))
    data[1, 2] = np.nan
    f = gtx.as_field([I, K], data)
    assert float(np.nansum(f)) == pytest.approx(np.nansum(data))
    assert (
        float(np.nanmax(f)) == np.nanmax(data)
        and float(np.amin(f[{K: (0, 2)}])) == data[:, :2].min()
    )
    assert bool((f > 2.0).any()) is False and bool(np.all(f[{K: (0, 2)}] > -1.0)) is True
    assert np.sum(f[{K: (0, 2)}], dtype=np.float32).dtype == np.float32
    ints = gtx.as_field([I, K], np.arange(12, dtype=np.int32).reshape(4, 3))
    assert np.sum(ints) == 66 and ints.max() == 11 and isinstance(ints.max(), np.int32)


def test_other_numpy_functions_still_see_the_buffer(rng: np.random.Generator) -> None:
    data = rng.random((4, 3))
    f = gtx.as_field([I, K], data)
    np.testing.assert_allclose(f, data)
    assert np.allclose(f, data) and np.concatenate([f, f]).shape == (8, 3)
    np.testing.assert_array_equal(np.where(f > 0.5, f, 0.0), np.where(data > 0.5, data, 0.0))


def test_xarray_wraps_a_field_as_a_numpy_array() -> None:
    # regression: with __array_function__ a field looked like a duck array to xarray, which
    # then kept the Field itself as its data and failed on the first reduction
    xr = pytest.importorskip("xarray")
    f = gtx.as_field([I, K], np.arange(6.0).reshape(2, 3))
    da = xr.DataArray(f, dims=("a", "b"))
    assert isinstance(da.data, np.ndarray)
    assert float(da.sum()) == 15.0 and da.mean("a").values.tolist() == [1.5, 2.5, 3.5]


def test_reduction_errors_name_the_problem() -> None:
    f = gtx.as_field([I, K], np.ones((2, 3)))
    with pytest.raises(StencilValueError, match="cannot reduce over"):
        f.sum(axis=Cell)
    with pytest.raises(StencilValueError, match="out of range"):
        np.sum(f, axis=2)
    with pytest.raises(StencilTypeError, match="keepdims"):
        np.sum(f, axis=0, keepdims=True)
    with pytest.raises(StencilTypeError, match="int or a Dimension"):
        f.max(axis="K")


def test_float_and_int_of_0d_fields_and_point_selections(
    case: Any, rng: np.random.Generator
) -> None:
    out, expect = _computed(case, rng)
    point = out[I(5), K(2)]
    assert point.domain.ndim == 0
    assert float(point) == expect[2, 2] and isinstance(float(point), float)
    assert int(out[I(3), K(0)]) == 7 and complex(point) == complex(expect[2, 2])
    assert point.item() == expect[2, 2]
    assert bool(point > 0.0) is True and bool(point < 0.0) is False  # a 0-d comparison
    with pytest.raises(StencilTypeError, match="ambiguous"):
        bool(out > 0.0)
    assert float(out[2, 2]) == expect[2, 2]  # relative positions
    zero_d = gtx.as_field([], np.asarray(2.5), allocator=case.allocator)
    assert float(zero_d) == 2.5 and int(zero_d) == 2
    with pytest.raises(StencilTypeError, match="only a 0-d field converts to float"):
        float(out)
    with pytest.raises(StencilTypeError, match="only a 0-d field"):
        int(out[{I: (3, 4), K: (0, 1)}])  # one point, still on two dimensions


@pytest.mark.gpu
def test_gpu_field_restores_on_its_own_gpu() -> None:
    import cupy

    n = cupy.cuda.runtime.getDeviceCount()
    dev = gtx.Device(gtx.DeviceType.CUDA, n - 1)
    f = gtx.as_field([I, K], np.arange(6.0).reshape(2, 3), device=dev)
    back = pickle.loads(pickle.dumps(f))
    assert isinstance(back.ndarray, cupy.ndarray) and back.device == dev
    assert back.ndarray.device.id == n - 1
    deep = copy.deepcopy(f)
    assert deep.device == dev and deep.ndarray.data.ptr != f.ndarray.data.ptr
    total = np.sum(back)
    assert isinstance(total, cupy.ndarray) and total.ndim == 0 and float(total) == 15.0
