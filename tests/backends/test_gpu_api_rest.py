"""Issue 22's gpu items, on every backend and on the gpu backend's generated CUDA emulated on the
CPU (``helpers.cuda_emulation``, no GPU needed; its CUDA is also built with NVRTC or nvcc where
installed): a scalar in a ``domain=`` spec with a field
operator call, a local (neighbour) field written on a mesh with skip values, neighbour sums and
unstructured shifts on fields whose domain does not start at 0, nested reductions with the shift
first (gt4py's ``test_nested_reduction_shift_first``). The ``gpu`` cases run on a GPU only."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from helpers.cuda_emulation import EmulatedCudaTarget
from stencilkit import Dims, Field, float64, int32, neighbor_sum
from stencilkit.backends import Backend
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda import CudaTarget
from stencilkit.backends.cuda.backend import BINARY
from stencilkit.backends.cuda.codegen import Variant
from stencilkit.backends.cuda.order import is_scattered, order_for
from stencilkit.core.device import DeviceType
from stencilkit.stages.artefacts import Built, Source
from stencilkit.toolchain.cuda import find_cuda_compiler

_spec = importlib.util.spec_from_file_location(
    "stencilkit_tests_conftest", Path(__file__).parents[1] / "conftest.py"
)  # by path: "conftest" alone may name tests/distributed/conftest.py in a whole-suite run
_root_conftest = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(_root_conftest)  # type: ignore[union-attr]
BackendCase, _cases = _root_conftest.BackendCase, _root_conftest._cases

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Vertex = gtx.Dimension("Vertex")
Edge = gtx.Dimension("Edge")
V2EDim = gtx.Dimension("V2E", kind=gtx.DimensionKind.LOCAL)
E2VDim = gtx.Dimension("E2V", kind=gtx.DimensionKind.LOCAL)
V2E = gtx.FieldOffset("V2E", source=Edge, target=(Vertex, V2EDim))
E2V = gtx.FieldOffset("E2V", source=Vertex, target=(Edge, E2VDim))
NV, NE, NK = 9, 14, 5
EK = Field[Dims[Edge, K], float64]
VK = Field[Dims[Vertex, K], float64]


def _cuda_compiler_found() -> bool:
    try:
        find_cuda_compiler()
        return True
    except Exception:  # no NVRTC and no nvcc here
        return False


class _CompiledAndEmulated(EmulatedCudaTarget):
    """Also builds the generated CUDA for sm_90 with the real CUDA compiler (NVRTC or nvcc, no
    GPU needed) where one is installed: the source the gpu backend would load compiles."""

    def build(self, source: Source) -> Built:
        if _cuda_compiler_found():
            cuda = CudaTarget(arch="90")
            built = cuda.build(cuda.generate(source.planned))
            assert (built.path / BINARY).read_bytes()[:4] == b"\x7fELF"
        return super().build(source)


class _EmulatedGpu(Backend):
    """The gpu backend's code generation with host fields: the CUDA kernels compiled as C++ and
    launched thread by thread on the CPU (``helpers/cuda_emulation.py``)."""

    def runner(self, interface: Any) -> Any:
        return CompiledRunner(interface, _CompiledAndEmulated(block=(32, 4, 1)))


class _EmulatedOrderedGpu(Backend):
    """The same with the variant a block search may choose for a large gather: four levels per
    thread, streaming stores, the points visited in the locality order of the table."""

    def runner(self, interface: Any) -> Any:
        target = EmulatedCudaTarget(block=(8, 2, 1), variant=Variant(4, True, True))
        return CompiledRunner(interface, target)


EMULATED = BackendCase("gpu-emulated", _EmulatedGpu("gpu-emulated", DeviceType.CPU), False)
ORDERED = BackendCase("gpu-emulated-ordered", _EmulatedOrderedGpu("ordered", DeviceType.CPU), False)


@pytest.fixture(
    params=[
        *_cases(),
        pytest.param(EMULATED, id="gpu-emulated"),
        pytest.param(ORDERED, id="gpu-emulated-ordered"),
    ]
)
def gcase(request: pytest.FixtureRequest) -> BackendCase:
    return request.param  # type: ignore[no-any-return]


def _tables(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    v2e = rng.integers(0, NE, (NV, 4)).astype(np.int32)
    v2e[rng.random((NV, 4)) < 0.3] = -1  # missing neighbours
    v2e[0, :2] = -1
    e2v = rng.integers(0, NV, (NE, 2)).astype(np.int32)
    return v2e, e2v


# -- a scalar in domain= ---------------------------------------------------------------------
@gtx.field_operator
def doubled(a: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    return a + a


@gtx.field_operator
def scaled(a: Field[Dims[I, J], float64], s: int32) -> Field[Dims[I, J], float64]:
    return a * gtx.astype(s, float64)


def test_scalars_in_domain_spec(gcase, rng) -> None:
    """gt4py's test_domain_input_bounds: bounds from int32 parameters, with arithmetic; the
    bound parameter is also an argument of the operator."""

    @gtx.program(backend=gcase.backend)
    def run(
        a: Field[Dims[I, J], float64],
        o1: Field[Dims[I, J], float64],
        o2: Field[Dims[I, J], float64],
        lower_i: int32,
        upper_i: int32,
        lower_j: int32,
        upper_j: int32,
    ):
        doubled(a, out=o1, domain={I: (1 * lower_i, upper_i // 2), J: (lower_j - 0, upper_j)})
        scaled(a, lower_j, out=o2, domain={I: (lower_i, upper_i), J: (lower_j + 1, upper_j)})

    a = rng.random((10, 8))
    b1, b2 = rng.random((10, 8)), rng.random((10, 8))
    o1, o2 = gcase.field([I, J], b1), gcase.field([I, J], b2)
    run(gcase.field([I, J], a), o1, o2, int32(1), int32(9), int32(2), int32(7), offset_provider={})
    r1, r2 = b1.copy(), b2.copy()
    r1[1:4, 2:7] = 2.0 * a[1:4, 2:7]
    r2[1:9, 3:7] = 2.0 * a[1:9, 3:7]
    np.testing.assert_allclose(o1.asnumpy(), r1, rtol=1e-15)
    np.testing.assert_allclose(o2.asnumpy(), r2, rtol=1e-15)


def test_scalar_in_domain_of_a_direct_call(gcase, rng) -> None:
    op = scaled.with_backend(gcase.backend)
    a, before = rng.random((10, 8)), rng.random((10, 8))
    out = gcase.field([I, J], before)
    n = int32(6)
    op(gcase.field([I, J], a), n, out=out, domain={I: (2, n), J: (0, n)}, offset_provider={})
    ref = before.copy()
    ref[2:6, 0:6] = 6.0 * a[2:6, 0:6]
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-15)


# -- writing a local field on a mesh with skip values ----------------------------------------
@gtx.field_operator
def gather(inp: Field[Dims[Edge], int32]) -> Field[Dims[Vertex, V2EDim], int32]:
    return inp(V2E)


def test_write_local_field_with_skip_values(gcase, rng) -> None:
    """gt4py's test_write_local_field on a mesh with skip values. At a skipped slot the value is
    not defined by gt4py (its embedded reads inp[-1]); embedded stencilkit reads NumPy's inp[-1]
    too, the compiled backends the field's first element (never memory outside it)."""
    v2e, _ = _tables(rng)
    inp = rng.integers(1, 1000, NE).astype(np.int32)

    @gtx.program(backend=gcase.backend)
    def run(inp: Field[Dims[Edge], int32], out: Field[Dims[Vertex, V2EDim], int32]):
        gather(inp, out=out, domain={Vertex: (1, NV), V2EDim: (0, 4)})

    before = rng.integers(-1000, 0, (NV, 4)).astype(np.int32)
    out = gcase.field([Vertex, V2EDim], before)
    provider = {"V2E": gcase.connectivity([Vertex, V2EDim], Edge, v2e, skip_value=-1)}
    run(gcase.field([Edge], inp), out, offset_provider=provider)
    got = out.asnumpy()
    valid = v2e >= 0
    np.testing.assert_array_equal(got[1:][valid[1:]], inp[v2e[1:][valid[1:]]])
    skipped = got[1:][~valid[1:]]
    expected = inp[-1] if gcase.backend is None else inp[0]
    np.testing.assert_array_equal(skipped, expected)
    np.testing.assert_array_equal(got[0], before[0])  # outside the domain: untouched


