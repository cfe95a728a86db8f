"""Level 2 fields on the CPU: constructors, zero copy, fast-path attributes, operations, errors."""

from __future__ import annotations

import importlib.util
import operator
from typing import Any

import numpy as np
import pytest

from stencilkit.core import (
    BackendUnavailableError,
    Device,
    DeviceType,
    Dimension,
    DimensionKind,
    Dims,
    Domain,
    FieldType,
    StencilTypeError,
    StencilValueError,
    UnitRange,
)
from stencilkit.fields import (
    Connectivity,
    Field,
    as_connectivity,
    as_field,
    empty,
    full,
    ones,
    zeros,
)
from stencilkit.fields.signature import FieldSignature
from stencilkit.storage import Layout, allocate

I, J = Dimension("I"), Dimension("J")
K = Dimension("K", kind=DimensionKind.VERTICAL)
Cell, Edge = Dimension("Cell"), Dimension("Edge")
E2CDim = Dimension("E2CDim", kind=DimensionKind.LOCAL)
HAVE_CUPY = importlib.util.find_spec("cupy") is not None


def ptr(a: Any) -> int:
    return int(a.__array_interface__["data"][0])


class CpuBackend:
    """Stands in for a backend: only its device type matters for allocation."""

    device_type = DeviceType.CPU


class RecordingAllocator:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def allocate(self, shape, dtype, layout, device, aligned_index):  # type: ignore[no-untyped-def]
        self.calls.append((shape, dtype, layout, device, aligned_index))
        return allocate(shape, dtype, layout, device, aligned_index)


# -- constructors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "dims", "ranges"),
    [
        ({I: 4, K: 3}, (I, K), ((0, 4), (0, 3))),
        ({I: (2, 6), K: range(-1, 2)}, (I, K), ((2, 6), (-1, 2))),
        ([(I, (1, 3)), (J, 5)], (I, J), ((1, 3), (0, 5))),
        (Domain((J,), (UnitRange(-2, 2),)), (J,), ((-2, 2),)),
    ],
)
def test_domain_forms(spec: Any, dims: tuple[Dimension, ...], ranges: Any) -> None:
    f = empty(spec, np.float32)
    assert f.domain.dims == dims
    assert tuple((r.start, r.stop) for r in f.domain.ranges) == ranges
    assert f.shape == tuple(b - a for a, b in ranges)
    assert f.dtype == np.float32 and f.ndim == len(dims)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.bool_])
def test_zeros_ones_full(dtype: Any, rng: np.random.Generator) -> None:
    dom = {I: (1, 6), J: 4, K: 3}
    value = dtype(rng.integers(2, 9))
    for field, expected in [
        (zeros(dom, dtype), 0),
        (ones(dom, dtype), 1),
        (full(dom, value, dtype), value),
    ]:
        assert field.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(field.asnumpy(), np.full((5, 4, 3), expected, dtype))


@pytest.mark.parametrize(
    ("fill", "dtype"),
    [(5, np.int64), (2.5, np.float64), (True, np.bool_), (np.float32(1.5), np.float32)],
)
def test_full_dtype_defaults_to_fill_value(fill: Any, dtype: Any) -> None:
    f = full({I: 3}, fill)
    assert f.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(f.asnumpy(), np.full(3, fill, dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.float64])
@pytest.mark.parametrize(
    ("dom", "aligned"),
    [
        ({I: 7}, None),
        ({I: 5, J: 9, K: 3}, None),
        ({I: 5, J: 9, K: 3}, {J: 4, K: 2}),
        ({I: (-2, 5), K: (1, 9)}, [(I, 0), (K, 3)]),
    ],
)
def test_default_cpu_layout_is_aligned(dtype: Any, dom: Any, aligned: Any) -> None:
    f = empty(dom, dtype, aligned_index=aligned)
    assert f.ndarray.flags.c_contiguous
    index = [0] * f.ndim
    for d, i in dict(aligned or {}).items():
        index[f.domain.dims.index(d)] = i - f.domain[d].unit_range.start
    address = f.address + sum(i * s for i, s in zip(index, f.ndarray.strides, strict=True))
    assert address % 64 == 0


