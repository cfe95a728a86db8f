"""CUDA code generation and compilation, without a GPU (NVRTC and nvcc run on any machine)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float32, float64
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda import CudaTarget
from stencilkit.core.errors import BuildError
from stencilkit.experimental import as_offset
from stencilkit.stages.interface import interface_of
from stencilkit.toolchain import cuda as cuda_toolchain
from stencilkit.toolchain.config import reset_config

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


@gtx.field_operator
def lap(a: Field[Dims[I, J, K], float64]) -> Field[Dims[I, J, K], float64]:
    return -4.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)


@gtx.program
def run_lap(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64]):
    lap(a, out=out, domain={I: (1, 7), J: (1, 5), K: (0, 3)})


@gtx.field_operator
def mixed(a: Field[Dims[I, J], float32], s: float32) -> Field[Dims[I, J], float32]:
    b = gtx.where(a > s, gtx.sqrt(gtx.abs(a)), gtx.exp(a) // 2.0)
    return gtx.maximum(b, a(J + 1)) % 3.0 + gtx.astype(gtx.astype(a, gtx.int32) % 4, float32)


@gtx.program
def run_mixed(a: Field[Dims[I, J], float32], s: float32, out: Field[Dims[I, J], float32]):
    mixed(a, s, out=out, domain={I: (0, 8), J: (0, 5)})


def _fortran(shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
    return np.asfortranarray(np.random.default_rng(0).standard_normal(shape).astype(dtype))


def _build(prog: gtx.Program, args: list[object], arch: str = "90") -> tuple[str, object]:
    runner = CompiledRunner(interface_of(prog.definition), CudaTarget(arch=arch))
    planned = runner.stages(list(args), {}, check_device=False, until="plan").planned
    entry = runner.target.build(runner.target.generate(planned))
    source = entry.source.text
    return source, entry


COMPILERS = [
    pytest.param("nvrtc", marks=pytest.mark.nvrtc),
    pytest.param(
        "nvcc",
        marks=pytest.mark.skipif(
            shutil.which("nvcc") is None and not shutil.os.path.exists("/usr/local/cuda/bin/nvcc"),  # type: ignore[attr-defined]
            reason="nvcc not installed",
        ),
    ),
]


@pytest.fixture(params=COMPILERS)
def compiler(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("STENCILKIT_CUDA_COMPILER", request.param)
    reset_config()
    cuda_toolchain.find_cuda_compiler.cache_clear()
    yield request.param
    reset_config()
    cuda_toolchain.find_cuda_compiler.cache_clear()


@pytest.mark.parametrize("arch", ["80", "90"])
def test_laplacian_compiles_to_cubin(compiler: str, arch: str) -> None:
    a = gtx.as_field([I, J, K], _fortran((8, 6, 3)), copy=None)
    out = gtx.as_field([I, J, K], _fortran((8, 6, 3)), copy=None)
    source, entry = _build(run_lap, [a, out], arch)
    cubin = (entry.path / "program.cubin").read_bytes()  # type: ignore[attr-defined]
    assert cubin[:4] == b"\x7fELF"
    assert b"sk_run_lap_k0" in cubin
    assert (entry.path / "program.cu").read_text() == source  # type: ignore[attr-defined]
    # I is unit-stride in this layout: the generated index uses no multiply along I.
    assert "a_b[(i_I + 1) + i_J * a_s1 + i_K * a_s2]" in source


def test_builtins_and_scalars_compile(compiler: str) -> None:
    a = gtx.as_field([I, J], _fortran((8, 6), np.float32), copy=None)
    out = gtx.as_field([I, J], _fortran((8, 6), np.float32), copy=None)
    source, entry = _build(run_mixed, [a, np.float32(0.5), out])
    assert (entry.path / "program.cubin").stat().st_size > 0  # type: ignore[attr-defined]
    assert "sk_floordiv<float>" in source and "sqrt(" in source


def test_cached_build_is_reused(compiler: str) -> None:
    a = gtx.as_field([I, J, K], _fortran((8, 6, 3)), copy=None)
    out = gtx.as_field([I, J, K], _fortran((8, 6, 3)), copy=None)
    _, first = _build(run_lap, [a, out])
    _, second = _build(run_lap, [a, out])
    assert first.path == second.path  # type: ignore[attr-defined]
    assert second.built is False  # type: ignore[attr-defined]


def test_failed_cuda_build_reports_command_log_and_source(compiler: str, tmp_path) -> None:
    with pytest.raises(BuildError) as info:
        cuda_toolchain.compile_cubin(
            "this is not CUDA;", "90", tmp_path, "broken", cuda_toolchain.find_cuda_compiler()
        )
    err = info.value
    assert err.stderr.strip()
    assert err.source_path.endswith("broken.cu")
    with open(err.source_path) as f:
        assert "this is not CUDA" in f.read()
    assert ("nvrtc" if compiler == "nvrtc" else "nvcc") in " ".join(err.command)


def test_chunked_variants_are_built_separately(compiler: str) -> None:
    """The z-chunked kernels are compiled only on request: small programs compile fast."""
    a = gtx.as_field([I, J, K], _fortran((8, 6, 3)), copy=None)
    out = gtx.as_field([I, J, K], _fortran((8, 6, 3)), copy=None)
    runner = CompiledRunner(interface_of(run_lap.definition), CudaTarget(arch="90"))
    planned = runner.stages([a, out], {}, check_device=False, until="plan").planned
    plain = runner.target.build(runner.target.generate(planned))
    variants = runner.target.build(runner.target.generate(planned, variants=True))
    plain_key, var_key, plain_source, var_source = (
        plain.key,
        variants.key,
        plain.source.text,
        variants.source.text,
    )
    assert plain_key != var_key
    assert b"sk_run_lap_k0_z8" not in (plain.path / "program.cubin").read_bytes()
    cubin = (variants.path / "program.cubin").read_bytes()
    for name in (
        b"sk_run_lap_k0",
        b"sk_run_lap_k0_z4",
        b"sk_run_lap_k0_z8",
        b"sk_run_lap_k0_z16",
        b"sk_run_lap_k0s",
        b"sk_run_lap_k0_z8s",
    ):
        assert name in cubin
    assert "__stcs(&out_b[" in var_source and "__stcs" not in plain_source


def test_variant_module_is_found_without_generating_its_source(
    compiler: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Whether the z-chunked variants are in the build cache is known from the plain module's
    key: the variants' source (thousands of lines for ICON's large programs, a second of
    Python) is generated only to compile it, and a cache hit reads it back."""
    monkeypatch.setenv("STENCILKIT_CACHE_DIR", str(tmp_path))  # an empty cache, also on reruns
    reset_config()
    try:
        _check_variant_module_lookup(monkeypatch)
    finally:
        monkeypatch.undo()
        reset_config()


