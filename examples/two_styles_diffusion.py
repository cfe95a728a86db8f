"""Horizontal diffusion with tile-edge regions, on storages shared by both frontends.

One explicit diffusion step ``out = in + alpha * lap(in)`` on the compute domain of a rank of
a cube-sphere tile, the FV3 way: on the columns that lie on a tile edge the five-point Laplacian
is replaced by the one-dimensional one along the edge (no flux across the edge), the edges in
J applied last so that they win at the corners. A rank has only the edges its position on the
tile gives it; NDSL passes the missing ones as regions far outside (``I[0] - 32767``).

The arrays come from ``gt4py.storage`` (``stencilkit.cartesian.storage``) for a gt4py.cartesian
backend name, with a halo of 1 and the compute domain aligned; the gt4py.next program gets the
same arrays through ``as_field(..., copy=False)`` and writes into them. The result is checked
bit for bit against NumPy, halo untouched.

Run it: ``python examples/two_styles_diffusion.py [numpy | gt:cpu_ifirst | gt:cpu_kfirst | gt:gpu]``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from two_styles_common import (
    I,
    J,
    K,
    backend_of,
    per_call_us,
    random_storage,
    report,
    shared_field,
    to_numpy,
)

import stencilkit as gtx

IJKField = gtx.Field[gtx.Dims[I, J, K], gtx.float64]
HALO = 1
#: which tile edges this rank has: (west, east, south, north); a rank in a tile's SW corner
EDGES = (True, False, True, False)


# --- gt4py.next ---------------------------------------------------------------------------------


@gtx.field_operator
def diffuse_5pt(inp: IJKField, alpha: gtx.float64) -> IJKField:
    return inp + alpha * (inp(I + 1) + inp(I - 1) + inp(J + 1) + inp(J - 1) - 4.0 * inp)


@gtx.field_operator
def diffuse_along_j(inp: IJKField, alpha: gtx.float64) -> IJKField:
    return inp + alpha * (inp(J + 1) + inp(J - 1) - 2.0 * inp)


@gtx.field_operator
def diffuse_along_i(inp: IJKField, alpha: gtx.float64) -> IJKField:
    return inp + alpha * (inp(I + 1) + inp(I - 1) - 2.0 * inp)


@gtx.program
def diffuse_next(
    inp: IJKField, out: IJKField, alpha: gtx.float64,
    i0: gtx.int32, i1: gtx.int32, j0: gtx.int32, j1: gtx.int32, nk: gtx.int32,
    west: gtx.int32, east: gtx.int32, south: gtx.int32, north: gtx.int32,
):  # fmt: skip
    # ``west`` etc. are 1 where the rank has that tile edge and 0 where not (an empty domain)
    diffuse_5pt(inp, alpha, out=out, domain={I: (i0, i1), J: (j0, j1), K: (0, nk)})
    diffuse_along_j(inp, alpha, out=out, domain={I: (i0, i0 + west), J: (j0, j1), K: (0, nk)})
    diffuse_along_j(inp, alpha, out=out, domain={I: (i1 - east, i1), J: (j0, j1), K: (0, nk)})
    diffuse_along_i(inp, alpha, out=out, domain={I: (i0, i1), J: (j0, j0 + south), K: (0, nk)})
    diffuse_along_i(inp, alpha, out=out, domain={I: (i0, i1), J: (j1 - north, j1), K: (0, nk)})


def next_args(inp: Any, out: Any, alpha: float, edges: tuple[bool, ...]) -> tuple[Any, ...]:
    """The program's arguments for storages with a halo of ``HALO``."""
    ni, nj, nk = inp.shape[0] - 2 * HALO, inp.shape[1] - 2 * HALO, inp.shape[2]
    bounds = (HALO, HALO + ni, HALO, HALO + nj, nk)
    return (shared_field(inp), shared_field(out), alpha, *bounds, *(int(e) for e in edges))


# --- NumPy reference ---------------------------------------------------------------------------


def diffuse_numpy(inp: np.ndarray, out: np.ndarray, alpha: float, edges: tuple[bool, ...]):
    """``out`` with the compute domain ``[1:-1, 1:-1]`` written, the same operation order."""
    res = out.copy()
    c = inp[1:-1, 1:-1]
    e, w, n, s = inp[2:, 1:-1], inp[:-2, 1:-1], inp[1:-1, 2:], inp[1:-1, :-2]
    new = c + alpha * (e + w + n + s - 4.0 * c)
    along_j = c + alpha * (n + s - 2.0 * c)
    along_i = c + alpha * (e + w - 2.0 * c)
    west, east, south, north = edges
    for present, index in ((west, 0), (east, -1)):
        if present:
            new[index, :] = along_j[index, :]
    for present, index in ((south, 0), (north, -1)):
        if present:
            new[:, index] = along_i[:, index]
    res[1:-1, 1:-1] = new
    return res


# --- both on one storage ----------------------------------------------------------------------


def main(backend: str = "numpy", shape: tuple[int, int, int] = (48, 40, 16)) -> dict[str, Any]:
    """Runs the step on ``backend`` (a gt4py.cartesian name); returns the arrays and times."""
    rng = np.random.default_rng(42)
    full = (shape[0] + 2 * HALO, shape[1] + 2 * HALO, shape[2])
    origin = (HALO, HALO, 0)
    inp = random_storage(rng, full, backend, aligned_index=origin)
    out = random_storage(rng, full, backend, aligned_index=origin, low=-1.0, high=0.0)
    before = to_numpy(out)
    alpha = 0.1

    program = diffuse_next.with_backend(backend_of(backend))
    args = next_args(inp, out, alpha, EDGES)
    program(*args, offset_provider={})
    result = to_numpy(out)
    expected = diffuse_numpy(to_numpy(inp), before, alpha, EDGES)
    np.testing.assert_array_equal(result, expected)

    times = {"gt4py.next program": per_call_us(lambda: program(*args, offset_provider={}), backend)}
    report("diffusion with tile-edge regions", backend, shape, times)
    print("  gt4py.next == NumPy (bitwise), halo untouched")
    return {"inp": inp, "out": out, "before": before, "expected": expected, "times": times}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "numpy")
