"""Backends for the GTScript tests: embedded (``numpy``), cpu (``gt:cpu_ifirst``, generated C++)
and gpu (``gt:gpu``, marked ``gpu``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

BACKENDS = [
    pytest.param("numpy", id="numpy"),
    pytest.param("gt:cpu_ifirst", id="cpu"),
    pytest.param("gt:gpu", id="gpu", marks=pytest.mark.gpu),
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Arrays:
    """Random arrays on the backend's device, and back to NumPy for the comparisons."""

    def __init__(self, backend: str) -> None:
        self.gpu = backend == "gt:gpu"
        self.rng = np.random.default_rng(42)

    def random(self, *shape: int, dtype: Any = np.float64) -> Any:
        a = self.rng.standard_normal(shape).astype(dtype)
        return self.put(a)

    def put(self, a: np.ndarray) -> Any:
        if self.gpu:
            import cupy

            return cupy.asarray(a)
        return a.copy()

    def host(self, a: Any) -> np.ndarray:
        return a.get() if self.gpu else np.array(a, copy=True)


@pytest.fixture
def arrays(backend: str) -> Arrays:
    return Arrays(backend)