def test_custom_allocator_objects_are_used() -> None:
    mine = RecordingAllocator()
    f = zeros({I: 4, K: 2}, allocator=mine, aligned_index={I: 1})
    assert len(mine.calls) == 1
    shape, dtype, layout, device, aligned = mine.calls[0]
    assert (shape, dtype, device, aligned) == ((4, 2), np.float64, Device(DeviceType.CPU), (1, 0))
    assert layout == Layout((0, 1), alignment=64, padding=False)
    assert np.all(f.asnumpy() == 0.0)

    class Backend:
        device_type = DeviceType.CPU
        allocator = RecordingAllocator()

    ones({I: 3}, allocator=Backend())
    assert len(Backend.allocator.calls) == 1


@pytest.mark.parametrize("allocator", [None, np, CpuBackend()])
def test_allocator_kinds_give_cpu_fields(allocator: Any) -> None:
    f = zeros({I: 3}, allocator=allocator)
    assert f.device == Device(DeviceType.CPU, 0)
    assert f.xp is np


def test_device_argument_forms() -> None:
    assert zeros({I: 2}, device=Device(DeviceType.CPU, 0)).device == Device(DeviceType.CPU, 0)
    assert zeros({I: 2}, device=(DeviceType.CPU, 0)).xp is np


# -- as_field: zero copy and copy -----------------------------------------------------------


def test_as_field_shares_numpy_memory(rng: np.random.Generator) -> None:
    a = rng.random((4, 5, 3))
    f = as_field([I, J, K], a, copy=None)
    assert f.ndarray is a and f.address == ptr(a)
    f.ndarray[1, 2, 0] = 42.0
    assert a[1, 2, 0] == 42.0


