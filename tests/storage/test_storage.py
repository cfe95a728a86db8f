"""Level 1 storage: layouts, aligned allocation, namespaces and devices (CPU)."""

from __future__ import annotations

import importlib.util
import itertools
import subprocess
import sys

import numpy as np
import pytest

from stencilkit.core import (
    BackendUnavailableError,
    Device,
    DeviceType,
    DimensionKind,
    StencilTypeError,
    StencilValueError,
)
from stencilkit.storage import (
    C_ORDER,
    DEVICE_SCHEMES,
    GPU_COLUMN_SCHEME,
    HORIZONTAL_FIRST,
    SCHEMES,
    VERTICAL_FIRST,
    Allocator,
    Layout,
    allocate,
    array_namespace,
    device_of,
    is_column,
    layout_for,
)

H, V, L = DimensionKind.HORIZONTAL, DimensionKind.VERTICAL, DimensionKind.LOCAL
HAVE_CUPY = importlib.util.find_spec("cupy") is not None

DTYPES = ["int8", "int16", "int32", "float32", "float64", "bool"]
SHAPES = [(7,), (5, 9), (3, 4, 5), (6, 1, 3)]
LAYOUT_KINDS = [
    ("c", lambda n: C_ORDER.layout((H,) * n)),
    ("hfirst", lambda n: HORIZONTAL_FIRST.layout((H,) * n)),
    ("hfirst-64", lambda n: Layout(tuple(range(n))[::-1], alignment=64, padding=True)),
    ("c-256-padded", lambda n: Layout(tuple(range(n)), alignment=256, padding=True)),
]


def address(array: np.ndarray, index: tuple[int, ...]) -> int:
    base = int(array.__array_interface__["data"][0])
    return base + sum(i * s for i, s in zip(index, array.strides, strict=True))


def test_scheme_table_names_and_devices() -> None:
    assert SCHEMES == {
        "c-contiguous": C_ORDER,
        "horizontal-contiguous": HORIZONTAL_FIRST,
        "vertical-contiguous": VERTICAL_FIRST,
    }
    assert DEVICE_SCHEMES[DeviceType.CPU] is C_ORDER
    assert DEVICE_SCHEMES[DeviceType.CUDA] is HORIZONTAL_FIRST


@pytest.mark.parametrize(
    ("kinds", "cpu_order", "cuda_order"),
    [
        ((H, H, V), (0, 1, 2), (2, 1, 0)),
        ((H, L), (0, 1), (1, 0)),
        ((H, H), (0, 1), (1, 0)),
        ((H,), (0,), (0,)),
        ((), (), ()),
    ],
)
def test_layout_for(
    kinds: tuple[DimensionKind, ...], cpu_order: tuple[int, ...], cuda_order: tuple[int, ...]
) -> None:
    cpu = layout_for(kinds, DeviceType.CPU)
    assert cpu == Layout(cpu_order, alignment=64, padding=False)
    cuda = layout_for(kinds, DeviceType.CUDA)
    assert cuda == Layout(cuda_order, alignment=128, padding=True)
    assert layout_for(kinds, DeviceType.CPU_PINNED) == cpu


@pytest.mark.parametrize(
    ("kinds", "hfirst", "vfirst"),
    [
        ((H, V), (1, 0), (0, 1)),
        ((V, H), (0, 1), (1, 0)),  # the horizontal axis is unit-stride whatever its position
        (
            (H, V, L),
            (2, 1, 0),
            (0, 2, 1),
        ),  # columns: all levels (and local entries) of a cell together
    ],
)
def test_column_fields_on_the_gpu(
    kinds: tuple[DimensionKind, ...], hfirst: tuple[int, ...], vfirst: tuple[int, ...]
) -> None:
    """One horizontal and a vertical axis: GPU_COLUMN_SCHEME decides (one constant)."""
    assert is_column(kinds) and not is_column((H, H, V)) and not is_column((H, L))
    assert HORIZONTAL_FIRST.layout(kinds).stride_order == hfirst
    assert VERTICAL_FIRST.layout(kinds).stride_order == vfirst
    assert layout_for(kinds, DeviceType.CUDA) == GPU_COLUMN_SCHEME.layout(kinds)
    assert layout_for(kinds, DeviceType.CPU).stride_order == tuple(range(len(kinds)))