def _check_variant_module_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    a = gtx.as_field([I, J, K], np.asfortranarray(rng.random((8, 6, 3))), copy=None)
    out = gtx.as_field([I, J, K], np.asfortranarray(rng.random((8, 6, 3))), copy=None)
    target = CudaTarget(arch="90")
    runner = CompiledRunner(interface_of(run_lap.definition), target)
    planned = runner.stages([a, out], {}, check_device=False, until="plan").planned
    plain = target.build(target.generate(planned))
    generated: list[bool] = []
    real = CudaTarget.generate

    def counting(
        self: CudaTarget, planned: object, variants: bool = False, ordered: bool = False
    ) -> object:
        generated.append(variants)
        return real(self, planned, variants, ordered)  # type: ignore[arg-type]

    monkeypatch.setattr(CudaTarget, "generate", counting)
    key = target.variant_key(plain, False)
    assert key != target.variant_key(plain, True) and key != plain.key
    assert generated == []
    first = target.build_variants(plain, False)
    assert generated == [True] and first.key == key and first.source.variants
    again = target.build_variants(plain, False)
    assert generated == [True] and again.built is False  # found, nothing generated
    assert again.source.text == first.source.text and "sk_run_lap_k0_z8" in again.source.text
    assert b"sk_run_lap_k0_z8" in (again.path / "program.cubin").read_bytes()


