"""The shallow-water model of ``shallow_water.py`` on N MPI ranks, bitwise equal to one process.

The same program (``lax_wendroff_step``) runs on every rank over the rank's part of the grid,
given by global indices; the only changes from the one-process model are these lines::

    d = dist.decompose({I: (1, n + 1), J: (1, n + 1)}, periodic=True)     # the process grid
    h = dist.scatter(d, [I, J], h0, halo=1, name="h")                    # rank 0's array
    step = dist.distribute(lax_wendroff_step)                            # halo checks
    step(..., *bounds_of_this_rank, offset_provider={})
    dist.exchange(h_new, hu_new, hv_new)                                 # instead of the periodic copy

Run it with ``stencilkit demo --ranks 4`` or ``mpiexec -n 4 python -m stencilkit.models.shallow_water_mpi``.
Rank 0 gathers the result and compares it bit for bit with the one-process model.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import stencilkit as gtx
from stencilkit import distributed as dist

from ..core.records import record
from .shallow_water import (
    BACKENDS,
    CFL,
    GRAVITY,
    I,
    J,
    ShallowWater,
    initial_state,
    lax_wendroff_step,
)


class DistributedShallowWater:
    """The model state decomposed over the ranks of ``comm``: (h, hu, hv) with a one-cell halo."""

    def __init__(
        self, size: int, backend: Any = None, comm: Any = None, method: str | None = None
    ) -> None:
        on_gpu = backend is gtx.gpu
        allocator = backend if on_gpu else np
        self.d = dist.decompose(
            {I: (1, size + 1), J: (1, size + 1)}, periodic=True, comm=comm, gpu=on_gpu
        )
        self.size = size
        self.method = method
        self.dx = self.dy = 1.0 / size
        h0, hu0, hv0 = initial_state(size)  # every rank: dt must be the same everywhere
        speed = float(np.max(np.abs(hu0 / h0) + np.sqrt(GRAVITY * h0)))
        self.dt = CFL * self.dx / speed
        root = self.d.rank == 0
        self.state = [
            dist.scatter(
                self.d, [I, J], q if root else None, halo=1, name=name, allocator=allocator
            )
            for q, name in zip((h0, hu0, hv0), ("h", "hu", "hv"))
        ]
        self.next = [
            self.d.zeros([I, J], halo=1, name=f"{n}_new", allocator=allocator)
            for n in ("h", "hu", "hv")
        ]
        self.scratch = [
            self.d.zeros([I, J], halo=1, name=n, allocator=allocator)
            for n in ("hx", "hux", "hvx", "hy", "huy", "hvy")
        ]
        self._step = dist.distribute(lax_wendroff_step.with_backend(backend))
        ri, rj = self.d.owned_range(I), self.d.owned_range(J)
        self.bounds = (ri.start, ri.stop, rj.start, rj.stop)

    def step(self) -> None:
        self._step(
            *self.state,
            *self.scratch,
            *self.next,
            GRAVITY,
            self.dt,
            self.dx,
            self.dy,
            *self.bounds,
            offset_provider={},
        )
        self.d.exchange(*self.next, method=self.method)
        self.state, self.next = self.next, self.state

    def gather(self) -> list[np.ndarray[Any, Any]] | None:
        """(h, hu, hv) of the whole grid on rank 0 (None elsewhere)."""
        parts = [dist.gather(q) for q in self.state]
        return None if parts[0] is None else [p for p in parts if p is not None]


@record
class DistributedResult:
    backend: str
    ranks: int
    grid: tuple[int, ...]
    steps: int
    size: int
    steps_s: float
    bitwise_equal: bool | None  # against the one-process model (rank 0 only; None elsewhere)
    max_abs_diff: float
    mass: float

    @property
    def ok(self) -> bool:
        return bool(self.bitwise_equal)


def run(
    backend: Any = None,
    steps: int = 50,
    size: int = 64,
    comm: Any = None,
    method: str | None = None,
    compare: bool = True,
) -> DistributedResult:
    """Run the decomposed model ``steps`` steps; on rank 0 also the one-process model, compared
    bit for bit (``compare=False`` skips it, e.g. for timing)."""
    if isinstance(backend, str):
        backend = BACKENDS[backend]
    name = "embedded" if backend is None else str(getattr(backend, "name", backend))
    model = DistributedShallowWater(size, backend, comm, method)
    model.step()  # compiles
    model.d.comm.Barrier()
    t0 = time.perf_counter()
    for _ in range(steps - 1):
        model.step()
    final = model.gather()
    steps_s = time.perf_counter() - t0
    mass = dist.global_sum(model.state[0])
    equal, diff = None, float("nan")
    if final is not None and compare:
        one = ShallowWater(size, backend)
        for _ in range(steps):
            one.step()
        ref = one.interior()
        equal = all(np.array_equal(a, b) for a, b in zip(final, ref, strict=True))
        diff = max(float(np.max(np.abs(a - b))) for a, b in zip(final, ref, strict=True))
    return DistributedResult(
        name, model.d.size, model.d.grid, steps, size, steps_s, equal, diff, mass
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``mpiexec -n N python -m stencilkit.models.shallow_water_mpi [--backend cpu] ...``"""
    p = argparse.ArgumentParser(description="the shallow-water demo on MPI ranks, checked bitwise")
    p.add_argument("--backend", choices=tuple(BACKENDS), default="embedded")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--method", choices=("direct", "packed", "staged"), default=None)
    args = p.parse_args(argv)
    with dist.abort_on_error():
        r = run(args.backend, args.steps, args.size, method=args.method)
    if r.bitwise_equal is None:
        return 0
    print(
        f"nonlinear shallow water, {r.size}x{r.size} periodic grid, {r.steps} steps, backend {r.backend},"
        f" {r.ranks} rank{'s' if r.ranks > 1 else ''} (process grid {'x'.join(map(str, r.grid))})"
    )
    print(f"  steps            {r.steps_s:.3f} s (halo exchanges included)")
    print(f"  total mass       {r.mass:.12f}")
    print(
        f"  vs one process   {'bitwise identical' if r.bitwise_equal else 'DIFFERENT'}"
        f" (max abs difference {r.max_abs_diff:.1e})"
    )
    print("check passed" if r.ok else "CHECK FAILED")
    sys.stdout.flush()
    return 0 if r.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
