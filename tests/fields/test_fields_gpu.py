"""Fields on CUDA devices through CuPy: layout, alignment, zero copy, interchange, operations.

Every test is marked ``gpu``: skipped without a GPU, run (and required to pass) with one.
"""

from __future__ import annotations

import operator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from stencilkit.core import (
    Device,
    DeviceType,
    Dimension,
    DimensionKind,
    Domain,
    StencilTypeError,
    StencilValueError,
    UnitRange,
)
from stencilkit.fields import Connectivity, Field, as_connectivity, as_field, empty, ones, zeros
from stencilkit.fields.signature import FieldSignature
from stencilkit.storage import (
    GPU_COLUMN_SCHEME,
    HORIZONTAL_FIRST,
    Layout,
    allocate,
    array_namespace,
    buffer_strides,
    device_of,
)

pytestmark = pytest.mark.gpu

I, J = Dimension("I"), Dimension("J")
K = Dimension("K", kind=DimensionKind.VERTICAL)
Cell, Edge = Dimension("Cell"), Dimension("Edge")
E2CDim = Dimension("E2CDim", kind=DimensionKind.LOCAL)
GPU0 = Device(DeviceType.CUDA, 0)


class GpuBackend:
    """Stands in for a GPU backend: only its device type matters for allocation."""

    device_type = DeviceType.CUDA


@pytest.fixture
def cp() -> ModuleType:
    import cupy

    return cupy


def close(field: Field, expected: Any) -> None:
    got = field.asnumpy()
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(expected, np.float64), rtol=1e-14)


def element_address(field: Field, index: tuple[int, ...]) -> int:
    return field.address + sum(i * s for i, s in zip(index, field.ndarray.strides, strict=True))


def test_storage_allocates_cupy_arrays(cp: ModuleType) -> None:
    layout = HORIZONTAL_FIRST.layout(
        (DimensionKind.HORIZONTAL, DimensionKind.HORIZONTAL, DimensionKind.VERTICAL)
    )
    a = allocate((5, 7, 3), "float64", layout, GPU0, aligned_index=(1, 2, 1))
    assert isinstance(a, cp.ndarray)
    assert array_namespace(a) is cp and device_of(a) == GPU0
    assert a.strides[0] == 8  # horizontal axis unit-stride
    offset = 1 * a.strides[0] + 2 * a.strides[1] + 1 * a.strides[2]
    assert (a.data.ptr + offset) % 128 == 0


@pytest.mark.parametrize("allocator", ["backend", "cupy", "device"])
def test_zeros_on_gpu_layout_and_alignment(cp: ModuleType, allocator: str) -> None:
    kwargs: dict[str, Any] = {
        "backend": {"allocator": GpuBackend()},
        "cupy": {"allocator": cp},
        "device": {"device": GPU0},
    }[allocator]
    f = zeros({I: 10, J: 6, K: 4}, np.float32, **kwargs)
    assert isinstance(f.ndarray, cp.ndarray) and f.xp is cp
    assert f.device == GPU0 and f.__dlpack_device__() == (2, 0)
    assert f.address == f.ndarray.data.ptr and f.address % 128 == 0
    # horizontal-first: I unit-stride, rows padded to 128 bytes (32 floats)
    assert f.signature == FieldSignature(
        ("I", "J", "K"), "float32", (10, 6, 4), (1, 32, 192), (0, 0, 0), DeviceType.CUDA, 0
    )
    assert bool((f.ndarray == 0).all())


@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.float64])
def test_gpu_aligned_index(cp: ModuleType, dtype: Any) -> None:
    f = empty(
        {I: (-2, 9), K: (0, 5)},
        dtype,
        aligned_index={I: 0, K: 3},
        device=GPU0,
        layout="horizontal-contiguous",
    )
    assert element_address(f, (2, 3)) % 128 == 0
    assert f.ndarray.strides[0] == np.dtype(dtype).itemsize


def test_gpu_layout_puts_horizontal_axis_first_whatever_its_position(cp: ModuleType) -> None:
    f = empty({K: 3, Cell: 50}, device=GPU0, layout="horizontal-contiguous")
    assert f.ndarray.strides[1] == 8  # Cell is unit-stride
    assert f.ndarray.strides[0] == 64 * 8  # 50 doubles padded to 64 (a multiple of 128 bytes)


def test_as_field_cupy_zero_copy(cp: ModuleType, rng: np.random.Generator) -> None:
    src = cp.asarray(rng.random((6, 5)))
    f = as_field([I, K], src, copy=None)
    assert f.ndarray.data.ptr == src.data.ptr and f.address == src.data.ptr
    assert f.device == GPU0
    strided = src[:, ::2]
    g = as_field([I, K], strided, copy=None)
    assert g.address == strided.data.ptr
    assert g.signature.strides == (5, 2)


def test_as_field_host_data_to_gpu_copies_into_gpu_layout(
    cp: ModuleType, rng: np.random.Generator
) -> None:
    a = rng.random((9, 4))
    f = as_field([I, K], a, allocator=GpuBackend(), layout="horizontal-contiguous")
    assert isinstance(f.ndarray, cp.ndarray)
    assert f.ndarray.strides == (8, 128)  # 9 doubles padded to 16
    assert f.address % 128 == 0
    np.testing.assert_array_equal(f.asnumpy(), a)
    g = as_field([I, K], a.astype(np.float32), np.float64, device=GPU0)
    np.testing.assert_array_equal(g.asnumpy(), a.astype(np.float32).astype(np.float64))


def test_as_field_cupy_dtype_change_copies(cp: ModuleType, rng: np.random.Generator) -> None:
    src = cp.asarray(rng.random(8))
    f = as_field([I], src, np.float32)
    assert f.address != src.data.ptr and f.dtype == np.float32
    np.testing.assert_allclose(f.asnumpy(), cp.asnumpy(src).astype(np.float32))


