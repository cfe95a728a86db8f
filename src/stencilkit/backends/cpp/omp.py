"""The OpenMP parts of the generated C++: the runtime hooks and each kernel's ``parallel for``.

A kernel runs its loop nest on several threads only when it has enough work for the threads to
pay for themselves (waking them and joining them costs microseconds; a 128x128 kernel of a few
dozen operations is done in less on one core). The test is made at run time, per call, from the
kernel's iteration count and a per-kernel cost per point fixed at generation::

    #pragma omp parallel for ... if(sk_parallel(points, COST)) num_threads(sk_threads())

``sk_parallel`` compares ``points * COST`` with a threshold in "operation-points" and
``sk_threads`` gives the thread count. Both read a small settings block that stencilkit owns in
Python (``stencilkit.toolchain.threads``) and hands to every library when it loads, so
``stencilkit.set_num_threads`` changes every loaded program at once, without rebuilding.
"""

from __future__ import annotations

from ...ir import nodes as ir
from ...ir.visit import postorder

#: C++ included once per generated library, after the prelude. ``sk_settings`` points to three
#: int64 values: [0] the thread count (0: OpenMP's default, omp_get_max_threads()), [1] the
#: least work (points x cost) for which a kernel runs in parallel, [2] set to 1 by the first
#: kernel that goes parallel (libgomp then has a thread pool, which a forked child cannot use:
#: ``toolchain/threads.py`` makes such a child serial).
RUNTIME = r"""
#ifdef _OPENMP
#include <omp.h>
#endif
static volatile int64_t* sk_settings = nullptr;
extern "C" void sk_bind_settings(int64_t* settings) { sk_settings = settings; }
static inline int sk_threads() {
#ifdef _OPENMP
  const int64_t n = sk_settings ? sk_settings[0] : 0;
  return n > 0 ? (int)n : omp_get_max_threads();
#else
  return 1;
#endif
}
static inline bool sk_parallel(int64_t points, int64_t cost) {
  const int64_t least = sk_settings ? sk_settings[1] : 0;
  const bool parallel = points * cost >= least && sk_threads() > 1;
  if (parallel && sk_settings) sk_settings[2] = 1;
  return parallel;
}
"""


def point_cost(k: ir.Kernel) -> int:
    """The work of one point of ``k`` in IR operations: every node of its values (loads,
    arithmetic, calls; a scan's body once per level) plus one store per output. A rough but
    monotone measure: what matters is that a heavier body needs fewer points to go parallel."""
    nodes = len(postorder(*k.values))
    if k.scan is not None:
        nodes += len(postorder(*k.scan.inits))
    return max(1, nodes + len(k.outs))


def points_expr(k: ir.Kernel, ki: int) -> str:
    """C expression: the number of points of kernel ``ki`` in this call (the scan axis too)."""
    return " * ".join(f"(int64_t)({d.value}_hi{ki} - {d.value}_lo{ki})" for d in k.dims) or "1"


def parallel_for(k: ir.Kernel, ki: int, collapse: int, simd: bool) -> str:
    """The ``#pragma omp parallel for`` line of kernel ``ki``, with its size test and thread count."""
    head = (
        f"#pragma omp parallel for collapse({collapse})"
        if collapse > 1
        else f"#pragma omp parallel for{' simd' if simd else ''}"
    )
    return (
        f"  {head} schedule(static) if(sk_parallel({points_expr(k, ki)}, {point_cost(k)}))"
        " num_threads(sk_threads())"
    )
