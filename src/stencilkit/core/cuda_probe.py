"""What stands between this machine and a working GPU backend, in the user's terms.

Every GPU edge (allocating on a CUDA device, compiling with NVRTC, launching) turns the failures
of the libraries below it (CuPy's ``CUDARuntimeError``, cuda-pathfinder's
``DynamicLibNotFoundError``, an ``ImportError``) into one :class:`BackendUnavailableError` that
says what is missing and what to install. Nothing here imports a GPU library at module load.
"""

from __future__ import annotations

import ctypes
import os
from types import ModuleType
from typing import Any

from .errors import BackendUnavailableError
from .install import install_hint

#: The oldest NVIDIA driver for CUDA 13 (what the cuda extra's wheels are built for).
MIN_DRIVER = "580"
_NO_DRIVER_HINT = (
    f"install the NVIDIA driver ({MIN_DRIVER} or newer for CUDA 13), or use a CPU backend "
    "(backend=gtx.cpu, or None for embedded) and CPU allocators"
)


def driver_version() -> tuple[int, int] | None:
    """The CUDA version the installed NVIDIA driver supports, e.g. (13, 0); ``None`` without a driver."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int(0)
    if lib.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return version.value // 1000, (version.value % 1000) // 10


def _status(err: BaseException) -> int | None:
    status = getattr(err, "status", None)
    return int(status) if isinstance(status, int) else None


def explain(err: BaseException, what: str = "the GPU") -> BackendUnavailableError:
    """The :class:`BackendUnavailableError` for ``err``, raised while reaching ``what``."""
    name = type(err).__name__
    text = str(err)
    missing = (err.name or "").split(".")[0] if isinstance(err, ModuleNotFoundError) else ""
    if missing == "cupy":
        return BackendUnavailableError(
            f"{what} needs CuPy, which is not installed", hint=install_hint("cuda")
        )
    if missing == "cuda":
        return BackendUnavailableError(
            f"{what} needs cuda-bindings, which is not installed", hint=install_hint("cuda")
        )
    if name == "DynamicLibNotFoundError" and "nvrtc" in text.lower():
        return BackendUnavailableError(
            f"{what} needs NVRTC (libnvrtc.so.13), the CUDA compiler library, and it was not found ({text.strip()})",
            hint=f"{install_hint('cuda')} (it brings the nvidia-cuda-nvrtc wheel), or pip install 'nvidia-cuda-nvrtc==13.*';"
            " or STENCILKIT_CUDA_COMPILER=nvcc with a CUDA toolkit",
        )
    status = _status(err)
    no_driver = name == "DynamicLibNotFoundError" and "driver" in text.lower()
    if no_driver or status == 35 or "InsufficientDriver" in text or "libcuda" in text:
        version = driver_version()
        if version is None:
            return BackendUnavailableError(
                f"{what} needs the NVIDIA driver, and none was found (libcuda.so.1 cannot be loaded)",
                hint=_NO_DRIVER_HINT,
            )
        return BackendUnavailableError(
            f"{what} needs an NVIDIA driver for CUDA 13; the installed one supports CUDA "
            f"{version[0]}.{version[1]} ({name}: {text.strip()})",
            hint=f"update the NVIDIA driver to {MIN_DRIVER} or newer",
        )
    if status == 100 or "NoDevice" in text:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        where = f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else ""
        return BackendUnavailableError(
            f"{what} needs an NVIDIA GPU, and the driver sees none{where}",
            hint="run on a machine with an NVIDIA GPU, or check CUDA_VISIBLE_DEVICES",
        )
    return BackendUnavailableError(
        f"{what} is not usable here ({name}: {text.strip()})", hint=_NO_DRIVER_HINT
    )


def import_cupy(what: str = "a CUDA device") -> ModuleType:
    """CuPy, or a :class:`BackendUnavailableError` saying what to install."""
    try:
        import cupy
    except Exception as err:  # ImportError, or a CUDA library CuPy loads at import
        raise explain(err, what) from err
    module: ModuleType = cupy
    return module


def usable_cupy(what: str = "a CUDA device") -> ModuleType:
    """CuPy, after checking that the driver works and sees at least one GPU."""
    cupy = import_cupy(what)
    try:
        n = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as err:  # CUDARuntimeError: no driver, an old driver
        raise explain(err, what) from err
    if n < 1:
        raise explain(RuntimeError("cudaErrorNoDevice"), what)
    return cupy


def gpu_report() -> dict[str, Any]:
    """For ``stencilkit info``: every line of the GPU stack, never raising."""
    report: dict[str, Any] = {}
    version = driver_version()
    report["driver"] = (
        f"supports CUDA {version[0]}.{version[1]}"
        if version
        else "not found (libcuda.so.1 cannot be loaded)"
    )
    try:
        cupy = import_cupy()
        report["cupy"] = str(cupy.__version__)
        try:
            cupy = usable_cupy()
            n = int(cupy.cuda.runtime.getDeviceCount())
            names = [cupy.cuda.runtime.getDeviceProperties(i)["name"] for i in range(n)]
            names = [x.decode() if isinstance(x, bytes) else str(x) for x in names]
            report["gpu"] = f"{n} visible ({', '.join(names)})"
        except BackendUnavailableError as err:
            report["gpu"] = f"none usable: {err.message}"
    except BackendUnavailableError as err:
        report["cupy"] = f"missing: {err.message} ({install_hint('cuda')})"
        report["gpu"] = "unknown without CuPy"
    return report
