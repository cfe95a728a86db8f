"""Shared fixtures: the backend matrix and the GPU gate.

Tests that compile CUDA with NVRTC (no GPU needed) carry ``@pytest.mark.nvrtc``: skipped where
cuda-bindings or the NVRTC library is missing. GPU tests carry ``@pytest.mark.gpu``. Where no GPU is present they are skipped; where a GPU *is*
present (``/dev/nvidia0`` or ``nvidia-smi`` exists, or ``STENCILKIT_REQUIRE_GPU=1``) but CuPy cannot
use it, they fail loudly instead of being skipped, so a GPU run can never pass vacuously.
"""

from __future__ import annotations

import functools
import os
import shutil
from typing import Any

import numpy as np
import pytest

import stencilkit.config
import stencilkit.ir.verify

# icon4py-style StencilTest suites, run only by tests/icon4py/test_icon4py_testing_plugin.py in
# a pytest of their own (icon4py's plugin, the gt4py alias): their conftest imports icon4py.
collect_ignore = ["icon4py/plugin_cases"]

# The suite checks DSL errors where operators are defined; users get them at first use
# (gt4py.next's behaviour), tested with this flag off in tests/compat/test_compat_api.py.
stencilkit.config.PARSE_AT_DECORATION = True
# GPU tuning before the first call, as the suite's tune tests expect of it; the default
# (background variant builds) is tested by its own tests (tests/backends/test_cuda_tune_stage.py,
# tests/backends/test_gpu_launch.py), which set STENCILKIT_TUNE=background.
os.environ.setdefault("STENCILKIT_TUNE", "first-call")
# The IR verifier runs after every pass in ir/ (lowering, fusion) throughout the suite.
stencilkit.ir.verify.VERIFY_IR = True


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: the suite also runs without xdist
def pytest_xdist_auto_num_workers(config: Any) -> int:
    """``-n auto`` (the README's test command): one worker per core this process may use, at
    most 8. Most of the suite's time is C++ and CUDA builds (a compiler process each), so two
    workers on CI's two cores take about half the time of one; beyond 8, workers mostly wait
    on each other's builds and add memory."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _gpu_present() -> bool:
    return (
        os.environ.get("STENCILKIT_REQUIRE_GPU") == "1"
        or os.path.exists("/dev/nvidia0")
        or shutil.which("nvidia-smi") is not None
    )


def _cupy_status() -> tuple[bool, str]:
    try:
        import cupy as cp

        if os.environ.get("STENCILKIT_TEST_NO_CUPY_POOL") == "1":
            # one cudaMalloc per array, so compute-sanitizer's memcheck sees every array's bounds
            # (CuPy's pool hands out pieces of large blocks, which hides overruns into a neighbour)
            cp.cuda.set_allocator(None)
        n = cp.cuda.runtime.getDeviceCount()
        if n < 1:
            return False, "CuPy sees no CUDA device"
        cp.arange(4).sum().item()
        return True, ""
    except Exception as err:  # any failure means no usable GPU
        return False, f"{type(err).__name__}: {err}"


GPU_OK, GPU_WHY = _cupy_status()
GPU_PRESENT = _gpu_present()


@functools.cache
def nvrtc_missing() -> str:
    """Why NVRTC cannot compile here ("" where it can): asked once, at the first test that
    needs it, so a run without such tests never imports cuda-bindings."""
    from stencilkit.toolchain import cuda as cuda_toolchain

    try:
        cuda_toolchain.find_cuda_compiler.cache_clear()
        cuda_toolchain.find_cuda_compiler("nvrtc")
        return ""
    except Exception as err:  # any failure means NVRTC is not usable here
        return f"{type(err).__name__}: {err}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if "nvrtc" in item.keywords and nvrtc_missing():
        pytest.skip(f"NVRTC not installed ({nvrtc_missing()})")
    if "gpu" not in item.keywords or GPU_OK:
        return
    if GPU_PRESENT:
        pytest.fail(f"a GPU is present but CuPy cannot use it: {GPU_WHY}", pytrace=False)
    pytest.skip(f"no GPU here ({GPU_WHY})")


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded from the test's name: fixed per test, different between tests."""
    import zlib

    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Tests build into a cache of their own unless the caller chose one."""
    if "STENCILKIT_CACHE_DIR" not in os.environ:
        os.environ["STENCILKIT_CACHE_DIR"] = str(tmp_path_factory.mktemp("stencilkit-cache"))
    yield


# ----------------------------------------------------------------------------- backend matrix
class BackendCase:
    """One entry of the backend matrix: the program backend and where fields live."""

    def __init__(self, name: str, backend: Any, on_gpu: bool) -> None:
        self.name = name
        self.backend = backend
        self.on_gpu = on_gpu

    def __repr__(self) -> str:
        return self.name

    @property
    def allocator(self) -> Any:
        import stencilkit as gtx

        return gtx.gpu if self.on_gpu else None

    def field(self, dims: list[Any], data: np.ndarray, **kwargs: Any) -> Any:
        """A field with ``data`` on this case's device (a copy in the device's layout)."""
        import stencilkit as gtx

        return gtx.as_field(dims, data, allocator=self.allocator, **kwargs)

    def connectivity(self, dims: list[Any], codomain: Any, table: np.ndarray, **kwargs: Any) -> Any:
        import stencilkit as gtx

        return gtx.as_connectivity(dims, codomain, table, allocator=self.allocator, **kwargs)


def _cases() -> list[Any]:
    import stencilkit as gtx

    return [
        pytest.param(BackendCase("embedded-numpy", None, False), id="embedded-numpy"),
        pytest.param(
            BackendCase("embedded-cupy", None, True), id="embedded-cupy", marks=pytest.mark.gpu
        ),
        pytest.param(BackendCase("cpu", gtx.cpu, False), id="cpu"),
        pytest.param(BackendCase("gpu", gtx.gpu, True), id="gpu", marks=pytest.mark.gpu),
    ]


@pytest.fixture(params=_cases())
def case(request: pytest.FixtureRequest) -> BackendCase:
    """The backend matrix: embedded on NumPy and CuPy, compiled C++ and CUDA."""
    return request.param  # type: ignore[no-any-return]


def to_numpy(field: Any) -> np.ndarray:
    return np.asarray(field.asnumpy())