@pytest.mark.parametrize(
    "view",
    [lambda a: a[:, ::2], lambda a: a.T, lambda a: a[1:, 1:], lambda a: np.asfortranarray(a)],
)
def test_as_field_zero_copy_for_any_positive_strides(rng: np.random.Generator, view: Any) -> None:
    a = view(rng.random((6, 8)))
    f = as_field([I, J], a, copy=None)
    assert f.address == ptr(a)
    assert f.signature.strides == tuple(s // 8 for s in a.strides)


@pytest.mark.parametrize(
    ("make", "dtype"),
    [
        (lambda r: r.random((6, 8))[::-1], None),  # negative stride
        (lambda r: np.broadcast_to(r.random(8), (6, 8)), None),  # stride 0, read-only
        (lambda r: r.random((6, 8)), np.float32),  # other dtype
        (lambda r: r.integers(0, 9, (6, 8)), np.float64),
    ],
)
def test_as_field_copies_when_it_must(rng: np.random.Generator, make: Any, dtype: Any) -> None:
    a = make(rng)
    f = as_field([I, J], a, dtype)
    assert not np.shares_memory(f.ndarray, a)
    assert f.ndarray.flags.c_contiguous and f.address % 64 == 0
    np.testing.assert_array_equal(f.asnumpy(), a.astype(dtype or a.dtype))


def test_as_field_read_only_input_is_copied(rng: np.random.Generator) -> None:
    a = rng.random(5)
    a.flags.writeable = False
    f = as_field([I], a)
    assert not np.shares_memory(f.ndarray, a)
    np.testing.assert_array_equal(f.asnumpy(), a)


def test_as_field_copies_by_default_like_gt4py(rng: np.random.Generator) -> None:
    a = rng.random((4, 6))
    f = as_field([I, J], a)
    assert not np.shares_memory(f.ndarray, a)
    a[0, 0] = 42.0
    assert f.asnumpy()[0, 0] != 42.0
    assert np.shares_memory(as_field([I, J], a, copy=False).ndarray, a)
    with pytest.raises(ValueError, match="copy=False"):
        as_field([I, J], a[::-1], copy=False)
    # gt4py's keyword names, and stencilkit's earlier one
    assert as_field(domain=[I, J], data=a).shape == (4, 6)
    assert as_field(domain_or_dims=[I, J], data=a).shape == (4, 6)
    table = np.array([[0, 1], [1, -1]], np.int32)
    c = as_connectivity(domain={Edge: 2, E2CDim: 2}, codomain=Cell, data=table, skip_value=None)
    assert c.skip_value is None and not np.shares_memory(c.ndarray, table)


def test_as_field_aligned_index_as_named_indices(rng: np.random.Generator) -> None:
    a = rng.random((4, 6))
    f = as_field([I, J], a, aligned_index=[I(0), J(1)])
    assert (f.address + f.ndarray.strides[1]) % 64 == 0
    np.testing.assert_array_equal(f.asnumpy(), a)


def test_as_field_aligned_index_or_allocator_forces_new_buffer(rng: np.random.Generator) -> None:
    a = rng.random((4, 6))
    f = as_field([I, J], a, aligned_index={J: 1})
    assert not np.shares_memory(f.ndarray, a)
    assert (f.address + f.ndarray.strides[1]) % 64 == 0
    g = as_field([I, J], a, allocator=RecordingAllocator())
    assert not np.shares_memory(g.ndarray, a)
    np.testing.assert_array_equal(g.asnumpy(), a)
    assert as_field([I, J], a, allocator=np, copy=None).ndarray is a


def test_as_field_from_lists_and_scalars() -> None:
    f = as_field([I, J], [[1.0, 2.0], [3.0, 4.0]])
    assert f.dtype == np.float64
    np.testing.assert_array_equal(f.asnumpy(), [[1.0, 2.0], [3.0, 4.0]])
    g = as_field([I], [1, 2, 3], np.int32)
    assert g.dtype == np.int32
    s = as_field([], 3.5)
    assert s.shape == () and float(s.asnumpy()) == 3.5


def test_as_field_origin(rng: np.random.Generator) -> None:
    a = rng.random((5, 3))
    f = as_field([I, K], a, origin={I: 2})
    assert f.domain == Domain((I, K), (UnitRange(-2, 3), UnitRange(0, 3)))
    assert f.signature.origin == (-2, 0)
    g = as_field({I: (-2, 3), K: 3}, a)
    assert g.domain == f.domain


def test_as_field_from_torch_shares_memory() -> None:
    torch = pytest.importorskip("torch")
    t = torch.rand(4, 5, dtype=torch.float64)
    f = as_field([I, J], t)
    assert f.address == t.data_ptr()
    back = torch.from_dlpack(f)
    assert back.data_ptr() == f.address


def test_dlpack_and_array_interface_export(rng: np.random.Generator) -> None:
    f = as_field([I, J], rng.random((3, 4)))
    assert ptr(np.from_dlpack(f)) == f.address
    assert ptr(np.asarray(f)) == f.address
    assert f.__dlpack_device__() == (1, 0)
    assert f.__array_interface__["data"][0] == f.address
    assert not hasattr(f, "__cuda_array_interface__")
    assert np.array(f, copy=True).ctypes.data != f.address
    assert ptr(f.asnumpy()) == f.address


# -- fast-path attributes -------------------------------------------------------------------


def test_sig_ptr_xp(rng: np.random.Generator) -> None:
    a = rng.random((4, 6, 3)).astype(np.float32)
    f = as_field([I, J, K], a, origin={J: 1}, copy=None)
    assert f.signature == FieldSignature(
        ("I", "J", "K"), "float32", (4, 6, 3), (18, 3, 1), (0, -1, 0), DeviceType.CPU, 0
    )
    assert f.signature is f.signature  # computed once
    hash(f.signature)
    assert f.address == ptr(a) and f.xp is np
    padded = empty({I: 5, K: 3}, aligned_index=None, allocator=None)
    assert padded.signature.strides == (3, 1)
    t = as_field([I, J], rng.random((6, 4)).T, copy=None)
    assert t.signature.strides == (1, 4)


# -- Field[...] annotations -----------------------------------------------------------------


def test_field_class_getitem_reads_as_field_type() -> None:
    from stencilkit.next.annotations import type_from_annotation

    assert type_from_annotation(Field[Dims[I, J], np.float64]) == FieldType((I, J), "float64")
    assert type_from_annotation(Field[[I, K], np.int32]) == FieldType((I, K), "int32")
    assert type_from_annotation(Field[Dims[K], "float32"]) == FieldType((K,), "float32")
    with pytest.raises(StencilTypeError, match="Dimension objects"):
        Field[["I"], np.float64]
    with pytest.raises(StencilTypeError, match="not supported"):
        Field[[I], np.complex128]
    with pytest.raises(StencilTypeError, match="not a field type"):
        Field[I]


# -- element-wise operations ----------------------------------------------------------------

FLOAT_OPS = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.lt,
    operator.le,
    operator.eq,
    operator.ne,
    operator.ge,
    operator.gt,
]
INT_OPS = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.floordiv,
    operator.mod,
    operator.and_,
    operator.or_,
    operator.xor,
    operator.lt,
    operator.eq,
]


