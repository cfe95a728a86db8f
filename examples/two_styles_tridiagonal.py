"""A vertical tridiagonal solve per column (Thomas algorithm), on storages shared by both
frontends.

For every column solve ``a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] = d[k]``: backward-Euler
vertical diffusion with zero flux at the top and the bottom, as in a vertically implicit
solver. The forward sweep eliminates the lower diagonal level by level (GTScript: a FORWARD
computation reading ``cp[0, 0, -1]``, two fields written per level; gt4py.next: a forward
``scan_operator`` with a tuple carry, ``examples/tridiagonal.py``), the backward sweep
substitutes from the top down.

The arrays come from ``gt4py.storage`` (``stencilkit.cartesian.storage``) for a gt4py.cartesian
backend name; the GTScript stencil takes them as they are, the gt4py.next program through
``as_field(..., copy=False)``, and both write the same ``x`` array (``cp`` and ``dp`` are
temporaries in GTScript, scratch fields in gt4py.next). Both
results are checked against ``numpy.linalg.solve`` per column, for conservation, and against
each other (bit for bit).

Run it: ``python examples/two_styles_tridiagonal.py [numpy | gt:cpu_ifirst | gt:cpu_kfirst | gt:gpu]``.
"""

# GTScript definitions assign fields the linter cannot see being used

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tridiagonal import diffusion_system, solve_numpy, solve_tridiagonal
from two_styles_common import (
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

from stencilkit.cartesian import gtscript
from stencilkit.cartesian import storage as gt_storage
from stencilkit.cartesian.gtscript import BACKWARD, FORWARD, Field, computation, interval

# --- GTScript ------------------------------------------------------------------------------------
# (the gt4py.next half is examples/tridiagonal.py's ``solve_tridiagonal``)


def tridiagonal_gtscript(
    a: Field[float], b: Field[float], c: Field[float], d: Field[float], x: Field[float]
):  # fmt: skip
    # cp and dp are temporaries: they live for one call, one value per point
    with computation(FORWARD):
        with interval(0, 1):
            cp = c / b
            dp = d / b
        with interval(1, None):
            den = b - a * cp[0, 0, -1]
            cp = c / den
            dp = (d - a * dp[0, 0, -1]) / den
    with computation(BACKWARD):
        with interval(-1, None):
            x = dp
        with interval(0, -1):
            x = dp - cp * x[0, 0, 1]


def main(backend: str = "numpy", shape: tuple[int, int, int] = (24, 20, 60)) -> dict[str, Any]:
    """Solves every column in both styles on ``backend`` (a gt4py.cartesian name) on the same
    arrays; returns the arrays, the two results and the per-call times."""
    rng = np.random.default_rng(7)
    a_np, b_np, c_np = diffusion_system(0.5 + rng.random(shape))
    a, b, c = (gt_storage.from_array(v, backend=backend) for v in (a_np, b_np, c_np))
    d = random_storage(rng, shape, backend)
    x = random_storage(rng, shape, backend, low=-2.0, high=-1.0)
    cp, dp = (gt_storage.zeros(shape, backend=backend) for _ in range(2))
    x_before, d_np = to_numpy(x), to_numpy(d)
    expected = solve_numpy(a_np, b_np, c_np, d_np)

    stencil = gtscript.stencil(backend=backend, definition=tridiagonal_gtscript)
    arrays = {"a": a, "b": b, "c": c, "d": d, "x": x}
    stencil(**arrays, origin=(0, 0, 0), domain=shape)
    by_gtscript = to_numpy(x)

    reset(x, x_before)  # the same arrays again, for the gt4py.next program
    program = solve_tridiagonal.with_backend(backend_of(backend))
    fields = [shared_field(v) for v in (a, b, c, d, cp, dp, x)]
    ni, nj, nk = shape
    args = (*fields, 0, ni, 0, nj, nk)
    program(*args, offset_provider={})
    by_next = to_numpy(x)

    for result in (by_gtscript, by_next):
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)
        drift = float(np.abs(result.sum(-1) - d_np.sum(-1)).max())
        assert drift < 1e-11, drift
    np.testing.assert_array_equal(by_gtscript, by_next)

    origins = {name: (0, 0, 0) for name in arrays}
    times = stencil_times(stencil, backend, arrays, {}, origins, shape)
    times["gt4py.next program"] = per_call_us(lambda: program(*args, offset_provider={}), backend)
    report("tridiagonal solve", backend, shape, times)
    print(
        "  GTScript == gt4py.next (bitwise), both == numpy.linalg.solve (<= 1e-12),"
        f" column-sum drift {drift:.1e}"
    )
    return {"x": x, "expected": expected, "gtscript": by_gtscript, "next": by_next, "times": times}


if __name__ == "__main__":
    # a stencilkit name (embedded, cpu, gpu) or a gt4py.cartesian one (numpy, gt:cpu_kfirst, ...)
    main(cartesian_name(os.environ.get("STENCILKIT_EXAMPLE_BACKEND", "embedded")))
