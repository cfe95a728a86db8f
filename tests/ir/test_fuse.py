"""Kernel fusion: IR in -> IR out, and fused programs give the unfused results."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.ir.fuse import can_fuse, fuse_kernels
from stencilkit.ir.lower import lower_program

I, J = gtx.Dimension("I"), gtx.Dimension("J")
DOM = {I: (1, 7), J: (1, 5)}


@gtx.field_operator
def grad(a: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    return a(I + 1) - a(I - 1)


@gtx.field_operator
def scale(
    t: Field[Dims[I, J], float64], s: Field[Dims[I, J], float64]
) -> Field[Dims[I, J], float64]:
    return t * s + 1.0


@gtx.field_operator
def smooth(t: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    return t(J + 1) + t(J - 1)


def _programs(backend: object) -> tuple[gtx.Program, gtx.Program]:
    @gtx.program(backend=backend)
    def pointwise_chain(
        a: Field[Dims[I, J], float64],
        s: Field[Dims[I, J], float64],
        tmp: Field[Dims[I, J], float64],
        out: Field[Dims[I, J], float64],
    ):
        grad(a, out=tmp, domain={I: (1, 7), J: (1, 5)})
        scale(tmp, s, out=out, domain={I: (1, 7), J: (1, 5)})

    @gtx.program(backend=backend)
    def shifted_chain(
        a: Field[Dims[I, J], float64],
        s: Field[Dims[I, J], float64],
        tmp: Field[Dims[I, J], float64],
        out: Field[Dims[I, J], float64],
    ):
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


# ---------------------------------------------------------------- IR in -> IR out, rule by rule
F = Field[Dims[I, J], float64]


@gtx.field_operator
def twice(t: F) -> F:
    return 2.0 * t


@gtx.scan_operator(axis=J, forward=True, init=0.0)
def running(carry: float, t: float) -> float:
    return carry + t


@gtx.program
def p_chain_of_three(a: F, s: F, t1: F, t2: F, out: F):
    grad(a, out=t1, domain={I: (1, 7), J: (1, 5)})
    scale(t1, s, out=t2, domain={I: (1, 7), J: (1, 5)})
    twice(t2, out=out, domain={I: (1, 7), J: (1, 5)})


@gtx.program
def p_other_domain(a: F, s: F, t: F, out: F):
    grad(a, out=t, domain={I: (1, 7), J: (1, 5)})
    scale(t, s, out=out, domain={I: (1, 7), J: (2, 5)})


@gtx.program
def p_whole_domain(a: F, s: F, t: F, out: F):
    twice(a, out=t)
    scale(t, s, out=out)


@gtx.program
def p_writes_what_first_reads(a: F, s: F, t: F):
    grad(a, out=t, domain={I: (1, 7), J: (1, 5)})
    scale(t, t, out=a, domain={I: (1, 7), J: (1, 5)})


@gtx.program
def p_same_output_twice(a: F, s: F, out: F):
    twice(a, out=out, domain={I: (1, 7), J: (1, 5)})
    twice(s, out=out, domain={I: (1, 7), J: (1, 5)})


@gtx.program
def p_scan_after(a: F, t: F, out: F):
    twice(a, out=t, domain={I: (1, 7), J: (1, 5)})
    running(t, out=out, domain={I: (1, 7), J: (1, 5)})


# name: (program, the stencil-level text after fuse_kernels)
FUSION: dict[str, tuple[object, str]] = {
    "a chain of point-wise consumers becomes one kernel": (
        p_chain_of_three,
        """\
stencil_program p_chain_of_three(a: Field[[I, J], float64], s: Field[[I, J], float64], t1: Field[[I, J], float64], t2: Field[[I, J], float64], out: Field[[I, J], float64]) {
  kernel grad+scale+twice over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    let t0 = (a[I+1, J] - a[I-1, J])
    let t1 = ((t0 * s[I, J]) + float64(1.0))
    t1 = t0
    t2 = t1
    out = (float64(2.0) * t1)
  }
}""",
    ),
    "different domains are not fused": (
        p_other_domain,
        """\
stencil_program p_other_domain(a: Field[[I, J], float64], s: Field[[I, J], float64], t: Field[[I, J], float64], out: Field[[I, J], float64]) {
  kernel grad over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    t = (a[I+1, J] - a[I-1, J])
  }
  kernel scale over [I, J] @ {I: int64(1):int64(7), J: int64(2):int64(5)} {
    out = ((t[I, J] * s[I, J]) + float64(1.0))
  }
}""",
    ),
    "whole-domain kernels are not fused (their domains differ by field)": (
        p_whole_domain,
        """\
stencil_program p_whole_domain(a: Field[[I, J], float64], s: Field[[I, J], float64], t: Field[[I, J], float64], out: Field[[I, J], float64]) {
  kernel twice over [I, J] @ {out} {
    t = (float64(2.0) * a[I, J])
  }
  kernel scale over [I, J] @ {out} {
    out = ((t[I, J] * s[I, J]) + float64(1.0))
  }
}""",
    ),
    "a kernel writing what the first one reads is not fused": (
        p_writes_what_first_reads,
        """\
stencil_program p_writes_what_first_reads(a: Field[[I, J], float64], s: Field[[I, J], float64], t: Field[[I, J], float64]) {
  kernel grad over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    t = (a[I+1, J] - a[I-1, J])
  }
  kernel scale over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    a = ((t[I, J] * t[I, J]) + float64(1.0))
  }
}""",
    ),
    "two kernels writing one field are not fused": (
        p_same_output_twice,
        """\
stencil_program p_same_output_twice(a: Field[[I, J], float64], s: Field[[I, J], float64], out: Field[[I, J], float64]) {
  kernel twice over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    out = (float64(2.0) * a[I, J])
  }
  kernel twice over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    out = (float64(2.0) * s[I, J])
  }
}""",
    ),
    "a scan is never fused": (
        p_scan_after,
        """\
stencil_program p_scan_after(a: Field[[I, J], float64], t: Field[[I, J], float64], out: Field[[I, J], float64]) {
  kernel twice over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} {
    t = (float64(2.0) * a[I, J])
  }
  kernel running over [I, J] @ {I: int64(1):int64(7), J: int64(1):int64(5)} scan[J, forward](running_carry___c = float64(0.0)) {
    out = (running_carry___c + t[I, J])
  }
}""",
    ),
}


@pytest.mark.parametrize("name", list(FUSION))
def test_fusion_as_text(name: str) -> None:
    prog, expected = FUSION[name]
    assert str(fuse_kernels(lower_program(prog.definition, {}))) == expected  # type: ignore[attr-defined]


def test_fusion_keeps_an_unfusable_program_as_it_is() -> None:
    lowered = lower_program(p_other_domain.definition, {})
    assert fuse_kernels(lowered) == lowered


def test_can_fuse_is_the_rule_fuse_kernels_applies() -> None:
    for prog, expected in FUSION.values():
        kernels = lower_program(prog.definition, {}).kernels  # type: ignore[attr-defined]
        fused = [can_fuse(a, b) for a, b in itertools.pairwise(kernels)]
        assert len(kernels) - sum(fused) == expected.count("  kernel ")
