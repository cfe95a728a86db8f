"""The hand-written CUDA baselines (for ``cupy.RawKernel``) and their NVRTC compile check."""

from __future__ import annotations

from typing import Any

from .report import Runner

LAP_SRC = r"""
// Plain 7-point Laplacian, one thread per point: x -> I (unit stride), y -> J, z -> K.
extern "C" __global__ void lap_plain(const double* __restrict__ a, double* __restrict__ out,
                                     int ni, int nj, int nk,
                                     long long asj, long long ask, long long osj, long long osk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int k = blockIdx.z + 1;
    if (i >= ni - 1 || j >= nj - 1 || k >= nk - 1) return;
    long long idx = i + j * asj + k * ask;
    out[i + j * osj + k * osk] = -6.0 * a[idx] + a[idx + 1] + a[idx - 1] + a[idx + asj] + a[idx - asj]
                                 + a[idx + ask] + a[idx - ask];
}

// Same, one thread per (I, J) column marching up K.
extern "C" __global__ void lap_kloop(const double* __restrict__ a, double* __restrict__ out,
                                     int ni, int nj, int nk,
                                     long long asj, long long ask, long long osj, long long osk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i >= ni - 1 || j >= nj - 1) return;
    for (int k = 1; k < nk - 1; ++k) {
        long long idx = i + j * asj + k * ask;
        out[i + j * osj + k * osk] = -6.0 * a[idx] + a[idx + 1] + a[idx - 1] + a[idx + asj] + a[idx - asj]
                                     + a[idx + ask] + a[idx - ask];
    }
}
"""

TRIVIAL_SRC = r"""
extern "C" __global__ void trivial1(double* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1.0;
}
extern "C" __global__ void trivial25(PARAMS, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p0[i] += 1.0;
}
""".replace("PARAMS", ", ".join(f"double* p{i}" for i in range(25)))

SCAN_SRC = r"""
// Tridiagonal solve along K (Thomas algorithm), one thread per (i, j) column.
// Strides in elements, from the actual arrays: inputs (si, sj, sk), outputs (osi, osj, osk).
// Forward pass: reads a, b, c, d; writes cp, dp.
extern "C" __global__ void tridiag_forward(const double* __restrict__ a, const double* __restrict__ b,
                                           const double* __restrict__ c, const double* __restrict__ d,
                                           double* __restrict__ cp, double* __restrict__ dp,
                                           int ni, int nj, int nk, long long si, long long sj, long long sk,
                                           long long osi, long long osj, long long osk) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= ni || j >= nj) return;
    long long p = i * si + j * sj;
    long long q = i * osi + j * osj;
    double cpv = 0.0, dpv = 0.0;
    for (int k = 0; k < nk; ++k, p += sk, q += osk) {
        const double av = a[p];
        const double denom = b[p] - av * cpv;
        cpv = c[p] / denom;
        dpv = (d[p] - av * dpv) / denom;
        cp[q] = cpv;
        dp[q] = dpv;
    }
}

// Backward pass: reads cp, dp (strides si, sj, sk); writes x (strides osi, osj, osk).
extern "C" __global__ void tridiag_backward(const double* __restrict__ cp, const double* __restrict__ dp,
                                            double* __restrict__ x,
                                            int ni, int nj, int nk, long long si, long long sj, long long sk,
                                            long long osi, long long osj, long long osk) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= ni || j >= nj) return;
    long long p = i * si + j * sj + (long long)(nk - 1) * sk;
    long long q = i * osi + j * osj + (long long)(nk - 1) * osk;
    double xv = 0.0;
    for (int k = nk - 1; k >= 0; --k, p -= sk, q -= osk) {
        xv = dp[p] - cp[p] * xv;
        x[q] = xv;
    }
}

// Both passes in one kernel: cp in global memory, dp kept in x until the backward pass
// overwrites it. Same traffic as the two kernels: read 4 + write 2, then read 2 + write 1.
extern "C" __global__ void tridiag_fused(const double* __restrict__ a, const double* __restrict__ b,
                                         const double* __restrict__ c, const double* __restrict__ d,
                                         double* __restrict__ cp, double* __restrict__ x,
                                         int ni, int nj, int nk, long long si, long long sj, long long sk,
                                         long long osi, long long osj, long long osk) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= ni || j >= nj) return;
    long long p = i * si + j * sj;
    long long q = i * osi + j * osj;
    double cpv = 0.0, dpv = 0.0;
    for (int k = 0; k < nk; ++k, p += sk, q += osk) {
        const double av = a[p];
        const double denom = b[p] - av * cpv;
        cpv = c[p] / denom;
        dpv = (d[p] - av * dpv) / denom;
        cp[q] = cpv;
        x[q] = dpv;
    }
    double xv = 0.0;
    for (int k = nk - 1; k >= 0; --k) {
        q -= osk;
        xv = x[q] - cp[q] * xv;
        x[q] = xv;
    }
}
"""

