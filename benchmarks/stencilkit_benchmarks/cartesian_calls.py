# mypy: disable-error-code="valid-type,index,operator"
# (the GTScript definitions below are not Python to mypy: Field[...] annotations, field offsets)
"""GTScript stencils and their per-call and build measurements, for whichever
``gt4py.cartesian`` is importable: stencilkit's (through the gt4py alias) or a real gt4py.

This file imports only NumPy and ``gt4py.*`` (never ``stencilkit``), so that
``benchmarks/cartesian_vs_gt4py.py`` can load it by path in a scratch venv holding a real gt4py
as the oracle; the ``cartesian`` section of ``stencilkit bench`` imports it after installing the
alias. Run as a script it is the child process of the build measurement::

    python cartesian_calls.py build lap|fwdbwd BACKEND [--alias]

which prints one line ``SKCART {json}``; the parent picks the build cache through
``STENCILKIT_CACHE_DIR`` / ``GT_CACHE_ROOT``.
"""

from __future__ import annotations

import inspect
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

T_START = time.perf_counter()
T_IMPORT0 = T_START

if __name__ == "__main__" and "--alias" in sys.argv:  # the child, in stencilkit's venv
    from stencilkit.compat import install_gt4py_alias

    install_gt4py_alias()

import numpy as np  # noqa: E402
from gt4py import storage as gt_storage  # noqa: E402
from gt4py.cartesian import gtscript  # noqa: E402
from gt4py.cartesian.gtscript import (  # noqa: E402
    BACKWARD,
    FORWARD,
    PARALLEL,
    Field,
    computation,
    interval,
)

T_IMPORT = time.perf_counter() - T_IMPORT0

F64 = Field[np.float64]

#: the per-call stencils: fields in total (inputs + the output)
N_FIELDS = (2, 25)


def copy2(a: F64, out: F64):  # type: ignore[no-untyped-def]
    with computation(PARALLEL), interval(...):
        out = a + 1.0  # noqa: F841


# fmt: off
def sum25(a0: F64, a1: F64, a2: F64, a3: F64, a4: F64, a5: F64, a6: F64, a7: F64, a8: F64,  # type: ignore[no-untyped-def]
          a9: F64, a10: F64, a11: F64, a12: F64, a13: F64, a14: F64, a15: F64, a16: F64,
          a17: F64, a18: F64, a19: F64, a20: F64, a21: F64, a22: F64, a23: F64, out: F64):
    with computation(PARALLEL), interval(...):
        out = (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13  # noqa: F841
               + a14 + a15 + a16 + a17 + a18 + a19 + a20 + a21 + a22 + a23)
# fmt: on


def lap(a: F64, out: F64):  # type: ignore[no-untyped-def]
    with computation(PARALLEL), interval(...):
        out = -4.0 * a + a[1, 0, 0] + a[-1, 0, 0] + a[0, 1, 0] + a[0, -1, 0]  # noqa: F841


def cumsum(a: F64, out: F64):  # type: ignore[no-untyped-def]
    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, None):
            out = out[0, 0, -1] + a


def fwdbwd(a: F64, b: F64, out: F64):  # type: ignore[no-untyped-def]
    with computation(FORWARD):
        with interval(0, 1):
            b = a
        with interval(1, None):
            b = b[0, 0, -1] + a
    with computation(BACKWARD):
        with interval(-1, None):
            out = b
        with interval(0, -1):
            out = 0.5 * (b + out[0, 0, 1])


DEFINITIONS: dict[str, Callable[..., Any]] = {
    "copy2": copy2,
    "sum25": sum25,
    "lap": lap,
    "cumsum": cumsum,
    "fwdbwd": fwdbwd,
}
#: halo of each stencil: the compute domain is the array shrunk by it in I and J
HALO = {"copy2": 0, "sum25": 0, "lap": 1, "cumsum": 0, "fwdbwd": 0}