def test_gpu_export_protocols(cp: ModuleType, rng: np.random.Generator) -> None:
    a = rng.random((3, 4))
    f = as_field([I, J], cp.asarray(a))
    assert cp.from_dlpack(f).data.ptr == f.address
    assert cp.asarray(f).data.ptr == f.address  # through __cuda_array_interface__
    assert f.__cuda_array_interface__["data"][0] == f.address
    assert not hasattr(f, "__array_interface__")
    with pytest.raises(TypeError, match="asnumpy"):
        np.asarray(f)
    out = f.asnumpy()
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, a)


def test_torch_cuda_zero_copy(rng: np.random.Generator) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    t = torch.rand(5, 4, dtype=torch.float64, device="cuda")
    f = as_field([I, J], t, copy=None)
    assert f.device == GPU0 and f.address == t.data_ptr()
    back = torch.from_dlpack(f)
    assert back.data_ptr() == f.address and back.is_cuda
    np.testing.assert_array_equal(f.asnumpy(), t.cpu().numpy())


@pytest.mark.parametrize(
    "op", [operator.add, operator.sub, operator.mul, operator.truediv, operator.gt]
)
def test_gpu_ops_match_numpy(cp: ModuleType, rng: np.random.Generator, op: Any) -> None:
    a, b = rng.random((6, 4)) + 0.5, rng.random(4) + 0.5
    fa = as_field([I, K], a, device=GPU0)
    fb = as_field([K], b, device=GPU0)
    r = op(fa, fb)
    assert r.xp is cp and r.domain.dims == (I, K)
    close(r, op(a, b[None, :]))
    close(op(fa, 2.0), op(a, 2.0))
    close(op(2.0, fa), op(2.0, a))
    close(-fa, -a)
    close(np.sqrt(fa), np.sqrt(a))


def test_gpu_broadcast_intersects_domains(cp: ModuleType, rng: np.random.Generator) -> None:
    a, b = rng.random((10, 3)), rng.random(6)
    r = as_field([I, K], a, device=GPU0) + as_field({I: (2, 8)}, b, device=GPU0)
    assert r.domain == Domain((I, K), (UnitRange(2, 8), UnitRange(0, 3)))
    close(r, a[2:8] + b[:, None])


def test_gpu_slicing_shares_memory(cp: ModuleType, rng: np.random.Generator) -> None:
    a = rng.random((8, 3))
    f = as_field([I, K], a, origin={I: 2}, device=GPU0)
    s = f[{I: (0, 3)}]
    assert s.domain[I].unit_range == UnitRange(0, 3)
    assert s.address == f.address + 2 * f.ndarray.strides[0]
    np.testing.assert_array_equal(s.asnumpy(), a[2:5])
    s.ndarray[...] = 1.5
    assert np.all(f.asnumpy()[2:5] == 1.5)


def test_moving_between_devices(cp: ModuleType, rng: np.random.Generator) -> None:
    a = rng.random((5, 3))
    host = as_field([I, K], a)
    gpu = host.to(GPU0)
    assert gpu.xp is cp and gpu.device == GPU0 and gpu.domain == host.domain
    # a column field: the GPU's column layout (GPU_COLUMN_SCHEME)
    assert (
        gpu.ndarray.strides
        == buffer_strides((5, 3), 8, GPU_COLUMN_SCHEME.layout((I.kind, K.kind)))[0]
    )
    assert gpu.to(GPU0) is gpu
    back = gpu.to(Device(DeviceType.CPU, 0))
    assert back.xp is np
    np.testing.assert_array_equal(back.asnumpy(), a)
    assert host.to(cp).device == GPU0


def test_mixing_devices_is_refused(cp: ModuleType) -> None:
    with pytest.raises(StencilValueError, match="cannot combine a field on CPU:0"):
        ones({I: 3}) + ones({I: 3}, device=GPU0)


def test_bad_cuda_device_id(cp: ModuleType) -> None:
    with pytest.raises(StencilValueError, match="does not exist"):
        zeros({I: 3}, device=Device(DeviceType.CUDA, 4096))


def test_gpu_connectivity(cp: ModuleType, rng: np.random.Generator) -> None:
    table = cp.asarray(rng.integers(0, 20, (7, 3), dtype=np.int32))
    table[2, 1] = -1
    c = as_connectivity([Edge, E2CDim], Cell, table, copy=None)
    assert isinstance(c, Connectivity)
    assert c.address == table.data.ptr and c.skip_value == -1 and c.max_neighbors == 3
    host = as_connectivity([Edge, E2CDim], Cell, cp.asnumpy(table), allocator=GpuBackend())
    assert host.ndarray.strides[0] == 4  # Edge unit-stride on the GPU
    np.testing.assert_array_equal(host.asnumpy(), cp.asnumpy(table))


def test_pinned_host_buffers(rng: np.random.Generator) -> None:
    f = empty({I: 6, K: 3}, device=Device(DeviceType.CPU_PINNED, 0))
    assert isinstance(f.ndarray, np.ndarray) and f.address % 64 == 0
    values = rng.random((6, 3))
    f.ndarray[...] = values
    np.testing.assert_array_equal(f.asnumpy(), values)
    a = allocate((4,), "float32", Layout((0,)), Device(DeviceType.CPU_PINNED, 0))
    assert isinstance(a, np.ndarray) and a.shape == (4,)


def test_gpu_field_array_protocol_error_is_a_type_error(cp: ModuleType) -> None:
    f = ones({I: 2}, device=GPU0)
    with pytest.raises(StencilTypeError, match="GPU memory"):
        f.__array__()
