"""A notebook cell re-run, as IPython runs it (a new file name per run, its source in
linecache): the memory the same cell grows per re-run (tracemalloc, embedded backend), and the
program libraries mapped after edited cells on the cpu backend (each edit a new library).

    python scripts/notebook_reruns.py [RUNS=1500] [EDITS=150]

Issue 42 item 8 (before: ~5-13 KB per re-run kept by stencilkit, one .so per edit mapped
forever). Set STENCILKIT_CACHE_DIR to a scratch directory: every edit builds a library."""

import gc
import linecache
import sys
import textwrap
import tracemalloc

import numpy as np

import stencilkit as gtx

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
EDITS = int(sys.argv[2]) if len(sys.argv) > 2 else 150
CELL = textwrap.dedent("""
import stencilkit as gtx
from stencilkit import Dims, Field, float64
I = gtx.Dimension("I")

@gtx.field_operator
def lap(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
    return a(I + 1) - 2.0 * a + a(I - 1) + {c}

@gtx.program(backend={backend})
def run(a: Field[Dims[I], float64], out: Field[Dims[I], float64]):
    lap(a, out=out, domain={{I: (1, 31)}})

run(a, out, offset_provider={{}})
""")
ns = {"a": gtx.as_field([gtx.Dimension("I")], np.random.default_rng(0).random(32)), "out": None}


def run_cell(i, c, backend):
    src = CELL.format(c=c, backend=backend)
    name = f"<cell-{i}>"  # IPython gives each run a new file name and puts its source in linecache
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    for old in [k for k in linecache.cache if k.startswith("<cell-") and k != name]:
        del linecache.cache[old]  # not stencilkit's: the harness keeps only the current cell
    g = {"__name__": "__main__", "a": None, "out": None}
    exec(compile("import stencilkit as gtx\nI = gtx.Dimension('I')\n", name + "-0", "exec"), g)
    g["a"] = gtx.as_field([g["I"]], np.random.default_rng(0).random(32))
    g["out"] = gtx.zeros({g["I"]: 32})
    exec(compile(src, name, "exec"), g)
    return g


def so_count():
    with open("/proc/self/maps") as f:
        return len(
            {
                line.split()[-1]
                for line in f
                if line.rstrip().endswith(".so") and "program" in line.rsplit("/", 1)[-1]
            }
        )


# same cell, embedded
for i in range(20):
    run_cell(i, "0.0", "None")
gc.collect()
tracemalloc.start()
before = tracemalloc.take_snapshot()
m0 = tracemalloc.get_traced_memory()[0]
for i in range(20, 20 + N):
    run_cell(i, "0.0", "None")
gc.collect()
m1 = tracemalloc.get_traced_memory()[0]
after = tracemalloc.take_snapshot()
tracemalloc.stop()
diff = after.compare_to(before, "filename")
ours = sum(
    s.size_diff
    for s in diff
    if "stencilkit" in s.traceback[0].filename or s.traceback[0].filename.startswith("<kernel")
)
print(
    f"same cell x{N} (embedded): {(m1 - m0) / 1024:.1f} KiB grown in all, {(m1 - m0) / N:.0f} B per run;"
    f" in stencilkit's files and generated kernels: {ours / 1024:.1f} KiB, {ours / N:.0f} B per run"
)
for stat in diff[:6]:
    print("   ", stat)
# edited cells, cpu backend: one new library each
libs0 = so_count()
most = 0
cell = None
for i in range(EDITS):
    cell = run_cell(100000 + i, f"{i}.0", "gtx.cpu")  # the last cell stays defined
    gc.collect()
    most = max(most, so_count() - libs0)
print(
    f"{EDITS} edited cells (cpu): {so_count() - libs0} program libraries mapped after the"
    f" last (at most {most} at once)"
)
