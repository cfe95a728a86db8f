"""CUDA graphs: a captured time loop replays to the same result as the eager loop."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I, J = gtx.Dimension("I"), gtx.Dimension("J")


@gtx.field_operator
def diffuse(u: Field[Dims[I, J], float64]) -> Field[Dims[I, J], float64]:
    return u + 0.1 * (u(I + 1) + u(I - 1) + u(J + 1) + u(J - 1) - 4.0 * u)


@gtx.program(backend=gtx.gpu)
def step(u: Field[Dims[I, J], float64], v: Field[Dims[I, J], float64]):
    diffuse(u, out=v, domain={I: (1, 31), J: (1, 23)})


def _numpy_steps(u: np.ndarray, n: int) -> np.ndarray:
    u, v = u.copy(), u.copy()
    for _ in range(n):
        c = u[1:-1, 1:-1]
        v[1:-1, 1:-1] = c + 0.1 * (
            u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * c
        )
        u, v = v, u
    return u


@pytest.mark.gpu
def test_captured_loop_matches_eager_and_numpy(rng) -> None:
    data = rng.standard_normal((32, 24))
    u = gtx.as_field([I, J], data, allocator=gtx.gpu)
    v = gtx.as_field([I, J], data, allocator=gtx.gpu)
    step(u, v, offset_provider={})  # first calls: compile
    step(v, u, offset_provider={})
    u.ndarray[...] = u.xp.asarray(data)
    v.ndarray[...] = u.xp.asarray(data)

    def two_steps() -> None:
        step(u, v, offset_provider={})
        step(v, u, offset_provider={})

    graph = gtx.capture_cuda_graph(two_steps)
    np.testing.assert_array_equal(u.asnumpy(), data)  # capturing runs nothing
    graph.replay(5)
    graph.synchronize()
    np.testing.assert_allclose(u.asnumpy(), _numpy_steps(data, 10), rtol=1e-13, atol=1e-13)


@pytest.mark.gpu
def test_first_call_inside_a_capture_is_refused(rng) -> None:
    u = gtx.as_field([I, J], rng.standard_normal((32, 25)), allocator=gtx.gpu)  # a new signature
    v = gtx.as_field([I, J], rng.standard_normal((32, 25)), allocator=gtx.gpu)
    with pytest.raises(
        ValueError, match="call the program once with the same arguments before capturing"
    ):
        gtx.capture_cuda_graph(lambda: step(u, v, offset_provider={}))
