"""pyFV3's dynamical core stepped end to end through NDSL, on stencilkit (through its gt4py
alias) or on a real gt4py, with pyFV3's own set-up code unchanged.

The set-up is ``setup_dycore()`` of pyFV3's ``tests/mpi/test_doubly_periodic.py`` (a doubly
periodic 3 x 3 layout of 4 x 4 x 79 subtiles, Jablonowski-Williamson baroclinic state), imported
from the checkout as it is. Three things it hard-codes are redirected from outside, without
editing it: the backend (NDSL's ``CompilationConfig`` and ``QuantityFactory.from_backend`` get
``--backend`` where the test says ``"numpy"``), the eta file (the test names
``/pyFV3/test_data/eta79.nc``; ``--eta-file`` is read instead) and the stale call (the test
passes ``(state, consv_te, bdt, n_split)``, pyFV3's ``DynamicalCore.step_dynamics`` takes
``(state, timer)``: this driver calls ``step_dynamics(state)``). Run it on 9 ranks::

    mpiexec -np 9 python benchmarks/pyfv3_dycore.py run --impl stencilkit --backend numpy \\
        --pyfv3 /path/to/pyFV3 --eta-file /path/to/eta79.nc --steps 2 --out /tmp/fv3/sk-numpy
    mpiexec -np 9 /oracle/bin/python benchmarks/pyfv3_dycore.py run --impl gt4py ... --out ...
    python benchmarks/pyfv3_dycore.py compare /tmp/fv3/gt-numpy /tmp/fv3/sk-numpy

``--impl stencilkit`` installs stencilkit's gt4py alias before NDSL is imported (no real gt4py
may be installed then); ``--impl gt4py`` uses whatever gt4py the interpreter has. Each rank
writes ``rank<r>.npz`` (every prognostic field of the state after each step, key
``<field>@<step>``, step 0 the initial state) and ``timing_rank<r>.json`` (set-up and
per-step wall times). ``compare`` prints, per field of the last step (or ``--step N``), whether
the two runs agree bitwise and the max absolute and relative differences over all ranks
(compute domain and halo). ``run --trace`` also logs a digest of every argument of every NDSL
stencil call before and after it (``trace_rank<r>.jsonl``; ``--dump N`` saves call N's arrays,
origin, domain and externals), and ``divergence A B`` names, per rank, the first call two traced
runs disagree on and whether its inputs already differed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

# the prognostic (and diagnostic) fields of pyFV3's DycoreState that step_dynamics updates
FIELDS = (
    "u", "v", "w", "ua", "va", "uc", "vc", "delp", "delz", "pt", "ps", "pe", "peln", "pk",
    "pkz", "phis", "q_con", "omga", "mfxd", "mfyd", "cxd", "cyd", "diss_estd",
    "qvapor", "qliquid", "qrain", "qsnow", "qice", "qgraupel", "qo3mr", "qsgs_tke", "qcld",
)  # fmt: skip


def _redirect(backend: str, eta_file: str) -> None:
    """Give the test's hard-coded backend and eta file the ones asked for."""
    import ndsl.dsl.stencil
    import ndsl.grid.eta
    from ndsl import QuantityFactory

    config_class = ndsl.dsl.stencil.CompilationConfig

    def compilation_config(*args, **kwargs):
        if kwargs.get("backend") == "numpy":
            kwargs["backend"] = backend
        return config_class(*args, **kwargs)

    ndsl.dsl.stencil.CompilationConfig = compilation_config
    from_backend = QuantityFactory.from_backend.__func__

    def quantity_factory(cls, *args, **kwargs):
        if kwargs.get("backend") == "numpy":
            kwargs["backend"] = backend
        return from_backend(cls, *args, **kwargs)

    QuantityFactory.from_backend = classmethod(quantity_factory)
    hybrid = ndsl.grid.eta.set_hybrid_pressure_coefficients

    def coefficients(km, path):
        return hybrid(km, eta_file if not os.path.isfile(path) else path)

    ndsl.grid.eta.set_hybrid_pressure_coefficients = coefficients


def _to_numpy(array) -> np.ndarray:
    array = getattr(array, "data", array)  # a Quantity: its storage
    return np.array(array.get() if hasattr(array, "get") else array)  # a copy


def _trace(path: Path, dump: int) -> None:
    """Log every NDSL stencil call (name, and a digest of each argument before and after it)
    to ``path``; ``dump`` >= 0: also save call number ``dump``'s arguments before and after."""
    import hashlib

    import ndsl.dsl.stencil

    frozen = ndsl.dsl.stencil.FrozenStencil
    call = frozen.__call__
    log = path.open("w")
    count = [0]

    def arrays(self, args, kwargs):
        named = {**dict(zip(self._argument_names, args)), **kwargs}
        out = {}
        for name, value in named.items():
            if hasattr(value, "shape") or hasattr(getattr(value, "data", None), "shape"):
                out[name] = _to_numpy(value)
            else:
                out[name] = value
        return out

    def digest(values):
        return {
            k: hashlib.blake2b(np.ascontiguousarray(v).tobytes(), digest_size=8).hexdigest()
            if isinstance(v, np.ndarray)
            else repr(v)
            for k, v in values.items()
        }

    def traced(self, *args, **kwargs):
        n = count[0]
        count[0] += 1
        before = arrays(self, args, kwargs)
        call(self, *args, **kwargs)
        after = arrays(self, args, kwargs)
        entry = {"n": n, "name": self._func_name, "in": digest(before), "out": digest(after)}
        log.write(json.dumps(entry) + "\n")
        log.flush()
        if n == dump:
            where = {"origin": self.origin, "domain": self.domain, "externals": self.externals}
            path.with_suffix(f".call{n}.json").write_text(json.dumps(where, default=repr))
            np.savez(
                path.with_suffix(f".call{n}.npz"),
                **{f"in:{k}": v for k, v in before.items() if isinstance(v, np.ndarray)},
                **{f"out:{k}": v for k, v in after.items() if isinstance(v, np.ndarray)},
            )

    frozen.__call__ = traced


