"""Results must not depend on which variant of a kernel the tune stage timed fastest.

Each GPU kernel is built in several variants (z-chunked loops, streaming stores, locality
orders); the tune stage keeps the fastest on this GPU for this size, so two sizes of one
domain (one process against a rank's part of it) or two runs whose timings differ may run
different variants. With fused multiply-add contraction, nvcc fused ``a*b + c`` differently in
a chunked loop (which shares products between its points) than in the plain kernel, and a
2-rank shallow-water run on the H200 differed from one process by 5e-15 (2026-12-01). Here every
variant of kernels full of such products is forced in turn and compared bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Ioff, Joff = gtx.FieldOffset("Ioff", I, (I,)), gtx.FieldOffset("Joff", J, (J,))
Koff = gtx.FieldOffset("Koff", K, (K,))
F = Field[Dims[I, J, K], float64]


@gtx.field_operator
def fluxes(u: F, v: F, w: F) -> F:
    """Products of neighbours along every axis (a chunk along any of them shares them), sums
    and differences of products: the patterns a contraction would fuse."""
    fi = u(Ioff[1]) * v(Ioff[1]) - u(Ioff[-1]) * v(Ioff[-1])
    fj = u(Joff[1]) * v(Joff[1]) - u(Joff[-1]) * v(Joff[-1])
    fk = u(Koff[1]) * w(Koff[1]) + u(Koff[-1]) * w(Koff[-1])
    return 0.25 * fi + 0.125 * fj - u * v * w + fk * 0.5 + u * w


@gtx.program
def run_fluxes(u: F, v: F, w: F, out: F, n: gtx.int32, m: gtx.int32, nk: gtx.int32):
    fluxes(u, v, w, out=out, domain={I: (1, n - 1), J: (1, m - 1), K: (1, nk - 1)})


def reference(u: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    c = (slice(1, -1),) * 3

    def at(a: np.ndarray, axis: int, s: int) -> np.ndarray:
        idx = [slice(1, -1)] * 3
        idx[axis] = slice(1 + s, a.shape[axis] - 1 + s)
        return a[tuple(idx)]

    fi = at(u, 0, 1) * at(v, 0, 1) - at(u, 0, -1) * at(v, 0, -1)
    fj = at(u, 1, 1) * at(v, 1, 1) - at(u, 1, -1) * at(v, 1, -1)
    fk = at(u, 2, 1) * at(w, 2, 1) + at(u, 2, -1) * at(w, 2, -1)
    return 0.25 * fi + 0.125 * fj - u[c] * v[c] * w[c] + fk * 0.5 + u[c] * w[c]


@pytest.mark.gpu
@pytest.mark.parametrize("order", ["C", "F"])
def test_every_variant_of_a_kernel_gives_the_same_bits(monkeypatch, order: str) -> None:
    import cupy as cp

    from stencilkit.backends.cuda import backend as cuda_backend

    chosen = cuda_backend.choose_blocks
    shape = (70, 66, 72)  # 332k points: the kernel is searched, and has its chunk variants
    rng = np.random.default_rng(8)
    u, v, w = (rng.standard_normal(shape) for _ in range(3))

    def dev(a: np.ndarray) -> Any:
        return gtx.as_field([I, J, K], cp.asarray(a, order=order), copy=None)  # type: ignore[call-arg]

    offered: list[Any] = []

    def run_with(variant: Any) -> tuple[str, np.ndarray]:
        def pick(k: Any, extents: Any, launchers: Any, *rest: Any) -> Any:
            best, block = chosen(k, extents, launchers, *rest)
            offered[:] = list(launchers)
            return (variant if variant is not None else best), block

        monkeypatch.setattr(cuda_backend, "choose_blocks", pick)
        out = dev(np.full(shape, np.nan))
        run = run_fluxes.with_backend(gtx.gpu)
        run(dev(u), dev(v), dev(w), out, *shape, offset_provider={})
        (plan,) = run._runner.plans.values()
        return plan.launches.kernels[0].name, out.asnumpy()

    first_name, first = run_with(None)
    variants = list(offered)
    assert len(variants) >= 4, variants  # chunks, streaming stores
    assert any(v.regs for v in variants), variants  # register-capped copies (codegen.CAPPED_REGS)
    inner = (slice(1, -1),) * 3
    np.testing.assert_allclose(first[inner], reference(u, v, w), rtol=1e-12, atol=1e-12)
    edge = np.ones(shape, bool)
    edge[inner] = False
    assert np.isnan(first[edge]).all()  # the untouched part stays untouched
    names = {first_name}
    for variant in variants:
        name, result = run_with(variant)
        names.add(name)
        assert np.array_equal(result, first, equal_nan=True), (variant, first_name)
    assert len(names) == len(variants)  # each variant really ran