def test_nvrtc_leaves_shared_byte_objects_alone(compiler: str, tmp_path) -> None:
    """Regression: an empty NVRTC log (one NUL byte) was written into ``b" " * 1``, CPython's
    shared one-byte object, so every later ``" ".encode()`` gave a NUL and generated C++ broke."""
    src = 'extern "C" __global__ void k(double* a) { a[threadIdx.x] = 1.0; }'
    cuda_toolchain.compile_cubin(src, "90", tmp_path, "ok", cuda_toolchain.find_cuda_compiler())
    with pytest.raises(BuildError):
        cuda_toolchain.compile_cubin(
            "#error x\n", "90", tmp_path, "bad", cuda_toolchain.find_cuda_compiler()
        )
    if compiler == "nvrtc":  # the benchmark suite's own NVRTC check reads the (empty) log too
        import stencilkit_benchmarks as bench

        assert bench.nvrtc_compile(src, "90", "ok") is None
    # compare byte values: a corrupted shared object would also corrupt a b" " literal
    assert b" "[0] == 0x20
    assert (b" " * 1)[0] == 0x20


def _planned_spec(prog: gtx.Program, args: list[object], monkeypatch: pytest.MonkeyPatch) -> object:
    """The Specialization the plan stage gives the gpu target for ``args`` (host arrays stand in
    for GPU ones: nothing is compiled or launched)."""
    runner = CompiledRunner(interface_of(prog.definition), CudaTarget(arch="90"))
    return runner.stages(list(args), {}, check_device=False, until="plan").planned.spec


def test_index_width_follows_the_call(compiler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """32-bit index arithmetic where every index fits, 64-bit otherwise; both compile."""
    a = gtx.as_field([I, J, K], _fortran((8, 6, 3)), copy=None)
    out = gtx.as_field([I, J, K], _fortran((8, 6, 3)), copy=None)
    assert _planned_spec(run_lap, [a, out], monkeypatch).narrow_index is True  # type: ignore[attr-defined]
    # a field whose domain starts near 2**31: its indices no longer fit 32 bits
    far = 2**31 - 4
    dom = gtx.domain({I: (far, far + 8), J: (0, 6), K: (0, 3)})
    a_far, out_far = (
        gtx.as_field(dom, _fortran((8, 6, 3)), copy=None),
        gtx.as_field(dom, _fortran((8, 6, 3)), copy=None),
    )

    @gtx.program
    def run_far(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64]):
        lap(a, out=out, domain={I: (far + 1, far + 7), J: (1, 5), K: (0, 3)})

    assert _planned_spec(run_far, [a_far, out_far], monkeypatch).narrow_index is False  # type: ignore[attr-defined]

    runner = CompiledRunner(interface_of(run_lap.definition), CudaTarget(arch="90"))
    planned = runner.stages([a, out], {}, check_device=False, until="plan").planned
    narrow_plan = dataclasses.replace(
        planned, spec=dataclasses.replace(planned.spec, narrow_index=True)
    )
    wide_plan = dataclasses.replace(
        planned, spec=dataclasses.replace(planned.spec, narrow_index=False)
    )
    narrow, wide = (
        runner.target.build(runner.target.generate(p)) for p in (narrow_plan, wide_plan)
    )
    narrow_src, narrow_key, wide_src, wide_key = (
        narrow.source.text,
        narrow.key,
        wide.source.text,
        wide.key,
    )
    assert "typedef int32_t sk_idx;" in narrow_src and "typedef int64_t sk_idx;" in wide_src
    assert narrow_key != wide_key
    for entry in (narrow, wide):
        assert (entry.path / "program.cubin").read_bytes()[:4] == b"\x7fELF"


def test_fits_narrow_index_bounds() -> None:
    from stencilkit.core.device import DeviceType
    from stencilkit.fields.signature import FieldSignature
    from stencilkit.stages.abi import NARROW_INDEX_LIMIT, fits_narrow_index

    def sig(
        shape: tuple[int, ...], strides: tuple[int, ...], origin: tuple[int, ...]
    ) -> FieldSignature:
        return FieldSignature(("I", "K"), "float64", shape, strides, origin, DeviceType.CPU, 0)

    small = sig((512, 512), (1, 512), (0, 0))
    assert fits_narrow_index([small], [[range(1, 511), range(1, 511)]])
    # 2**31 elements reachable through the K stride
    assert not fits_narrow_index([small, sig((1024, 2**21), (1, 1024), (0, 0))], [])
    # negative strides and origins count by magnitude
    assert not fits_narrow_index([sig((2, 2), (1, -(2**31)), (0, 0))], [])
    assert not fits_narrow_index([sig((4, 4), (1, 4), (-(2**31), 0))], [])
    # a domain bound at the limit (threads index up to it)
    assert not fits_narrow_index([small], [[range(0, NARROW_INDEX_LIMIT)]])
    assert fits_narrow_index([small], [[range(0, NARROW_INDEX_LIMIT - 1)]])


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def running_sum(acc: float, x: float) -> float:
    return acc + x


