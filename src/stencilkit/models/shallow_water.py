# DSL code is not plain typed Python for mypy: stencilkit's Field/Dims are not generic to it, the
# dtypes are assigned as variables (core/dtypes.py), shifts call a Field, and programs carry no
# return annotation (the frontend rejects ``-> None``).
# mypy: disable-error-code="valid-type, type-arg, operator, no-untyped-def"
"""Nonlinear 2-D shallow water on a doubly periodic grid, written with the DSL.

The state is the conserved triple (h, hu, hv) at cell centres; the scheme is the two-step
Lax-Wendroff (Richtmyer) method, second order in space and time::

    half step:  q[i+1/2] = (q[i+1] + q[i]) / 2 - dt / (2 dx) * (F(q)[i+1] - F(q)[i])
    full step:  q[i] -= dt / dx * (F(q[i+1/2]) - F(q[i-1/2]))   (and the same along J)

with the fluxes F_x = (hu, hu^2/h + g h^2/2, hu hv/h), F_y = (hv, hu hv/h, hv^2/h + g h^2/2).
Written in flux form on a periodic grid, the sum of h is conserved to rounding.

Each field carries a halo of one cell. One time step is one program that calls three field
operators (the half steps in I and J, then the full step); the half-step values at ``i+1/2``
are stored at index ``i`` in temporaries computed one cell into the low halo, so every stencil
reads at most one cell beyond the interior. Between steps the halos are refilled periodically
with array slicing on ``field.ndarray``, which works on NumPy and CuPy buffers alike, so on the
gpu backend the state never leaves the device.

>>> result = run_demo(None, steps=10, size=32, progress=False)
>>> result.ok
True
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32

from ..core.records import record

I = gtx.Dimension("I")
J = gtx.Dimension("J")
CellField = Field[Dims[I, J], float64]

GRAVITY = 9.81
CFL = 0.25
MASS_TOLERANCE = 1e-12  # relative change of the total mass
REFERENCE_TOLERANCE = 1e-10  # max abs difference to the NumPy implementation


# --- the model, in the DSL ---------------------------------------------------------------------


@gtx.field_operator
def flux_x(
    h: CellField, hu: CellField, hv: CellField, g: float64
) -> tuple[CellField, CellField, CellField]:
    u = hu / h
    return hu, hu * u + 0.5 * g * h * h, hv * u


@gtx.field_operator
def flux_y(
    h: CellField, hu: CellField, hv: CellField, g: float64
) -> tuple[CellField, CellField, CellField]:
    v = hv / h
    return hv, hu * v, hv * v + 0.5 * g * h * h


@gtx.field_operator
def half_step_x(
    h: CellField, hu: CellField, hv: CellField, g: float64, dt: float64, dx: float64
) -> tuple[CellField, CellField, CellField]:
    fh, fu, fv = flux_x(h, hu, hv, g)
    c = 0.5 * dt / dx
    return (
        0.5 * (h(I + 1) + h) - c * (fh(I + 1) - fh),
        0.5 * (hu(I + 1) + hu) - c * (fu(I + 1) - fu),
        0.5 * (hv(I + 1) + hv) - c * (fv(I + 1) - fv),
    )


@gtx.field_operator
def half_step_y(
    h: CellField, hu: CellField, hv: CellField, g: float64, dt: float64, dy: float64
) -> tuple[CellField, CellField, CellField]:
    fh, fu, fv = flux_y(h, hu, hv, g)
    c = 0.5 * dt / dy
    return (
        0.5 * (h(J + 1) + h) - c * (fh(J + 1) - fh),
        0.5 * (hu(J + 1) + hu) - c * (fu(J + 1) - fu),
        0.5 * (hv(J + 1) + hv) - c * (fv(J + 1) - fv),
    )


@gtx.field_operator
def full_step(
    h: CellField,
    hu: CellField,
    hv: CellField,
    hx: CellField,
    hux: CellField,
    hvx: CellField,
    hy: CellField,
    huy: CellField,
    hvy: CellField,
    g: float64,
    dt: float64,
    dx: float64,
    dy: float64,
) -> tuple[CellField, CellField, CellField]:
    # hx, hux, hvx hold the state at i+1/2 (stored at i); hy, huy, hvy at j+1/2 (stored at j)
    fxh, fxu, fxv = flux_x(hx, hux, hvx, g)
    fyh, fyu, fyv = flux_y(hy, huy, hvy, g)
    cx = dt / dx
    cy = dt / dy
    return (
        h - cx * (fxh - fxh(I - 1)) - cy * (fyh - fyh(J - 1)),
        hu - cx * (fxu - fxu(I - 1)) - cy * (fyu - fyu(J - 1)),
        hv - cx * (fxv - fxv(I - 1)) - cy * (fyv - fyv(J - 1)),
    )


@gtx.program
def lax_wendroff_step(
    h: CellField,
    hu: CellField,
    hv: CellField,
    hx: CellField,
    hux: CellField,
    hvx: CellField,
    hy: CellField,
    huy: CellField,
    hvy: CellField,
    h_new: CellField,
    hu_new: CellField,
    hv_new: CellField,
    g: float64,
    dt: float64,
    dx: float64,
    dy: float64,
    i0: int32,
    i1: int32,
    j0: int32,
    j1: int32,
):
    # the interior is [i0, i1) x [j0, j1): the whole grid on one process, a rank's part on N
    half_step_x(h, hu, hv, g, dt, dx, out=(hx, hux, hvx), domain={I: (i0 - 1, i1), J: (j0, j1)})
    half_step_y(h, hu, hv, g, dt, dy, out=(hy, huy, hvy), domain={I: (i0, i1), J: (j0 - 1, j1)})
    # fmt: off
    full_step(
        h, hu, hv, hx, hux, hvx, hy, huy, hvy, g, dt, dx, dy,
        out=(h_new, hu_new, hv_new),
        domain={I: (i0, i1), J: (j0, j1)},
    )
    # fmt: on


def fill_periodic_halo(field: gtx.Field) -> None:
    """Copy the opposite interior edges into the one-cell halo (corners included)."""
    a = field.ndarray
    a[0, :] = a[-2, :]
    a[-1, :] = a[1, :]
    a[:, 0] = a[:, -2]
    a[:, -1] = a[:, 1]


# --- driver --------------------------------------------------------------------------------------


def initial_state(size: int) -> tuple[np.ndarray[Any, Any], ...]:
    """A Gaussian bump of water in a uniform diagonal current on the unit square (interior only)."""
    x = (np.arange(size) + 0.5) / size
    X, Y = np.meshgrid(x, x, indexing="ij")
    h = 1.0 + 0.2 * np.exp(-((X - 0.4) ** 2 + (Y - 0.55) ** 2) / (2 * 0.06**2))
    return h, 0.5 * h, 0.25 * h


class ShallowWater:
    """The model state on one backend: (h, hu, hv) with a one-cell halo, plus six temporaries."""

    def __init__(self, size: int, backend: Any = None) -> None:
        allocator = backend if backend is not None else np
        self.size = size
        self.dx = self.dy = 1.0 / size
        h0, hu0, hv0 = initial_state(size)
        speed = float(np.max(np.abs(hu0 / h0) + np.sqrt(GRAVITY * h0)))
        self.dt = CFL * self.dx / speed
        shape = {I: size + 2, J: size + 2}

        def with_halo(interior: np.ndarray[Any, Any]) -> gtx.Field:
            field = gtx.as_field([I, J], np.pad(interior, 1, mode="wrap"), allocator=allocator)
            return field

        self.state = [with_halo(q) for q in (h0, hu0, hv0)]
        self.next = [gtx.zeros(shape, dtype=gtx.float64, allocator=allocator) for _ in range(3)]
        self.scratch = [gtx.zeros(shape, dtype=gtx.float64, allocator=allocator) for _ in range(6)]
        self._step = lax_wendroff_step.with_backend(backend)

    def step(self) -> None:
        self._step(
            *self.state,
            *self.scratch,
            *self.next,
            GRAVITY,
            self.dt,
            self.dx,
            self.dy,
            1,
            self.size + 1,
            1,
            self.size + 1,
            offset_provider={},
        )
        for field in self.next:
            fill_periodic_halo(field)
        self.state, self.next = self.next, self.state

    def interior(self) -> list[np.ndarray[Any, Any]]:
        """(h, hu, hv) without halo, as NumPy arrays (copied to the host from a GPU)."""
        return [q.asnumpy()[1:-1, 1:-1].copy() for q in self.state]

    def mass(self) -> float:
        return float(self.state[0].ndarray[1:-1, 1:-1].sum())


def numpy_step(
    q: list[np.ndarray[Any, Any]], g: float, dt: float, dx: float, dy: float
) -> list[np.ndarray[Any, Any]]:
    """The same scheme in plain NumPy, periodic through ``np.roll`` (no halos): the reference."""

    def fx(h: Any, hu: Any, hv: Any) -> list[Any]:
        u = hu / h
        return [hu, hu * u + 0.5 * g * h * h, hv * u]

    def fy(h: Any, hu: Any, hv: Any) -> list[Any]:
        v = hv / h
        return [hv, hu * v, hv * v + 0.5 * g * h * h]

    def half(q: list[Any], f: list[Any], axis: int, c: float) -> list[Any]:
        return [
            0.5 * (np.roll(a, -1, axis) + a) - c * (np.roll(fa, -1, axis) - fa)
            for a, fa in zip(q, f, strict=True)
        ]

    mx = half(q, fx(*q), 0, 0.5 * dt / dx)
    my = half(q, fy(*q), 1, 0.5 * dt / dy)
    gx, gy = fx(*mx), fy(*my)
    cx, cy = dt / dx, dt / dy
    return [
        a - cx * (ax - np.roll(ax, 1, 0)) - cy * (ay - np.roll(ay, 1, 1))
        for a, ax, ay in zip(q, gx, gy, strict=True)
    ]


@record
class DemoResult:
    """What ``run_demo`` measured and checked."""

    backend: str
    steps: int
    size: int
    mass_initial: float
    mass_final: float
    max_abs_diff: float  # against the NumPy implementation of the same scheme
    first_step_s: float  # includes compilation on the compiled backends
    steps_s: float  # the remaining steps, halo updates included
    reference_s: float  # the NumPy reference, all steps
    height_range: tuple[float, float]

    @property
    def mass_rel_error(self) -> float:
        return abs(self.mass_final - self.mass_initial) / abs(self.mass_initial)

    @property
    def mass_ok(self) -> bool:
        return self.mass_rel_error <= MASS_TOLERANCE

    @property
    def reference_ok(self) -> bool:
        return self.max_abs_diff < REFERENCE_TOLERANCE  # False for NaN too

    @property
    def ok(self) -> bool:
        lo, hi = self.height_range
        return self.mass_ok and self.reference_ok and math.isfinite(lo) and math.isfinite(hi)


BACKENDS: dict[str, Any] = {"embedded": None, "cpu": gtx.cpu, "gpu": gtx.gpu}


def run_demo(
    backend: Any = None, steps: int = 200, size: int = 128, progress: bool = True
) -> DemoResult:
    """Run the shallow-water model for ``steps`` steps on a ``size`` x ``size`` grid on ``backend``
    (``None``/"embedded", ``gtx.cpu``/"cpu", ``gtx.gpu``/"gpu") and, side by side, the NumPy
    implementation of the same scheme; return both checks (mass conservation, agreement)."""
    if isinstance(backend, str):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        backend = BACKENDS[backend]
    if steps < 1 or size < 4:
        raise ValueError(f"need steps >= 1 and size >= 4, got steps={steps}, size={size}")
    name = "embedded" if backend is None else str(getattr(backend, "name", backend))

    from rich.console import Console
    from rich.progress import Progress

    model = ShallowWater(size, backend)
    reference = initial_state(size)
    ref_state = list(reference)
    mass_initial = float(model.interior()[0].sum())  # summed as the final mass is
    first_step_s = steps_s = reference_s = 0.0
    # the bar goes to stderr so that the printed results stay clean on stdout
    with Progress(console=Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task(f"shallow water on {name}", total=steps)
        t0 = time.perf_counter()
        model.step()
        model.mass()  # synchronizes a GPU
        first_step_s = time.perf_counter() - t0
        bar.advance(task)
        t0 = time.perf_counter()
        for _ in range(steps - 1):
            model.step()
            bar.advance(task)
        final = model.interior()  # synchronizes a GPU
        steps_s = time.perf_counter() - t0
        ref_task = bar.add_task("numpy reference", total=steps)
        t0 = time.perf_counter()
        for _ in range(steps):
            ref_state = numpy_step(ref_state, GRAVITY, model.dt, model.dx, model.dy)
            bar.advance(ref_task)
        reference_s = time.perf_counter() - t0

    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(final, ref_state, strict=True))
    return DemoResult(
        backend=name,
        steps=steps,
        size=size,
        mass_initial=mass_initial,
        mass_final=float(final[0].sum()),
        max_abs_diff=diff,
        first_step_s=first_step_s,
        steps_s=steps_s,
        reference_s=reference_s,
        height_range=(float(final[0].min()), float(final[0].max())),
    )
