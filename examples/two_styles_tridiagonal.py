"""A vertical tridiagonal solve per column (Thomas algorithm), on storages shared by both
frontends.

For every column solve ``a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] = d[k]``: backward-Euler
vertical diffusion with zero flux at the top and the bottom, as in a vertically implicit
solver. The forward sweep eliminates the lower diagonal level by level (GTScript: a FORWARD
computation reading ``cp[0, 0, -1]``, two fields written per level; gt4py.next: a forward
``scan_operator`` with a tuple carry, ``examples/tridiagonal.py``), the backward sweep
substitutes from the top down.

The arrays come from ``gt4py.storage`` (``stencilkit.cartesian.storage``) for a gt4py.cartesian
backend name; the program reads and writes them through ``as_field(..., copy=False)``. The
result is checked against ``numpy.linalg.solve`` per column and for conservation.

Run it: ``python examples/two_styles_tridiagonal.py [numpy | gt:cpu_ifirst | gt:cpu_kfirst | gt:gpu]``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tridiagonal import diffusion_system, solve_numpy, solve_tridiagonal
from two_styles_common import (
    backend_of,
    per_call_us,
    random_storage,
    report,
    shared_field,
    to_numpy,
)

from stencilkit.cartesian import storage as gt_storage


def main(backend: str = "numpy", shape: tuple[int, int, int] = (24, 20, 60)) -> dict[str, Any]:
    """Solves every column on ``backend`` (a gt4py.cartesian name); returns arrays and times."""
    rng = np.random.default_rng(7)
    a_np, b_np, c_np = diffusion_system(0.5 + rng.random(shape))
    a, b, c = (gt_storage.from_array(v, backend=backend) for v in (a_np, b_np, c_np))
    d = random_storage(rng, shape, backend)
    x = random_storage(rng, shape, backend, low=-2.0, high=-1.0)
    cp, dp = (gt_storage.zeros(shape, backend=backend) for _ in range(2))

    program = solve_tridiagonal.with_backend(backend_of(backend))
    fields = [shared_field(v) for v in (a, b, c, d, cp, dp, x)]
    ni, nj, nk = shape
    args = (*fields, 0, ni, 0, nj, nk)
    program(*args, offset_provider={})

    d_np, x_np = to_numpy(d), to_numpy(x)
    expected = solve_numpy(a_np, b_np, c_np, d_np)
    np.testing.assert_allclose(x_np, expected, rtol=1e-12, atol=1e-12)
    drift = float(np.abs(x_np.sum(-1) - d_np.sum(-1)).max())
    assert drift < 1e-11, drift

    times = {"gt4py.next program": per_call_us(lambda: program(*args, offset_provider={}), backend)}
    report("tridiagonal solve", backend, shape, times)
    print(f"  gt4py.next == numpy.linalg.solve (<= 1e-12), column-sum drift {drift:.1e}")
    return {"x": x, "expected": expected, "times": times}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "numpy")
