"""What the three two-style examples share: the backend choice, random storages, the no-copy
check and per-call timing.

Each example (``two_styles_*.py``) writes one problem in the gt4py.next style on storages
allocated with ``gt4py.storage`` (``stencilkit.cartesian.storage``) for a gt4py.cartesian backend
name, passes the very same arrays to the program through ``gtx.as_field(..., copy=False)``, and
checks the result against NumPy.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import stencilkit as gtx
from stencilkit.cartesian import storage as gt_storage

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)

#: the gt4py.next backend beside each gt4py.cartesian backend name a command line may give
NEXT_BACKENDS: dict[str, Any] = {
    "numpy": None,  # embedded
    "gt:cpu_ifirst": gtx.cpu,
    "gt:cpu_kfirst": gtx.cpu,
    "dace:cpu": gtx.cpu,  # J unit-stride, K outermost: any strides work
    "gt:gpu": gtx.gpu,
}


#: stencilkit's backend names (``STENCILKIT_EXAMPLE_BACKEND``, as every example takes them) and
#: the gt4py.cartesian name each stands for here; a gt4py.cartesian name is taken as it is
CARTESIAN_NAMES = {"embedded": "numpy", "cpu": "gt:cpu_ifirst", "gpu": "gt:gpu"}


def cartesian_name(name: str) -> str:
    """The gt4py.cartesian backend name for ``name`` (stencilkit's or gt4py.cartesian's)."""
    return CARTESIAN_NAMES.get(name, name)


def backend_of(name: str) -> Any:
    """The gt4py.next backend for gt4py.cartesian's backend ``name`` (None: embedded)."""
    if name not in NEXT_BACKENDS:
        raise SystemExit(f"unknown backend {name!r}; use one of {', '.join(NEXT_BACKENDS)}")
    return NEXT_BACKENDS[name]


def _on_gpu(name: str) -> bool:
    return bool(gt_storage.from_name(name)["device"] == "gpu")


def random_storage(
    rng: np.random.Generator,
    shape: Sequence[int],
    backend: str,
    *,
    dtype: Any = np.float64,
    aligned_index: Sequence[int] | None = None,
    low: float = 0.0,
    high: float = 1.0,
) -> Any:
    """A storage for ``backend`` holding uniform random values in ``[low, high)``."""
    data = rng.uniform(low, high, tuple(shape)).astype(dtype)
    return gt_storage.from_array(data, dtype, backend=backend, aligned_index=aligned_index)


def shared_field(array: Any) -> Any:
    """``array`` as an (I, J, K) gt4py.next field on the same memory, checked to be no copy."""
    field = gtx.as_field([I, J, K], array, copy=False)
    assert _address(field.ndarray) == _address(array), "as_field copied the storage"
    return field


def _address(array: Any) -> int:
    if isinstance(array, np.ndarray):
        return int(array.__array_interface__["data"][0])
    return int(array.__cuda_array_interface__["data"][0])


def to_numpy(array: Any) -> np.ndarray:
    """A host copy of a NumPy or CuPy array."""
    return np.array(array.get() if hasattr(array, "get") else array)


def reset(array: Any, host: np.ndarray) -> None:
    """Write the host values ``host`` back into the storage ``array`` (NumPy or CuPy)."""
    if isinstance(array, np.ndarray):
        array[...] = host
    else:
        import cupy

        array[...] = cupy.asarray(host)


def stencil_times(
    stencil: Any, backend: str, fields: dict[str, Any], scalars: dict[str, Any],
    origin: dict[str, tuple[int, ...]], domain: tuple[int, int, int],
) -> dict[str, float]:  # fmt: skip
    """Per-call times of a GTScript stencil: ``__call__`` validated and not, and ``run()``."""
    args = {**fields, **scalars}

    def call(validate: bool) -> Callable[[], Any]:
        return lambda: stencil(**args, origin=origin, domain=domain, validate_args=validate)

    return {
        "GTScript __call__": per_call_us(call(True), backend),
        "GTScript __call__ (no checks)": per_call_us(call(False), backend),
        "GTScript run()": per_call_us(
            lambda: stencil.run(**args, _origin_=origin, _domain_=domain, exec_info=None), backend
        ),
    }


def per_call_us(call: Callable[[], Any], backend: str, repeat: int = 20) -> float:
    """The median wall time of ``call()`` in microseconds (GPU work synchronised)."""
    sync = _synchronize if _on_gpu(backend) else None
    call()  # the first call builds
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        if sync is not None:
            sync()
        times.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(times)


def _synchronize() -> None:
    import cupy

    cupy.cuda.Device().synchronize()


def report(title: str, backend: str, shape: Sequence[int], times: dict[str, float]) -> None:
    """One line per timed call."""
    next_backend = backend_of(backend)
    where = f"{backend} (gt4py.next: {'embedded' if next_backend is None else next_backend.name})"
    print(f"{title} {tuple(shape)} on {where}:")
    for label, us in times.items():
        print(f"  {label:<28} {us:10.1f} us per call")
