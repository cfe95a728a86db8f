"""Mixed precision: a float32 tracer updated with float64 fluxes, on storages shared by both
frontends, and where the two frontends' typing rules differ.

``q_new = 0.9 * q + dt * (flux[-1, 0, 0] - flux)`` with ``q``, ``q_new`` float32 and ``flux``,
``dt`` float64. GTScript promotes: the untyped literal ``0.9`` is a float64 (literal precision
64), so ``q`` is widened, the whole right side is computed in float64 and the result is cast to
float32 at the assignment. gt4py.next types strictly with weak literals: ``0.9 * q`` stays
float32, and mixing it with float64 needs explicit ``astype``. The gt4py.next program below
spells GTScript's promotion out and agrees with the GTScript stencil bit for bit; the
literal-as-written version (``naive``) rounds ``0.9 * q`` to float32 first and differs in the
last bits. Both styles run on the same ``gt4py.storage`` arrays (gt4py.next through
``as_field(..., copy=False)``) and write the same output array.

Run it: ``python examples/two_styles_mixed_precision.py [numpy | gt:cpu_ifirst | gt:cpu_kfirst | gt:gpu]``.
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
from stencilkit.cartesian import storage as gt_storage
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, interval

F32 = gtx.Field[gtx.Dims[I, J, K], gtx.float32]
F64 = gtx.Field[gtx.Dims[I, J, K], gtx.float64]


# --- GTScript ------------------------------------------------------------------------------------


def update_gtscript(
    q: Field[np.float32], flux: Field[np.float64], q_new: Field[np.float32], dt: float
):  # fmt: skip
    with computation(PARALLEL), interval(...):
        q_new = 0.9 * q + dt * (flux[-1, 0, 0] - flux)


# --- gt4py.next ---------------------------------------------------------------------------------


@gtx.field_operator
def update_promoted(q: F32, flux: F64, dt: gtx.float64) -> F32:
    # GTScript's rule written out: widen q, compute in float64, narrow at the assignment
    return gtx.astype(0.9 * gtx.astype(q, gtx.float64) + dt * (flux(I - 1) - flux), gtx.float32)


@gtx.field_operator
def update_naive(q: F32, flux: F64, dt: gtx.float64) -> F32:
    # the literal as written: 0.9 * q is a float32 product in gt4py.next
    return gtx.astype(gtx.astype(0.9 * q, gtx.float64) + dt * (flux(I - 1) - flux), gtx.float32)


@gtx.program
def update_next(q: F32, flux: F64, q_new: F32, dt: gtx.float64, ni: gtx.int32, nj: gtx.int32,
                nk: gtx.int32):  # fmt: skip
    update_promoted(q, flux, dt, out=q_new, domain={I: (1, ni), J: (0, nj), K: (0, nk)})


@gtx.program
def update_next_naive(q: F32, flux: F64, q_new: F32, dt: gtx.float64, ni: gtx.int32, nj: gtx.int32,
                      nk: gtx.int32):  # fmt: skip
    update_naive(q, flux, dt, out=q_new, domain={I: (1, ni), J: (0, nj), K: (0, nk)})


# --- NumPy reference ---------------------------------------------------------------------------


def update_numpy(q: np.ndarray, flux: np.ndarray, q_new: np.ndarray, dt: float) -> np.ndarray:
    """GTScript's promotion in NumPy: float64 arithmetic, one cast to float32 (rows 1..)."""
    res = q_new.copy()
    wide = 0.9 * q[1:].astype(np.float64) + dt * (flux[:-1] - flux[1:])
    res[1:] = wide.astype(np.float32)
    return res


# --- both on one storage ----------------------------------------------------------------------


def main(backend: str = "numpy", shape: tuple[int, int, int] = (40, 32, 12)) -> dict[str, Any]:
    """Runs the update in both styles on ``backend`` (a gt4py.cartesian name) on the same
    arrays; returns the arrays, the results and the per-call times."""
    rng = np.random.default_rng(3)
    q = random_storage(rng, shape, backend, dtype=np.float32)
    flux = random_storage(rng, shape, backend, low=-1.0)
    q_new = random_storage(rng, shape, backend, dtype=np.float32, low=5.0, high=6.0)
    before = to_numpy(q_new)
    dt = 0.37
    ni, nj, nk = shape
    expected = update_numpy(to_numpy(q), to_numpy(flux), before, dt)
    origin, domain = (1, 0, 0), (ni - 1, nj, nk)  # I from 1: flux[-1, 0, 0] stays inside

    stencil = gtscript.stencil(backend=backend, definition=update_gtscript)
    stencil(q, flux, q_new, dt, origin=origin, domain=domain)
    by_gtscript = to_numpy(q_new)
    assert by_gtscript.dtype == np.float32
    np.testing.assert_array_equal(by_gtscript, expected)

    reset(q_new, before)  # the same output array again, for the gt4py.next program
    program = update_next.with_backend(backend_of(backend))
    args = (shared_field(q), shared_field(flux), shared_field(q_new), dt, ni, nj, nk)
    program(*args, offset_provider={})
    by_next = to_numpy(q_new)
    np.testing.assert_array_equal(by_next, expected)
    np.testing.assert_array_equal(by_next, by_gtscript)

    naive_out = gt_storage.zeros(shape, np.float32, backend=backend)
    naive = update_next_naive.with_backend(backend_of(backend))
    naive(shared_field(q), shared_field(flux), shared_field(naive_out), dt, ni, nj, nk,
          offset_provider={})  # fmt: skip
    naive_diff = int((to_numpy(naive_out)[1:] != expected[1:]).sum())

    arrays = {"q": q, "flux": flux, "q_new": q_new}
    origins = {name: origin for name in arrays}
    times = stencil_times(stencil, backend, arrays, {"dt": dt}, origins, domain)
    times["gt4py.next program"] = per_call_us(lambda: program(*args, offset_provider={}), backend)
    report("mixed-precision update", backend, shape, times)
    print(
        "  GTScript == gt4py.next with explicit astype == NumPy (bitwise); the literal-as-written"
        f" gt4py.next version differs at {naive_diff} of {expected[1:].size} points"
    )
    return {
        "q_new": q_new,
        "expected": expected,
        "gtscript": by_gtscript,
        "next": by_next,
        "naive_diff": naive_diff,
        "times": times,
    }


if __name__ == "__main__":
    # a stencilkit name (embedded, cpu, gpu) or a gt4py.cartesian one (numpy, gt:cpu_kfirst, ...)
    main(cartesian_name(os.environ.get("STENCILKIT_EXAMPLE_BACKEND", "embedded")))
