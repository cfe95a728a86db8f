"""Kernel fusion: IR in -> IR out, and fused programs give the unfused results."""

from __future__ import annotations

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.ir.fuse import fuse_kernels
from stencilkit.ir.lower import lower_program

I, J = gtx.Dimension("I"), gtx.Dimension("J")
DOM = {I: (1, 7), J: (1, 5)}


@gtx.field_operator
def grad(a: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    return a(I + 1) - a(I - 1)


@gtx.field_operator
def scale(t: Field[Dims[I, J], float64], s: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    return t * s + 1.0


@gtx.field_operator
def smooth(t: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    return t(J + 1) + t(J - 1)


def _programs(backend: object) -> tuple[gtx.Program, gtx.Program]:
    @gtx.program(backend=backend)
    def pointwise_chain(a: Field[Dims[I, J], float64], s: Field[Dims[I, J], float64],
                        tmp: Field[Dims[I, J], float64], out: Field[Dims[I, J], float64]):
        grad(a, out=tmp, domain={I: (1, 7), J: (1, 5)})
        scale(tmp, s, out=out, domain={I: (1, 7), J: (1, 5)})

    @gtx.program(backend=backend)
    def shifted_chain(a: Field[Dims[I, J], float64], s: Field[Dims[I, J], float64],
                      tmp: Field[Dims[I, J], float64], out: Field[Dims[I, J], float64]):
        grad(a, out=tmp, domain={I: (1, 7), J: (0, 6)})
        smooth(tmp, out=out, domain={I: (1, 7), J: (1, 5)})

    return pointwise_chain, shifted_chain


def test_pointwise_consumer_is_fused_and_reads_no_intermediate() -> None:
    pointwise, _ = _programs(None)
    fused = fuse_kernels(lower_program(pointwise.definition, {}))
    (k,) = fused.kernels
    assert k.outs == ("tmp", "out")
    assert str(k.values[1]) == "(((a[I+1, J] - a[I-1, J]) * s[I, J]) + float64(1.0))"


def test_shifted_consumer_is_not_fused() -> None:
    _, shifted = _programs(None)
    assert len(fuse_kernels(lower_program(shifted.definition, {})).kernels) == 2


def test_fused_results_match_numpy(case, rng) -> None:
    for prog in _programs(case.backend):
        ad, sd = rng.standard_normal((8, 6)), rng.standard_normal((8, 6))
        td, od = rng.standard_normal((8, 6)), rng.standard_normal((8, 6))
        tmp, out = case.field([I, J], td), case.field([I, J], od)
        prog(case.field([I, J], ad), case.field([I, J], sd), tmp, out, offset_provider={})
        g = np.full((8, 6), np.nan)
        g[1:7] = ad[2:] - ad[:-2]
        exp_t, exp_o = td.copy(), od.copy()
        if prog.__name__ == "pointwise_chain":
            exp_t[1:7, 1:5] = g[1:7, 1:5]
            exp_o[1:7, 1:5] = g[1:7, 1:5] * sd[1:7, 1:5] + 1.0
        else:
            exp_t[1:7, 0:6] = g[1:7, 0:6]
            exp_o[1:7, 1:5] = g[1:7, 2:6] + g[1:7, 0:4]
        np.testing.assert_allclose(tmp.asnumpy(), exp_t, rtol=1e-14)
        np.testing.assert_allclose(out.asnumpy(), exp_o, rtol=1e-14)
