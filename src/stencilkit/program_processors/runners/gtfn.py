"""gt4py.next's gtfn backends under their gt4py names: stencilkit's ``cpu`` and ``gpu``."""

from ...backends import cpu, gpu

run_gtfn = cpu
run_gtfn_cpu = cpu
run_gtfn_gpu = gpu
run_gtfn_cached = cpu
run_gtfn_gpu_cached = gpu

__all__ = ["run_gtfn", "run_gtfn_cached", "run_gtfn_cpu", "run_gtfn_gpu", "run_gtfn_gpu_cached"]
