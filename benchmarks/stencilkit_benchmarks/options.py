"""The options of ``stencilkit bench``: sections, sizes per suite, command-line parsing."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Any

SECTIONS_GPU = (
    "copy",
    "laplacian",
    "scan",
    "mesh",
    "e2c",
    "c2e",
    "v2e",
    "gathers",
    "first_call",
    "overhead",
    "cartesian",
    "compile",
)
SECTIONS_CPU = (
    "laplacian",
    "scan",
    "mesh",
    "e2c",
    "c2e",
    "v2e",
    "overhead",
    "cartesian",
    "threads",
    "compile",
)


@dataclass
class Options:
    gpu: bool
    quick: bool = False
    json: str | None = None
    skip_compile: bool = False
    only: tuple[str, ...] = ()
    verbose: bool = True
    check_cuda_sources: bool = False
    n: int = 512  # GPU Laplacian and copy: n^3
    lap_shape: tuple[int, int, int] = (256, 256, 64)  # CPU Laplacian
    scan_shape: tuple[int, int, int] = (512, 512, 128)
    mesh: tuple[int, int, int] = (1024, 512, 80)  # quads nx x ny, levels
    reps: int = 50
    emb_reps: int = 10
    calls: int = 20000


DEFAULTS: dict[tuple[bool, bool], dict[str, Any]] = {  # (gpu, quick) -> sizes
    (True, False): {
        "n": 512,
        "scan_shape": (512, 512, 128),
        "mesh": (1024, 512, 80),
        "reps": 50,
        "emb_reps": 10,
        "calls": 20000,
    },
    (True, True): {
        "n": 128,
        "scan_shape": (128, 128, 32),
        "mesh": (128, 64, 16),
        "reps": 10,
        "emb_reps": 3,
        "calls": 2000,
    },
    (False, False): {
        "lap_shape": (256, 256, 64),
        "scan_shape": (128, 128, 64),
        "mesh": (256, 128, 32),
        "reps": 30,
        "emb_reps": 5,
        "calls": 20000,
    },
    (False, True): {
        "lap_shape": (96, 96, 32),
        "scan_shape": (32, 32, 16),
        "mesh": (32, 16, 8),
        "reps": 5,
        "emb_reps": 2,
        "calls": 2000,
    },
}


def _triple(text: str) -> tuple[int, int, int]:
    parts = tuple(int(x) for x in text.split(","))
    if len(parts) != 3 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"expected three positive integers a,b,c, not {text!r}")
    return parts


def help_text(docstring: str | None) -> str:
    """A module docstring as ``--help`` shows it: reStructuredText's inline literals
    (````--gpu````) and roles (``:func:`x```) as plain text, the rest as written."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", docstring or "")
    return re.sub(r"``([^`]+)``", r"\1", text)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``stencilkit bench`` (also used by ``benchmarks/*.py``)."""
    p.add_argument(
        "suite",
        nargs="?",
        choices=("frontend",),
        help="'frontend': how parse, lowering, code generation and build scale with the"
        " source (python -m stencilkit_benchmarks.frontend --help for its own options)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--gpu",
        dest="gpu",
        action="store_const",
        const=True,
        default=None,
        help="GPU suite (CuPy + NVIDIA GPU)",
    )
    where.add_argument(
        "--cpu",
        dest="gpu",
        action="store_const",
        const=False,
        help="CPU suite (default when no GPU is usable)",
    )
    p.add_argument("--json", metavar="PATH", help="write every result, check and the table as JSON")
    p.add_argument("--quick", action="store_true", help="small sizes, few repetitions (smoke test)")
    p.add_argument("--skip-compile", action="store_true", help="skip the compile-time subprocesses")
    p.add_argument(
        "--only",
        default="",
        help="comma-separated sections (default: all); "
        f"GPU: {','.join(SECTIONS_GPU)}; CPU: {','.join(SECTIONS_CPU)}",
    )
    p.add_argument(
        "-v", "--verbose", action="store_true", help="print every check and row as it runs"
    )
    p.add_argument(
        "--check-cuda-sources",
        action="store_true",
        help="CPU suite: also compile the hand-written CUDA kernels with NVRTC and run them "
        "on the CPU through a C++ emulation, checked like the other variants",
    )
    p.add_argument("--n", type=int, help="GPU Laplacian and copy size n^3 (default 512)")
    p.add_argument("--shape", type=_triple, help="CPU Laplacian shape I,J,K (default 256,256,64)")
    p.add_argument("--scan-shape", type=_triple, help="scan shape I,J,K (GPU default 512,512,128)")
    p.add_argument(
        "--mesh", type=_triple, help="mesh quads nx,ny and levels (GPU default 1024,512,80)"
    )
    p.add_argument("--reps", type=int, help="timed reps per variant and round")
    p.add_argument(
        "--emb-reps", type=int, help="most timed reps of slow variants (embedded, NumPy)"
    )
    p.add_argument("--calls", type=int, help="calls per round in the overhead loop")


def options_from_args(args: argparse.Namespace, gpu: bool) -> Options:
    o = Options(
        gpu=gpu,
        quick=args.quick,
        json=args.json,
        skip_compile=args.skip_compile,
        only=tuple(s.strip() for s in args.only.split(",") if s.strip()),
        verbose=args.verbose,
        check_cuda_sources=args.check_cuda_sources,
    )
    for key, value in DEFAULTS[(gpu, bool(args.quick))].items():
        setattr(o, key, value)
    for attr, key in (
        ("n", "n"),
        ("shape", "lap_shape"),
        ("scan_shape", "scan_shape"),
        ("mesh", "mesh"),
        ("reps", "reps"),
        ("emb_reps", "emb_reps"),
        ("calls", "calls"),
    ):
        if getattr(args, attr, None) is not None:
            setattr(o, key, getattr(args, attr))
    known = SECTIONS_GPU if gpu else SECTIONS_CPU
    unknown = [s for s in o.only if s not in known]
    if unknown:
        raise ValueError(f"unknown section(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return o


def want(opts: Options, name: str) -> bool:
    if not opts.only:
        return True
    if name == "mesh":
        return any(s in opts.only for s in ("mesh", "e2c", "c2e", "v2e"))
    return name in opts.only