# -- non-zero origins ------------------------------------------------------------------------
@gtx.field_operator
def vertex_sum(e: EK) -> VK:
    return neighbor_sum(e(V2E), axis=V2EDim)


@gtx.field_operator
def edge_difference(v: VK) -> EK:
    return v(E2V[0]) - v(E2V[1])


@pytest.mark.parametrize("origin", [3, 6])
def test_neighbour_sum_and_shift_on_fields_not_starting_at_zero(gcase, rng, origin) -> None:
    v2e, e2v = _tables(rng)
    o = origin
    e, v = rng.random((NE, NK)), rng.random((NV, NK))
    ov, oe = rng.random((NV, NK)), rng.random((NE, NK))

    @gtx.program(backend=gcase.backend)
    def run(e: EK, v: VK, out_v: VK, out_e: EK):
        vertex_sum(e, out=out_v, domain={Vertex: (o, NV + o), K: (o + 1, NK + o)})
        edge_difference(v, out=out_e)

    def dom(d: Any, n: int, start: int) -> Any:
        return gtx.domain({d: (start, start + n), K: (o, NK + o)})

    out_v, out_e = gcase.field(dom(Vertex, NV, o), ov), gcase.field(dom(Edge, NE, o), oe)
    provider = {
        # tables of the shifted numbering: indices into fields starting at o
        "V2E": gcase.connectivity(
            gtx.domain({Vertex: (o, NV + o), V2EDim: (0, 4)}),
            Edge,
            np.where(v2e >= 0, v2e + o, -1).astype(np.int32),
            skip_value=-1,
        ),
        "E2V": gcase.connectivity(
            gtx.domain({Edge: (o, NE + o), E2VDim: (0, 2)}), Vertex, (e2v + o).astype(np.int32)
        ),
    }
    run(gcase.field(dom(Edge, NE, o), e), gcase.field(dom(Vertex, NV, o), v), out_v, out_e,
        offset_provider=provider)  # fmt: skip
    valid = v2e >= 0
    ref_v = ov.copy()
    ref_v[:, 1:] = np.where(valid[:, :, None], e[np.where(valid, v2e, 0)], 0.0).sum(axis=1)[:, 1:]
    np.testing.assert_allclose(out_v.asnumpy(), ref_v, rtol=1e-14)
    np.testing.assert_array_equal(out_v.asnumpy()[:, 0], ov[:, 0])  # K = o: untouched
    np.testing.assert_allclose(out_e.asnumpy(), v[e2v[:, 0]] - v[e2v[:, 1]], rtol=1e-14)


