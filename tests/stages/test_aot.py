"""Ahead-of-time compilation: many programs in parallel, errors reported per program."""

from __future__ import annotations

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.aot import CompileJob, compile_programs

I = gtx.Dimension("I")


def _make(scale: float) -> gtx.Program:
    @gtx.field_operator
    def op(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
        return a * scale + a(I + 1)

    @gtx.program(backend=gtx.cpu)
    def run(a: Field[Dims[I], float64], out: Field[Dims[I], float64]):
        op(a, out=out, domain={I: (0, 9)})

    return run


def test_compile_many_in_parallel_then_call_without_building(rng, tmp_path, monkeypatch) -> None:
    from stencilkit.toolchain.config import reset_config

    # a cache of its own: with one an earlier run filled, the programs would be loaded, not built
    monkeypatch.setenv("STENCILKIT_CACHE_DIR", str(tmp_path / "cache"))
    reset_config()
    progs = [_make(float(s)) for s in range(4)]
    a = gtx.as_field([I], rng.standard_normal(10))
    out = gtx.as_field([I], rng.standard_normal(10))
    reports = compile_programs(
        [CompileJob(p, (a, out)) for p in progs], max_workers=2, progress=False
    )
    assert [r.error for r in reports] == [None] * 4
    for s, p in enumerate(progs):
        plan = next(iter(p._runner.plans.values()))
        assert plan.stages.built.built  # each distinct program was built once, ahead of time
        p(a, out, offset_provider={})
        np.testing.assert_allclose(
            out.asnumpy()[:9], a.asnumpy()[:9] * s + a.asnumpy()[1:], rtol=1e-14
        )
    monkeypatch.undo()
    reset_config()


def test_errors_are_reported_per_program(rng) -> None:
    good = _make(1.0)
    short = gtx.as_field([I], rng.standard_normal(5))  # too short for the domain
    a = gtx.as_field([I], rng.standard_normal(10))
    out = gtx.as_field([I], rng.standard_normal(10))
    reports = compile_programs([(good, (a, out)), (good, (short, out))], progress=True)
    assert reports[0].error is None
    assert isinstance(reports[1].error, ValueError) and "defined only on 0:5" in str(
        reports[1].error
    )
