"""The staged pipeline (stencilkit.stages): every caller goes bind -> lower -> plan -> generate ->
build -> load -> tune, each stage a frozen, printable artefact; lowering happens in one place."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32, neighbor_sum, stages
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cpp import CppTarget
from stencilkit.backends.cuda import CudaTarget
from stencilkit.core.device import DeviceType
from stencilkit.fields.signature import FieldSignature
from stencilkit.stages import pipeline
from stencilkit.stages.interface import interface_of

I, J = gtx.Dimension("I"), gtx.Dimension("J")
Edge, Cell = gtx.Dimension("Edge"), gtx.Dimension("Cell")
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))


@gtx.field_operator
def smooth(a: Field[Dims[I, J], float64], w: float64) -> Field[Dims[I, J], float64]:
    return w * a + 0.25 * (a(I + 1) + a(I - 1))


@gtx.field_operator
def twice(a: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    return 2.0 * a


def _program(backend: object) -> gtx.Program:
    @gtx.program(backend=backend)
    def run(
        a: Field[Dims[I, J], float64],
        w: float64,
        tmp: Field[Dims[I, J], float64],
        out: Field[Dims[I, J], float64],
    ):
        smooth(a, w, out=tmp, domain={I: (1, 7), J: (0, 5)})
        twice(tmp, out=out, domain={I: (1, 7), J: (0, 5)})

    return run


@gtx.field_operator
def edge_sum(c: Field[Dims[Cell], float64]) -> Field[Dims[Edge], float64]:
    return neighbor_sum(c(E2C), axis=E2CDim)


@gtx.program(backend=gtx.cpu)
def run_edge_sum(c: Field[Dims[Cell], float64], out: Field[Dims[Edge], float64]):
    edge_sum(c, out=out)


def _args(rng: np.random.Generator) -> list[object]:
    return [
        gtx.as_field([I, J], rng.standard_normal((8, 5))),
        0.5,
        gtx.as_field([I, J], rng.standard_normal((8, 5))),
        gtx.as_field([I, J], rng.standard_normal((8, 5))),
    ]


def _expected(args: list[object]) -> np.ndarray:
    a = args[0].asnumpy()  # type: ignore[attr-defined]
    return 2.0 * (0.5 * a[1:7] + 0.25 * (a[2:8] + a[0:6]))


# ------------------------------------------------------------------------------ the artefacts
def test_every_stage_is_a_frozen_printable_artefact(rng) -> None:
    run = _program(gtx.cpu)
    args = _args(rng)
    st = run.inspect(*args, offset_provider={})
    for artefact in (st.bound, st.lowered, st.planned, st.source, st.built, st.launches):
        assert dataclasses.is_dataclass(artefact)
        name = dataclasses.fields(artefact)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(artefact, name, None)
        assert isinstance(artefact.as_text(), str) and artefact.as_text()  # type: ignore[union-attr]
    bound = st.bound.as_text()
    assert "a: float64[I: 8 (stride 5, origin 0), J: 5 (stride 1, origin 0)] on CPU:0" in bound
    assert "w = 0.5 (float64)" in bound
    lowered = st.lowered.as_text()
    assert "kernel smooth over [I, J]" in lowered and "-- after fusion --" in lowered
    assert "kernel smooth+twice" in str(st.lowered.fused)
    plan = st.planned.as_text()
    assert "kernel smooth+twice over {I: [1, 7), J: [0, 5)} writes tmp, out" in plan
    assert "indices fit 32 bits" in plan and "scalar w: float64" in plan
    assert st.source is not None and 'extern "C" int sk_program' in st.source.as_text()
    assert st.built is not None and st.built.path.is_dir() and "program.so" in st.built.as_text()
    assert (
        st.launches is not None
        and st.launches.kernels == ()
        and "nothing to tune" in st.launches.as_text()
    )
    text = st.as_text()
    for name in ("program", "bind", "lower", "plan", "generate", "build", "tune"):
        assert f"== {name} ==" in text
    # the inspected stages are the plan the next call uses: it runs without another build
    run(*args, offset_provider={})
    np.testing.assert_allclose(args[3].asnumpy()[1:7], _expected(args), rtol=1e-14)  # type: ignore[attr-defined]
    assert next(iter(run._runner.plans.values())).stages is st


def test_bound_names_each_table_with_its_signature(rng) -> None:
    table = gtx.as_connectivity(
        [Edge, E2CDim], Cell, np.array([[0, 1], [1, 2], [2, -1]], dtype=np.int32), skip_value=-1
    )
    c = gtx.as_field([Cell], rng.standard_normal(3))
    out = gtx.as_field([Edge], rng.standard_normal(3))
    st = run_edge_sum.inspect(c, out, offset_provider={"E2C": table})
    assert (
        "offset E2C: table int32[Edge: 3 (stride 2, origin 0), E2C: 2 (stride 1, origin 0)]"
        in st.bound.as_text()
    )
    assert "2 neighbours, skip values" in st.bound.as_text()
    assert "table E2C: int32" in st.planned.as_text()
    run_edge_sum(c, out, offset_provider={"E2C": table})
    cd = c.asnumpy()
    np.testing.assert_allclose(out.asnumpy(), [cd[0] + cd[1], cd[1] + cd[2], cd[2]], rtol=1e-14)


def test_embedded_stops_after_plan_and_evaluates_the_unfused_kernels(rng) -> None:
    run = _program(None)
    args = _args(rng)
    st = run.inspect(*args, offset_provider={})
    assert st.source is None and st.built is None and st.launches is None
    assert st.planned.target == "embedded" and st.planned.sprog is st.lowered.stencil
    assert [k.name for k in st.planned.sprog.kernels] == ["smooth", "twice"]
    run(*args, offset_provider={})
    np.testing.assert_allclose(args[3].asnumpy()[1:7], _expected(args), rtol=1e-14)  # type: ignore[attr-defined]


def test_field_signature_is_typed_and_interned(rng) -> None:
    data = rng.standard_normal((6, 4))
    f = gtx.as_field(gtx.domain({I: (-2, 4), J: (0, 4)}), data)
    sig = f.signature
    assert sig == FieldSignature(("I", "J"), "float64", (6, 4), (4, 1), (-2, 0), DeviceType.CPU, 0)
    assert sig.axis("J") == 1 and sig.stride_of("I") == 4 and not sig.on_gpu
    assert sig.span() == (0, 24 * 8)
    assert (
        sig.as_text() == "float64[I: 6 (stride 4, origin -2), J: 4 (stride 1, origin 0)] on CPU:0"
    )
    g = gtx.as_field(gtx.domain({I: (-2, 4), J: (0, 4)}), rng.standard_normal((6, 4)))
    assert (
        g.signature_key == f.signature_key
        and gtx.as_field([I, J], data).signature_key != f.signature_key
    )
    from stencilkit.fields import Field as FieldObject

    view = FieldObject(
        gtx.domain({I: 6, J: 4}), data[::-1]
    )  # negative strides: memory below the pointer
    assert view.signature.strides == (-4, 1) and view.signature.span() == (-20 * 8, 4 * 8)


# ------------------------------------------------------------------------------ one lowering
def test_every_caller_shares_one_lowering(rng, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = pipeline.lower_program

    def counting(program, infos):  # type: ignore[no-untyped-def]
        calls.append(program.name)
        return real(program, infos)

    monkeypatch.setattr(pipeline, "lower_program", counting)
    embedded = _program(None)
    compiled = embedded.with_backend(gtx.cpu)  # the same program IR
    args = _args(rng)
    embedded(*args, offset_provider={})
    compiled(*args, offset_provider={})
    compiled.compile(*args, offset_provider={})
    embedded.inspect(*args, offset_provider={})
    assert calls == ["run"]
    # direct calls: the result domain of a call without out= is found from the lowered operator
    # (one program), then the call runs (another): each lowered once, not on every call
    a = gtx.as_field([I, J], rng.standard_normal((8, 5)))
    r1 = smooth.returning(a, 0.5, offset_provider={})
    assert calls.count("smooth") == 2
    r2 = smooth.returning(a, 0.25, offset_provider={})
    assert calls.count("smooth") == 2
    ad = a.asnumpy()
    np.testing.assert_allclose(r1.asnumpy(), 0.5 * ad[1:7] + 0.25 * (ad[2:8] + ad[0:6]), rtol=1e-14)
    np.testing.assert_allclose(
        r2.asnumpy(), 0.25 * ad[1:7] + 0.25 * (ad[2:8] + ad[0:6]), rtol=1e-14
    )


def test_lowering_is_cached_per_table_shape() -> None:
    from stencilkit.ir.lower import TableInfo

    program = run_edge_sum.definition
    two = stages.lower(program, {"E2C": TableInfo(2, True)})
    assert stages.lower(program, {"E2C": TableInfo(2, True)}) is two
    three = stages.lower(program, {"E2C": TableInfo(3, False)})
    assert three is not two and "3" in three.as_text()


# ------------------------------------------------------------------------------ the compiled runner
def test_compile_runs_every_stage_before_the_first_call(rng) -> None:
    run = _program(gtx.cpu)
    args = _args(rng)
    before = args[3].asnumpy().copy()  # type: ignore[attr-defined]
    assert run.compile(*args, offset_provider={}) is run
    (plan,) = run._runner.plans.values()
    assert plan.launches is not None and plan.stages.launches is plan.launches  # tuned already
    np.testing.assert_array_equal(args[3].asnumpy(), before)  # type: ignore[attr-defined]  # nothing ran
    run(*args, offset_provider={})
    assert len(run._runner.plans) == 1
    np.testing.assert_allclose(args[3].asnumpy()[1:7], _expected(args), rtol=1e-14)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "backend",
    [None, gtx.cpu, pytest.param(gtx.gpu, marks=pytest.mark.gpu)],
    ids=["embedded", "cpu", "gpu"],
)
def test_compile_from_domains_makes_the_plan_calls_use(rng, backend) -> None:
    """``compile`` given domains instead of fields: the plan is made for fields the backend
    allocates over them, and a call with such fields runs without planning again."""
    run = _program(backend)
    dom = {I: 8, J: 5}
    run.compile(dom, 0.5, gtx.domain(dom), dom, offset_provider={})
    assert len(run._runner.plans) == 1
    args: list[object] = [gtx.empty(dom, gtx.float64, allocator=backend) for _ in range(3)]
    for f in args:
        f.ndarray[...] = f.xp.asarray(rng.standard_normal((8, 5)))  # type: ignore[attr-defined]
    args.insert(1, 0.5)
    untouched = args[3].asnumpy()[[0, 7]].copy()  # type: ignore[attr-defined]
    run(*args, offset_provider={})
    assert len(run._runner.plans) == 1
    np.testing.assert_allclose(args[3].asnumpy()[1:7], _expected(args), rtol=1e-14)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(args[3].asnumpy()[[0, 7]], untouched)  # type: ignore[attr-defined]


def test_a_kept_plan_does_not_keep_the_fields_alive(rng) -> None:
    import gc
    import weakref

    run = _program(gtx.cpu)
    args = _args(rng)
    run.compile(*args, offset_provider={})
    buffers = [weakref.ref(a.ndarray) for a in args if hasattr(a, "ndarray")]  # type: ignore[attr-defined]
    (plan,) = run._runner.plans.values()
    assert plan.stages.bound.fields == {} and "a: float64[I: 8" in plan.stages.bound.as_text()
    del args
    gc.collect()
    assert all(b() is None for b in buffers)


def test_embedded_compile_checks_and_keeps_the_plan(rng) -> None:
    run = _program(None)
    args = _args(rng)
    run.compile(*args, offset_provider={})
    assert len(run._runner.plans) == 1
    run(*args, offset_provider={})
    assert len(run._runner.plans) == 1
    np.testing.assert_allclose(args[3].asnumpy()[1:7], _expected(args), rtol=1e-14)  # type: ignore[attr-defined]
    bad = [
        *args[:3],
        gtx.as_field([I, J], rng.standard_normal((6, 5))),
    ]  # out too small for the domain
    with pytest.raises(ValueError, match="lies outside the output 'out'"):
        run.compile(*bad, offset_provider={})


def test_the_stages_run_one_by_one(rng) -> None:
    program = _program(gtx.cpu).definition
    args = _args(rng)
    target = CppTarget()
    bound = stages.bind(program, args, {}, target)
    lowered = stages.lower(program, bound)
    planned = stages.plan(lowered, bound, target)
    source = stages.generate(planned, target)
    built = stages.build(source, target)
    loaded = stages.load(built, target)
    launches = stages.tune(loaded, planned, bound, target)
    block = stages.argument_block(planned, bound)
    assert planned.layout is not None and block.size == planned.layout.size
    loaded.bind(launches, block)()  # the per-call launch, on a block filled by hand
    np.testing.assert_allclose(args[3].asnumpy()[1:7], _expected(args), rtol=1e-14)  # type: ignore[attr-defined]
    assert stages.load(stages.build(stages.generate(planned, target), target), target) is loaded


def test_wrong_device_is_refused_at_bind(rng) -> None:
    """Host fields for the gpu backend: where a GPU is usable, the fields' device is the error;
    where none is (no CuPy, no driver, no device), that is said first, with what to install:
    the other hint (allocate on the backend's device) would only lead to the same missing GPU."""
    from stencilkit.core.cuda_probe import usable_cupy
    from stencilkit.core.errors import BackendUnavailableError

    program = _program(gtx.gpu).definition
    try:
        usable_cupy()
    except BackendUnavailableError:
        with pytest.raises(BackendUnavailableError, match=r"backend 'gpu' of \w+\(\) needs"):
            stages.bind(program, _args(rng), {}, CudaTarget(arch="90"))
        return
    with pytest.raises(
        TypeError, match="argument 'a' lives on the host, but backend 'gpu' runs on the GPU"
    ):
        stages.bind(program, _args(rng), {}, CudaTarget(arch="90"))


def test_cuda_stages_up_to_build_need_no_gpu(rng) -> None:
    """Bind, lower, plan, generate and build (NVRTC or nvcc) run on a machine without a GPU."""
    from stencilkit.toolchain.cuda import find_cuda_compiler

    try:
        find_cuda_compiler()
    except Exception as err:
        pytest.skip(f"no CUDA compiler: {err}")
    program = _program(gtx.gpu).definition
    runner = CompiledRunner(interface_of(program), CudaTarget(arch="90"))
    fortran = [
        gtx.as_field([I, J], np.asfortranarray(rng.standard_normal((8, 5))), copy=None)
        for _ in range(3)
    ]
    st = runner.stages(
        [fortran[0], 0.5, fortran[1], fortran[2]], {}, check_device=False, until="plan"
    )
    assert (
        st.planned.target == "gpu" and "memory order [J, I], unit stride I" in st.planned.as_text()
    )
    built = stages.build(stages.generate(st.planned, runner.target), runner.target)
    assert (built.path / "program.cubin").read_bytes()[:4] == b"\x7fELF"
    assert "__global__" in built.source.as_text() and built.source.language == "cuda"


def test_int_scalars_land_in_the_argument_block(rng) -> None:
    @gtx.field_operator
    def shift_by(a: Field[Dims[I], float64], n: int32) -> Field[Dims[I], float64]:
        return a * gtx.astype(n, float64)

    @gtx.program(backend=gtx.cpu)
    def run(a: Field[Dims[I], float64], n: int32, out: Field[Dims[I], float64]):
        shift_by(a, n, out=out)

    a = gtx.as_field([I], rng.standard_normal(6))
    out = gtx.as_field([I], rng.standard_normal(6))
    target = CppTarget()
    bound = stages.bind(run.definition, [a, np.int32(3), out], {}, target)
    planned = stages.plan(stages.lower(run.definition, bound), bound, target)
    block = stages.argument_block(planned, bound)
    assert planned.layout is not None and block[planned.layout.scalars[0].slot] == 3


# ------------------------------------------------------------------------------ GPU
@pytest.mark.gpu
def test_gpu_compile_tunes_on_scratch_outputs(rng) -> None:
    """Program.compile tunes (block search on a large domain) without writing the caller's
    output, and the first call then only launches."""
    import cupy as cp

    K = gtx.Dimension("K")

    @gtx.field_operator
    def lap(a: Field[Dims[I, J, K], float64]) -> Field[Dims[I, J, K], float64]:
        return -4.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)

    @gtx.program(backend=gtx.gpu)
    def run(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64]):
        lap(a, out=out, domain={I: (1, 95), J: (1, 95), K: (0, 64)})

    a = gtx.as_field([I, J, K], rng.standard_normal((96, 96, 64)), allocator=gtx.gpu)
    out = gtx.as_field([I, J, K], np.full((96, 96, 64), 7.0), allocator=gtx.gpu)
    run.compile(a, out, offset_provider={})
    cp.cuda.get_current_stream().synchronize()
    assert bool((out.ndarray == 7.0).all())  # tuning timed kernels on scratch memory
    (plan,) = run._runner.plans.values()
    assert plan.launches.kernels and "grid" in plan.launches.as_text()
    run(a, out, offset_provider={})
    ad = a.asnumpy()
    expected = -4.0 * ad[1:95, 1:95] + ad[2:, 1:95] + ad[:94, 1:95] + ad[1:95, 2:] + ad[1:95, :94]
    np.testing.assert_allclose(out.asnumpy()[1:95, 1:95], expected, rtol=1e-12, atol=1e-12)
    assert (out.asnumpy()[0] == 7.0).all()


