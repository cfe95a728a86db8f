"""Programs whose IR would be exponential as a tree, on every backend against NumPy: a 100-deep
operator chain with a shift, a scan body of 40 sequential ifs, if branches assigning different
names, and shared values inside guarded branches and reductions."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32
from stencilkit.core.errors import StencilTypeError
from stencilkit_benchmarks.frontend import SIZE, chain_source, ifs_reference, ifs_source, shape

I = gtx.Dimension("I")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
IK = Field[Dims[I, K], float64]
Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))


def _module(tmp_path, name: str, source: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_hundred_deep_shifted_chain(case, rng, tmp_path) -> None:
    """The cpu build uses the default flags: its 5,000-line kernel took g++ -O3 243-254 s on the
    2-core build machine until long sources dropped GCC's jump threading (toolchain/cxx.py,
    ``JUMP_THREADING_LINES``); about 16 s since."""
    n = 100
    mod = _module(
        tmp_path, f"sk_chain_{case.name.replace('-', '_')}", chain_source(n, shifted=True)
    )
    x = rng.random(shape("shifted", n)) * 0.5
    out0 = rng.random(x.shape)
    out = case.field([mod.I, mod.K], out0)
    mod.run.with_backend(case.backend)(case.field([mod.I, mod.K], x), out, offset_provider={})
    y = x.copy()
    for _ in range(n):
        y = y[1:] * 0.5 + y[:-1]
    expected = out0.copy()
    assert y.shape == SIZE
    expected[: SIZE[0]] = y
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-12)


def test_scan_body_with_forty_ifs(case, rng, tmp_path) -> None:
    n = 40
    mod = _module(tmp_path, f"sk_ifs_{case.name.replace('-', '_')}", ifs_source(n))
    a, b = rng.random(SIZE), rng.random(SIZE)
    outs = [case.field([mod.I, mod.K], rng.random(SIZE)) for _ in range(3)]
    mod.run.with_backend(case.backend)(
        case.field([mod.I, mod.K], a), case.field([mod.I, mod.K], b), *outs, offset_provider={}
    )
    for got, want in zip(outs, ifs_reference(n, a, b)):
        # 40 dependent updates of O(1) values that partly cancel: the CUDA compiler's fused
        # multiply-adds round differently from NumPy by a few 1e-16 absolute near zero
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-14)


@gtx.field_operator
def subsets(a: IK, b: IK, mode: int32) -> tuple[IK, IK, IK]:
    x = a
    y = b
    z = a * b
    if mode == 0:
        x = a + 1.0
        w = a * 0.0  # noqa: F841 (assigned on one path only, never read after the if)
    elif mode == 1:
        y = b(I + 1) - 1.0
        z = x * 2.0
    else:
        if mode > 5:
            x = y * 3.0
        z = z + x
    return x, y, z


def _subsets(a: np.ndarray, b: np.ndarray, mode: int, ni: int) -> tuple[np.ndarray, ...]:
    a, bs, b = a[:ni], b[1 : ni + 1], b[:ni]
    x, y, z = a, b, a * b
    if mode == 0:
        x = a + 1.0
    elif mode == 1:
        y, z = bs - 1.0, x * 2.0
    else:
        if mode > 5:
            x = y * 3.0
        z = z + x
    return x, y, z


def test_if_branches_assigning_different_names(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def run(a: IK, b: IK, mode: int32, x: IK, y: IK, z: IK):
        subsets(a, b, mode, out=(x, y, z), domain={I: (0, SIZE[0] - 1), K: (0, SIZE[1])})

    a, b = rng.random(SIZE), rng.random(SIZE)
    for mode in (0, 1, 2, 7):
        out0 = [rng.random(SIZE) for _ in range(3)]
        outs = [case.field([I, K], o) for o in out0]
        run(case.field([I, K], a), case.field([I, K], b), np.int32(mode), *outs, offset_provider={})
        for got, o0, want in zip(outs, out0, _subsets(a, b, mode, SIZE[0] - 1)):
            expected = o0.copy()
            expected[: SIZE[0] - 1] = want
            np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-14)


def test_name_assigned_in_one_branch_only_is_not_defined_after() -> None:
    with pytest.raises(StencilTypeError, match="'w'"):

        @gtx.field_operator
        def op(a: IK, mode: int32) -> IK:
            if mode == 0:
                w = a * 2.0
            return w


@gtx.field_operator
def guarded(a: IK) -> IK:
    below = a(K - 1) * 2.0  # read only where K > 0
    twice = below + below
    return gtx.concat_where(K > 0, twice + below, a)


def test_shared_value_inside_a_concat_where_branch(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def run(a: IK, out: IK):
        guarded(a, out=out, domain={I: (0, SIZE[0]), K: (0, SIZE[1])})

    a = rng.random(SIZE)
    out = case.field([I, K], rng.random(SIZE))
    run(case.field([I, K], a), out, offset_provider={})
    expected = a.copy()
    expected[:, 1:] = 6.0 * a[:, :-1]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


@gtx.field_operator
def shared_in_reduction(e: Field[Dims[Edge, K], float64]) -> Field[Dims[Cell, K], float64]:
    sq = e * e
    per_neighbour = sq(C2E) + e(C2E)
    total = gtx.neighbor_sum(per_neighbour * per_neighbour, axis=C2EDim)
    return total + gtx.max_over(per_neighbour, axis=C2EDim)


def test_shared_values_inside_reductions(case, rng) -> None:
    n_cells, n_edges, n_levels = 30, 50, 4
    c2e = rng.integers(0, n_edges, size=(n_cells, 3)).astype(np.int32)
    c2e[rng.random((n_cells, 3)) < 0.25] = -1
    c2e[0, :2] = -1
    ed = rng.standard_normal((n_edges, n_levels))

    @gtx.program(backend=case.backend)
    def run(e: Field[Dims[Edge, K], float64], out: Field[Dims[Cell, K], float64]):
        shared_in_reduction(e, out=out)

    out = case.field([Cell, K], rng.random((n_cells, n_levels)))
    table = case.connectivity([Cell, C2EDim], Edge, c2e, skip_value=-1)
    run(case.field([Edge, K], ed), out, offset_provider={"C2E": table})
    valid = (c2e >= 0)[:, :, None]
    g = ed[np.where(c2e >= 0, c2e, 0)]
    p = g * g + g
    total = np.where(valid, p * p, 0.0).sum(axis=1)
    top = np.where(valid, p, np.finfo(np.float64).min).max(axis=1)
    np.testing.assert_allclose(out.asnumpy(), total + top, rtol=1e-13)


@gtx.field_operator
def scalar_or_field(a: IK, s: float64) -> IK:
    if s > 0.0:
        x = 0.5
        y = s
    else:
        x = a
        y = a * 2.0
    return x + y * a


def test_if_assigning_a_scalar_on_one_path_and_a_field_on_the_other(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def run(a: IK, s: float64, out: IK):
        scalar_or_field(a, s, out=out)

    a = rng.random(SIZE)
    for s in (2.0, -1.0):
        out = case.field([I, K], rng.random(SIZE))
        run(case.field([I, K], a), s, out, offset_provider={})
        expected = 0.5 + s * a if s > 0 else a + 2.0 * a * a
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


@gtx.field_operator
def index_in_both_branches(a: IK, s: float64) -> IK:
    top = K == 0
    if s > 0.0:
        x = gtx.concat_where(top, a * 2.0, a)
    else:
        x = gtx.concat_where(top, a * 3.0, a)
    return x


def test_if_whose_branches_share_an_index_condition(case, rng) -> None:
    """Regression: the values both branches compute are computed before the if; an index under
    them (K == 0) is not a value."""

    @gtx.program(backend=case.backend)
    def run(a: IK, s: float64, out: IK):
        index_in_both_branches(a, s, out=out)

    a = rng.random(SIZE)
    for s in (1.0, -1.0):
        out = case.field([I, K], rng.random(SIZE))
        run(case.field([I, K], a), s, out, offset_provider={})
        expected = a.copy()
        expected[:, 0] *= 2.0 if s > 0 else 3.0
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)
