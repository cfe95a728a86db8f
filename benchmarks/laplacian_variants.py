"""Hand-written candidate kernels for the 7-point fp64 Laplacian on an I-contiguous n^3 field,
timed beside the device copy in one process: which kernel shape reaches the copy's bandwidth
without contraction (``--fmad=false``, stencilkit's default) and with it.

    python benchmarks/laplacian_variants.py [--n 512] [--reps 20] [--json out.json]
    PYTHONPATH=src python benchmarks/laplacian_variants.py --ptx     # no GPU: nvcc's PTX only

Needs CuPy and a GPU. Every candidate is checked against ``lap_plain`` (the bench's hand-written
baseline) before it is timed: bitwise when both are built without contraction, to 1e-12 relative
otherwise. Rates count one read and one write of each interior point (as the bench's Laplacian
section does), as a fraction of the best device-to-device copy of the whole array.

Candidates (each thread keeps the column's centre values in registers as it walks up K, so a
point costs five loads from the cache instead of seven):

- ``rq``: a register queue over a chunk of levels (the chunk a run-time argument);
- ``rqs``: ``rq`` with cache-streaming stores (``__stcs``, as stencilkit's ``s`` variants);
- ``rqp``: ``rq`` with the next level's five values loaded one level ahead (before the store);
- ``smem``: the (i, j) plane of the block and its one-point rim staged in shared memory per
  level, so a point reads its four horizontal neighbours from shared memory;
- ``vec2``: two consecutive points of I per thread, the centre row loaded as ``double2``;
- ``rqps``: ``rqp`` with cache-streaming stores;
- ``jb2``: two rows of J per thread walking K (each row's centre is the other's J neighbour);
- ``rqj``: the register queue walking J instead of K (blocks over I x K);
- ``smq``: ``rqp``'s queue for the centre column, the block's plane of the current level in
  shared memory (two planes, one barrier per level) for the four horizontal neighbours;
- ``b2``/``b4``/``b8``: batches of 2/4/8 levels, all of a batch's loads before its first value;
- ``cpa4``/``cpa5``/``cpa6``: the block's (i, j) tile of each level (a rim of two points in I,
  one in J) copied into a ring of 4/5/6 shared-memory slots by ``cp.async`` (16-byte copies,
  1-3 levels in flight beyond the three a level needs); every point reads its seven values from
  shared memory.

(``vec2`` with ``rqp``'s prefetch was tried on the H200 on 2026-12-02: 0.77 ms, against 0.63 ms
for ``vec2`` and 0.59 ms for ``rqp``; ``benchmarks/RESULTS.md``.)
On the H200 on 2026-12-03 (call 21, without contraction) none of the newer candidates beat
``rqp`` (0.599 ms): ``jb2`` 0.625, ``rqj`` 0.653, ``cpa4``-``cpa6`` 0.696-0.710 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

SRC = r"""
extern "C" __global__ void lap_plain(const double* __restrict__ a, double* __restrict__ out,
                                     int n, long long sj, long long sk, int chunk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int k = blockIdx.z + 1;
    if (i < 1 || i >= n - 1 || j >= n - 1) return;
    long long p = i + j * sj + k * sk;
    out[p] = -6.0 * a[p] + a[p + 1] + a[p - 1] + a[p + sj] + a[p - sj] + a[p + sk] + a[p - sk];
}

extern "C" __global__ void lap_rq(const double* __restrict__ a, double* __restrict__ out,
                                  int n, long long sj, long long sk, int chunk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i < 1 || i >= n - 1 || j >= n - 1) return;
    int k0 = 1 + blockIdx.z * chunk;
    int k1 = min(k0 + chunk, n - 1);
    long long p = i + j * sj + (long long)k0 * sk;
    double below = a[p - sk], cur = a[p];
    #pragma unroll 4
    for (int k = k0; k < k1; ++k) {
        double above = a[p + sk];
        out[p] = -6.0 * cur + a[p + 1] + a[p - 1] + a[p + sj] + a[p - sj] + above + below;
        below = cur; cur = above; p += sk;
    }
}

