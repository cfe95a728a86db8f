"""Users can stop at any stage and look: program IR, stencil IR, generated source, the cache."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda import CudaTarget
from stencilkit.stages.interface import interface_of

I, J = gtx.Dimension("I"), gtx.Dimension("J")


@gtx.field_operator
def smooth(a: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    return 0.5 * a + 0.25 * (a(I + 1) + a(I - 1))


def _program(backend: object) -> gtx.Program:
    @gtx.program(backend=backend)
    def run(a: Field[Dims[I, J], float64], out: Field[Dims[I, J], float64]):
        smooth(a, out=out, domain={I: (1, 7), J: (0, 5)})

    return run


def test_cpu_program_shows_every_stage_and_the_cache_keeps_them(rng) -> None:
    run = _program(gtx.cpu)
    a = gtx.as_field([I, J], rng.standard_normal((8, 5)))
    out = gtx.as_field([I, J], rng.standard_normal((8, 5)))
    stages = run.inspect(a, out, offset_provider={})
    assert str(stages.program) == run.ir_text and "smooth" in run.ir_text
    stencil_ir = stages.lowered.as_text()
    assert "kernel smooth over [I, J]" in stencil_ir
    assert "a[I+1, J]" in stencil_ir and "a[I-1, J]" in stencil_ir
    assert stages.source is not None and stages.built is not None
    source = stages.source.as_text()
    assert 'extern "C" int sk_program' in source and "#pragma omp" in source
    plan = next(iter(run._runner.plans.values()))
    assert plan.stages is stages
    entry = stages.built.path
    assert (entry / "program.cpp").read_text() == source
    assert (entry / "program.ir").read_text() == str(stages.planned.sprog)
    # inspecting built the program ahead of time: the call needs no build and gives the result
    run(a, out, offset_provider={})
    expected = 0.5 * a.asnumpy()[1:7] + 0.25 * (a.asnumpy()[2:8] + a.asnumpy()[0:6])
    np.testing.assert_allclose(out.asnumpy()[1:7], expected, rtol=1e-14)


def test_embedded_program_shows_its_ir() -> None:
    stages = _program(None).inspect(
        gtx.as_field([I, J], np.ones((8, 5)) * 3.0),
        gtx.as_field([I, J], np.ones((8, 5))),
        offset_provider={},
    )
    assert "program run(" in str(stages.program)
    assert stages.source is None and stages.planned.target == "embedded"
    assert "kernel smooth over {I: [1, 7), J: [0, 5)}" in stages.planned.as_text()


def test_cuda_source_is_inspectable_without_a_gpu(rng) -> None:
    run = _program(gtx.gpu)
    runner = CompiledRunner(interface_of(run.definition), CudaTarget(arch="90"))
    a = gtx.as_field([I, J], np.asfortranarray(rng.standard_normal((8, 5))), copy=None)
    out = gtx.as_field([I, J], np.asfortranarray(rng.standard_normal((8, 5))), copy=None)
    planned = runner.stages([a, out], {}, check_device=False, until="plan").planned
    source = runner.target.generate(planned).text
    assert 'extern "C" __global__ void sk_run_k0(const SkArgs args)' in source


def _gpu_here() -> bool:
    try:
        from stencilkit.core.cuda_probe import usable_cupy

        usable_cupy()
        return True
    except gtx.BackendUnavailableError:
        return False


@pytest.mark.parametrize("given", [{I: 8, J: 5}, (8, 5)], ids=["domain", "sizes"])
def test_the_gpu_source_is_read_from_domains_without_arrays(given: object, rng) -> None:
    run = _program(gtx.gpu)
    stages = run.inspect(given, given, offset_provider={}, until="generate")
    assert stages.source is not None and stages.built is None and stages.launches is None
    source = stages.source.as_text()
    assert 'extern "C" __global__ void sk_run_k0(const SkArgs args)' in source
    # the stand-in fields have the GPU's layout: the source is the one fields of that layout get
    runner = CompiledRunner(interface_of(run.definition), CudaTarget())
    a = gtx.as_field([I, J], np.asfortranarray(rng.standard_normal((8, 5))), copy=None)
    out = gtx.as_field([I, J], np.asfortranarray(rng.standard_normal((8, 5))), copy=None)
    planned = runner.stages([a, out], {}, check_device=False, until="plan").planned
    assert planned.spec == stages.planned.spec
    assert runner.target.generate(planned).text == source
    assert len(run._runner.plans) == 0  # nothing kept: no call can use a plan never built
    if not _gpu_here():  # the default: every stage this machine allows
        assert run.inspect(given, given, offset_provider={}).built is None


def test_cpu_stages_from_domains_are_built_and_kept(rng) -> None:
    run = _program(gtx.cpu)
    stages = run.inspect((8, 5), {I: 8, J: 5}, offset_provider={})
    assert stages.built is not None and "#pragma omp" in stages.source.as_text()
    assert next(iter(run._runner.plans.values())).stages is stages
    # a call with fields like the stand-ins runs on that plan and computes the right values
    a = gtx.as_field([I, J], rng.standard_normal((8, 5)))
    out = gtx.as_field([I, J], rng.standard_normal((8, 5)))
    before = out.asnumpy().copy()
    run(a, out, offset_provider={})
    assert len(run._runner.plans) == 1
    x = a.asnumpy()
    np.testing.assert_allclose(
        out.asnumpy()[1:7], 0.5 * x[1:7] + 0.25 * (x[2:8] + x[0:6]), rtol=1e-14
    )
    np.testing.assert_array_equal(out.asnumpy()[[0, 7]], before[[0, 7]])


def test_until_generate_builds_nothing_and_keeps_nothing() -> None:
    run = _program(gtx.cpu)
    stages = run.inspect({I: 8, J: 5}, {I: 8, J: 5}, offset_provider={}, until="generate")
    assert stages.source is not None and stages.built is None
    assert len(run._runner.plans) == 0
    plan_only = run.inspect({I: 8, J: 5}, {I: 8, J: 5}, offset_provider={}, until="plan")
    assert plan_only.source is None and plan_only.planned.layout is not None
    with pytest.raises(ValueError, match="until= is 'plan', 'generate' or 'tune'"):
        run.inspect({I: 8, J: 5}, {I: 8, J: 5}, offset_provider={}, until="build")


def test_embedded_stages_from_domains() -> None:
    stages = _program(None).inspect({I: 8, J: 5}, (8, 5), offset_provider={})
    assert stages.planned.target == "embedded" and stages.source is None
    assert "kernel smooth over {I: [1, 7), J: [0, 5)}" in stages.planned.as_text()


def test_compile_without_a_gpu_says_what_is_missing_and_points_to_inspect() -> None:
    if _gpu_here():
        pytest.skip("a GPU is usable here")
    with pytest.raises(gtx.BackendUnavailableError, match=r"run\.compile\(\)") as err:
        _program(gtx.gpu).compile({I: 8, J: 5}, {I: 8, J: 5}, offset_provider={})
    assert "prog.inspect(domains" in str(err.value)


def test_sizes_of_the_wrong_rank_are_refused() -> None:
    with pytest.raises(gtx.StencilTypeError, match="argument 'a'"):
        _program(gtx.cpu).inspect((8,), (8, 5), offset_provider={})