@pytest.mark.parametrize("op", FLOAT_OPS, ids=lambda o: o.__name__)
def test_float_binary_ops_match_numpy(op: Any, rng: np.random.Generator) -> None:
    a, b = rng.random((4, 5)) + 0.5, rng.random((4, 5)) + 0.5
    fa, fb = as_field([I, J], a), as_field([I, J], b)
    for result, expected in [
        (op(fa, fb), op(a, b)),
        (op(fa, 1.5), op(a, 1.5)),
        (op(1.5, fa), op(1.5, a)),
        (op(np.float64(1.5), fa), op(np.float64(1.5), a)),
    ]:
        assert isinstance(result, Field) and result.domain == fa.domain
        np.testing.assert_array_equal(result.asnumpy(), expected)


@pytest.mark.parametrize("op", INT_OPS, ids=lambda o: o.__name__)
def test_int_binary_ops_match_numpy(op: Any, rng: np.random.Generator) -> None:
    a, b = rng.integers(1, 50, (6,), dtype=np.int32), rng.integers(1, 9, (6,), dtype=np.int32)
    fa, fb = as_field([I], a), as_field([I], b)
    np.testing.assert_array_equal(op(fa, fb).asnumpy(), op(a, b))
    np.testing.assert_array_equal(op(fa, 3).asnumpy(), op(a, 3))
    np.testing.assert_array_equal(op(7, fb).asnumpy(), op(7, b))
    assert op(fa, 3).dtype == op(a, 3).dtype


def test_unary_ops_and_ufuncs(rng: np.random.Generator) -> None:
    a = rng.random((3, 4)) - 0.5
    n = rng.integers(-9, 9, (3, 4))
    f, g = as_field([I, K], a), as_field([I, K], n)
    np.testing.assert_array_equal((-f).asnumpy(), -a)
    np.testing.assert_array_equal((+f).asnumpy(), a)
    np.testing.assert_array_equal(abs(f).asnumpy(), np.abs(a))
    np.testing.assert_array_equal((~g).asnumpy(), ~n)
    np.testing.assert_array_equal((~(f > 0)).asnumpy(), ~(a > 0))
    s = np.sin(f)
    assert isinstance(s, Field)
    np.testing.assert_array_equal(s.asnumpy(), np.sin(a))
    np.testing.assert_array_equal(np.maximum(f, 0.1).asnumpy(), np.maximum(a, 0.1))


def test_float32_stays_float32_with_python_scalars(rng: np.random.Generator) -> None:
    f = as_field([I], rng.random(4).astype(np.float32))
    assert (f * 2.0).dtype == np.float32
    assert (2 + f).dtype == np.float32


def test_broadcast_by_dimension_names(rng: np.random.Generator) -> None:
    a, b, c = rng.random((4, 3)), rng.random(3), rng.random(5)
    fik, fk, fj = as_field([I, K], a), as_field([K], b), as_field([J], c)
    r = fik * fk
    assert r.domain.dims == (I, K)
    np.testing.assert_array_equal(r.asnumpy(), a * b[None, :])
    r2 = fk - fik  # order of operands does not change the dimension order
    assert r2.domain.dims == (I, K)
    np.testing.assert_array_equal(r2.asnumpy(), b[None, :] - a)
    outer = fik + fj
    assert outer.domain.dims == (I, J, K)
    np.testing.assert_array_equal(outer.asnumpy(), a[:, None, :] + c[None, :, None])


def test_broadcast_intersects_domains(rng: np.random.Generator) -> None:
    a, b = rng.random((10, 3)), rng.random(6)
    f = as_field([I, K], a)
    g = as_field({I: (2, 8)}, b)
    r = f + g
    assert r.domain == Domain((I, K), (UnitRange(2, 8), UnitRange(0, 3)))
    np.testing.assert_array_equal(r.asnumpy(), a[2:8] + b[:, None])
    h = as_field([K], rng.random(3), origin={K: 1})  # K: -1..2
    r = f * h
    assert r.domain[K].unit_range == UnitRange(0, 2)
    np.testing.assert_array_equal(r.asnumpy(), a[:, 0:2] * h.asnumpy()[None, 1:3])


def test_incompatible_dimension_orders() -> None:
    f, g = ones({I: 2, J: 3}), ones({J: 3, I: 2})
    with pytest.raises(StencilValueError, match="dimension orders differ"):
        f + g