def test_layout_for_unknown_device() -> None:
    with pytest.raises(StencilValueError, match="no memory layout"):
        layout_for((H,), DeviceType.ROCM)


@pytest.mark.parametrize(
    ("args", "match"),
    [(((0, 0),), "permutation"), (((1, 2),), "permutation"), (((0,), 48), "power of two")],
)
def test_layout_rejects_bad_values(args: tuple[object, ...], match: str) -> None:
    with pytest.raises(StencilValueError, match=match):
        Layout(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("name", "make"), LAYOUT_KINDS, ids=[k[0] for k in LAYOUT_KINDS])
def test_aligned_index_is_aligned(
    rng: np.random.Generator, dtype: str, shape: tuple[int, ...], name: str, make: object
) -> None:
    layout = make(len(shape))  # type: ignore[operator]
    candidates = [None, tuple(s - 1 for s in shape), tuple(int(rng.integers(s)) for s in shape)]
    for aligned in candidates:
        a = allocate(shape, dtype, layout, aligned_index=aligned)
        assert isinstance(a, np.ndarray)
        assert a.shape == shape and a.dtype == np.dtype(dtype)
        index = aligned if aligned is not None else (0,) * len(shape)
        assert address(a, index) % layout.alignment == 0, (name, aligned)


@pytest.mark.parametrize(("name", "make"), LAYOUT_KINDS, ids=[k[0] for k in LAYOUT_KINDS])
def test_aligned_index_past_the_extents_is_aligned(name: str, make: object) -> None:
    """As in gt4py.storage: the aligned point may lie at or past an extent (NDSL passes a
    quantity's origin, which can be at the end of an axis); its would-be address is aligned."""
    shape = (5, 3, 4)
    layout = make(len(shape))  # type: ignore[operator]
    for aligned in [(5, 3, 4), (0, 7, 2), (9, 0, 11)]:
        a = allocate(shape, "float64", layout, aligned_index=aligned)
        assert a.shape == shape
        a[...] = 1.5  # the whole buffer is inside the allocation
        assert address(a, aligned) % layout.alignment == 0, (name, aligned)


