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


@pytest.fixture
def generated_cuda() -> Any:
    """``generated_cuda(stencil, domain, origin, arrays)``: see ``_generated_cuda``."""
    return _generated_cuda


def _generated_cuda(
    stencil: Any, domain: tuple[int, ...], origin: dict[str, Any], arrays: dict[str, Any]
) -> str:
    """The CUDA source of ``stencil`` (a ``gt:gpu`` stencil object) for these host arrays,
    compiled for sm_90 (NVRTC or nvcc; no GPU needed; skipped where no CUDA compiler is)."""
    from stencilkit.backends.cuda import CudaTarget

    flat = stencil.flat_args(domain, origin, arrays)
    planned = stencil._runner.stages(flat, {}, check_device=False, until="plan").planned
    target = CudaTarget(arch="90")
    source = target.generate(planned)
    try:
        built = target.build(source)
    except Exception as err:
        if "compiler" in str(err).lower() and "not found" in str(err).lower():
            pytest.skip(f"no CUDA compiler here: {err}")
        raise
    assert "cubin" in built.as_text()
    return str(source.text)


@pytest.fixture
def define(tmp_path: Any) -> Any:
    """``define(body, annotations)``: ``def d(<annotated names>)`` whose computation is the one
    line ``body``, written to a file (so that errors can point into it: line 4)."""

    count = iter(range(1_000_000))

    def make(body: str, annotations: dict[str, Any]) -> Any:
        path = tmp_path / f"defs{next(count)}.py"  # a new file: no stale cached source
        path.write_text(
            "from stencilkit.cartesian.gtscript import PARALLEL, computation, interval\n"
            f"def d({', '.join(annotations)}):\n"
            "    with computation(PARALLEL), interval(...):\n"
            f"        {body}\n"
        )
        scope: dict[str, Any] = {}
        exec(compile(path.read_text(), str(path), "exec"), scope)
        scope["d"].__annotations__ = dict(annotations)
        return scope["d"]

    return make
