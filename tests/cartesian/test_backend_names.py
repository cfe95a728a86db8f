"""gt4py.cartesian backend names: targets, layout maps and alignment as gt4py 1.2.3 has them."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit
from stencilkit.cartesian.backend_names import (
    BACKENDS,
    UnknownBackendError,
    canonical_dimensions,
    lookup,
)

IJK = ("I", "J", "K")

# gt4py 1.2.3's layout registry, written out: (target, layout_map(I, J, K), alignment)
EXPECTED = {
    "numpy": ("embedded", (0, 1, 2), 1),
    "debug": ("embedded", (0, 1, 2), 1),
    "gt:cpu_kfirst": ("cpu", (0, 1, 2), 1),
    "gt:cpu_ifirst": ("cpu", (2, 1, 0), 1),
    "gt:gpu": ("gpu", (2, 1, 0), 32),
    "dace:cpu": ("cpu", (1, 2, 0), 1),
    "dace:cpu_kfirst": ("cpu", (0, 1, 2), 1),
    "dace:cpu_KJI": ("cpu", (2, 1, 0), 1),
    "dace:gpu": ("gpu", (2, 1, 0), 32),
    "dace:gpu_IJK": ("gpu", (0, 1, 2), 32),
    "cuda": ("gpu", (2, 1, 0), 32),
}


def test_every_name_is_known_with_its_target_layout_and_alignment() -> None:
    assert set(BACKENDS) == set(EXPECTED)
    for name, (target, layout_map, alignment) in EXPECTED.items():
        rec = lookup(name)
        assert (rec.name, rec.target, rec.layout_map(IJK), rec.alignment) == (
            name,
            target,
            layout_map,
            alignment,
        )
        assert rec.device == ("gpu" if target == "gpu" else "cpu")


def test_stencilkit_backend_objects() -> None:
    assert lookup("numpy").backend is None
    assert lookup("debug").debug and not lookup("numpy").debug
    assert lookup("gt:cpu_ifirst").backend is stencilkit.backend.cpu
    assert lookup("dace:gpu").backend is stencilkit.backend.gpu


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownBackendError, match=r"unknown gt4py.cartesian backend 'gt:cpu'"):
        lookup("gt:cpu")
    with pytest.raises(ValueError) as info:
        lookup("gtc:gt:cpu_ifirst")
    assert isinstance(info.value, RuntimeError)
    assert "'gt:cpu_ifirst'" in str(info.value) and "'dace:gpu'" in str(info.value)
    with pytest.raises(UnknownBackendError):
        lookup(None)  # type: ignore[arg-type]


def test_data_dimensions_are_slower_than_spatial_axes() -> None:
    # checked on gt4py 1.2.3: a kfirst (5, 6, 7, 3) array has strides (336, 56, 8, 1680)
    assert lookup("gt:cpu_kfirst").layout_map(("I", "J", "K", "0")) == (1, 2, 3, 0)
    assert lookup("gt:gpu").layout_map(("I", "J", "K", "0", "1")) == (4, 3, 2, 0, 1)
    assert lookup("dace:cpu").layout_map(("I", "J", "K", "0")) == (2, 3, 1, 0)


def test_data_dimensions_ordered_by_position_not_name() -> None:
    # NDSL's dimensions for a (nx, ny, nz, 5, 3) array are ["I", "J", "K", "5", "3"]
    rec = lookup("gt:cpu_kfirst")
    assert rec.layout_map(("I", "J", "K", "5", "3")) == (2, 3, 4, 0, 1)
    assert rec.layout_map(("I", "J", "K", "3", "3")) == (2, 3, 4, 0, 1)


def test_lower_dimensional_layouts() -> None:
    assert lookup("gt:cpu_ifirst").layout_map(("I", "J")) == (1, 0)
    assert lookup("gt:cpu_kfirst").layout_map(("I", "J")) == (0, 1)
    assert lookup("gt:gpu").layout_map(("K",)) == (0,)
    assert lookup("dace:cpu").layout_map(("I", "K")) == (1, 0)
    assert lookup("gt:gpu").layout_map(("J", "K", "0")) == (2, 1, 0)


def test_dimension_order_is_by_name() -> None:
    # the same layout whatever order the dimensions are listed in
    rec = lookup("gt:cpu_ifirst")
    assert rec.layout_map(("K", "I", "J")) == (0, 2, 1)
    assert rec.stride_order(("K", "I", "J")) == (0, 2, 1)
    assert rec.stride_order(IJK) == (2, 1, 0)


def test_canonical_dimensions() -> None:
    assert canonical_dimensions(None, 2) == ("I", "J")
    assert canonical_dimensions(None, 5) == ("I", "J", "K", "0", "1")

    class Axis:
        name = "K"

    assert canonical_dimensions(["I", Axis()], 2) == ("I", "K")
    with pytest.raises(ValueError, match=r"'X' is not a dimension name"):
        canonical_dimensions(["I", "X"], 2)
    with pytest.raises(ValueError, match=r"an axis I, J or K is repeated"):
        canonical_dimensions(["I", "I"], 2)
    # NDSL names data dimensions by their size: the names may repeat
    assert canonical_dimensions(["I", "J", "K", 3, "3"], 5) == ("I", "J", "K", "3", "3")


def test_is_optimal_layout_from_strides() -> None:
    c_order = np.empty((4, 5, 6))
    f_order = np.asfortranarray(c_order)
    assert lookup("numpy").is_optimal_layout(c_order, IJK)
    assert not lookup("numpy").is_optimal_layout(f_order, IJK)
    assert lookup("gt:gpu").is_optimal_layout(f_order, IJK)
    assert not lookup("gt:cpu_ifirst").is_optimal_layout(c_order, IJK)
    assert not lookup("numpy").is_optimal_layout(c_order, ("I", "J"))  # wrong rank


def test_layout_bytes_and_padding() -> None:
    gpu = lookup("gt:gpu").layout(IJK, 8)
    assert gpu.stride_order == (2, 1, 0) and gpu.padding and gpu.row_bytes == 256
    assert gpu.alignment == 256
    cpu = lookup("gt:cpu_kfirst").layout(IJK, 4)
    assert cpu.stride_order == (0, 1, 2) and not cpu.padding and cpu.alignment == 64
    with pytest.raises(ValueError, match=r"is not a power of two of bytes"):
        lookup("gt:gpu").layout(IJK, 3)