// lap_rq with cache-streaming stores (as stencilkit's "s" variants; __stcs is an asm statement
// with a memory clobber, so a kernel that uses it keeps its loads only where they precede it)
extern "C" __global__ void lap_rqs(const double* __restrict__ a, double* __restrict__ out,
                                   int n, long long sj, long long sk, int chunk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i < 1 || i >= n - 1 || j >= n - 1) return;
    int k0 = 1 + blockIdx.z * chunk;
    int k1 = min(k0 + chunk, n - 1);
    long long p = i + j * sj + (long long)k0 * sk;
    double below = a[p - sk], cur = a[p];
    #pragma unroll 4
    for (int k = k0; k < k1; ++k) {
        double above = a[p + sk];
        __stcs(&out[p], -6.0 * cur + a[p + 1] + a[p - 1] + a[p + sj] + a[p - sj] + above + below);
        below = cur; cur = above; p += sk;
    }
}

// the next level's values loaded one level ahead; STREAM: cache-streaming stores (__stcs)
template <bool STREAM>
__device__ void lap_prefetch(const double* __restrict__ a, double* __restrict__ out,
                             int n, long long sj, long long sk, int chunk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i < 1 || i >= n - 1 || j >= n - 1) return;
    int k0 = 1 + blockIdx.z * chunk;
    int k1 = min(k0 + chunk, n - 1);
    long long p = i + j * sj + (long long)k0 * sk;
    double below = a[p - sk], cur = a[p], above = a[p + sk];
    double e = a[p + 1], w = a[p - 1], nn = a[p + sj], s = a[p - sj];
    for (int k = k0; k < k1; ++k) {
        long long q = p + sk;
        bool more = k + 1 < k1;
        double above2 = more ? a[q + sk] : 0.0;
        double e2 = more ? a[q + 1] : 0.0, w2 = more ? a[q - 1] : 0.0;
        double n2 = more ? a[q + sj] : 0.0, s2 = more ? a[q - sj] : 0.0;
        double v = -6.0 * cur + e + w + nn + s + above + below;
        if (STREAM) __stcs(&out[p], v); else out[p] = v;
        below = cur; cur = above; above = above2; e = e2; w = w2; nn = n2; s = s2; p = q;
    }
}

extern "C" __global__ void lap_rqp(const double* __restrict__ a, double* __restrict__ out,
                                   int n, long long sj, long long sk, int chunk) {
    lap_prefetch<false>(a, out, n, sj, sk, chunk);
}

extern "C" __global__ void lap_rqps(const double* __restrict__ a, double* __restrict__ out,
                                    int n, long long sj, long long sk, int chunk) {
    lap_prefetch<true>(a, out, n, sj, sk, chunk);
}

// blockDim = (BX, BY); the tile holds the block's points and a one-point rim in I and J
extern "C" __global__ void lap_smem(const double* __restrict__ a, double* __restrict__ out,
                                    int n, long long sj, long long sk, int chunk) {
    extern __shared__ double tile[];
    const int bx = blockDim.x, by = blockDim.y, tw = bx + 2;
    const int tx = threadIdx.x, ty = threadIdx.y;
    int i = blockIdx.x * bx + tx;  // 0-based, the block starts on a cache line
    int j = blockIdx.y * by + ty + 1;
    const bool inside = i >= 1 && i < n - 1 && j < n - 1;
    const int ic = min(max(i, 0), n - 1), jc = min(j, n - 1);
    int k0 = 1 + blockIdx.z * chunk;
    int k1 = min(k0 + chunk, n - 1);
    long long p = ic + jc * sj + (long long)k0 * sk;
    double below = a[p - sk], cur = a[p];
    const int t = (ty + 1) * tw + tx + 1;
    // rim points: west/east columns by threads with tx == 0 / bx-1, south/north rows by ty == 0 / by-1
    const int iw = max(ic - 1, 0), ie = min(ic + 1, n - 1);
    const int js = max(jc - 1, 0), jn = min(jc + 1, n - 1);
    for (int k = k0; k < k1; ++k) {
        double above = a[p + sk];
        long long plane = (long long)k * sk;
        tile[t] = cur;
        if (tx == 0) tile[t - 1] = a[iw + jc * sj + plane];
        if (tx == bx - 1) tile[t + 1] = a[ie + jc * sj + plane];
        if (ty == 0) tile[t - tw] = a[ic + js * sj + plane];
        if (ty == by - 1) tile[t + tw] = a[ic + jn * sj + plane];
        __syncthreads();
        if (inside)
            out[p] = -6.0 * cur + tile[t + 1] + tile[t - 1] + tile[t + tw] + tile[t - tw] + above + below;
        __syncthreads();
        below = cur; cur = above; p += sk;
    }
}