def reference(kind: str, ins: list[np.ndarray]) -> np.ndarray:
    """NumPy's result on the compute domain of ``kind`` (the output's interior)."""
    a = ins[0]
    if kind == "copy2":
        return a + 1.0
    if kind == "sum25":
        total = ins[0].copy()
        for x in ins[1:]:
            total += x
        return total
    if kind == "lap":
        lap: np.ndarray = (
            -4.0 * a[1:-1, 1:-1] + a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2]
        )
        return lap
    b = np.cumsum(a, axis=2)
    if kind == "cumsum":
        return b
    out = b.copy()
    for k in range(a.shape[2] - 2, -1, -1):
        out[:, :, k] = 0.5 * (b[:, :, k] + out[:, :, k + 1])
    return out


def to_numpy(x: Any) -> np.ndarray:
    host: np.ndarray = np.asarray(x.get() if hasattr(x, "get") else x)
    return host


def build(kind: str, backend: str) -> Any:
    return gtscript.stencil(backend=backend, definition=DEFINITIONS[kind], name=f"skbench.{kind}")


class Case:
    """One stencil on ``n^3`` random storages of ``backend``: its calls and its check."""

    def __init__(
        self, kind: str, backend: str, n: int = 8, seed: int = 3, stencil: Any = None
    ) -> None:
        self.kind, self.backend, self.n = kind, backend, n
        self.stencil = build(kind, backend) if stencil is None else stencil
        names = list(inspect.signature(DEFINITIONS[kind]).parameters)
        rng = np.random.default_rng(seed)
        shape = (n, n, n)
        self.inputs = [rng.standard_normal(shape) for _ in names[:-1]]
        self.fields = {
            name: gt_storage.from_array(
                data, np.float64, backend=backend, aligned_index=(HALO[kind], HALO[kind], 0)
            )
            for name, data in zip(names, [*self.inputs, np.full(shape, np.nan)])
        }
        self.out_name = names[-1]
        h = HALO[kind]
        self.origin = (h, h, 0)
        self.domain = (n - 2 * h, n - 2 * h, n)
        self.origins = {name: self.origin for name in names}

    @property
    def nfields(self) -> int:
        return len(self.fields)

    def variants(self) -> dict[str, Callable[[], Any]]:
        """The ways of calling the stencil, each a callable of no argument."""
        st, f, dom, org = self.stencil, self.fields, self.domain, self.origin
        frozen = st.freeze(origin=self.origins, domain=dom)
        origins = self.origins
        return {
            "run()": lambda: st.run(_domain_=dom, _origin_=origins, exec_info=None, **f),
            "frozen": lambda: frozen(**f),
            "__call__ validate_args=False": lambda: st(
                **f, origin=org, domain=dom, validate_args=False
            ),
            "__call__ validated": lambda: st(**f, origin=org, domain=dom),
        }

    def reset_output(self) -> None:
        self.fields[self.out_name][...] = np.nan

    def error(self, sync: Callable[[], Any] | None = None) -> float:
        """Max abs error of the output's compute domain; NaN if its halo was written."""
        if sync:
            sync()
        out = to_numpy(self.fields[self.out_name])
        h = HALO[self.kind]
        inner = out[h : self.n - h, h : self.n - h]
        if h and not (np.isnan(out[:h]).all() and np.isnan(out[-h:]).all()):
            return float("nan")
        return float(np.max(np.abs(inner - reference(self.kind, self.inputs))))


def time_per_call(
    fn: Callable[[], Any],
    n_calls: int,
    rounds: int = 5,
    warmup: int = 100,
    sync: Callable[[], Any] | None = None,
    batch: int | None = None,
) -> dict[str, Any]:
    """Mean host time per call in microseconds over ``n_calls`` back-to-back calls, per round;
    the median round is ``us``. With ``batch``, ``sync`` runs (untimed) after each batch."""
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    step = batch or n_calls
    per_round = []
    for _ in range(rounds):
        spent, done = 0.0, 0
        while done < n_calls:
            t0 = time.perf_counter()
            for _ in range(step):
                fn()
            spent += time.perf_counter() - t0
            done += step
            if sync:
                sync()
        per_round.append(spent / done * 1e6)
    return {"us": statistics.median(per_round), "rounds_us": per_round, "n_calls": n_calls}


