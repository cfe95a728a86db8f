"""Running a model program on stencilkit's backends and comparing with the NumPy reference.

Inputs are random and never zero, outputs start as sentinels, tables are random (C2E with skip
values). Each field parameter is passed in its drawn layout: a C- or Fortran-ordered array, a
strided view into a padded buffer (the padding must stay untouched), a view with a negative
stride, a ``gtx.as_field`` field, or a field with a halo (a domain starting below 0).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from .model import FieldParam, Program
from .reference import evaluate
from .source import forget, load, render

BACKENDS = ("embedded", "cpu", "gpu", "embedded-cupy")
TOLERANCE = {"float64": (1e-9, 1e-10), "float32": (3e-4, 3e-5), "int32": (0.0, 0.0)}


@dataclass(frozen=True)
class Outcome:
    status: str  # "ok", "wrong" (a result differs from the reference), "error" (an exception)
    backend: str = ""
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def make_data(p: Program, round_: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The arrays (in each field's own index space) and the neighbour tables of one run."""
    rng = np.random.default_rng([p.data_seed, round_])
    dtype = np.dtype(p.dtype)
    arrays: dict[str, np.ndarray] = {}
    for i, f in enumerate(p.fields):
        if f.role == "out":
            arrays[f.name] = (
                np.full(f.shape, 300 + i + (0.25 if dtype.kind == "f" else 0), dtype=dtype)
                if dtype.kind == "f"
                else np.full(f.shape, 77 + i, dtype=dtype)
            )
        elif dtype.kind == "f":
            arrays[f.name] = (
                rng.choice([-1.0, 1.0], f.shape) * rng.uniform(0.5, 2.0, f.shape)
            ).astype(dtype)
        else:
            arrays[f.name] = (rng.choice([-1, 1], f.shape) * rng.integers(1, 10, f.shape)).astype(
                dtype
            )
    sizes = dict(p.sizes)
    tables: dict[str, np.ndarray] = {}
    if p.kind == "mesh":
        tables["E2C"] = rng.integers(0, sizes["Cell"], (sizes["Edge"], 2)).astype(np.int32)
        c2e = rng.integers(0, sizes["Edge"], (sizes["Cell"], 4)).astype(np.int32)
        c2e[rng.random(c2e.shape) < 0.25] = -1
        for r in p.skip_rows:
            c2e[r] = -1
        tables["C2E"] = c2e
    return arrays, tables


class Arg:
    """One field argument in its layout, and how to read it back (and check its padding)."""

    def __init__(
        self, f: FieldParam, base: np.ndarray, xp: Any, module: ModuleType, rng: np.random.Generator
    ) -> None:
        import stencilkit as gtx

        self.f, self.xp = f, xp
        self.buffer: Any = None
        self.wrapped = False  # a raw array wrapped by gtx.as_field for a direct call
        dims = [getattr(module, d) for d in f.dims]
        data = xp.asarray(base)
        axis = int(rng.integers(0, base.ndim)) if base.ndim else 0
        if f.layout == "C":
            self.value = xp.ascontiguousarray(data.copy())
        elif f.layout == "F":
            self.value = xp.asfortranarray(data)
        elif f.layout == "strided":
            shape = list(base.shape)
            shape[axis] = 2 * shape[axis] + 1
            fill = -4242 if base.dtype.kind == "i" else -4242.5
            self.buffer = xp.full(tuple(shape), fill, dtype=base.dtype)
            index = tuple(slice(1, None, 2) if a == axis else slice(None) for a in range(base.ndim))
            self.value = self.buffer[index]
            self.value[...] = data
            self.padding = xp.ones(self.buffer.shape, dtype=bool)
            self.padding[index] = False
            self.before = self.buffer.copy()
        elif f.layout == "reversed":
            self.value = xp.flip(xp.ascontiguousarray(xp.flip(data, axis)), axis)
        elif f.layout == "field":
            self.value = gtx.as_field(dims, data.copy())
        else:  # halo: a domain starting at the (negative) origin
            dom = gtx.domain({d: (o, o + n) for d, o, n in zip(dims, f.origin, f.shape)})
            self.value = gtx.as_field(dom, data.copy())

    def read(self) -> np.ndarray:
        if self.f.layout in ("field", "halo") or self.wrapped:
            return np.asarray(self.value.asnumpy())
        return np.asarray(self.value.get() if hasattr(self.value, "get") else self.value)

    def padding_problem(self) -> str | None:
        if self.buffer is None:
            return None
        changed = (self.buffer != self.before) & self.padding
        if bool(changed.any()):
            return f"{self.f.name}: the padding around its strided view was written"
        return None


def backend_object(name: str) -> Any:
    import stencilkit as gtx

    return {"embedded": None, "cpu": gtx.cpu, "gpu": gtx.gpu, "embedded-cupy": None}[name]