// two points of I per thread: i0 = 2 * (thread's x), i0 + 1; the centre row as double2
extern "C" __global__ void lap_vec2(const double* __restrict__ a, double* __restrict__ out,
                                    int n, long long sj, long long sk, int chunk) {
    int i0 = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i0 >= n || j >= n - 1) return;
    int k0 = 1 + blockIdx.z * chunk;
    int k1 = min(k0 + chunk, n - 1);
    long long p = i0 + j * sj + (long long)k0 * sk;  // even: 16-byte aligned when sj, sk are even
    const bool left = i0 >= 1, right = i0 + 1 < n - 1;
    double2 below = *(const double2*)(a + p - sk), cur = *(const double2*)(a + p);
    for (int k = k0; k < k1; ++k) {
        double2 above = *(const double2*)(a + p + sk);
        double2 nn = *(const double2*)(a + p + sj), s = *(const double2*)(a + p - sj);
        double w = i0 >= 1 ? a[p - 1] : 0.0;
        double e = i0 + 2 < n ? a[p + 2] : 0.0;
        if (left) out[p] = -6.0 * cur.x + cur.y + w + nn.x + s.x + above.x + below.x;
        if (right) out[p + 1] = -6.0 * cur.y + e + cur.x + nn.y + s.y + above.y + below.y;
        below = cur; cur = above; p += sk;
    }
}

// two rows of J per thread (j, j + 1) walking up K: each row's centre is the other's north or
// south neighbour, so a level costs 10 loads for two points instead of 10 + 2
extern "C" __global__ void lap_jb2(const double* __restrict__ a, double* __restrict__ out,
                                   int n, long long sj, long long sk, int chunk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = 1 + 2 * (blockIdx.y * blockDim.y + threadIdx.y);
    if (i < 1 || i >= n - 1 || j >= n - 1) return;
    const bool two = j + 1 < n - 1;
    int k0 = 1 + blockIdx.z * chunk;
    int k1 = min(k0 + chunk, n - 1);
    long long p = i + j * sj + (long long)k0 * sk, q = p + sj;
    double below0 = a[p - sk], cur0 = a[p];
    double below1 = two ? a[q - sk] : 0.0, cur1 = two ? a[q] : 0.0;
    for (int k = k0; k < k1; ++k) {
        double above0 = a[p + sk], above1 = two ? a[q + sk] : 0.0;
        double s0 = a[p - sj];
        double n0 = two ? cur1 : a[p + sj];
        out[p] = -6.0 * cur0 + a[p + 1] + a[p - 1] + n0 + s0 + above0 + below0;
        if (two) {
            double n1 = a[q + sj];
            out[q] = -6.0 * cur1 + a[q + 1] + a[q - 1] + n1 + cur0 + above1 + below1;
        }
        below0 = cur0; cur0 = above0; below1 = cur1; cur1 = above1; p += sk; q += sk;
    }
}

// a register queue walking J (blocks over I x K): the walk's stride is one row (4 KB at 512^2)
// instead of one level (2 MB)
extern "C" __global__ void lap_rqj(const double* __restrict__ a, double* __restrict__ out,
                                   int n, long long sj, long long sk, int chunk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i < 1 || i >= n - 1 || k >= n - 1) return;
    int j0 = 1 + blockIdx.z * chunk;
    int j1 = min(j0 + chunk, n - 1);
    long long p = i + j0 * sj + (long long)k * sk;
    double south = a[p - sj], cur = a[p];
    #pragma unroll 4
    for (int j = j0; j < j1; ++j) {
        double north = a[p + sj];
        out[p] = -6.0 * cur + a[p + 1] + a[p - 1] + north + south + a[p + sk] + a[p - sk];
        south = cur; cur = north; p += sj;
    }
}

// The block's (i, j) tile of each level, with a rim of two points in I (16-byte copies) and
// one in J, copied into a ring of S shared-memory slots by cp.async (no registers held while
// the copies fly: S - 3 levels in flight beyond the three a level needs); every point reads its
// seven values from shared memory. Needs n even, sj and sk even (16-byte aligned rows).
__device__ __forceinline__ void sk_cp16(void* smem, const void* g) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(g));
}
__device__ __forceinline__ void sk_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void sk_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

