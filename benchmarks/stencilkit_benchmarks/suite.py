"""The GPU and CPU suites (which sections run, in which order) and the entry points."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

from .bandwidth import copy_section
from .cartesian import cpu_cartesian_section, gpu_cartesian_section
from .compile_time import compile_section
from .cuda_sources import cuda_sources_section
from .devices import Dev
from .gathers import first_call_section, gathers_section
from .laplacian import cpu_laplacian_section, gpu_laplacian_section
from .neighbours import NB_OPS, mesh_section, nb_section
from .options import Options, add_arguments, help_text, options_from_args, want
from .overhead import cpu_overhead_section, gpu_overhead_section
from .programs import import_programs
from .report import Runner, base_env
from .scan import scan_section


def threads_section(R: Runner, opts: Options) -> Any:
    from .threads import threads_section as section  # defines DSL programs: imported when it runs

    return section(R, opts)


def run_gpu(opts: Options, R: Runner, env: dict[str, Any]) -> None:
    import cupy as cp

    dev = Dev(gpu=True)
    try:
        props = cp.cuda.runtime.getDeviceProperties(0)
        env["gpu"] = {
            k: (v.decode() if isinstance(v, bytes) else v)
            for k, v in props.items()
            if k
            in (
                "name",
                "totalGlobalMem",
                "multiProcessorCount",
                "l2CacheSize",
                "major",
                "minor",
                "clockRate",
                "memoryClockRate",
                "memoryBusWidth",
            )
        }
        env["cupy"] = cp.__version__
        env["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
        env["cuda_driver"] = cp.cuda.runtime.driverGetVersion()
    except Exception as err:
        env["gpu_props_error"] = repr(err)
    R.say(f"GPU: {env.get('gpu', {}).get('name', '?')}  CuPy {cp.__version__}")
    P = import_programs(tempfile.mkdtemp(prefix="sk-gpu-bench-"))
    n = opts.n
    state: dict[str, Any] = {}

    def freeing(fn: Callable[[], Any]) -> Callable[[], Any]:
        def wrapped() -> Any:
            try:
                return fn()
            finally:
                dev.free()

        return wrapped

    sections: list[tuple[str, Callable[[], Any]]] = [
        ("copy", lambda: copy_section(R, dev, opts, state)),
        ("laplacian", lambda: gpu_laplacian_section(R, dev, P, opts, state)),
        ("scan", lambda: scan_section(R, dev, P, opts, state)),
        ("mesh", lambda: mesh_section(R, dev, P, opts, state)),
        *((op, lambda op=op: nb_section(op, R, dev, P, opts, state)) for op in NB_OPS),
        ("gathers", lambda: gathers_section(R, dev, P, opts, state)),
        ("first_call", lambda: first_call_section(R, dev, P, opts, state)),
        ("overhead", lambda: gpu_overhead_section(R, dev, P, opts)),
        ("cartesian", lambda: gpu_cartesian_section(R, dev, P, opts, state)),
        ("compile", lambda: compile_section(R, "gpu")),
    ]
    env["title"] = (
        f"stencilkit GPU benchmarks ({env.get('gpu', {}).get('name', '?')}, lap n={n}, "
        f"scan {'x'.join(map(str, opts.scan_shape))}, mesh {opts.mesh[0]}x{opts.mesh[1]} quads "
        f"x {opts.mesh[2]} levels, CUDA-event medians; ratio = fraction of copy)"
    )
    for name, fn in sections:
        if name == "compile" and opts.skip_compile:
            continue
        if name == "copy" or want(opts, name):
            R.section(name, freeing(fn))
        if name == "v2e":
            state.pop("mesh", None)
            dev.free()


def run_cpu(opts: Options, R: Runner, env: dict[str, Any]) -> None:
    dev = Dev(gpu=False, emulate_cuda=opts.check_cuda_sources)
    P = import_programs(tempfile.mkdtemp(prefix="sk-cpu-bench-"))
    state: dict[str, Any] = {}

    sections: list[tuple[str, Callable[[], Any]]] = [
        ("laplacian", lambda: cpu_laplacian_section(R, dev, P, opts)),
        ("scan", lambda: scan_section(R, dev, P, opts, state)),
        ("mesh", lambda: mesh_section(R, dev, P, opts, state)),
        *((op, lambda op=op: nb_section(op, R, dev, P, opts, state)) for op in NB_OPS),
        ("overhead", lambda: cpu_overhead_section(R, dev, P, opts)),
        ("cartesian", lambda: cpu_cartesian_section(R, P, opts, builds=not opts.skip_compile)),
        ("threads", lambda: threads_section(R, opts)),
        ("compile", lambda: compile_section(R, "cpu")),
    ]
    env["title"] = (
        f"stencilkit CPU benchmarks ({env['cpus']} CPUs, lap {'x'.join(map(str, opts.lap_shape))}, "
        f"scan {'x'.join(map(str, opts.scan_shape))}, mesh {opts.mesh[0]}x{opts.mesh[1]} quads "
        f"x {opts.mesh[2]} levels, median of reps; ratio = fraction of the copy in the same section)"
    )
    if opts.check_cuda_sources:
        R.section("cuda_sources", lambda: cuda_sources_section(R))
    for name, fn in sections:
        if name == "compile" and opts.skip_compile:
            continue
        if want(opts, name):
            R.section(name, fn)


def _gpu_usable() -> tuple[bool, str]:
    try:
        import cupy as cp

        n = cp.cuda.runtime.getDeviceCount()
        if n < 1:
            return False, "CuPy sees no CUDA device"
        cp.arange(4).sum().item()
        return True, ""
    except Exception as err:
        return False, f"{type(err).__name__}: {err}"


def run(args: argparse.Namespace) -> int:
    """Run the suite chosen by parsed ``args`` (see :func:`add_arguments`); the exit code."""
    # kernels are timed after their first call: their final choice of variant must be made by
    # then (the default, background, would time a provisional one); the compile section times
    # first calls in child processes of its own
    os.environ.setdefault("STENCILKIT_TUNE", "first-call")
    from stencilkit.toolchain.config import reset_config

    reset_config()
    if getattr(args, "suite", None) == "frontend":
        from .frontend import main as frontend_main

        quick = ["--cases", "chain,ifs", "--n", "6,40"] if args.quick else []
        return frontend_main([*quick, *(["--json", args.json] if args.json else [])])
    gpu = args.gpu
    if gpu is None:
        gpu, _ = _gpu_usable()
    elif gpu:
        ok, why = _gpu_usable()
        if not ok:
            print(
                f"stencilkit bench --gpu: CuPy cannot use a GPU here ({why}); this suite needs an "
                "NVIDIA GPU with cupy-cuda13x and cuda-bindings installed. Nothing was measured.",
                file=sys.stderr,
            )
            return 2
    opts = options_from_args(args, gpu)
    R = Runner(opts.verbose)
    env = base_env()
    env["options"] = dict(vars(opts))
    env["title"] = f"stencilkit {'GPU' if gpu else 'CPU'} benchmarks"
    R.autosave = (opts.json, env) if opts.json else None
    previous = _terminate_as_interrupt()
    try:
        (run_gpu if gpu else run_cpu)(opts, R, env)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (a time limit): report what was measured
        R.failures["interrupted"] = "interrupted (SIGINT/SIGTERM) before every section ran"
        print("\n!!! interrupted: the table below has the sections that finished", file=sys.stderr)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    print()
    print(R.table(env["title"]))
    R.dump(opts.json, env)
    return 0 if R.ok else 1


def _terminate_as_interrupt() -> Any:
    """Make SIGTERM raise KeyboardInterrupt (so ``timeout`` still gets a table); the old handler."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # not the main thread
        return None


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m stencilkit_benchmarks [options]`` (the same as ``stencilkit bench``)."""
    import stencilkit_benchmarks  # its docstring is the help text

    p = argparse.ArgumentParser(
        prog="stencilkit bench",
        description=help_text(stencilkit_benchmarks.__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(p)
    try:
        return run(p.parse_args(argv))
    except ValueError as err:
        print(f"stencilkit bench: {err}", file=sys.stderr)
        return 2