def run(args: argparse.Namespace) -> None:
    if args.impl == "stencilkit":
        from stencilkit.compat import install_gt4py_alias

        install_gt4py_alias()
    sys.path.insert(0, str(Path(args.pyfv3).resolve()))
    _redirect(args.backend, str(Path(args.eta_file).resolve()))
    from mpi4py import MPI
    from tests.mpi.test_doubly_periodic import setup_dycore

    rank = MPI.COMM_WORLD.Get_rank()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.trace:
        _trace(out / f"trace_rank{rank}.jsonl", args.dump)
    start = time.perf_counter()
    dycore, test_args = setup_dycore()
    state = test_args[0]
    timing = {"setup_s": time.perf_counter() - start, "step_s": []}
    saved = {f"{name}@0": _to_numpy(getattr(state, name)) for name in FIELDS}
    for step in range(1, args.steps + 1):
        MPI.COMM_WORLD.Barrier()
        start = time.perf_counter()
        dycore.step_dynamics(state)
        MPI.COMM_WORLD.Barrier()
        timing["step_s"].append(time.perf_counter() - start)
        for name in FIELDS:
            quantity = getattr(state, name, None)
            if quantity is not None:
                saved[f"{name}@{step}"] = _to_numpy(quantity.data)
        if rank == 0:
            print(f"step {step}: {timing['step_s'][-1]:.2f} s", flush=True)
    np.savez(out / f"rank{rank}.npz", **saved)
    timing["impl"], timing["backend"] = args.impl, args.backend
    (out / f"timing_rank{rank}.json").write_text(json.dumps(timing))
    if rank == 0:
        print(f"set-up {timing['setup_s']:.1f} s, steps {timing['step_s']}", flush=True)


def compare(args: argparse.Namespace) -> None:
    a_dir, b_dir = Path(args.a), Path(args.b)
    ranks = sorted(p.name for p in a_dir.glob("rank*.npz"))
    runs_a = [np.load(a_dir / r) for r in ranks]
    runs_b = [np.load(b_dir / r) for r in ranks]
    steps = max(int(k.split("@")[1]) for k in runs_a[0].files)
    step = steps if args.step is None else args.step
    print(f"{len(ranks)} ranks, step {step} of {steps}")
    print(f"{'field':<10} {'bitwise':>7} {'max abs':>11} {'max rel':>11} {'max |a|':>11} finite")
    summary = {"bitwise": 0, "differs": 0}
    for name in FIELDS:
        key = f"{name}@{step}"
        if key not in runs_a[0].files:
            continue
        pairs = [(ra[key], rb[key]) for ra, rb in zip(runs_a, runs_b, strict=True)]
        same = all(np.array_equal(x, y, equal_nan=True) for x, y in pairs)
        diff = max(float(np.nanmax(np.abs(x - y), initial=0.0)) for x, y in pairs)
        scale = max(float(np.nanmax(np.abs(x), initial=0.0)) for x, _ in pairs)
        rel = max(
            float(np.nanmax(np.abs(x - y) / np.maximum(np.abs(x), 1e-300), initial=0.0))
            for x, y in pairs
        )
        finite = all(np.isfinite(x).all() and np.isfinite(y).all() for x, y in pairs)
        summary["bitwise" if same else "differs"] += 1
        print(f"{name:<10} {same!s:>7} {diff:11.3e} {rel:11.3e} {scale:11.3e} {finite}")
    print(f"{summary['bitwise']} bitwise, {summary['differs']} differ")


def first_divergence(args: argparse.Namespace) -> None:
    """Per rank: the first stencil call whose outputs differ between two traced runs, and
    whether its inputs were equal (the stencil itself differs) or not (code between calls)."""
    for path in sorted(Path(args.a).glob("trace_rank*.jsonl")):
        a = [json.loads(line) for line in path.open()]
        b = [json.loads(line) for line in (Path(args.b) / path.name).open()]
        for x, y in zip(a, b, strict=False):
            if x["name"] != y["name"]:
                print(f"{path.stem}: call {x['n']} is {x['name']} against {y['name']}")
                break
            bad_in = sorted(k for k in x["in"] if x["in"][k] != y["in"].get(k))
            bad_out = sorted(k for k in x["out"] if x["out"][k] != y["out"].get(k))
            if bad_in or bad_out:
                print(
                    f"{path.stem}: call {x['n']} {x['name']}: inputs differ {bad_in},"
                    f" outputs differ {bad_out}"
                )
                break
        else:
            print(f"{path.stem}: {min(len(a), len(b))} calls, all equal")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--impl", choices=("stencilkit", "gt4py"), required=True)
    r.add_argument("--backend", default="numpy")
    r.add_argument("--pyfv3", required=True, help="a pyFV3 checkout (holding tests/mpi)")
    r.add_argument("--eta-file", required=True, help="a 79-level eta file (ak, bk)")
    r.add_argument("--steps", type=int, default=1)
    r.add_argument("--out", required=True)
    r.add_argument("--trace", action="store_true", help="log digests of every stencil call")
    r.add_argument("--dump", type=int, default=-1, help="with --trace: save call N's arguments")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--step", type=int, default=None)
    d = sub.add_parser("divergence", help="the first stencil call two --trace runs disagree on")
    d.add_argument("a")
    d.add_argument("b")
    args = parser.parse_args()
    {"run": run, "compare": compare, "divergence": first_divergence}[args.command](args)


if __name__ == "__main__":
    main()
