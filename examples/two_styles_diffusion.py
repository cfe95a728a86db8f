"""Horizontal diffusion with tile-edge regions, on storages shared by both frontends.

One explicit diffusion step ``out = in + alpha * lap(in)`` on the compute domain of a rank of
a cube-sphere tile, the FV3 way: on the columns that lie on a tile edge the five-point Laplacian
is replaced by the one-dimensional one along the edge (no flux across the edge), the edges in
J applied last so that they win at the corners. A rank has only the edges its position on the
tile gives it; NDSL passes the missing ones as regions far outside (``I[0] - 32767``).

Written twice: as a GTScript stencil (``horizontal(region[...])`` blocks bounded by the
externals ``i_start``, ``i_end``, ... as NDSL's ``axis_offsets`` gives them) and as a gt4py.next
program (each edge one statement over a one-column domain, empty where the rank has no edge).
The arrays come from ``gt4py.storage`` (``stencilkit.cartesian.storage``) for a gt4py.cartesian
backend name, with a halo of 1 and the compute domain aligned; GTScript takes them as they are,
the gt4py.next program through ``as_field(..., copy=False)``, and both write into the same
output array. Both results are checked bit for bit against NumPy and each other, halo untouched.

Run it: ``python examples/two_styles_diffusion.py [numpy | gt:cpu_ifirst | gt:cpu_kfirst | gt:gpu]``.
"""

# GTScript definitions assign fields the linter cannot see being used
# ruff: noqa: F841

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
    cartesian_name,
    per_call_us,
    random_storage,
    report,
    reset,
    shared_field,
    stencil_times,
    to_numpy,
)

import stencilkit as gtx
from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, horizontal, interval, region

IJKField = gtx.Field[gtx.Dims[I, J, K], gtx.float64]
HALO = 1
#: which tile edges this rank has: (west, east, south, north); a rank in a tile's SW corner
EDGES = (True, False, True, False)


# --- GTScript ------------------------------------------------------------------------------------


def diffuse_gtscript(inp: Field[float], out: Field[float], alpha: float):
    from __externals__ import i_end, i_start, j_end, j_start

    with computation(PARALLEL), interval(...):
        out = inp + alpha * (
            inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0] - 4.0 * inp
        )
        with horizontal(region[i_start, :], region[i_end, :]):
            out = inp + alpha * (inp[0, 1, 0] + inp[0, -1, 0] - 2.0 * inp)
        with horizontal(region[:, j_start], region[:, j_end]):
            out = inp + alpha * (inp[1, 0, 0] + inp[-1, 0, 0] - 2.0 * inp)


def edge_externals(edges: tuple[bool, ...]) -> dict[str, Any]:
    """The tile edges relative to the compute domain, NDSL's way: a missing edge lies 32767
    points outside, so its region is empty."""
    west, east, south, north = edges
    far = 32767
    return {
        "i_start": gtscript.I[0] if west else gtscript.I[0] - far,
        "i_end": gtscript.I[-1] if east else gtscript.I[-1] + far,
        "j_start": gtscript.J[0] if south else gtscript.J[0] - far,
        "j_end": gtscript.J[-1] if north else gtscript.J[-1] + far,
    }


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
    """Runs the step in both styles on ``backend`` (a gt4py.cartesian name) on the same
    arrays; returns the arrays, the two results and the per-call times."""
    rng = np.random.default_rng(42)
    full = (shape[0] + 2 * HALO, shape[1] + 2 * HALO, shape[2])
    origin = (HALO, HALO, 0)
    inp = random_storage(rng, full, backend, aligned_index=origin)
    out = random_storage(rng, full, backend, aligned_index=origin, low=-1.0, high=0.0)
    before = to_numpy(out)
    alpha = 0.1
    expected = diffuse_numpy(to_numpy(inp), before, alpha, EDGES)

    stencil = gtscript.stencil(
        backend=backend, definition=diffuse_gtscript, externals=edge_externals(EDGES)
    )
    stencil(inp, out, alpha=alpha, origin=origin, domain=shape)
    by_gtscript = to_numpy(out)
    np.testing.assert_array_equal(by_gtscript, expected)

    reset(out, before)  # the same output array again, for the gt4py.next program
    program = diffuse_next.with_backend(backend_of(backend))
    args = next_args(inp, out, alpha, EDGES)
    program(*args, offset_provider={})
    by_next = to_numpy(out)
    np.testing.assert_array_equal(by_next, expected)
    np.testing.assert_array_equal(by_next, by_gtscript)

    origins = {"inp": origin, "out": origin}
    times = stencil_times(
        stencil, backend, {"inp": inp, "out": out}, {"alpha": alpha}, origins, shape
    )
    times["gt4py.next program"] = per_call_us(lambda: program(*args, offset_provider={}), backend)
    report("diffusion with tile-edge regions", backend, shape, times)
    print("  GTScript == gt4py.next == NumPy (bitwise), halo untouched")
    return {
        "inp": inp,
        "out": out,
        "before": before,
        "expected": expected,
        "gtscript": by_gtscript,
        "next": by_next,
        "times": times,
    }


if __name__ == "__main__":
    # a stencilkit name (embedded, cpu, gpu) or a gt4py.cartesian one (numpy, gt:cpu_kfirst, ...)
    main(cartesian_name(os.environ.get("STENCILKIT_EXAMPLE_BACKEND", "embedded")))