def test_ops_refuse_fields_on_other_devices_and_give_arrays_with_arrays(
    rng: np.random.Generator,
) -> None:
    f, g = as_field([I], rng.random(3)), as_field([I], rng.random(3))
    g._device = Device(DeviceType.CUDA, 0)  # pretend; only the device check is exercised
    with pytest.raises(StencilValueError, match="cannot combine a field on CPU:0"):
        f + g
    # a raw array: arrays, as gt4py's fields give (GT4Py's tests compare `field == array`)
    raw = rng.random(3)
    assert isinstance(f + raw, np.ndarray)
    np.testing.assert_array_equal(f + raw, f.asnumpy() + raw)
    with pytest.raises(StencilTypeError, match="ambiguous"):
        bool(f > 0.5)


# -- selection ------------------------------------------------------------------------------


def test_slicing_by_absolute_indices(rng: np.random.Generator) -> None:
    a = rng.random((10, 4))
    f = as_field([I, K], a, origin={I: 3}, copy=None)  # I: -3..7
    s = f[{I: (-1, 4)}]
    assert s.domain == Domain((I, K), (UnitRange(-1, 4), UnitRange(0, 4)))
    np.testing.assert_array_equal(s.asnumpy(), a[2:7])
    assert np.shares_memory(s.ndarray, a)
    assert f[Domain((K,), (UnitRange(1, 3),))].shape == (10, 2)
    assert f[[(K, (1, 3))]].domain[K].unit_range == UnitRange(1, 3)
    level = f[{K: 2}]
    assert level.domain.dims == (I,)
    np.testing.assert_array_equal(level.asnumpy(), a[:, 2])
    assert f[...].address == f.address and f[...].domain == f.domain


@pytest.mark.parametrize(
    ("key", "error", "match"),
    [
        ({I: (0, 11)}, StencilValueError, "outside the field's domain"),
        ({K: 4}, StencilValueError, "outside the field's domain"),
        ({J: (0, 1)}, StencilValueError, "cannot select along"),
        ("a", StencilTypeError, "cannot index a field"),
        (10, StencilValueError, "out of range"),
    ],
)
def test_slicing_errors(key: Any, error: type, match: str) -> None:
    f = zeros({I: 10, K: 4})
    with pytest.raises(error, match=match):
        f[key]


def test_setitem(rng: np.random.Generator) -> None:
    a = rng.random((6, 3))
    f = as_field([I, K], a.copy())
    f[{I: (1, 3)}] = 7.0
    g = as_field([K], rng.random(3))
    f[{I: (4, 6)}] = g
    expected = a.copy()
    expected[1:3] = 7.0
    expected[4:6] = g.asnumpy()[None, :]
    np.testing.assert_array_equal(f.asnumpy(), expected)


# -- connectivities -------------------------------------------------------------------------


def test_as_connectivity(rng: np.random.Generator) -> None:
    table = rng.integers(0, 20, (8, 2), dtype=np.int32)
    c = as_connectivity([Edge, E2CDim], Cell, table, copy=None)
    assert isinstance(c, Connectivity)
    assert c.codomain == Cell and c.max_neighbors == 2 and c.skip_value is None
    assert c.address == ptr(table)  # zero copy
    assert c.source_dims == (Edge,)
    table[3, 1] = -1
    assert as_connectivity([Edge, E2CDim], Cell, table).skip_value == -1
    assert as_connectivity([Edge, E2CDim], Cell, table, skip_value=None).skip_value is None
    sub = c[{Edge: (2, 5)}]
    assert isinstance(sub, Connectivity) and sub.codomain == Cell
    assert not isinstance(c + 1, Connectivity)
    one_to_one = as_connectivity([Edge], Cell, table[:, 0].copy())
    assert one_to_one.max_neighbors == 1
    assert "Cell" in repr(c)


