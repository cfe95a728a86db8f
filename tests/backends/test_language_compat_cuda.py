"""The CUDA code of the gt4py.next language items compiles (NVRTC / nvcc, no GPU needed); the
generated C++ of the same programs is checked by running them on the cpu backend elsewhere."""

from __future__ import annotations

import numpy as np
import pytest
from test_cuda_build import compiler  # noqa: F401  (the NVRTC / nvcc fixture)

import stencilkit as gtx
from stencilkit import Dims, Field, float32, float64, int32
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda import CudaTarget
from stencilkit.core.staggered import flip_staggered
from stencilkit.experimental import as_offset
from stencilkit.next.builtins import arccosh, arcsinh, arctanh, gamma, neg
from stencilkit.stages.interface import interface_of

X = gtx.Dimension("X")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
XH = flip_staggered(X)
Zoff = gtx.FieldOffset("Zoff", source=Z, target=(Z,))
Cell = gtx.Dimension("Cell")
C2CDim = gtx.Dimension("C2CDim", kind=gtx.DimensionKind.LOCAL)
C2C = gtx.FieldOffset("C2C", source=Cell, target=(Cell, C2CDim))
FXZ = Field[Dims[X, Z], float64]
FXHZ = Field[Dims[XH, Z], float64]
CK = Field[Dims[Cell, Z], float64]


@gtx.field_operator
def language(
    a: FXZ, k: Field[Dims[X, Z], int32], f: FXHZ, s: Field[Dims[()], float64]
) -> tuple[FXZ, FXZ]:
    b32 = gtx.astype((a, a), float32)
    first = gamma(a) + arcsinh(a) + arccosh(a + 2.0) + arctanh(a * 0.1) + neg(a) * s
    return (
        first + a(as_offset(Zoff, k)) + f(X + 0.5) - f(X - 0.5) + float64("0.5"),
        gtx.astype(b32[0] + b32[1], float64) + a(X + 1, Z - 1),
    )


@gtx.field_operator
def lap(a: CK, w: Field[Dims[Cell, C2CDim], float64]) -> CK:
    return gtx.neighbor_sum(a(C2C) * w, axis=C2CDim) - a


@gtx.field_operator
def lap_lap(a: CK, w: Field[Dims[Cell, C2CDim], float64]) -> tuple[CK, CK]:
    return lap(lap(a, w), w), a(C2C)[C2CDim(1)] * w[C2CDim(0)]


@gtx.program
def run_language(
    a: FXZ, k: Field[Dims[X, Z], int32], f: FXHZ, s: Field[Dims[()], float64], o1: FXZ, o2: FXZ
):
    language(a, k, f, s, out=(o1, o2), domain={X: (1, 5), Z: (1, 4)})


@gtx.program
def run_lap_lap(a: CK, w: Field[Dims[Cell, C2CDim], float64], o1: CK, o2: CK):
    lap_lap(a, w, out=(o1, o2))


def _build(prog: gtx.Program, args: list[object], provider: dict[str, object]) -> str:
    runner = CompiledRunner(interface_of(prog.definition), CudaTarget(arch="90"))
    planned = runner.stages(list(args), provider, check_device=False, until="plan").planned
    entry = runner.target.build(runner.target.generate(planned))
    source = entry.source.text
    assert (entry.path / "program.cubin").read_bytes()[:4] == b"\x7fELF"  # type: ignore[attr-defined]
    return source


def test_language_items_compile(compiler: str) -> None:  # noqa: F811
    rng = np.random.default_rng(0)
    a = gtx.as_field([X, Z], rng.uniform(0.5, 2, (6, 5)))
    k = gtx.as_field([X, Z], np.zeros((6, 5), dtype=np.int32))
    f = gtx.as_field([XH, Z], rng.standard_normal((7, 5)))
    s = gtx.as_field([], np.array(2.0))
    o1, o2 = (gtx.as_field([X, Z], np.zeros((6, 5))) for _ in range(2))
    source = _build(run_language, [a, k, f, s, o1, o2], {})
    assert "tgamma(" in source and "asinh(" in source and "(sk_idx)(" in source


def test_nested_reductions_and_slot_selection_compile(compiler: str) -> None:  # noqa: F811
    rng = np.random.default_rng(1)
    c2c = rng.integers(0, 8, (8, 3)).astype(np.int32)
    a = gtx.as_field([Cell, Z], rng.standard_normal((8, 4)))
    w = gtx.as_field([Cell, C2CDim], rng.standard_normal((8, 3)))
    o1, o2 = (gtx.as_field([Cell, Z], np.zeros((8, 4))) for _ in range(2))
    table = gtx.as_connectivity([Cell, C2CDim], Cell, c2c, skip_value=-1)
    source = _build(run_lap_lap, [a, w, o1, o2], {"C2C": table})
    assert "n_C2CDim_1" in source  # the inner reduction has a loop variable of its own


def test_language_program_runs_on_cpu() -> None:
    rng = np.random.default_rng(2)
    ad = rng.uniform(0.5, 2, (6, 5))
    kd = rng.integers(-1, 2, (6, 5)).astype(np.int32)
    fd = rng.standard_normal((7, 5))
    outs = {}
    for backend in (None, gtx.cpu):
        o1, o2 = (gtx.as_field([X, Z], np.full((6, 5), 3.0)) for _ in range(2))
        run_language.with_backend(backend)(
            gtx.as_field([X, Z], ad),
            gtx.as_field([X, Z], kd),
            gtx.as_field([XH, Z], fd),
            gtx.as_field([], np.array(2.0)),
            o1,
            o2,
            offset_provider={},
        )
        outs[backend] = (o1.asnumpy(), o2.asnumpy())
    np.testing.assert_allclose(outs[None][0], outs[gtx.cpu][0], rtol=1e-13)
    np.testing.assert_allclose(outs[None][1], outs[gtx.cpu][1], rtol=1e-6)
    assert (outs[None][0][1:5, 1:4] != 3.0).all() and (outs[None][0][0] == 3.0).all()


@pytest.mark.gpu
def test_language_program_runs_on_gpu() -> None:
    rng = np.random.default_rng(3)
    ad = rng.uniform(0.5, 2, (6, 5))
    kd = rng.integers(-1, 2, (6, 5)).astype(np.int32)
    fd = rng.standard_normal((7, 5))
    outs = {}
    for backend, alloc in ((None, None), (gtx.gpu, gtx.gpu)):
        o1, o2 = (gtx.as_field([X, Z], np.full((6, 5), 3.0), allocator=alloc) for _ in range(2))
        run_language.with_backend(backend)(
            gtx.as_field([X, Z], ad, allocator=alloc),
            gtx.as_field([X, Z], kd, allocator=alloc),
            gtx.as_field([XH, Z], fd, allocator=alloc),
            gtx.as_field([], np.array(2.0), allocator=alloc),
            o1,
            o2,
            offset_provider={},
        )
        outs[backend] = (o1.asnumpy(), o2.asnumpy())
    np.testing.assert_allclose(outs[None][0], outs[gtx.gpu][0], rtol=1e-12)
    np.testing.assert_allclose(outs[None][1], outs[gtx.gpu][1], rtol=1e-6)