template <int S>
__device__ void lap_cpasync(const double* __restrict__ a, double* __restrict__ out,
                            int n, long long sj, long long sk, int chunk) {
    extern __shared__ double sm[];
    const int bx = blockDim.x, by = blockDim.y;
    const int tw = bx + 4, tn = tw * (by + 2), half = tw / 2, pairs = half * (by + 2);
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * bx + tx, nt = bx * by;
    const int i0 = blockIdx.x * bx, j0 = blockIdx.y * by + 1;
    const int k0 = 1 + blockIdx.z * chunk;
    const int k1 = min(k0 + chunk, n - 1);
    auto issue = [&](int level) {
        if (level <= k1) {
            double* dst = sm + ((level - (k0 - 1)) % S) * tn;
            for (int q = tid; q < pairs; q += nt) {
                int r = q / half, c = 2 * (q - r * half);
                int gi = i0 - 2 + c, gj = j0 - 1 + r;
                if (gi >= 0 && gi < n && gj < n)
                    sk_cp16(dst + r * tw + c, a + gi + gj * sj + (long long)level * sk);
            }
        }
        sk_commit();
    };
    for (int s = 0; s < S - 1; ++s) issue(k0 - 1 + s);
    const int i = i0 + tx, j = j0 + ty;
    const bool inside = i >= 1 && i < n - 1 && j < n - 1;
    const int t = (ty + 1) * tw + tx + 2;
    long long p = i + (long long)j * sj + (long long)k0 * sk;
    for (int k = k0; k < k1; ++k) {
        issue(k + S - 2);
        sk_wait<S - 3>();
        __syncthreads();
        const double* lo = sm + ((k - 1 - (k0 - 1)) % S) * tn;
        const double* mid = sm + ((k - (k0 - 1)) % S) * tn;
        const double* hi = sm + ((k + 1 - (k0 - 1)) % S) * tn;
        if (inside)
            out[p] = -6.0 * mid[t] + mid[t + 1] + mid[t - 1] + mid[t + tw] + mid[t - tw] + hi[t] + lo[t];
        __syncthreads();
        p += sk;
    }
}

extern "C" __global__ void lap_cpa4(const double* __restrict__ a, double* __restrict__ out,
                                    int n, long long sj, long long sk, int chunk) {
    lap_cpasync<4>(a, out, n, sj, sk, chunk);
}
extern "C" __global__ void lap_cpa5(const double* __restrict__ a, double* __restrict__ out,
                                    int n, long long sj, long long sk, int chunk) {
    lap_cpasync<5>(a, out, n, sj, sk, chunk);
}
extern "C" __global__ void lap_cpa6(const double* __restrict__ a, double* __restrict__ out,
                                    int n, long long sj, long long sk, int chunk) {
    lap_cpasync<6>(a, out, n, sj, sk, chunk);
}

// B levels per batch: the 5 B values a batch reads are all loaded before its first value is
// computed, then its B stores (the same arithmetic as lap_plain, so the same bits)
template <int B>
__device__ void lap_batched(const double* __restrict__ a, double* __restrict__ out,
                            int n, long long sj, long long sk, int chunk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i < 1 || i >= n - 1 || j >= n - 1) return;
    int k0 = 1 + blockIdx.z * chunk;
    int k1 = min(k0 + chunk, n - 1);
    long long p = i + j * sj + (long long)k0 * sk;
    double below = a[p - sk], cur = a[p];
    int k = k0;
    for (; k + B <= k1; k += B) {
        double up[B], e[B], w[B], nn[B], s[B];
        #pragma unroll
        for (int b = 0; b < B; ++b) {
            long long q = p + b * sk;
            up[b] = a[q + sk]; e[b] = a[q + 1]; w[b] = a[q - 1]; nn[b] = a[q + sj]; s[b] = a[q - sj];
        }
        double v[B];
        #pragma unroll
        for (int b = 0; b < B; ++b) {
            double c = b == 0 ? cur : up[b - 1];
            double lo = b == 0 ? below : (b == 1 ? cur : up[b - 2]);
            v[b] = -6.0 * c + e[b] + w[b] + nn[b] + s[b] + up[b] + lo;
        }
        #pragma unroll
        for (int b = 0; b < B; ++b) out[p + b * sk] = v[b];
        below = B >= 2 ? up[B - 2] : cur;
        cur = up[B - 1];
        p += B * sk;
    }
    for (; k < k1; ++k) {
        double above = a[p + sk];
        out[p] = -6.0 * cur + a[p + 1] + a[p - 1] + a[p + sj] + a[p - sj] + above + below;
        below = cur; cur = above; p += sk;
    }
}