# ------------------------------------------------------------------------------ the documentation
def test_architecture_doc_shows_the_real_stages(tmp_path) -> None:
    """docs/architecture.md walks one program through the stages with their printed output:
    run its code and compare every block."""
    import importlib.util
    import re
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "architecture.md").read_text()
    blocks = re.findall(r"```(\w+)\n(.*?)\n```", doc, flags=re.S)
    code = next(text for lang, text in blocks if lang == "python")
    path = tmp_path / "arch_walk.py"
    path.write_text(code + "\n")
    spec = importlib.util.spec_from_file_location("arch_walk", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    st = module.stages
    texts = [text for lang, text in blocks if lang in ("text", "cpp", "cuda")]
    assert str(st.program) in texts
    for artefact in (st.bound, st.lowered, st.planned, st.launches):
        assert artefact.as_text() in texts, artefact.as_text()
    source = st.source.as_text()
    assert source[source.index("typedef int64_t sk_idx;") :].rstrip() in texts
    built = next(t for t in texts if "program.so" in t)
    assert re.fullmatch(
        r"\$STENCILKIT_CACHE_DIR/../[0-9a-f]{64}/program\.so \((compiled now|found in the cache);"
        r" key [0-9a-f]{16}\.\.\.\)",
        built,
    )
    cuda = CudaTarget(arch="90")
    bound = stages.bind(
        module.smooth.definition,
        [module.a, 0.5, module.tmp, module.out],
        {},
        cuda,
        check_device=False,
    )
    kernel = stages.generate(
        stages.plan(stages.lower(module.smooth.definition, bound), bound, cuda), cuda
    ).text
    assert kernel[kernel.index('extern "C" __global__') :].rstrip() in texts
