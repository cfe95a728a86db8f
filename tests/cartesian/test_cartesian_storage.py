"""gt4py.storage-compatible allocators: layouts, alignment and padding checked from strides and
addresses, values, errors by message, and zero-copy sharing with gt4py.next fields."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit.cartesian import storage
from stencilkit.cartesian.backend_names import BACKENDS, lookup

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
IJKField = gtx.Field[gtx.Dims[I, J, K], gtx.float64]

CPU_NAMES = sorted(n for n, rec in BACKENDS.items() if rec.device == "cpu")
GPU_NAMES = sorted(n for n, rec in BACKENDS.items() if rec.device == "gpu")
ALL_NAMES = [
    *CPU_NAMES,
    *(pytest.param(n, marks=pytest.mark.gpu) for n in GPU_NAMES),
]


def _address(array: object) -> int:
    if isinstance(array, np.ndarray):
        return int(array.__array_interface__["data"][0])
    return int(array.__cuda_array_interface__["data"][0])  # type: ignore[attr-defined]


def _expected_strides(name: str, shape: tuple[int, ...], dims: tuple[str, ...], itemsize: int):
    """Strides written out from the layout map: unit-stride axis padded to the alignment."""
    rec = lookup(name)
    ranks = rec.layout_map(dims)
    order = sorted(range(len(shape)), key=lambda a: -ranks[a])  # fastest first
    padded = list(shape)
    padded[order[0]] = -(-shape[order[0]] // rec.alignment) * rec.alignment
    strides, span = [0] * len(shape), itemsize
    for axis in order:
        strides[axis] = span
        span *= padded[axis]
    return tuple(strides)


@pytest.mark.parametrize("name", ALL_NAMES)
@pytest.mark.parametrize(
    ("shape", "dims"),
    [
        ((7, 6, 5), ("I", "J", "K")),
        ((7, 6), ("I", "J")),
        ((9,), ("K",)),
        ((5, 6, 7, 3), ("I", "J", "K", "0")),
        ((5, 4, 2, 3), ("I", "K", "0", "1")),
    ],
)
def test_strides_and_alignment_per_backend(name, shape, dims) -> None:
    aligned = tuple(min(2, s - 1) for s in shape)
    a = storage.empty(shape, np.float64, backend=name, aligned_index=aligned, dimensions=dims)
    assert a.shape == shape and a.dtype == np.float64
    assert tuple(a.strides) == _expected_strides(name, shape, dims, 8)
    rec = lookup(name)
    byte_alignment = rec.alignment * 8
    offset = sum(i * s for i, s in zip(aligned, a.strides, strict=True))
    assert (_address(a) + offset) % byte_alignment == 0
    assert rec.is_optimal_layout(a, dims)
    assert storage.from_name(name)["is_optimal_layout"](a, dims)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_aligned_index_at_or_past_the_extents(name) -> None:
    """gt4py.storage allows it (only negative indices are refused): NDSL passes a quantity's
    origin, which may sit at an axis' end; the would-be address of that point is aligned."""
    shape = (4, 5, 6)
    rng = np.random.default_rng(3)
    for aligned in [(4, 5, 6), (0, 9, 2), (1, 1, 40)]:
        data = rng.standard_normal(shape)
        a = storage.from_array(data, backend=name, aligned_index=aligned)
        host = a.get() if hasattr(a, "get") else a
        np.testing.assert_array_equal(host, data)
        offset = sum(i * s for i, s in zip(aligned, a.strides, strict=True))
        assert (_address(a) + offset) % (lookup(name).alignment * 8) == 0


def test_kfirst_data_dims_as_gt4py_1_2_3() -> None:
    # checked on gt4py 1.2.3: data dimensions are the slowest axis
    a = storage.zeros((5, 6, 7, 3), backend="gt:cpu_kfirst")
    assert a.strides == (336, 56, 8, 1680)
    b = storage.zeros((5, 6, 7), (np.float64, (3,)), backend="gt:cpu_kfirst")
    assert b.shape == (5, 6, 7, 3) and b.strides == (336, 56, 8, 1680)