def measure_calls(backend: str, n: int, n_calls: int, rounds: int) -> dict[str, Any]:
    """Every variant of both per-call stencils: checked after one call, then timed."""
    res: dict[str, Any] = {}
    for kind in ("copy2", "sum25"):
        case = Case(kind, backend, n)
        entry: dict[str, Any] = {"fields": case.nfields, "n": n}
        for name, fn in case.variants().items():
            case.reset_output()
            fn()
            entry[name] = {"error": case.error(), **time_per_call(fn, n_calls, rounds)}
        res[f"{case.nfields}_fields"] = entry
    return res


def build_child(kind: str, backend: str) -> dict[str, Any]:
    """This process's first build of ``kind``: decoration, then the first call, then a check
    (the random storages made between them, NumPy's random module imported, are timed apart).
    For a GPU backend CuPy is imported and the CUDA context made first (``device_init_s``):
    the process's cost, which any GPU array pays, not the build's (either library's)."""
    device_init = 0.0
    if "gpu" in backend or backend == "cuda":
        t0 = time.perf_counter()
        import cupy

        cupy.zeros(1).sum().item()
        device_init = time.perf_counter() - t0
    t0 = time.perf_counter()
    stencil = build(kind, backend)
    decorate = time.perf_counter() - t0
    t0 = time.perf_counter()
    case = Case(kind, backend, n=12, stencil=stencil)  # the storages: not the build's
    storages = time.perf_counter() - t0
    call = case.variants()["__call__ validated"]
    profile_to = os.environ.get("SKBENCH_PROFILE_FIRST_CALL")  # a file: the first call's profile
    if profile_to:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
    t0 = time.perf_counter()
    call()
    first = time.perf_counter() - t0
    if profile_to:
        profiler.disable()
        with open(profile_to, "a") as out:
            out.write(f"--- first call of {kind} on {backend}: {first * 1e3:.1f} ms\n")
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
    return {
        "kind": kind,
        "backend": backend,
        "import_gtscript_s": T_IMPORT,
        "device_init_s": device_init,
        "decorate_s": decorate,
        "storages_s": storages,
        "first_call_s": first,
        "build_s": decorate + first,
        "start_to_result_s": time.perf_counter() - T_START,
        # a process whose programs are built needs neither NVRTC nor cuda-bindings' driver module
        "cuda_bindings_imported": "cuda.bindings" in sys.modules,
        "error": case.error(),
    }


def run_build_child(
    kind: str, backend: str, cache: str, alias: bool, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """:func:`build_child` in a new Python process (this interpreter) building into ``cache``
    (``STENCILKIT_CACHE_DIR`` and ``GT_CACHE_ROOT``); its result and the process's wall time."""
    child_env = dict(
        os.environ if env is None else env, STENCILKIT_CACHE_DIR=cache, GT_CACHE_ROOT=cache
    )
    cmd = [sys.executable, os.path.abspath(__file__), "build", kind, backend]
    t0 = time.perf_counter()
    p = subprocess.run(
        [*cmd, *(["--alias"] if alias else [])],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    wall = time.perf_counter() - t0
    lines = [x for x in p.stdout.splitlines() if x.startswith("SKCART ")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(
            f"build child {kind} {backend} exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}"
        )
    return {**json.loads(lines[-1][len("SKCART ") :]), "process_wall_s": wall}


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--alias"]
    if len(args) != 3 or args[0] != "build" or args[1] not in DEFINITIONS:
        raise SystemExit(f"usage: {sys.argv[0]} build {'|'.join(DEFINITIONS)} BACKEND [--alias]")
    print("SKCART " + json.dumps(build_child(args[1], args[2])), flush=True)