@pytest.mark.parametrize("dtype", ["int8", "float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("name", "make"), LAYOUT_KINDS, ids=[k[0] for k in LAYOUT_KINDS])
def test_strides_follow_layout(dtype: str, shape: tuple[int, ...], name: str, make: object) -> None:
    layout = make(len(shape))  # type: ignore[operator]
    a = allocate(shape, dtype, layout)
    itemsize = np.dtype(dtype).itemsize
    order = layout.stride_order
    assert a.strides[order[-1]] == itemsize
    extents = list(shape)
    if layout.padding:
        per_row = layout.alignment // itemsize
        extents[order[-1]] = -(-shape[order[-1]] // per_row) * per_row
        # every row starts aligned as well
        for axis in order[:-1]:
            assert a.strides[axis] % layout.alignment == 0
    for slow, fast in itertools.pairwise(order):
        assert a.strides[slow] == a.strides[fast] * extents[fast]


def test_unpadded_c_layout_is_contiguous() -> None:
    a = allocate((4, 5, 3), "float64", C_ORDER.layout((H, H, V)))
    assert a.flags.c_contiguous
    b = allocate((4, 5, 3), "float64", Layout((2, 1, 0)))
    assert b.flags.f_contiguous


def test_padding_rounds_fastest_extent() -> None:
    a = allocate((10, 7), "float64", Layout((1, 0), alignment=128, padding=True))
    assert a.strides == (8, 128)  # 10 doubles padded to 16
    b = allocate((10, 7), "float32", Layout((0, 1), alignment=64, padding=True))
    assert b.strides == (64, 4)  # 7 floats padded to 16


def test_buffers_hold_values(rng: np.random.Generator) -> None:
    values = rng.random((6, 5, 4))
    a = allocate(
        values.shape, "float64", HORIZONTAL_FIRST.layout((H, H, V)), aligned_index=(2, 1, 3)
    )
    a[...] = values
    np.testing.assert_array_equal(a, values)
    assert a.flags.writeable


def test_zero_sized_buffers() -> None:
    a = allocate((0, 5), "float64", C_ORDER.layout((H, H)))
    assert a.shape == (0, 5)
    b = allocate((), "float32", Layout(()))
    assert b.shape == ()


@pytest.mark.parametrize(
    ("shape", "layout", "aligned", "match"),
    [
        ((3, 4), Layout((0,)), None, "for 1 axes"),
        ((3, 4), Layout((0, 1)), (-1, 0), "does not fit a buffer"),
        ((3, 4), Layout((0, 1)), (0,), "does not fit a buffer"),
        ((3, -1), Layout((0, 1)), None, "negative"),
    ],
)
def test_allocate_errors(
    shape: tuple[int, ...], layout: Layout, aligned: tuple[int, ...] | None, match: str
) -> None:
    with pytest.raises(StencilValueError, match=match):
        allocate(shape, "float64", layout, aligned_index=aligned)


def test_allocate_unsupported_device() -> None:
    with pytest.raises(StencilValueError, match="only CPU, CPU_PINNED and CUDA"):
        allocate((3,), "float64", Layout((0,)), Device(DeviceType.ROCM, 0))


@pytest.mark.skipif(HAVE_CUPY, reason="checks the message shown when CuPy is missing")
@pytest.mark.parametrize("kind", [DeviceType.CUDA, DeviceType.CPU_PINNED])
def test_gpu_without_cupy_says_how_to_install(kind: DeviceType) -> None:
    with pytest.raises(
        BackendUnavailableError, match=r"needs CuPy[\s\S]*(?:stencilkit's cuda extra|\.\[cuda\])"
    ):
        allocate((3,), "float64", Layout((0,)), Device(kind, 0))


def test_array_namespace_and_device_of() -> None:
    a = np.arange(3.0)
    assert array_namespace(a) is np
    assert device_of(a) == Device(DeviceType.CPU, 0)
    with pytest.raises(StencilTypeError, match="not a NumPy or CuPy array"):
        array_namespace([1.0, 2.0])


class _FakeDLPack:
    def __init__(self, device: tuple[int, int]) -> None:
        self.device = device

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


def test_device_of_reads_dlpack_device() -> None:
    assert device_of(_FakeDLPack((2, 1))) == Device(DeviceType.CUDA, 1)
    assert device_of(_FakeDLPack((3, 0))) == Device(DeviceType.CPU_PINNED, 0)
    with pytest.raises(StencilValueError, match="DLPack device type 99"):
        device_of(_FakeDLPack((99, 0)))
    assert device_of([1, 2]) == Device(DeviceType.CPU, 0)  # host data
    with pytest.raises(StencilTypeError, match="which device"):
        device_of(object())


def test_allocator_protocol_is_structural() -> None:
    class Mine:
        def allocate(self, shape, dtype, layout, device, aligned_index):  # type: ignore[no-untyped-def]
            return np.empty(shape, dtype)

    assert isinstance(Mine(), Allocator)
    assert not isinstance(np, Allocator)


def test_importing_storage_and_fields_does_not_import_cupy() -> None:
    code = (
        "import sys, stencilkit.storage, stencilkit.fields; "
        "assert 'cupy' not in sys.modules, 'cupy was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
