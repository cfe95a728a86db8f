"""How ``stencilkit demo`` chooses its backend and reports its timing.

The demo is the first thing a new user runs, so it runs on the fastest backend this machine can
use and says why: the gpu backend where CuPy sees a GPU and a CUDA compiler (NVRTC or nvcc) is
found, else the cpu backend where a C++ compiler is found, else embedded (NumPy, nothing to
build). Its report keeps the one-off cost apart (building the program, or loading it from the
build cache, on the first step) and compares the time per step, after the first, with the
plain NumPy implementation of the same scheme.
"""

from __future__ import annotations

from ..core.errors import StencilError
from ..core.records import record
from .shallow_water import DemoResult


@record
class BackendChoice:
    """The backend the demo runs on (``"gpu"``, ``"cpu"``, ``"embedded"``) and why."""

    name: str
    reason: str


def _one_line(err: BaseException) -> str:
    return str(err).split("\n", 1)[0]


def _gpu_problem() -> str | None:
    """None where the gpu backend can run here, else what stops it."""
    from ..core.cuda_probe import usable_cupy
    from ..toolchain.cuda import find_cuda_compiler

    try:
        usable_cupy("the gpu backend")
        find_cuda_compiler()
    except (StencilError, OSError, ImportError) as err:
        return _one_line(err)
    return None


def _cpu_problem() -> str | None:
    from ..toolchain.cxx import find_cxx

    try:
        find_cxx()
    except (StencilError, OSError) as err:
        return _one_line(err)
    return None


def choose_backend() -> BackendChoice:
    """The fastest backend usable here: gpu, else cpu, else embedded, with the reason."""
    gpu = _gpu_problem()
    if gpu is None:
        return BackendChoice("gpu", "a usable NVIDIA GPU and a CUDA compiler were found")
    cpu = _cpu_problem()
    if cpu is None:
        from ..toolchain.cxx import find_cxx

        cxx = find_cxx()
        return BackendChoice(
            "cpu", f"no usable GPU ({gpu}); C++ compiler {cxx.path} ({cxx.version}) found"
        )
    return BackendChoice("embedded", f"no usable GPU ({gpu}); no C++ compiler ({cpu})")


def _per_step_ms(seconds: float, steps: int) -> str:
    return f"{1e3 * seconds / steps:.3f} ms/step"


def report_lines(r: DemoResult) -> list[str]:
    """The timing lines of the demo's report: the first step (with the build) apart, then the
    time per step of the backend and of NumPy, and how they compare."""
    later = r.steps - 1
    one_off = (
        "parsing the program"
        if r.backend == "embedded"
        else "building the program (or loading it from the build cache)"
    )
    lines = []
    if later >= 1:
        per_step = r.steps_s / later
        build = max(0.0, r.first_step_s - per_step)
        lines.append(f"  first step       {r.first_step_s:.3f} s: about {build:.3f} s {one_off}")
        lines.append(
            f"  later steps      {later} in {r.steps_s:.3f} s: {_per_step_ms(r.steps_s, later)}"
        )
    else:
        per_step = r.first_step_s
        lines.append(
            f"  first step       {r.first_step_s:.3f} s, with {one_off} (--steps 2 or more times steps apart)"
        )
    ref_step = r.reference_s / r.steps
    lines.append(
        f"  numpy reference  {r.steps} in {r.reference_s:.3f} s: {_per_step_ms(r.reference_s, r.steps)}"
    )
    ratio = ref_step / per_step if per_step > 0 else float("inf")
    if ratio >= 1:
        lines.append(
            f"  speed            {ratio:.1f}x faster than NumPy per step (first step not counted)"
        )
    else:
        lines.append(
            f"  speed            {1 / ratio:.1f}x slower than NumPy per step (first step not counted)"
        )
        if r.backend == "embedded":
            lines.append(
                "                   embedded runs each field operator through NumPy and checks its"
                " arguments on every call; the compiled backends (--backend cpu, gpu) are the fast ones"
            )
    return lines