MESH_SRC = r"""
// Neighbour sums on an unstructured mesh. Fields are [horizontal, K], tables [horizontal,
// neighbour] int32, sparse weights [horizontal, neighbour] fp64; all strides in elements from
// the actual arrays (h = horizontal, k = level, n = neighbour). No skip values (periodic mesh).
// *_ek: one thread per (horizontal index, level), level = blockIdx.y.
// *_kloop: one thread per horizontal index, reading its table row once and looping over K.

extern "C" __global__ void e2c_diff_ek(const double* __restrict__ c, const int* __restrict__ tab,
                                       double* __restrict__ out, int n, int nk,
                                       long long c_sh, long long c_sk, long long t_sh, long long t_sn,
                                       long long o_sh, long long o_sk) {
    const long long h = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int k = blockIdx.y;
    if (h >= n || k >= nk) return;
    const long long c0 = (long long)tab[h * t_sh] * c_sh + k * c_sk;
    const long long c1 = (long long)tab[h * t_sh + t_sn] * c_sh + k * c_sk;
    out[h * o_sh + k * o_sk] = c[c1] - c[c0];
}

extern "C" __global__ void e2c_diff_kloop(const double* __restrict__ c, const int* __restrict__ tab,
                                          double* __restrict__ out, int n, int nk,
                                          long long c_sh, long long c_sk, long long t_sh, long long t_sn,
                                          long long o_sh, long long o_sk) {
    const long long h = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (h >= n) return;
    const long long c0 = (long long)tab[h * t_sh] * c_sh;
    const long long c1 = (long long)tab[h * t_sh + t_sn] * c_sh;
#pragma unroll 4
    for (int k = 0; k < nk; ++k) out[h * o_sh + k * o_sk] = c[c1 + k * c_sk] - c[c0 + k * c_sk];
}

template <int NB>
__device__ __forceinline__ void nb_sum_ek(const double* __restrict__ e, const int* __restrict__ tab,
                                          const double* __restrict__ w, double* __restrict__ out,
                                          int n, int nk, long long e_sh, long long e_sk,
                                          long long t_sh, long long t_sn, long long w_sh, long long w_sn,
                                          long long o_sh, long long o_sk) {
    const long long h = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int k = blockIdx.y;
    if (h >= n || k >= nk) return;
    double s = 0.0;
#pragma unroll
    for (int j = 0; j < NB; ++j)
        s += e[(long long)tab[h * t_sh + j * t_sn] * e_sh + k * e_sk] * w[h * w_sh + j * w_sn];
    out[h * o_sh + k * o_sk] = s;
}

template <int NB>
__device__ __forceinline__ void nb_sum_kloop(const double* __restrict__ e, const int* __restrict__ tab,
                                             const double* __restrict__ w, double* __restrict__ out,
                                             int n, int nk, long long e_sh, long long e_sk,
                                             long long t_sh, long long t_sn, long long w_sh, long long w_sn,
                                             long long o_sh, long long o_sk) {
    const long long h = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (h >= n) return;
    long long nbr[NB];
    double wv[NB];
#pragma unroll
    for (int j = 0; j < NB; ++j) {
        nbr[j] = (long long)tab[h * t_sh + j * t_sn] * e_sh;
        wv[j] = w[h * w_sh + j * w_sn];
    }
#pragma unroll 2
    for (int k = 0; k < nk; ++k) {
        double s = 0.0;
#pragma unroll
        for (int j = 0; j < NB; ++j) s += e[nbr[j] + k * e_sk] * wv[j];
        out[h * o_sh + k * o_sk] = s;
    }
}

#define SK_NB_PARAMS const double* __restrict__ e, const int* __restrict__ tab, \
    const double* __restrict__ w, double* __restrict__ out, int n, int nk, long long e_sh, \
    long long e_sk, long long t_sh, long long t_sn, long long w_sh, long long w_sn, long long o_sh, \
    long long o_sk
#define SK_NB_ARGS e, tab, w, out, n, nk, e_sh, e_sk, t_sh, t_sn, w_sh, w_sn, o_sh, o_sk

extern "C" __global__ void c2e_sum_ek(SK_NB_PARAMS) { nb_sum_ek<3>(SK_NB_ARGS); }
extern "C" __global__ void c2e_sum_kloop(SK_NB_PARAMS) { nb_sum_kloop<3>(SK_NB_ARGS); }
extern "C" __global__ void v2e_sum_ek(SK_NB_PARAMS) { nb_sum_ek<6>(SK_NB_ARGS); }
extern "C" __global__ void v2e_sum_kloop(SK_NB_PARAMS) { nb_sum_kloop<6>(SK_NB_ARGS); }
"""