extern "C" __global__ void lap_b2(const double* __restrict__ a, double* __restrict__ out,
                                  int n, long long sj, long long sk, int chunk) {
    lap_batched<2>(a, out, n, sj, sk, chunk);
}
extern "C" __global__ void lap_b4(const double* __restrict__ a, double* __restrict__ out,
                                  int n, long long sj, long long sk, int chunk) {
    lap_batched<4>(a, out, n, sj, sk, chunk);
}
extern "C" __global__ void lap_b8(const double* __restrict__ a, double* __restrict__ out,
                                  int n, long long sj, long long sk, int chunk) {
    lap_batched<8>(a, out, n, sj, sk, chunk);
}

// The register queue of rqp for the centre column, the (i, j) plane of the block's current level
// in shared memory (two planes, one barrier per level): a point's four horizontal neighbours are
// read from shared memory, so a level costs one load per point (its next value) and the rim
// (one column each side, one row each end), all loaded one level ahead. Far fewer L2 requests
// than the queue alone, whose J neighbours miss L1 about half the time (ncu, 2026-12-03).
extern "C" __global__ void lap_smq(const double* __restrict__ a, double* __restrict__ out,
                                   int n, long long sj, long long sk, int chunk) {
    extern __shared__ double tile[];
    const int bx = blockDim.x, by = blockDim.y, tw = bx + 2, tn = tw * (by + 2);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i = blockIdx.x * bx + tx;  // 0-based: the block starts on a cache line
    const int j = blockIdx.y * by + ty + 1;
    const bool inside = i >= 1 && i < n - 1 && j < n - 1;
    const int ic = min(i, n - 1), jc = min(j, n - 1);
    const bool west = tx == 0 && ic >= 1, east = tx == bx - 1 && ic + 1 <= n - 1;
    const bool south = ty == 0, north = ty == by - 1 && jc + 1 <= n - 1;
    const int k0 = 1 + blockIdx.z * chunk;
    const int k1 = min(k0 + chunk, n - 1);
    const int t = (ty + 1) * tw + tx + 1;
    long long p = ic + (long long)jc * sj + (long long)k0 * sk;
    double below = a[p - sk], cur = a[p], above = a[p + sk];
    double rw = west ? a[p - 1] : 0.0, re = east ? a[p + 1] : 0.0;
    double rs = south ? a[p - sj] : 0.0, rn = north ? a[p + sj] : 0.0;
    for (int k = k0; k < k1; ++k) {
        double* pl = tile + ((k - k0) & 1) * tn;
        pl[t] = cur;
        if (west) pl[t - 1] = rw;
        if (east) pl[t + 1] = re;
        if (south) pl[t - tw] = rs;
        if (north) pl[t + tw] = rn;
        const long long q = p + sk;
        const bool more = k + 1 < k1;
        const double above2 = more ? a[q + sk] : 0.0;
        rw = west && more ? a[q - 1] : 0.0;
        re = east && more ? a[q + 1] : 0.0;
        rs = south && more ? a[q - sj] : 0.0;
        rn = north && more ? a[q + sj] : 0.0;
        __syncthreads();
        if (inside)
            out[p] = -6.0 * cur + pl[t + 1] + pl[t - 1] + pl[t + tw] + pl[t - tw] + above + below;
        below = cur; cur = above; above = above2; p = q;
    }
}

