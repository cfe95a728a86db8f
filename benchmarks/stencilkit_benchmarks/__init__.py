"""Benchmarks of stencilkit against hand-written baselines, side by side in one run.

    stencilkit bench [--gpu | --cpu] [--json PATH] [--quick]

GPU suite (``--gpu``; CuPy and an NVIDIA GPU): device-to-device copy bandwidth (the ceiling),
7-point fp64 Laplacian, tridiagonal vertical solve (two scans), ICON-like neighbour sums over
E2C / C2E / V2E tables, per-call overhead, first compile; ``gathers``: C2E / E2C neighbour
sums over a random and a locality numbering in both GPU layouts (vertical- and
horizontal-contiguous); ``first_call``: first calls of the Laplacian, the scan and C2E random
in new processes, build and block search apart. Each kernel is timed beside a
hand-written CUDA kernel (``cupy.RawKernel``) and the same program on the embedded backend
with CuPy fields; rates are fractions of the copy bandwidth measured in the same run.

CPU suite (``--cpu``): the same stencils with ``gtx.cpu`` beside the embedded NumPy backend
and hand-written NumPy, per-call overhead, first compile. ``--check-cuda-sources`` also
compiles every hand-written CUDA kernel with NVRTC and runs it on the CPU through a small C++
emulation of the CUDA launch (no GPU needed), checked like every other variant.

Every variant is checked (random inputs, NaN-poisoned outputs, NumPy reference on samples,
variants against each other) before and after it is timed. A failing section is reported and
the others still run. Exit status: 0 all sections ran and all checks passed, 1 otherwise,
2 no usable GPU for ``--gpu``.

The suite is the package ``stencilkit_benchmarks`` (``benchmarks/stencilkit_benchmarks/`` in
the source tree), shipped in the stencilkit distribution beside ``stencilkit`` but outside it:
``import stencilkit`` never loads it, and ``stencilkit bench`` imports it only when run (from
the installed distribution, or from the source checkout that ``stencilkit`` was imported from).
``benchmarks/*.py`` are thin wrappers.
"""

from __future__ import annotations

from .bandwidth import copy_section
from .compile_time import COMPILE_CHILD_SRC, compile_section, compile_times
from .cuda_sources import (
    CUDA_OPTIONS,
    CUDA_SOURCES,
    LAP_SRC,
    MESH_SRC,
    SCAN_SRC,
    TRIVIAL_SRC,
    cuda_sources_section,
    nvrtc_compile,
)
from .devices import Dev
from .emulation import EmulatedKernel
from .laplacian import LAP_BYTES_RULE, cpu_laplacian_section, gpu_laplacian_section
from .meshes import BenchMesh, build_mesh, mesh_problems
from .neighbours import NB_BYTES_RULE, NB_OPS, mesh_section, nb_section
from .options import DEFAULTS, SECTIONS_CPU, SECTIONS_GPU, Options, add_arguments, options_from_args
from .overhead import cpu_overhead_section, gpu_overhead_section
from .programs import N_INPUTS_WIDE, import_programs, programs_source
from .report import DESIGN, Runner, base_env
from .scan import SCAN_BYTES_RULE, _thomas_reference, scan_section
from .suite import main, run, run_cpu, run_gpu
from .timing import host_time, per_call_us, summary

__all__ = [
    "COMPILE_CHILD_SRC",
    "CUDA_OPTIONS",
    "CUDA_SOURCES",
    "DEFAULTS",
    "DESIGN",
    "LAP_BYTES_RULE",
    "LAP_SRC",
    "MESH_SRC",
    "NB_BYTES_RULE",
    "NB_OPS",
    "N_INPUTS_WIDE",
    "SCAN_BYTES_RULE",
    "SCAN_SRC",
    "SECTIONS_CPU",
    "SECTIONS_GPU",
    "TRIVIAL_SRC",
    "Dev",
    "EmulatedKernel",
    "BenchMesh",
    "Options",
    "Runner",
    "_thomas_reference",
    "add_arguments",
    "base_env",
    "build_mesh",
    "compile_section",
    "compile_times",
    "copy_section",
    "cpu_laplacian_section",
    "cpu_overhead_section",
    "cuda_sources_section",
    "gpu_laplacian_section",
    "gpu_overhead_section",
    "host_time",
    "import_programs",
    "main",
    "mesh_problems",
    "mesh_section",
    "nb_section",
    "nvrtc_compile",
    "options_from_args",
    "per_call_us",
    "programs_source",
    "run",
    "run_cpu",
    "run_gpu",
    "scan_section",
    "summary",
]
