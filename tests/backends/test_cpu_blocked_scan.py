"""The cpu backend's blocked scans: a scan whose innermost parallel dimension is unit-stride
(a horizontal-contiguous layout) runs the scan axis outside an ``omp simd`` loop over blocks of
columns, carries in arrays over the block. Each column computes what the per-column loop
computes, in the same order: the results are bitwise those of the per-column form (the same
program on vertical-contiguous fields) and of a NumPy reference doing the same operations."""

from __future__ import annotations

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.backends.cpp.codegen import SCAN_BLOCK

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
F3 = Field[Dims[I, J, K], float64]


@gtx.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def forward(
    state: tuple[float, float], a: float, b: float, c: float, d: float
) -> tuple[float, float]:
    cp_prev, dp_prev = state
    denom = b - a * cp_prev
    return c / denom, (d - a * dp_prev) / denom


@gtx.scan_operator(axis=K, forward=False, init=0.5)
def backward(x_next: float, cp: float, dp: float) -> float:
    return dp - cp * x_next


# a strict sub-range in I (two blocks of SCAN_BLOCK = 64, the second partial), J and K
DOM = {I: (3, 76), J: (1, 4), K: (1, 11)}
SHAPE = (81, 6, 12)


@gtx.program(backend=gtx.cpu)
def solve(a: F3, b: F3, c: F3, d: F3, cp: F3, dp: F3, x: F3):
    forward(a, b, c, d, out=(cp, dp), domain={I: (3, 76), J: (1, 4), K: (1, 11)})
    backward(cp, dp, out=x, domain={I: (3, 76), J: (1, 4), K: (1, 11)})


def _reference(a, b, c, d, cp, dp, x):  # type: ignore[no-untyped-def]
    """The same operations as the scans, in NumPy, on copies of the outputs."""
    cp, dp, x = cp.copy(), dp.copy(), x.copy()
    (i0, i1), (j0, j1), (k0, k1) = DOM[I], DOM[J], DOM[K]
    s = np.s_[i0:i1, j0:j1]
    cpv, dpv = np.zeros((i1 - i0, j1 - j0)), np.zeros((i1 - i0, j1 - j0))
    for k in range(k0, k1):
        denom = b[(*s, k)] - a[(*s, k)] * cpv
        cpv, dpv = c[(*s, k)] / denom, (d[(*s, k)] - a[(*s, k)] * dpv) / denom
        cp[(*s, k)], dp[(*s, k)] = cpv, dpv
    xv = np.full((i1 - i0, j1 - j0), 0.5)
    for k in reversed(range(k0, k1)):
        xv = dp[(*s, k)] - cp[(*s, k)] * xv
        x[(*s, k)] = xv
    return cp, dp, x


def _run(
    layout: str, ins: list[np.ndarray], outs: list[np.ndarray]
) -> tuple[list[np.ndarray], str]:
    fi = [gtx.as_field([I, J, K], v, layout=layout) for v in ins]
    fo = [gtx.as_field([I, J, K], v, layout=layout) for v in outs]
    stages = solve.inspect(*fi, *fo, offset_provider={})
    assert stages.source is not None
    solve(*fi, *fo, offset_provider={})
    return [f.asnumpy() for f in fo], stages.source.as_text()


def test_horizontal_contiguous_scan_is_blocked_and_bitwise_the_per_column_result(rng) -> None:
    assert SCAN_BLOCK == 64 and DOM[I][0] + SCAN_BLOCK < DOM[I][1] < DOM[I][0] + 2 * SCAN_BLOCK
    a = rng.uniform(-1, 0, SHAPE)
    c = rng.uniform(-1, 0, SHAPE)
    b = 4.0 + rng.random(SHAPE)
    d = rng.standard_normal(SHAPE)
    outs = [rng.standard_normal(SHAPE) for _ in range(3)]  # untouched parts must stay these
    blocked, src_h = _run("horizontal-contiguous", [a, b, c, d], outs)
    per_column, src_v = _run("vertical-contiguous", [a, b, c, d], outs)
    # the new form for I-contiguous fields, forward (tuple carry) and backward; the old one for
    # K-contiguous fields
    assert src_h.count(f"_a[{SCAN_BLOCK}];") == 3 and src_h.count("for (sk_idx b_I = 0;") == 2
    assert "for (sk_idx i_K = K_hi1 - 1; i_K >= K_lo1; --i_K)" in src_h
    assert f"_a[{SCAN_BLOCK}];" not in src_v
    expected = _reference(a, b, c, d, *outs)
    for got, col, want in zip(blocked, per_column, expected):
        assert np.array_equal(got, want)  # the untouched part included: it is the original
        assert np.array_equal(got, col)
    (i0, i1), (j0, j1), (k0, k1) = DOM[I], DOM[J], DOM[K]
    inside = np.zeros(SHAPE, bool)
    inside[i0:i1, j0:j1, k0:k1] = True
    for got, orig in zip(blocked, outs):
        assert np.array_equal(got[~inside], orig[~inside])
        assert not np.array_equal(got[inside], orig[inside])