def on_gpu(name: str) -> bool:
    return name in ("gpu", "embedded-cupy")


def _namespace(name: str) -> Any:
    if on_gpu(name):
        import cupy

        return cupy
    return np


def run(
    p: Program, module: ModuleType, backend: str, round_: int, prog: Any
) -> tuple[dict[str, np.ndarray], list[str]]:
    """One call of ``prog`` on fresh data; the fields afterwards and any padding problems."""
    import stencilkit as gtx

    arrays, tables = make_data(p, round_)
    xp = _namespace(backend)
    rng = np.random.default_rng([p.data_seed, round_, 7])
    args = {f.name: Arg(f, arrays[f.name], xp, module, rng) for f in p.fields}
    scalars = {s.name: np.dtype(s.dtype or p.dtype).type(s.value) for s in p.scalars}
    provider: dict[str, Any] = {}
    if p.kind == "mesh":
        alloc = gtx.gpu if on_gpu(backend) else None
        provider["E2C"] = gtx.as_connectivity(
            [module.Edge, module.E2CDim], module.Cell, tables["E2C"], allocator=alloc
        )
        provider["C2E"] = gtx.as_connectivity(
            [module.Cell, module.C2EDim], module.Edge, tables["C2E"], skip_value=-1, allocator=alloc
        )
    if p.direct:
        _direct_calls(p, module, backend, args, scalars, provider)
    else:
        prog(
            *[args[n].value if n in args else scalars[n] for n in p.order], offset_provider=provider
        )
    if on_gpu(backend):
        xp.cuda.runtime.deviceSynchronize()
    problems = [m for a in args.values() if (m := a.padding_problem())]
    return {n: a.read() for n, a in args.items()}, problems


def _direct_calls(
    p: Program,
    module: ModuleType,
    backend: str,
    args: dict[str, Arg],
    scalars: dict[str, Any],
    provider: dict[str, Any],
) -> None:
    """Each statement as ``op.with_backend(b)(args..., out=..., domain=...)`` on fields."""
    import stencilkit as gtx

    for a in args.values():
        if not isinstance(a.value, gtx.Field):
            a.value = gtx.as_field([getattr(module, d) for d in a.f.dims], a.value)
            a.wrapped = True
    for st in p.statements:
        op = getattr(module, st.op).with_backend(backend_object(backend))
        values = [args[n].value if n in args else scalars[n] for n in st.args]
        outs = tuple(args[o].value for o in st.outs)
        domain = (
            None if st.domain is None else {getattr(module, d): (lo, hi) for d, lo, hi in st.domain}
        )
        op(
            *values,
            out=outs[0] if len(outs) == 1 else outs,
            domain=domain,
            offset_provider=provider,
        )


def compare(p: Program, ref: dict[str, np.ndarray], got: dict[str, np.ndarray]) -> list[str]:
    rtol, atol_factor = TOLERANCE[p.dtype]
    peaks = dict(p.peaks)
    problems = []
    for f in p.fields:
        r, g = ref[f.name], got[f.name]
        if r.shape != g.shape:
            problems.append(f"{f.name}: shape {g.shape}, expected {r.shape}")
            continue
        atol = atol_factor * max(1.0, peaks.get(f.name, 1.0))
        bad = ~(
            np.isclose(g, r, rtol=rtol, atol=atol, equal_nan=True)
            if r.dtype.kind == "f"
            else g == r
        )
        if bad.any():
            where = np.argwhere(bad)[:4]
            shown = ", ".join(
                f"{tuple(int(i) for i in w)}: got {g[tuple(w)]!r}, expected {r[tuple(w)]!r}"
                for w in where
            )
            problems.append(f"{f.name}: {int(bad.sum())} of {bad.size} points differ ({shown})")
    return problems


def check(
    p: Program,
    backends: Sequence[str],
    rounds: int = 2,
    on_module: Callable[[ModuleType], None] | None = None,
) -> Outcome:
    """Build ``p`` for each backend, run it ``rounds`` times on fresh data, compare each run."""
    source = render(p)
    try:
        module = load(source)
    except Exception:
        return Outcome("error", "import", traceback.format_exc(limit=6))
    try:
        for backend in backends:
            try:
                prog = module.build(backend_object(backend))
            except Exception:
                return Outcome("error", backend, traceback.format_exc(limit=8))
            for r in range(rounds):
                arrays, tables = make_data(p, r)
                ref = evaluate(p, arrays, tables)
                try:
                    got, problems = run(p, module, backend, r, prog)
                except Exception:
                    return Outcome("error", backend, traceback.format_exc(limit=8))
                problems += compare(p, ref, got)
                if problems:
                    return Outcome("wrong", backend, f"round {r}: " + "; ".join(problems))
        return Outcome("ok")
    finally:
        forget(module)