@gtx.program
def run_running_sum(a: Field[Dims[I, J, K], float64], out: Field[Dims[I, J, K], float64]):
    running_sum(a, out=out)


def test_scan_compiles_with_its_level_loop_unrolled(compiler: str) -> None:
    from stencilkit.backends.cuda.codegen import SCAN_UNROLL

    a = gtx.as_field([I, J, K], _fortran((8, 6, 5)), copy=None)
    out = gtx.as_field([I, J, K], _fortran((8, 6, 5)), copy=None)
    source, entry = _build(run_running_sum, [a, out])
    assert f"#pragma unroll {SCAN_UNROLL}\n  for (sk_idx i_K = K_lo0; i_K < K_hi0; ++i_K)" in source
    assert b"sk_run_running_sum_k0" in (entry.path / "program.cubin").read_bytes()  # type: ignore[attr-defined]


def test_cuda_flags_from_the_environment(compiler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``STENCILKIT_CUDAFLAGS`` reaches the compiler and the build cache key: a valid flag builds
    (into its own cache entry), an invalid one fails with the compiler's message."""
    a = gtx.as_field([I, J, K], _fortran((8, 6, 3)), copy=None)
    out = gtx.as_field([I, J, K], _fortran((8, 6, 3)), copy=None)
    _, plain = _build(run_lap, [a, out])
    assert "--fmad=false" in cuda_toolchain.build_flags()  # the default: no contraction
    monkeypatch.setenv("STENCILKIT_CUDAFLAGS", "--fmad=true")
    reset_config()
    flags = cuda_toolchain.build_flags()
    assert flags[-1] == "--fmad=true" and "--fmad=false" not in flags  # the user's setting alone
    _, fma = _build(run_lap, [a, out])
    assert fma.path != plain.path  # type: ignore[attr-defined]
    assert (fma.path / "program.cubin").read_bytes()[:4] == b"\x7fELF"  # type: ignore[attr-defined]
    monkeypatch.setenv("STENCILKIT_CUDAFLAGS", "--no-such-flag-xyz")
    reset_config()
    with pytest.raises(BuildError):
        _build(run_lap, [a, out])


Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
Zoff = gtx.FieldOffset("Zoff", source=Z, target=(Z,))


@gtx.field_operator
def _from_levels(
    g: Field[Dims[I, Z], float64], k: Field[Dims[I, Z], gtx.int32]
) -> Field[Dims[I, Z], float64]:
    return g(as_offset(Zoff, k)) + g


@gtx.program(backend=gtx.gpu)
def run_from_levels(
    g: Field[Dims[I, Z], float64], k: Field[Dims[I, Z], gtx.int32], out: Field[Dims[I, Z], float64]
):
    _from_levels(g, k, out=out)


def test_as_offset_reads_compile_with_their_guard(compiler: str) -> None:
    """Each as_offset read goes through sk_guard with the field's range from the block and the
    error word (kernels never read outside a field, whatever the offsets' values)."""
    g = gtx.as_field([I, Z], np.random.default_rng(1).standard_normal((8, 5)))
    k = gtx.as_field([I, Z], np.zeros((8, 5), dtype=np.int32))
    out = gtx.as_field([I, Z], np.random.default_rng(2).standard_normal((8, 5)))
    source, entry = _build(run_from_levels, [g, k, out])
    assert "sk_guard(" in source and "sk_err" in source
    cubin = (entry.path / "program.cubin").read_bytes()  # type: ignore[attr-defined]
    assert b"sk_run_from_levels_k0" in cubin
