"""The ``stencilkit`` command: ``info``, ``demo``, ``cache info|clear``, ``bench``, ``help``.

One function per subcommand: ``_add_<name>(subparsers)`` declares it and sets ``func``, a
function from the parsed arguments to the exit code. A new subcommand is one more ``_add_*``
function listed in ``SUBCOMMANDS``.

GPU libraries are imported inside the functions that need them, never when this module loads.
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ._version import __version__
from .core.errors import StencilError

EXIT_OK, EXIT_CHECK_FAILED, EXIT_ERROR = 0, 1, 2


# --- info ----------------------------------------------------------------------------------------


def _row(name: str, value: object) -> None:
    print(f"{name:<16} {value}")


def _bindings_line() -> str:
    try:
        import cuda.bindings

        return str(getattr(cuda.bindings, "__version__", "installed"))
    except Exception as err:
        from .core.install import install_hint

        return f"missing ({type(err).__name__}: {err}); {install_hint('cuda')}"


def _configuration_line() -> str:
    from .toolchain.config import config

    cfg = config()
    if cfg.problems:
        return "; ".join(p.message for p in cfg.problems.values())
    import os

    set_ = sorted(k for k in os.environ if k.startswith("STENCILKIT_"))
    return f"ok ({', '.join(set_)} set)" if set_ else "ok (defaults: no STENCILKIT_* variable set)"


def _threads_line() -> str:
    from .toolchain import threads

    source = threads.threads_source()
    policy = threads.wait_policy()
    return (
        f"{threads.get_num_threads()} ({source}), in parallel from {threads.get_parallel_min_work():,} "
        f"op-points; OMP_WAIT_POLICY {policy}"
    )


def _info(args: argparse.Namespace) -> int:
    """Each row is computed on its own: one failure (a bad variable, a missing library) shows in
    its row and leaves the others right."""
    import numpy

    from .core.cuda_probe import gpu_report

    _row("stencilkit", __version__)
    _row("Python", f"{platform.python_version()} ({sys.executable})")
    _row("NumPy", numpy.__version__)
    rows: list[tuple[str, Callable[[], str]]] = [("configuration", _configuration_line)]
    gpu = gpu_report()
    rows += [
        ("NVIDIA driver", lambda: str(gpu["driver"])),
        ("CuPy", lambda: str(gpu["cupy"])),
        ("cuda-bindings", _bindings_line),
        ("GPU", lambda: str(gpu["gpu"])),
    ]
    rows += [
        ("C++ compiler", _cxx_line),
        ("CPU threads", _threads_line),
        ("CUDA compiler", _cuda_line),
        ("cache", _cache_line),
        ("logging", _logging_line),
    ]
    for name, line in rows:
        try:
            _row(name, line())
        except Exception as err:  # never a traceback: say what is unavailable and why
            _row(name, f"unavailable: {_one_line(err)}")
    return EXIT_OK


def _one_line(err: BaseException) -> str:
    return str(err).replace("\nhint: ", "; to fix: ")


def _cxx_line() -> str:
    from .toolchain.cxx import find_cxx

    cxx = find_cxx()
    omp = "yes" if cxx.openmp else "NO: the cpu backend runs on one thread"
    return f"{cxx.path} ({cxx.version}), OpenMP {omp}"


def _cuda_line() -> str:
    from .toolchain.cuda import find_cuda_compiler

    try:
        cuda = find_cuda_compiler()
    except StencilError as err:
        return f"not available: {_one_line(err)}"
    if cuda.kind != "nvrtc":
        return f"{cuda.kind} {cuda.version} ({cuda.path})"
    try:  # where libnvrtc came from: the nvidia-cuda-nvrtc wheel, conda, the system
        from cuda import pathfinder

        lib = pathfinder.load_nvidia_dynamic_lib("nvrtc")
        return f"nvrtc {cuda.version} ({lib.abs_path}, found via {lib.found_via})"
    except Exception:
        return f"nvrtc {cuda.version} (through {cuda.path})"


def _cache_line() -> str:
    from .toolchain.cache import cache_info

    info = cache_info()
    return f"{info['path']} ({_entries(info['entries'])}, {_size(info['bytes'])} of {_limit(info)})"


def _entries(n: object) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def _limit(info: dict[str, object]) -> str:
    limit = info["max_bytes"]
    return "no limit" if limit == 0 else f"{_size(limit)} at most"


def _logging_line() -> str:
    import logging

    level = logging.getLogger("stencilkit").level
    if level == logging.NOTSET:
        return (
            "off (STENCILKIT_LOG=info|debug, or stencilkit.set_log_level, to see builds and tuning)"
        )
    return f"{logging.getLevelName(level).lower()} (logger 'stencilkit', to stderr)"


def _add_info(sub: Any) -> None:
    p = sub.add_parser(
        "info",
        help="versions, compilers, GPU and cache location",
        description="What stencilkit finds on this machine, one row each: the versions of "
        "stencilkit, Python and NumPy; the configuration (every STENCILKIT_* variable set, and "
        "any bad value); the NVIDIA driver, CuPy, cuda-bindings and the GPUs; the C++ compiler "
        "and OpenMP; CPU threads; the CUDA compiler (NVRTC or nvcc); the build cache; logging. "
        "A row that cannot be computed says why; the command never fails.",
    )
    p.set_defaults(func=_info)


# --- cache ---------------------------------------------------------------------------------------


def _size(nbytes: object) -> str:
    n = float(nbytes)  # type: ignore[arg-type]
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _cache_info(args: argparse.Namespace) -> int:
    import time

    from .toolchain.cache import cache_info, entries

    info = cache_info()
    _row("path", info["path"])
    _row("size", f"{_size(info['bytes'])} of {_limit(info)} (STENCILKIT_CACHE_MAX_SIZE)")
    _row("entries", f"{info['entries']} (least recently used removed beyond the limit)")
    listed = entries()
    shown = listed if args.all else listed[:10]
    if shown:
        print(f"  {'last used':<17} {'size':>9}  program (target)")
    for e in shown:
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.last_used))
        what = e.meta.get("program", e.key[:16])
        target = f" ({e.meta['target']})" if "target" in e.meta else ""
        print(f"  {used:<17} {_size(e.bytes):>9}  {what}{target}")
    if len(listed) > len(shown):
        print(f"  ... {len(listed) - len(shown)} more (stencilkit cache info --all)")
    return EXIT_OK


def _cache_clear(args: argparse.Namespace) -> int:
    from .toolchain.cache import cache_info, clear_cache

    n = clear_cache()
    print(f"removed {_entries(n)} from {cache_info()['path']}")
    return EXIT_OK


def _add_cache(sub: Any) -> None:
    p = sub.add_parser(
        "cache",
        help="the build cache: size, limit and entries; clear it",
        description="The build cache of compiled programs. Without an action: its location, "
        "size against its limit (STENCILKIT_CACHE_MAX_SIZE) and the most recently used entries.",
    )
    p.add_argument("--all", action="store_true", help="list every entry, not the last 10")
    p.set_defaults(func=_cache_info)
    actions = p.add_subparsers(dest="action", metavar="{info,clear}")
    info = actions.add_parser("info", help="location, size and limit, entries (the default)")
    info.add_argument("--all", action="store_true", help="list every entry, not the last 10")
    info.set_defaults(func=_cache_info)
    actions.add_parser("clear", help="remove every cache entry").set_defaults(func=_cache_clear)


# --- demo ----------------------------------------------------------------------------------------


def _demo_ranks(args: argparse.Namespace) -> int:
    """The demo on ``args.ranks`` MPI ranks: mpiexec runs the decomposed model, checked bitwise."""
    import os
    import shutil
    import subprocess

    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    mpiexec = here if os.path.exists(here) else shutil.which("mpiexec")
    if mpiexec is None:
        from .core.install import install_hint

        raise ValueError(f"--ranks needs mpiexec and mpi4py: {install_hint('mpi')}")
    cmd = [
        mpiexec,
        "-n",
        str(args.ranks),
        sys.executable,
        "-m",
        "stencilkit.models.shallow_water_mpi",
        "--backend",
        args.backend,
        "--steps",
        str(args.steps),
        "--size",
        str(args.size),
    ]
    env = dict(os.environ)  # ranks share the cores: OpenMP threads per rank, not per machine
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // args.ranks)))
    return subprocess.run(cmd, check=False, env=env).returncode


def _demo(args: argparse.Namespace) -> int:
    from .models.demo import BackendChoice, choose_backend, report_lines
    from .models.shallow_water import MASS_TOLERANCE, REFERENCE_TOLERANCE, run_demo

    if args.backend is None:
        choice = choose_backend()
        args.backend = choice.name
    else:
        choice = BackendChoice(args.backend, "chosen with --backend")
    if args.ranks is not None:
        return _demo_ranks(args)

    r = run_demo(args.backend, steps=args.steps, size=args.size, progress=not args.quiet)
    print(
        f"nonlinear shallow water, {r.size}x{r.size} periodic grid, {r.steps} steps, backend {r.backend}"
    )
    print(f"  backend          {r.backend}: {choice.reason}")
    print(f"  height range     {r.height_range[0]:.6f} .. {r.height_range[1]:.6f}")
    for line in report_lines(r):
        print(line)
    verdict = {True: "ok", False: "FAILED"}
    print(
        f"  mass conserved   relative change {r.mass_rel_error:.2e} "
        f"(tolerance {MASS_TOLERANCE:.0e}): {verdict[r.mass_ok]}"
    )
    print(
        f"  vs numpy         max abs difference {r.max_abs_diff:.2e} "
        f"(tolerance {REFERENCE_TOLERANCE:.0e}): {verdict[r.reference_ok]}"
    )
    from .models.mesh_laplacian import DEMO_MESH_SIZE, run_mesh_check

    m = run_mesh_check(args.backend, n=DEMO_MESH_SIZE)
    print(f"ICON's div(grad psi) on a periodic triangular mesh, backend {args.backend}")
    print(f"  mesh             {m.n_cells} cells: {m.source}")
    print(
        f"  vs -k^2 psi      max error {m.max_rel_error:.2e} of k^2 for psi = sin(kx x) sin(ky y)"
        f" (discretisation tolerance {m.tolerance:.1e}): {verdict[m.max_rel_error <= m.tolerance]}"
    )
    print(
        f"  vs numpy         max abs difference {m.max_abs_diff:.2e} (tolerance 1e-09): "
        f"{verdict[m.max_abs_diff < 1e-9]}"
    )
    ok = r.ok and m.ok
    print("check passed" if ok else "CHECK FAILED")
    return EXIT_OK if ok else EXIT_CHECK_FAILED


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text}")
    return n


def _add_demo(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="run a small shallow-water model and check it",
        description="Nonlinear 2-D shallow water on a periodic grid, checked for "
        "mass conservation and against a NumPy implementation of the same scheme; then ICON's "
        "div(grad) on an ICON-like triangular mesh, checked against the exact Laplacian.",
    )
    p.add_argument(
        "--backend",
        choices=("embedded", "cpu", "gpu"),
        default=None,
        help="default: the fastest usable here (gpu, else cpu with a C++ compiler, else embedded)",
    )
    p.add_argument("--steps", type=_positive, default=200, help="time steps (default 200)")
    p.add_argument("--size", type=_positive, default=128, help="grid cells per side (default 128)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--ranks",
        type=_positive,
        default=None,
        help="run decomposed on N MPI ranks (mpiexec) and check bitwise against one process",
    )
    p.set_defaults(func=_demo)


# --- bench ---------------------------------------------------------------------------------------
#
# The suite is the package ``stencilkit_benchmarks`` (``benchmarks/stencilkit_benchmarks/`` in the
# source tree), outside ``stencilkit`` so that ``import stencilkit`` and the library's own folders
# carry none of it. The distribution ships it as a second top-level package, so ``stencilkit
# bench`` finds it after ``pip install -e .`` and after a wheel install; from a source tree used
# through ``PYTHONPATH=src`` it is found beside ``src/``. Imported only when ``bench`` is asked for.

#: where a source tree keeps the suite: benchmarks/ beside src/
SOURCE_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
BENCH_MISSING = (
    "stencilkit bench: the benchmark suite (package 'stencilkit_benchmarks') is not "
    "installed beside this stencilkit ({where}). It ships in the stencilkit "
    "distribution and lives in benchmarks/stencilkit_benchmarks/ of the source tree: "
    "reinstall stencilkit (pip install of its wheel, or pip install -e . in a checkout), "
    "or run python benchmarks/cpu_bench.py / gpu_bench.py from a checkout."
)


def _benchmarks() -> Any:
    """The ``stencilkit_benchmarks`` module, or None where neither the installed distribution
    nor the source tree of this stencilkit has it."""
    import importlib

    try:
        return importlib.import_module("stencilkit_benchmarks")
    except ModuleNotFoundError as err:
        if err.name != "stencilkit_benchmarks":
            raise
    if not (SOURCE_BENCHMARKS / "stencilkit_benchmarks" / "__init__.py").is_file():
        return None
    sys.path.append(str(SOURCE_BENCHMARKS))
    return importlib.import_module("stencilkit_benchmarks")


def _bench(args: argparse.Namespace) -> int:
    suite = _benchmarks()
    if suite is None:
        print(BENCH_MISSING.format(where=Path(__file__).parent), file=sys.stderr)
        return EXIT_ERROR
    code: int = suite.main(args.bench_argv)  # the suite parses its own options (--help lists them)
    return code


def _add_bench(sub: Any) -> None:
    # no options here: everything after ``bench`` goes to the suite's own parser (main below)
    p = sub.add_parser(
        "bench",
        help="benchmark against hand-written kernels and the embedded "
        "backend (stencilkit bench --help for the options)",
        add_help=False,
    )
    p.set_defaults(func=_bench)


# --- help ----------------------------------------------------------------------------------------


def _help(args: argparse.Namespace) -> int:
    from .core import manual

    if args.topic is None:
        known = manual.pages()
        print("stencilkit help TOPIC prints a page of the documentation:")
        for topic, path in known.items():
            lines = path.read_text().splitlines()
            title = next((x.lstrip("# ").strip() for x in lines if x.startswith("#")), "")
            print(f"  {topic:<22} {title}")
        if not known:
            print("  (no pages found in this installation)")
        return EXIT_OK
    print(manual.page(args.topic))
    return EXIT_OK


def _add_help(sub: Any) -> None:
    p = sub.add_parser(
        "help",
        help="the documentation: list its pages, or print one (stencilkit help configuration)",
        description="The user documentation, installed with stencilkit (a checkout reads its "
        "docs/): without TOPIC, the list of pages; with one, the page as Markdown.",
    )
    p.add_argument("topic", nargs="?", help="a page, e.g. configuration, cartesian, gpu")
    p.set_defaults(func=_help)


# --- entry point ---------------------------------------------------------------------------------

SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (
    _add_info,
    _add_demo,
    _add_cache,
    _add_bench,
    _add_help,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stencilkit", description="stencilkit command line")
    parser.add_argument("--version", action="version", version=f"stencilkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``stencilkit`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "bench":
        args.bench_argv = extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        code: int = args.func(args)
    except BrokenPipeError:  # `stencilkit help cartesian | head`: the reader has gone
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (StencilError, ValueError) as err:  # a user error: say what and how to fix, no traceback
        print(f"stencilkit {args.command}: {err}", file=sys.stderr)
        return EXIT_ERROR
    return code


if __name__ == "__main__":
    raise SystemExit(main())
