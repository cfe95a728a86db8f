"""Quick GPU smoke test of the Laplacian: correctness, bandwidth vs copy, per-call overhead."""

import time

import cupy as cp
import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


@gtx.field_operator
def lap(a: Field[Dims[I, J, K], float64]) -> Field[Dims[I, J, K], float64]:
    return -6.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1) + a(K + 1) + a(K - 1)


@gtx.program(backend=gtx.gpu)
def run_lap(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64], n: gtx.int32):
    lap(a, out=out, domain={I: (1, n - 1), J: (1, n - 1), K: (1, n - 1)})


def timeit(fn, reps=20):
    fn()
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts))


n = 512
src = cp.asfortranarray(cp.random.standard_normal((n, n, n)))
a = gtx.as_field([I, J, K], src)
out = gtx.full({I: n, J: n, K: n}, np.nan, allocator=gtx.gpu)
t0 = time.perf_counter()
run_lap(a, out, n, offset_provider={})
cp.cuda.Device().synchronize()
print("first call s", time.perf_counter() - t0)
ref = -6 * src[1:-1, 1:-1, 1:-1] + src[2:, 1:-1, 1:-1] + src[:-2, 1:-1, 1:-1] + src[1:-1, 2:, 1:-1] + src[1:-1, :-2, 1:-1] + src[1:-1, 1:-1, 2:] + src[1:-1, 1:-1, :-2]
o = out.ndarray
print("max err", float(cp.abs(o[1:-1, 1:-1, 1:-1] - ref).max()), "boundary nan", bool(cp.isnan(o[0]).all()))
dst = cp.empty_like(src)
tc = timeit(lambda: cp.copyto(dst, src))
copy_bw = 2 * src.nbytes / tc / 1e6
tl = timeit(lambda: run_lap(a, out, n, offset_provider={}))
lap_bw = 2 * 8 * (n - 2) ** 3 / tl / 1e6
print(f"copy {tc:.3f} ms {copy_bw:.0f} GB/s ; lap {tl:.3f} ms {lap_bw:.0f} GB/s ; fraction {lap_bw / copy_bw:.3f}")
sa = gtx.as_field([I, J, K], cp.random.standard_normal((8, 8, 8)))
so = gtx.zeros({I: 8, J: 8, K: 8}, allocator=gtx.gpu)
run_lap(sa, so, 8, offset_provider={})
N = 20000
t0 = time.perf_counter()
for _ in range(N):
    run_lap(sa, so, 8, offset_provider={})
t1 = time.perf_counter()
cp.cuda.Device().synchronize()
print(f"per-call overhead {(t1 - t0) / N * 1e6:.2f} us")
