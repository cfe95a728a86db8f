"""A vertical tridiagonal solve per column (the Thomas algorithm) with two scans.

For every column ``(i, j)`` solve ``a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] = d[k]``, the system
of implicit vertical diffusion or of a vertically implicit sound-wave solver:

1. a forward scan whose carry is the tuple ``(c', d')`` of the eliminated coefficients,
   written to two output fields at once (``out=(cp, dp)``);
2. a backward scan for the back substitution ``x[k] = d'[k] - c'[k] x[k+1]``.

The two scans are two statements of one program; both write the columns of the horizontal
window ``[i0, i1) x [j0, j1)`` given as scalar arguments.

Run it: ``python examples/tridiagonal.py`` (embedded backend) or
``STENCILKIT_EXAMPLE_BACKEND=cpu python examples/tridiagonal.py`` (or ``gpu``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import stencilkit as gtx

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
IJKField = gtx.Field[gtx.Dims[I, J, K], gtx.float64]


@gtx.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def tridiag_forward(
    state: tuple[float, float], a: float, b: float, c: float, d: float
) -> tuple[float, float]:
    cp_above, dp_above = state
    denominator = b - a * cp_above
    return c / denominator, (d - a * dp_above) / denominator


@gtx.scan_operator(axis=K, forward=False, init=0.0)
def tridiag_backward(x_below: float, cp: float, dp: float) -> float:
    return dp - cp * x_below


@gtx.program
def solve_tridiagonal(
    a: IJKField,
    b: IJKField,
    c: IJKField,
    d: IJKField,
    cp: IJKField,
    dp: IJKField,
    x: IJKField,
    i0: gtx.int32,
    i1: gtx.int32,
    j0: gtx.int32,
    j1: gtx.int32,
    nk: gtx.int32,
):
    tridiag_forward(a, b, c, d, out=(cp, dp), domain={I: (i0, i1), J: (j0, j1), K: (0, nk)})
    tridiag_backward(cp, dp, out=x, domain={I: (i0, i1), J: (j0, j1), K: (0, nk)})


def solve_numpy(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The reference: ``numpy.linalg.solve`` on the dense matrix of every column."""
    x = np.empty_like(d)
    for i, j in np.ndindex(d.shape[:2]):
        m = np.diag(b[i, j]) + np.diag(a[i, j, 1:], -1) + np.diag(c[i, j, :-1], 1)
        x[i, j] = np.linalg.solve(m, d[i, j])
    return x


def diffusion_system(alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``a, b, c`` of backward-Euler vertical diffusion with zero flux at top and bottom.

    ``alpha[..., k]`` couples levels ``k`` and ``k + 1`` (the last level's value is unused), so
    the scheme conserves each column's sum: ``x.sum(-1) == d.sum(-1)``.
    """
    a, c = np.zeros_like(alpha), np.zeros_like(alpha)
    a[..., 1:] = -alpha[..., :-1]
    c[..., :-1] = -alpha[..., :-1]
    return a, 1.0 - a - c, c


def run(
    backend: object,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    d: np.ndarray,
    scratch: tuple[np.ndarray, np.ndarray, np.ndarray],
    window: tuple[int, int, int, int] | None = None,
    allocator: object = None,
) -> np.ndarray:
    """Solves on ``backend`` over ``window = (i0, i1, j0, j1)`` (all columns by default).

    ``scratch`` holds the initial contents of ``cp``, ``dp`` and ``x``; returns ``x``.
    """
    ni, nj, nk = d.shape
    i0, i1, j0, j1 = window or (0, ni, 0, nj)
    fields = [gtx.as_field([I, J, K], v, allocator=allocator) for v in (a, b, c, d, *scratch)]
    solve_tridiagonal.with_backend(backend)(*fields, i0, i1, j0, j1, nk, offset_provider={})
    return np.asarray(fields[-1].asnumpy())


def main(backend: object = None) -> None:
    rng = np.random.default_rng(0)
    shape = (12, 10, 40)
    a, b, c = diffusion_system(0.5 + rng.random(shape))
    d = rng.random(shape)
    x = run(
        backend, a, b, c, d, (np.zeros(shape), np.zeros(shape), np.zeros(shape)), allocator=backend
    )
    err = np.abs(x - solve_numpy(a, b, c, d)).max()
    drift = np.abs(x.sum(-1) - d.sum(-1)).max()
    print(
        f"tridiagonal solve {shape} on {backend or 'embedded'}: max |stencilkit - numpy| ="
        f" {err:.2e}, max column-sum drift {drift:.2e}"
    )
    assert err < 1e-12 and drift < 1e-12


def example_backend() -> Any:
    """The backend named by ``STENCILKIT_EXAMPLE_BACKEND``: embedded (default), cpu or gpu."""
    name = os.environ.get("STENCILKIT_EXAMPLE_BACKEND", "embedded")
    backends = {"embedded": None, "cpu": gtx.cpu, "gpu": gtx.gpu}
    if name not in backends:
        raise SystemExit(f"STENCILKIT_EXAMPLE_BACKEND={name!r}: use one of {', '.join(backends)}")
    return backends[name]


if __name__ == "__main__":
    main(example_backend())
