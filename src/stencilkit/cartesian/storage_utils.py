"""``gt4py.storage.cartesian.utils``: ``cpu_copy`` (a host NumPy copy of
any storage) and ``asarray`` (the array a storage is, without a copy)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["asarray", "cpu_copy"]


def asarray(array: Any) -> Any:
    """``array`` as a NumPy or CuPy array, without copying."""
    if hasattr(array, "__cuda_array_interface__") and not isinstance(array, np.ndarray):
        import cupy

        return cupy.asarray(array)
    return np.asarray(array)


def cpu_copy(array: Any) -> np.ndarray[Any, Any]:
    """A NumPy copy of ``array`` in host memory (a device array is copied back)."""
    if hasattr(array, "__cuda_array_interface__") and not isinstance(array, np.ndarray):
        import cupy

        return np.array(cupy.asnumpy(cupy.asarray(array)))
    return np.array(array, copy=True)
