"""COSMO horizontal diffusion, the classic GT4Py ``hdiff`` benchmark, on an (I, J, K) grid.

Fourth-order diffusion with flux limiting: the Laplacian of the input, fluxes of the Laplacian
in I and J that are set to zero where they would sharpen a local extremum (``where``), and the
update ``out = in - coeff * div(flux)``. Each output point reads two cells around it, so the
fields carry a halo of 2 and the program writes the interior ``[2, n - 2)`` in I and J only.

Run it: ``python examples/hdiff.py`` (embedded backend) or
``STENCILKIT_EXAMPLE_BACKEND=cpu python examples/hdiff.py`` (or ``gpu``).
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

HALO = 2


@gtx.field_operator
def laplacian(in_field: IJKField) -> IJKField:
    return 4.0 * in_field - (in_field(I + 1) + in_field(I - 1) + in_field(J + 1) + in_field(J - 1))


@gtx.field_operator
def flux_x(in_field: IJKField, lap: IJKField) -> IJKField:
    res = lap(I + 1) - lap
    return gtx.where(res * (in_field(I + 1) - in_field) > 0.0, 0.0, res)


@gtx.field_operator
def flux_y(in_field: IJKField, lap: IJKField) -> IJKField:
    res = lap(J + 1) - lap
    return gtx.where(res * (in_field(J + 1) - in_field) > 0.0, 0.0, res)


@gtx.field_operator
def hdiff(in_field: IJKField, coeff: IJKField) -> IJKField:
    lap = laplacian(in_field)
    flx = flux_x(in_field, lap)
    fly = flux_y(in_field, lap)
    return in_field - coeff * (flx - flx(I - 1) + fly - fly(J - 1))


@gtx.program
def hdiff_program(
    in_field: IJKField,
    coeff: IJKField,
    out_field: IJKField,
    ni: gtx.int32,
    nj: gtx.int32,
    nk: gtx.int32,
):
    hdiff(
        in_field,
        coeff,
        out=out_field,
        domain={I: (HALO, ni - HALO), J: (HALO, nj - HALO), K: (0, nk)},
    )


def hdiff_numpy(in_field: np.ndarray, coeff: np.ndarray) -> np.ndarray:
    """The reference: the interior ``[2:-2, 2:-2, :]`` of the result."""
    lap = 4.0 * in_field[1:-1, 1:-1] - (
        in_field[2:, 1:-1] + in_field[:-2, 1:-1] + in_field[1:-1, 2:] + in_field[1:-1, :-2]
    )
    res = lap[1:, 1:-1] - lap[:-1, 1:-1]  # flux between i and i+1, for i in [1, n-2)
    flx = np.where(res * (in_field[2:-1, 2:-2] - in_field[1:-2, 2:-2]) > 0.0, 0.0, res)
    res = lap[1:-1, 1:] - lap[1:-1, :-1]
    fly = np.where(res * (in_field[2:-2, 2:-1] - in_field[2:-2, 1:-2]) > 0.0, 0.0, res)
    return in_field[2:-2, 2:-2] - coeff[2:-2, 2:-2] * (
        flx[1:] - flx[:-1] + fly[:, 1:] - fly[:, :-1]
    )


def run(
    backend: object,
    in_data: np.ndarray,
    coeff_data: np.ndarray,
    out_data: np.ndarray,
    allocator: object = None,
) -> np.ndarray:
    """Runs the program on ``backend`` with fields on ``allocator``'s device; returns ``out``."""
    ni, nj, nk = in_data.shape
    in_field = gtx.as_field([I, J, K], in_data, allocator=allocator)
    coeff = gtx.as_field([I, J, K], coeff_data, allocator=allocator)
    out_field = gtx.as_field([I, J, K], out_data, allocator=allocator)
    hdiff_program.with_backend(backend)(in_field, coeff, out_field, ni, nj, nk, offset_provider={})
    return np.asarray(out_field.asnumpy())


def main(backend: object = None) -> None:
    rng = np.random.default_rng(0)
    shape = (32 + 2 * HALO, 24 + 2 * HALO, 8)
    in_data = rng.random(shape)
    coeff = 0.025 * rng.random(shape)
    out = run(backend, in_data, coeff, np.zeros(shape), allocator=backend)
    err = np.abs(out[HALO:-HALO, HALO:-HALO] - hdiff_numpy(in_data, coeff)).max()
    print(f"hdiff {shape} on {backend or 'embedded'}: max |stencilkit - numpy| = {err:.2e}")
    assert err < 1e-12


def example_backend() -> Any:
    """The backend named by ``STENCILKIT_EXAMPLE_BACKEND``: embedded (default), cpu or gpu."""
    name = os.environ.get("STENCILKIT_EXAMPLE_BACKEND", "embedded")
    backends = {"embedded": None, "cpu": gtx.cpu, "gpu": gtx.gpu}
    if name not in backends:
        raise SystemExit(f"STENCILKIT_EXAMPLE_BACKEND={name!r}: use one of {', '.join(backends)}")
    return backends[name]


if __name__ == "__main__":
    main(example_backend())