def test_ndsl_style_dimensions() -> None:
    # NDSL's gt4py_utils names data dimensions by their size, as strings or ints
    a = storage.zeros((4, 5, 6, 3), backend="gt:cpu_ifirst", dimensions=["I", "J", "K", 3])
    assert a.strides == (8, 32, 160, 960)
    b = storage.zeros((4, 6, 3, 3), backend="numpy", dimensions=["I", "K", "3", "3"])
    assert b.strides == (48, 8, 576, 192)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_ndsl_quantity_dimensions_with_none(name) -> None:
    """NDSL's Quantity names axes past the third ``None`` (dims ``("tile", x, y, z)`` give
    ``("6", "J", "K", None)``): a data dimension, as gt4py's layout maker counts it; storages
    made with them are in the backend's optimal layout and hold the data."""
    dims = ("6", "J", "K", None)
    data = np.random.default_rng(5).standard_normal((6, 4, 5, 3))
    info = storage.from_name(name)
    info["is_optimal_layout"](np.ascontiguousarray(data), dims)  # answers, never raises
    a = storage.from_array(data, backend=name, aligned_index=(0, 1, 1, 0), dimensions=dims)
    host = a.get() if hasattr(a, "get") else a
    np.testing.assert_array_equal(host, data)
    assert info["is_optimal_layout"](a, dims)
    # the same layout as naming the fourth axis as a data dimension
    b = storage.empty(
        (6, 4, 5, 3), backend=name, aligned_index=(0, 1, 1, 0), dimensions=("6", "J", "K", "3")
    )
    assert a.strides == b.strides


def test_ifirst_and_dace_cpu_orders() -> None:
    a = storage.empty((4, 5, 6), backend="gt:cpu_ifirst")
    assert a.strides == (8, 32, 160)
    d = storage.empty((4, 5, 6), backend="dace:cpu")  # J unit-stride, then I, K outermost
    assert d.strides == (40, 8, 160)


def test_results_are_plain_arrays_with_the_array_interface() -> None:
    a = storage.ones((3, 4, 5), np.float32, backend="numpy")
    assert type(a) is np.ndarray
    iface = a.__array_interface__
    assert iface["shape"] == (3, 4, 5) and iface["typestr"] == "<f4"
    assert np.asarray(a) is a or np.shares_memory(np.asarray(a), a)


def test_fill_values_and_dtypes() -> None:
    for name in CPU_NAMES:
        z = storage.zeros((3, 4, 2), np.int32, backend=name)
        o = storage.ones((3, 4, 2), backend=name)
        f = storage.full((3, 4, 2), 2.5, np.float32, backend=name)
        assert z.dtype == np.int32 and not z.any()
        assert o.dtype == np.float64 and (o == 1.0).all()
        assert f.dtype == np.float32 and (f == np.float32(2.5)).all()
    assert storage.full((2, 2), 3.9, np.int64, backend="numpy")[0, 0] == 3


@pytest.mark.parametrize("name", CPU_NAMES)
def test_from_array_copies_in_the_backend_layout(name) -> None:
    rng = np.random.default_rng(11)
    data = rng.standard_normal((6, 5, 4))
    a = storage.from_array(data, backend=name, aligned_index=(1, 1, 0))
    np.testing.assert_array_equal(a, data)
    assert not np.shares_memory(a, data)
    assert lookup(name).is_optimal_layout(a, ("I", "J", "K"))
    data[0, 0, 0] += 1.0
    assert a[0, 0, 0] != data[0, 0, 0]


def test_from_array_dtype_defaults() -> None:
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert storage.from_array(ints, backend="numpy").dtype == np.float64  # gt4py's surprise
    kept = storage.from_array(ints, dtype=None, backend="numpy")
    assert kept.dtype == np.int32
    np.testing.assert_array_equal(kept, ints)
    nested = storage.from_array([[1.5, 2.5]], np.float32, backend="gt:cpu_ifirst")
    assert nested.dtype == np.float32 and nested.strides == (4, 4)
    vec = np.random.default_rng(2).random((3, 4, 2, 3))
    sub = storage.from_array(vec, (np.float64, (3,)), backend="gt:cpu_ifirst")
    np.testing.assert_array_equal(sub, vec)
    assert sub.strides[3] > max(sub.strides[:3])  # the data dimension is slowest