# -- nested reductions, the shift first ------------------------------------------------------
@gtx.field_operator
def shift_first(inp: EK) -> EK:
    tmp = inp(V2E)
    tmp2 = tmp(E2V)
    return neighbor_sum(neighbor_sum(tmp2, axis=V2EDim), axis=E2VDim)


@gtx.field_operator
def reduce_first(a: VK) -> VK:
    tmp = neighbor_sum(a(E2V), axis=E2VDim)
    return neighbor_sum(tmp(V2E), axis=V2EDim)


def test_nested_reductions_shift_first(gcase, rng) -> None:
    """gt4py's test_nested_reduction_shift_first (an xfail in gt4py 1.2.3: 'not yet supported in
    lowering') and test_nested_reduction, with skip values in the inner table."""
    v2e, e2v = _tables(rng)
    e, v = rng.random((NE, NK)), rng.random((NV, NK))
    oe, ov = rng.random((NE, NK)), rng.random((NV, NK))

    @gtx.program(backend=gcase.backend)
    def run(e: EK, v: VK, out_e: EK, out_v: VK):
        shift_first(e, out=out_e, domain={Edge: (1, NE), K: (0, NK)})
        reduce_first(v, out=out_v)

    out_e, out_v = gcase.field([Edge, K], oe), gcase.field([Vertex, K], ov)
    provider = {
        "V2E": gcase.connectivity([Vertex, V2EDim], Edge, v2e, skip_value=-1),
        "E2V": gcase.connectivity([Edge, E2VDim], Vertex, e2v),
    }
    run(gcase.field([Edge, K], e), gcase.field([Vertex, K], v), out_e, out_v,
        offset_provider=provider)  # fmt: skip
    valid = v2e >= 0
    per_vertex = np.where(valid[:, :, None], e[np.where(valid, v2e, 0)], 0.0).sum(axis=1)
    ref_e = oe.copy()
    ref_e[1:] = per_vertex[e2v].sum(axis=1)[1:]
    np.testing.assert_allclose(out_e.asnumpy(), ref_e, rtol=1e-14)
    np.testing.assert_array_equal(out_e.asnumpy()[0], oe[0])
    per_edge = v[e2v].sum(axis=1)
    ref_v = np.where(valid[:, :, None], per_edge[np.where(valid, v2e, 0)], 0.0).sum(axis=1)
    np.testing.assert_allclose(out_v.asnumpy(), ref_v, rtol=1e-14)


def test_locality_order_of_a_table_not_starting_at_zero(rng) -> None:
    """Regression: the gpu tune stage read the rows of a table whose domain starts at s > 0 at
    buffer rows start + s instead of start - s: a reshape error (or an IndexError in
    is_scattered) in the block search of a large gather, on the GPU only."""
    n, s = 4000, 40
    table = rng.permutation(n * 3).reshape(n, 3).astype(np.int32) % 5000
    at_zero = gtx.as_connectivity([Vertex, V2EDim], Edge, table)
    shifted = gtx.as_connectivity(gtx.domain({Vertex: (s, n + s), V2EDim: (0, 3)}), Edge, table)
    assert is_scattered(at_zero, "Vertex", 0, n) and is_scattered(shifted, "Vertex", s, n + s)
    assert is_scattered(shifted, "Vertex", s + 100, s + 3000)
    plain = order_for(at_zero, "Vertex", 100, n - 10)
    moved = order_for(shifted, "Vertex", s + 100, s + n - 10)
    np.testing.assert_array_equal(moved.points, plain.points + s)  # the same rows, renumbered
    assert moved.pointer == moved.points.ctypes.data - 4 * (s + 100)