#: every hand-written CUDA source and its kernels (for the NVRTC check)
CUDA_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "laplacian": (LAP_SRC, ("lap_plain", "lap_kloop")),
    "trivial": (TRIVIAL_SRC, ("trivial1", "trivial25")),
    "scan": (SCAN_SRC, ("tridiag_forward", "tridiag_backward", "tridiag_fused")),
    "mesh": (
        MESH_SRC,
        (
            "e2c_diff_ek",
            "e2c_diff_kloop",
            "c2e_sum_ek",
            "c2e_sum_kloop",
            "v2e_sum_ek",
            "v2e_sum_kloop",
        ),
    ),
}
CUDA_OPTIONS = ("-std=c++17",)


def nvrtc_compile(source: str, arch: str = "90", name: str = "bench") -> str | None:
    """Compile ``source`` with NVRTC for ``sm_<arch>``; None when it compiles, else the log."""
    from cuda.bindings import nvrtc

    opts = [f"--gpu-architecture=sm_{arch}".encode(), *(o.encode() for o in CUDA_OPTIONS)]
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], [])
    if int(err) != 0:
        return f"nvrtcCreateProgram: {err}"
    try:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = bytearray(size)  # never b" " * size: for size 1 that is CPython's shared b" "
        nvrtc.nvrtcGetProgramLog(prog, log)
        text = str(log.decode(errors="replace")).strip("\x00 \n")
        if int(err) != 0:
            return text or str(err)
        if "warning" in text:
            return "warnings:\n" + text
        return None
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def cuda_sources_section(R: Runner) -> dict[str, Any]:
    """Compile every hand-written CUDA source with NVRTC for sm_90 (skipped without NVRTC)."""
    res: dict[str, Any] = {}
    try:
        from cuda.bindings import nvrtc  # noqa: F401
    except ImportError as err:
        R.row("NVRTC check of hand-written CUDA", "", "", "", f"skipped: {err}")
        return {"skipped": repr(err)}
    for name, (src, kernels) in CUDA_SOURCES.items():
        log = nvrtc_compile(src, "90", name)
        res[name] = log
        R.check(
            f"NVRTC sm_90 compiles the {name} kernels ({', '.join(kernels)})",
            log is None,
            log or "",
        )
    return res