def test_as_connectivity_errors(rng: np.random.Generator) -> None:
    with pytest.raises(StencilTypeError, match="integer indices"):
        as_connectivity([Edge, E2CDim], Cell, rng.random((3, 2)))
    with pytest.raises(StencilTypeError, match="must be a Dimension"):
        as_connectivity([Edge, E2CDim], "Cell", np.zeros((3, 2), np.int32))  # type: ignore[arg-type]


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: zeros({I: 3}, np.complex128), StencilTypeError, "not supported"),
        (lambda: zeros({I: 3}, np.float16), StencilTypeError, "not supported"),
        (lambda: as_field([I], np.zeros(3, np.complex64)), StencilTypeError, "not supported"),
        (lambda: as_field([I], [object()]), StencilTypeError, "numeric array"),
        (lambda: as_field([I, J], np.ones(3)), StencilValueError, "2 dimensions"),
        (lambda: as_field({I: 4}, np.ones(3)), StencilValueError, "does not match the domain"),
        (lambda: as_field([I], np.ones(3), origin={J: 1}), StencilValueError, "origin"),
        (lambda: as_field({I: 3}, np.ones(3), origin={I: 1}), StencilValueError, "only allowed"),
        (lambda: zeros("I"), StencilTypeError, "Domain"),
        (lambda: zeros({I: 3}, allocator=42), StencilTypeError, "unknown allocator"),
        (lambda: zeros({I: 3}, allocator=operator), StencilTypeError, "array namespace"),
        (lambda: zeros({I: 3}, device="gpu"), StencilTypeError, "unknown device"),
        (
            lambda: zeros({I: 3}, device=Device(DeviceType.ROCM, 0)),
            StencilValueError,
            "not supported",
        ),
        (
            lambda: zeros({I: 3}, allocator=np, device=Device(DeviceType.CUDA, 0)),
            StencilValueError,
            "allocates on CPU",
        ),
        (lambda: zeros({I: 3}, aligned_index={I: 3}), StencilValueError, "outside the domain"),
        (lambda: zeros({I: 3}, aligned_index={J: 0}), StencilValueError, "outside the domain"),
        (lambda: zeros({I: 3}, aligned_index=1), StencilTypeError, "name dimensions"),
    ],
)
def test_user_errors(call: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_custom_allocator_returning_wrong_buffer() -> None:
    class Bad:
        def allocate(self, shape, dtype, layout, device, aligned_index):  # type: ignore[no-untyped-def]
            return np.empty((1,), np.float64)

    with pytest.raises(StencilTypeError, match="expected shape"):
        zeros({I: 3}, allocator=Bad())


def test_errors_are_builtin_subclasses() -> None:
    with pytest.raises(TypeError):
        zeros({I: 3}, np.complex128)
    with pytest.raises(ValueError):
        as_field({I: 4}, np.ones(3))


@pytest.mark.skipif(HAVE_CUPY, reason="checks the message shown when CuPy is missing")
def test_gpu_requested_without_cupy() -> None:
    class GpuBackend:
        device_type = DeviceType.CUDA

    # the machine lacks something: BackendUnavailableError (issue 14), not a wrong value
    with pytest.raises(
        BackendUnavailableError, match=r"needs CuPy[\s\S]*(?:stencilkit's cuda extra|\.\[cuda\])"
    ):
        zeros({I: 3}, allocator=GpuBackend())
    with pytest.raises(
        BackendUnavailableError, match=r"needs CuPy[\s\S]*(?:stencilkit's cuda extra|\.\[cuda\])"
    ):
        ones({I: 3}).to(Device(DeviceType.CUDA, 0))


def test_to_same_device_is_identity(rng: np.random.Generator) -> None:
    f = as_field([I], rng.random(3))
    assert f.to(Device(DeviceType.CPU, 0)) is f
    assert f.to(np) is f


def test_repr_and_properties(rng: np.random.Generator) -> None:
    f = as_field([I, K], rng.random((2, 3)))
    assert repr(f) == "Field({I: 0:2, K: 0:3}, float64, CPU:0)"
    assert f.dims == (I, K) and f.device == Device(DeviceType.CPU, 0)


def test_signature_keys_are_equal_exactly_for_equal_signatures(rng) -> None:
    X, Y = Dimension("X"), Dimension("Y")
    a = as_field([X, Y], rng.standard_normal((4, 5)))
    b = as_field([X, Y], rng.standard_normal((4, 5)))
    c = as_field([X, Y], rng.standard_normal((5, 4)))
    d = as_field([X, Y], np.asfortranarray(rng.standard_normal((4, 5))), copy=None)
    assert a.signature == b.signature and a.signature_key == b.signature_key
    assert (
        c.signature_key != a.signature_key
        and d.signature_key != a.signature_key
        and c.signature_key != d.signature_key
    )