extern "C" __global__ void copy1(const double* __restrict__ a, double* __restrict__ b, long long m) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < m) b[t] = a[t];
}
"""

BLOCKS = ((32, 4), (32, 8), (64, 2), (64, 4), (128, 1), (128, 2), (256, 1))
CHUNKS = (8, 16, 32, 64, 510)
NAMES = (
    "plain",
    "rq",
    "rqs",
    "rqp",
    "rqps",
    "smem",
    "vec2",
    "jb2",
    "rqj",
    "cpa4",
    "cpa5",
    "cpa6",
    "b2",
    "b4",
    "b8",
    "smq",
)
#: shared-memory slots of the cp.async candidates
CPA_SLOTS = {"cpa4": 4, "cpa5": 5, "cpa6": 6}


def ptx_loads(n: int) -> int:
    """No GPU needed: stencilkit's CUDA for the bench's Laplacian with all its z-chunk variants,
    compiled to PTX by nvcc for sm_90, and per kernel its global loads (read-only ``.nc`` ones
    apart), stores and additions: how many loads the compiler kept of the 7 a point reads."""
    import re
    import subprocess
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import stencilkit as gtx
    from stencilkit.backends.cuda.codegen import generate_cuda
    from stencilkit_benchmarks.programs import import_programs

    with tempfile.TemporaryDirectory() as tmp:
        P = import_programs(tmp)
        dom = {P.I: n, P.J: n, P.K: n}
        run = P.run_lap.with_backend(gtx.gpu)
        planned = run.inspect(dom, dom, n, offset_provider={}, until="generate").source.planned
        print(
            f"stencilkit's Laplacian, {n}^3, I-contiguous: PTX per kernel (nvcc --fmad=false, sm_90)"
        )
        for loads_first in (False, True):
            text = generate_cuda(
                planned.sprog, planned.layout, True, planned.spec.narrow_index, False, loads_first
            )
            cu, ptx = Path(tmp) / "lap.cu", Path(tmp) / "lap.ptx"
            cu.write_text(text)
            cmd = [
                "nvcc",
                "-arch=sm_90",
                "-ptx",
                "--fmad=false",
                "-std=c++17",
                "-o",
                str(ptx),
                str(cu),
            ]
            subprocess.run(cmd, check=True)
            body = ptx.read_text()
            print(f" STENCILKIT_CUDA_LOADS_FIRST={int(loads_first)}")
            for m in re.finditer(r"\.entry (\w+)\((.*?)\n}", body, re.S):
                k = m.group(2)
                adds = len(re.findall(r"add\.(?:rn\.)?f64", k))
                print(
                    f"  {m.group(1):24s} ld.global {k.count('ld.global'):3d} (.nc {k.count('ld.global.nc'):3d})"
                    f"  st.global {k.count('st.global'):2d}  add.f64 {adds:3d}"
                )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default=",".join(NAMES), help="candidates, comma-separated")
    ap.add_argument(
        "--fmad", default="false,true", help="contraction settings to build, comma-separated"
    )
    ap.add_argument(
        "--maxrreg", type=int, default=0, help="registers per thread at most (--maxrregcount)"
    )
    ap.add_argument("--blocks", default=None, help="block shapes, e.g. 32x4,64x4 (default: all)")
    ap.add_argument("--chunks", default=None, help="chunks, e.g. 8,16 (default: all)")
    ap.add_argument(
        "--profile",
        action="store_true",
        help="one checked launch per case, untimed (for ncu: one profiled launch each)",
    )
    ap.add_argument(
        "--ptx", action="store_true", help="no GPU: count the loads in stencilkit's PTX instead"
    )
    args = ap.parse_args(argv)
    if args.ptx:
        return ptx_loads(args.n)
    import cupy as cp
    import numpy as np

    n = args.n
    only = [c for c in args.only.split(",") if c]
    unknown = sorted(set(only) - set(NAMES))
    if unknown or "plain" not in only:
        ap.error(
            f"--only: {unknown or 'plain (the reference) is missing'}; candidates: {', '.join(NAMES)}"
        )
    x = cp.asfortranarray(cp.random.standard_normal((n, n, n), dtype=cp.float64))
    sj, sk = x.strides[1] // 8, x.strides[2] // 8
    ref = cp.full_like(x, cp.nan)
    out = cp.full_like(x, cp.nan)
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    def timed(fn) -> float:
        for _ in range(3):
            fn()
        ts = []
        for _ in range(args.reps):
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            ts.append(cp.cuda.get_elapsed_time(start, stop))
        return statistics.median(ts)

    full_bytes = 2 * 8 * n**3
    y = cp.empty_like(x)
    copies = {
        "cupy.copyto": timed(lambda: cp.copyto(y, x)),
    }
    k_copy = cp.RawKernel(SRC, "copy1", options=("-std=c++17",))
    m = n**3
    copies["copy kernel"] = timed(lambda: k_copy((-(-m // 256),), (256,), (x, y, np.int64(m))))
    copy_ms = min(copies.values())
    copy_gbs = full_bytes / copy_ms / 1e6
    print(f"copy {n}^3 f64: " + ", ".join(f"{k} {v:.3f} ms" for k, v in copies.items()))
    print(f"copy bandwidth {copy_gbs:.0f} GB/s")
    lap_bytes = 2 * 8 * (n - 2) ** 3
    rows = []
    mods = {
        fm: cp.RawModule(
            code=SRC,
            options=(
                "-std=c++17",
                f"--fmad={fm}",
                *((f"--maxrregcount={args.maxrreg}",) if args.maxrreg else ()),
            ),
        )
        for fm in args.fmad.split(",")
    }
    plain = cp.RawModule(code=SRC, options=("-std=c++17", "--fmad=false")).get_function("lap_plain")
    blk = (32, 8, 1)
    plain(
        (-(-n // 32), -(-(n - 2) // 8), n - 2),
        blk,
        (x, ref, np.int32(n), np.int64(sj), np.int64(sk), np.int32(0)),
    )
    cp.cuda.Device().synchronize()
    interior = (slice(1, n - 1),) * 3
    ref_in = ref[interior]
    blocks: tuple[tuple[int, ...], ...] = BLOCKS
    if args.blocks:
        blocks = tuple(tuple(int(v) for v in b.split("x")) for b in args.blocks.split(","))
    chunks = tuple(int(c) for c in args.chunks.split(",")) if args.chunks else CHUNKS
    for fm, mod in mods.items():
        for name in only:
            fn = mod.get_function(f"lap_{name}")
            for bx, by in blocks:
                for chunk in (1,) if name == "plain" else chunks:
                    gx = -(-(n // 2 if name.startswith("vec2") else n) // bx)
                    grid = (
                        gx,
                        -(-(n - 2) // (2 * by if name == "jb2" else by)),
                        n - 2 if name == "plain" else -(-(n - 2) // chunk),
                    )
                    shm = 8 * (bx + 2) * (by + 2) if name == "smem" else 0
                    if name == "smq":
                        shm = 2 * 8 * (bx + 2) * (by + 2)
                    if name in CPA_SLOTS:
                        shm = 8 * CPA_SLOTS[name] * (bx + 4) * (by + 2)
                    kargs = (x, out, np.int32(n), np.int64(sj), np.int64(sk), np.int32(chunk))

                    def go(fn=fn, grid=grid, b=(bx, by, 1), kargs=kargs, shm=shm) -> None:
                        fn(grid, b, kargs, shared_mem=shm)

                    out.fill(cp.nan)
                    go()
                    got = out[interior]
                    if fm == "false":
                        ok = bool(cp.array_equal(got, ref_in))
                    else:
                        ok = bool(cp.allclose(got, ref_in, rtol=1e-12, atol=1e-12))
                    rim_ok = bool(cp.isnan(out[0]).all() and cp.isnan(out[:, :, -1]).all())
                    if not (ok and rim_ok):
                        print(f"FAILED check: {name} fmad={fm} block {bx}x{by} chunk {chunk}")
                        rows.append(
                            {
                                "kernel": name,
                                "fmad": fm,
                                "block": [bx, by],
                                "chunk": chunk,
                                "ok": False,
                            }
                        )
                        continue
                    if args.profile:
                        continue
                    ms = timed(go)
                    frac = lap_bytes / ms / 1e6 / copy_gbs
                    rows.append(
                        {
                            "kernel": name,
                            "fmad": fm,
                            "block": [bx, by],
                            "chunk": chunk,
                            "ok": True,
                            "ms": ms,
                            "of_copy": frac,
                        }
                    )
    good = [r for r in rows if r["ok"]]
    for fm in mods:
        print(f"\n--fmad={fm}: best five")
        for r in sorted((r for r in good if r["fmad"] == fm), key=lambda r: r["ms"])[:5]:
            print(
                f"  {r['kernel']:6s} block {r['block'][0]:3d}x{r['block'][1]} chunk {r['chunk']:3d}"
                f"  {r['ms']:.4f} ms  {r['of_copy']:.3f} of copy"
            )
        for name in only:
            best = min(
                (r for r in good if r["fmad"] == fm and r["kernel"] == name),
                key=lambda r: r["ms"],
                default=None,
            )
            if best:
                print(
                    f"  best {name:6s}: {best['of_copy']:.3f} (block {best['block']}, chunk {best['chunk']})"
                )
    failed = [r for r in rows if not r["ok"]]
    print(f"\n{len(good)} candidates timed, {len(failed)} failed their check")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": n, "copy_ms": copies, "copy_gbs": copy_gbs, "rows": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