def test_from_array_of_a_field_and_an_array_interface_object() -> None:
    rng = np.random.default_rng(3)
    data = rng.random((4, 3, 2))
    f = gtx.as_field([I, J, K], data)
    np.testing.assert_array_equal(storage.from_array(f, backend="numpy"), data)

    class Exposed:
        def __init__(self, arr: np.ndarray) -> None:
            self.__array_interface__ = arr.__array_interface__
            self._keep = arr

    np.testing.assert_array_equal(storage.from_array(Exposed(data), backend="gt:cpu_kfirst"), data)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: storage.empty((3, 4), backend="gt:cpu"), r"no storage layout.*'gt:cpu'"),
        (lambda: storage.empty((3, 0), backend="numpy"), r"not positive"),
        (lambda: storage.empty((3, 4.0), backend="numpy"), r"shape must be a sequence of ints"),
        (lambda: storage.empty(5, backend="numpy"), r"shape must be a sequence of ints"),
        (
            lambda: storage.empty((3, 4), backend="numpy", dimensions=("I", "J", "K")),
            r"name 3 axes but the shape \(3, 4\) has 2",
        ),
        (
            lambda: storage.empty((3, 4), backend="numpy", dimensions=("I", "Q")),
            r"'Q' is not a dimension name",
        ),
        (
            lambda: storage.empty((3, 4), backend="numpy", aligned_index=(1,)),
            r"aligned_index \(1,\) has 1 entries but the shape \(3, 4\) has 2 axes",
        ),
        (
            lambda: storage.empty((3, 4), backend="numpy", aligned_index=(-1, 0)),
            r"aligned_index \(-1, 0\) contains a negative value",
        ),
        (
            lambda: storage.from_array(np.zeros((3, 4)), (np.float64, (3,)), backend="numpy"),
            r"does not end in the dtype's shape \(3,\)",
        ),
    ],
)
def test_errors_say_what_is_wrong(call, message) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_unknown_backend_is_a_value_and_runtime_error() -> None:
    with pytest.raises(ValueError) as info:
        storage.zeros((2, 2), backend="gtc:numpy")
    assert isinstance(info.value, RuntimeError) and "'gt:cpu_ifirst'" in str(info.value)


def test_register_and_unregister_a_layout() -> None:
    info = dict(storage.from_name("gt:cpu_ifirst"))
    storage.register("mine:ifirst", info)  # type: ignore[arg-type]
    try:
        assert storage.empty((4, 5, 6), backend="mine:ifirst").strides == (8, 32, 160)
    finally:
        storage.register("mine:ifirst", None)
    with pytest.raises(ValueError, match=r"'mine:ifirst'"):
        storage.empty((4, 5, 6), backend="mine:ifirst")
    with pytest.raises(ValueError, match=r"lacks is_optimal_layout, layout_map"):
        storage.register("bad", {"alignment": 1, "device": "cpu"})  # type: ignore[typeddict-item]


# --- one buffer, two frontends ---------------------------------------------------------------


@gtx.field_operator
def _axpy(a: IJKField, b: IJKField) -> IJKField:
    return a + 2.0 * b(I + 1)


@gtx.program
def _axpy_program(a: IJKField, b: IJKField, out: IJKField, ni: gtx.int32, nk: gtx.int32):
    _axpy(a, b, out=out, domain={I: (0, ni - 1), J: (1, 3), K: (0, nk)})


@pytest.mark.parametrize(
    "name", ["numpy", "gt:cpu_ifirst", "gt:cpu_kfirst", "dace:cpu", "dace:cpu_KJI"]
)
def test_as_field_shares_the_storage_and_programs_write_into_it(name) -> None:
    rng = np.random.default_rng(5)
    shape = (6, 4, 3)
    a_np, b_np, sentinel = (rng.standard_normal(shape) for _ in range(3))
    a = storage.from_array(a_np, backend=name)
    b = storage.from_array(b_np, backend=name)
    out = storage.from_array(sentinel, backend=name, aligned_index=(0, 1, 0))
    fields = [gtx.as_field([I, J, K], arr, copy=False) for arr in (a, b, out)]
    for field, arr in zip(fields, (a, b, out), strict=True):
        assert field.ndarray is arr or np.shares_memory(field.ndarray, arr)
        assert _address(field.ndarray) == _address(arr)
    rec = lookup(name)
    _axpy_program.with_backend(rec.backend)(*fields, shape[0], shape[2], offset_provider={})
    expected = sentinel.copy()
    expected[:-1, 1:3] = a_np[:-1, 1:3] + 2.0 * b_np[1:, 1:3]
    np.testing.assert_array_equal(out, expected)  # written in place, the rest untouched


@pytest.mark.gpu
@pytest.mark.parametrize("name", GPU_NAMES)
def test_gpu_storage_is_cupy_and_shared_with_as_field(name) -> None:
    import cupy as cp

    rng = np.random.default_rng(7)
    data = rng.standard_normal((33, 5, 4))
    a = storage.from_array(data, backend=name, aligned_index=(1, 0, 0))
    assert type(a) is cp.ndarray and "__cuda_array_interface__" in dir(a)
    np.testing.assert_array_equal(cp.asnumpy(a), data)
    from_device = storage.from_array(cp.asarray(data), backend="numpy")
    np.testing.assert_array_equal(from_device, data)
    field = gtx.as_field([I, J, K], a, copy=False)
    assert field.ndarray.data.ptr == a.data.ptr
