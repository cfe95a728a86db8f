"""Copies to the host (storage/namespaces.py ``to_host``, ``Field.asnumpy``): every layout gives
the values CuPy gives (a dense non-contiguous view is copied as raw bytes, a sparse one and
negative strides are left to CuPy)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit.storage.namespaces import to_host

I, J = gtx.Dimension("I"), gtx.Dimension("J")


def test_numpy_arrays_pass_through(rng: np.random.Generator) -> None:
    a = rng.random((5, 7))[:, ::2]
    host = to_host(a)
    assert host.base is a.base or host is a or np.shares_memory(host, a)
    np.testing.assert_array_equal(host, a)


def _views(cp: Any, rng: np.random.Generator) -> list[Any]:
    base = cp.asarray(rng.random((48, 40, 6)))
    return [
        base,
        cp.asfortranarray(base),  # dense, F order
        base.transpose(2, 0, 1),  # dense, permuted
        base[3:20, 5:33, 1:4],  # a block: spans more than it holds
        base[:, 7],  # one column of a plane
        base[::-1],  # negative stride
        base[:, :, 2],  # sparse: one level of six
        base[:0],  # empty
        base[4, 5, 1],  # zero-dimensional
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("spread", [None, 2.0])
def test_every_layout_copies_the_values_cupy_gives(
    rng: np.random.Generator, spread: float | None
) -> None:
    import cupy as cp

    for view in _views(cp, rng):
        host = to_host(view, max_spread=spread)
        assert isinstance(host, np.ndarray) and host.shape == view.shape
        np.testing.assert_array_equal(host, view.get())


@pytest.mark.gpu
def test_field_asnumpy_of_a_gpu_connectivity_layout(rng: np.random.Generator) -> None:
    import cupy as cp

    data = cp.asfortranarray(cp.asarray(rng.integers(0, 50, (40, 3)), dtype=cp.int32))
    f = gtx.as_field([I, J], data, copy=None)
    np.testing.assert_array_equal(f.asnumpy(), data.get())
