"""ICON's real dycore and diffusion programs (icon4py 0.4.1) at ICON size, on stencilkit and on
real gt4py, side by side on one GPU.

Three steps, each its own process (real gt4py and stencilkit's gt4py alias cannot share one):

``prepare``  (stencilkit, through the gt4py alias) reads each program's parameters and writes
             ``specs.json``: per parameter its dimensions, shape, dtype, how to fill it and its
             seed, the scalars' values, the fields the program writes. The vertical range is the
             first of ``compat.icon4py.inputs.VERTICAL_RANGES`` for which the program runs on the
             embedded backend on a small mesh (its reads stay inside the fields).
``run``      (either library: ``gt4py.next`` is stencilkit's alias or the real one) builds the
             mesh and the fields from the specs *on the GPU* (CuPy's generator, same seeds: the
             same numbers in both processes), each with the library's own GPU allocator, and per
             program times the first call (wall clock, build included) and 20 back-to-back calls
             (CUDA events), then runs once more on fresh inputs and saves what it wrote.
``compare``  reads two runs' JSON and outputs: a table of times, the ratio, the fraction of the
             device copy and the agreement of every written field.

    PYTHONPATH=src python benchmarks/icon4py_bench.py prepare --dir /tmp/icon
    PYTHONPATH=src python benchmarks/icon4py_bench.py run --dir /tmp/icon --impl stencilkit
    PYTHONPATH=/tmp/gt4py-site python benchmarks/icon4py_bench.py run --dir /tmp/icon --impl gt4py
    python benchmarks/icon4py_bench.py compare --dir /tmp/icon stencilkit gt4py

``--backend cpu|embedded`` and a small ``--cells`` run the same steps without a GPU (a check of
the harness; the figures that count come from the GPU). ``scripts/icon4py_bench.sh`` runs it all
on a GPU machine in one call.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import importlib
import io
import json
import logging
import math
import os
import pstats
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

#: (module under icon4py.model.atmosphere, program): the 14 programs of the issue (issue 21).
PROGRAMS: tuple[tuple[str, str], ...] = (
    ("diffusion.stencils.calculate_nabla2_and_smag_coefficients_for_vn", "calculate_nabla2_and_smag_coefficients_for_vn"),
    ("diffusion.stencils.calculate_nabla4", "calculate_nabla4"),
    ("diffusion.stencils.apply_diffusion_to_vn", "apply_diffusion_to_vn"),
    ("diffusion.stencils.apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence", "apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence"),
    ("diffusion.stencils.apply_diffusion_to_theta_and_exner", "apply_diffusion_to_theta_and_exner"),
    ("dycore.stencils.mo_math_divrot_rot_vertex_ri_dsl", "mo_math_divrot_rot_vertex_ri_dsl"),
    ("dycore.stencils.compute_horizontal_gradient_of_exner_pressure_for_multiple_levels", "compute_horizontal_gradient_of_exner_pressure_for_multiple_levels"),
    ("dycore.stencils.interpolate_vn_to_half_levels_and_compute_kinetic_energy_on_edges", "interpolate_vn_to_half_levels_and_compute_kinetic_energy_on_edges"),
    ("dycore.stencils.solve_tridiagonal_matrix_for_w_forward_sweep", "solve_tridiagonal_matrix_for_w_forward_sweep"),
    ("dycore.stencils.solve_tridiagonal_matrix_for_w_back_substitution", "solve_tridiagonal_matrix_for_w_back_substitution"),
    ("dycore.stencils.compute_advection_in_horizontal_momentum_equation", "compute_advection_in_horizontal_momentum"),
    ("dycore.stencils.compute_advection_in_vertical_momentum_equation", "compute_advection_in_predictor_vertical_momentum"),
    ("dycore.stencils.vertically_implicit_dycore_solver", "vertically_implicit_solver_at_predictor_step"),
    ("dycore.stencils.compute_edge_diagnostics_for_dycore_and_update_vn", "compute_rho_theta_pgrad_and_update_vn"),
)  # fmt: skip

CALLS = 20
WARM = 3


def mesh_shape(cells: int) -> tuple[int, int]:
    """(nx, ny) of a periodic triangular mesh with about ``cells`` cells (2 per quad)."""
    quads = max(16, cells // 2)
    nx = max(4, int(math.sqrt(quads / 1.25)) // 16 * 16 or 4)
    return nx, max(4, quads // nx)


def _load(module: str, name: str) -> Any:
    return getattr(importlib.import_module(f"icon4py.model.atmosphere.{module}"), name)


# ----------------------------------------------------------------------------- prepare
def prepare(opts: argparse.Namespace) -> None:
    from stencilkit.compat import install_gt4py_alias

    install_gt4py_alias()
    from stencilkit.compat.icon4py import inputs as ii
    from stencilkit.compat.icon4py.mesh import icon_mesh
    from stencilkit.compat.icon4py.run import _Call, _parse
    from stencilkit.core.types import FieldType, TupleType
    from stencilkit.stages.interface import written_params

    nx, ny = mesh_shape(opts.cells)
    small = icon_mesh(8, 8, 10)
    big = icon_mesh(nx, ny, opts.nlev)
    specs: dict[str, Any] = {
        "mesh": {"nx": nx, "ny": ny, "nlev": opts.nlev, "cells": big.mesh.n_cells,
                 "edges": big.mesh.n_edges, "vertices": big.mesh.n_vertices},
        "programs": [],
    }  # fmt: skip
    for seed, (module, name) in enumerate(PROGRAMS):
        if opts.only and name not in opts.only:
            continue
        prog = _load(module, name)
        defn = _parse(prog)
        attempt = None
        for a in range(len(ii.VERTICAL_RANGES)):
            try:
                _Call(prog, defn, small, seed, a).run(None)
                attempt = a
                break
            except Exception:  # a read outside the fields: the next range
                continue
        if attempt is None:
            raise SystemExit(f"{name}: runs on embedded with no vertical range")
        maker = ii._Maker(big, np.random.default_rng(seed), attempt, ii.domain_roles(defn))
        written = written_params(defn)

        def spec(pname: str, t: Any, n: list[int], maker: Any = maker, written: Any = written,
                 seed: int = seed) -> dict[str, Any]:  # fmt: skip
            if isinstance(t, TupleType):
                return {"name": pname, "kind": "tuple",
                        "items": [spec(f"{pname}__{i}", s, n, maker, written, seed) for i, s in enumerate(t.types)]}  # fmt: skip
            if isinstance(t, FieldType):
                n[0] += 1
                dt = np.dtype(t.dtype)
                fill = ("bool" if dt == np.bool_ else
                        ("offset" if "offset" in pname.lower() else "level") if dt.kind in "iu" else "float")  # fmt: skip
                return {"name": pname, "kind": "field", "dims": [d.value for d in t.dims],
                        "shape": [maker.extent(d, pname in written) for d in t.dims],
                        "dtype": dt.name, "fill": fill, "seed": 1000 * seed + n[0],
                        "written": pname in written}  # fmt: skip
            v = maker.scalar(pname, t)
            return {
                "name": pname,
                "kind": "scalar",
                "dtype": np.dtype(t.dtype).name,
                "value": v.item(),
            }

        counter = [0]
        params = [spec(p.name, p.type, counter) for p in defn.params]
        specs["programs"].append(
            {"module": module, "name": name, "attempt": attempt, "params": params}
        )
        print(
            f"prepared {name}: vertical range {ii.vertical_range(big, attempt)}, {counter[0]} fields"
        )
    Path(opts.dir).mkdir(parents=True, exist_ok=True)
    (Path(opts.dir) / "specs.json").write_text(json.dumps(specs, indent=1))


# ----------------------------------------------------------------------------- run
class _Records(logging.Handler):
    """stencilkit's log records of a first call (its stage breakdown), as text."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(
            f"{record.relativeCreated / 1000:.3f} {record.name}: {record.getMessage()}"
        )


def _mesh_tables(nx: int, ny: int) -> dict[str, np.ndarray]:
    """The 14 neighbour tables of the ICON-like mesh, in plain NumPy (built the same way in both
    processes: stencilkit's mesh code is NumPy only and is imported from src/, not as gt4py)."""
    from stencilkit.compat.icon4py.mesh import icon_mesh

    return icon_mesh(nx, ny, 1).tables


def run(opts: argparse.Namespace) -> None:
    out_dir = Path(opts.dir) / opts.impl
    out_dir.mkdir(parents=True, exist_ok=True)
    specs = json.loads((Path(opts.dir) / "specs.json").read_text())
    m = specs["mesh"]
    tables = _mesh_tables(m["nx"], m["ny"])  # before the alias: plain stencilkit, NumPy only
    if opts.impl.startswith("stencilkit"):
        import stencilkit.storage.layout as sl
        from stencilkit.compat import install_gt4py_alias

        if (
            opts.column_layout
        ):  # an experiment: the GPU layout of ICON's [Cell/Edge/Vertex, K] fields
            sl.GPU_COLUMN_SCHEME = sl.SCHEMES[opts.column_layout]

        install_gt4py_alias()
        handler = _Records()
        logging.getLogger("stencilkit").addHandler(handler)
        logging.getLogger("stencilkit").setLevel(logging.INFO)
    else:
        handler = None
    import gt4py.next as gtx
    from icon4py.model.common import dimension as dims_mod

    gpu = opts.backend == "gpu"
    if gpu:
        import cupy as xp
    else:
        xp = np
    backend = {"gpu": gtx.gtfn_gpu, "cpu": gtx.gtfn_cpu, "embedded": None}[opts.backend]
    dims = {d.value: d for d in vars(dims_mod).values() if isinstance(d, gtx.Dimension)}
    from stencilkit.compat.icon4py.mesh import OFFSETS  # plain data: name -> (source, target)

    provider: dict[str, Any] = {}
    table_bytes = 0
    for name, table in tables.items():
        source, target = OFFSETS[name]
        provider[name] = gtx.as_connectivity(
            [dims[target], dims[name]], dims[source], xp.asarray(table), allocator=backend,
            skip_value=None,
        )  # fmt: skip
        table_bytes += table.nbytes
    # Koff/KHalfOff are left out, as icon4py leaves them out: gt4py 1.2 takes only neighbour
    # tables in an offset provider (a Dimension there is "Invalid 'offset_provider'")
    with _gpu_lock(opts.lock):
        copy_bw = _copy_bandwidth(xp) if gpu else float("nan")
        _free(xp)
    print(f"{opts.impl} on {opts.backend}: device copy {copy_bw / 1e9:.0f} GB/s", flush=True)
    results = []
    for p in specs["programs"]:
        if opts.only and p["name"] not in opts.only:
            continue
        results.append(
            _run_program(p, gtx, backend, provider, dims, xp, gpu, handler, out_dir, copy_bw, opts)
        )
        _free(xp)
    doc = {"impl": opts.impl, "column_layout": getattr(opts, "column_layout", ""), "backend": opts.backend, "copy_GBps": copy_bw / 1e9, "mesh": m,
           "version": _version(gtx), "programs": results}  # fmt: skip
    name = "results.json" if not opts.only else f"results-{'+'.join(opts.only)}.json"
    if len(name) > 200:  # several programs: a name within the file system's 255 bytes
        digest = hashlib.sha256("+".join(opts.only).encode()).hexdigest()[:16]
        name = f"results-{len(opts.only)}-programs-{digest}.json"
    (out_dir / name).write_text(json.dumps(doc, indent=1))


@contextmanager
def _gpu_lock(path: str) -> Iterator[None]:
    """Hold the file lock ``path`` (none: no lock): processes building in parallel time their
    kernels one at a time, never beside another's."""
    if not path:
        yield
        return
    import fcntl

    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _version(gtx: Any) -> str:
    import gt4py

    return str(getattr(gt4py, "__version__", None) or getattr(gtx, "__version__", "?"))


def _copy_bandwidth(xp: Any) -> float:
    """Device-to-device copy, bytes read + written per second (best of 10, 2 GiB)."""
    a = xp.ones(2**28, dtype=np.float64)
    b = xp.empty_like(a)
    best = float("inf")
    for _ in range(10):
        start, end = xp.cuda.Event(), xp.cuda.Event()
        start.record()
        xp.copyto(b, a)
        end.record()
        end.synchronize()
        best = min(best, xp.cuda.get_elapsed_time(start, end) / 1e3)
    return 2 * a.nbytes / best


def _free(xp: Any) -> None:
    import gc

    gc.collect()
    if xp is not np:
        xp.get_default_memory_pool().free_all_blocks()


def _make_args(
    params: list[dict[str, Any]], gtx: Any, backend: Any, dims: dict[str, Any], xp: Any
) -> tuple[list[Any], int]:
    """The call's arguments from the specs; also the bytes of its fields."""
    nbytes = [0]

    def make(s: dict[str, Any]) -> Any:
        if s["kind"] == "tuple":
            return tuple(make(x) for x in s["items"])
        if s["kind"] == "scalar":
            return getattr(np, s["dtype"])(s["value"])
        shape, dt = tuple(s["shape"]), np.dtype(s["dtype"])
        rs = xp.random.RandomState(s["seed"])
        u = rs.random_sample(shape)
        if s["fill"] == "bool":
            data = u < 0.5
        elif s["fill"] == "offset":
            data = (u * 2).astype(dt)
        elif s["fill"] == "level":
            data = (u * (shape[-1] - 2)).astype(dt)
        else:
            data = (0.5 + u).astype(dt)
        nbytes[0] += data.nbytes
        return gtx.as_field([dims[d] for d in s["dims"]], data, allocator=backend)

    return [make(s) for s in params], nbytes[0]


def _written(params: list[dict[str, Any]], args: list[Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for s, a in zip(params, args):
        if s["kind"] == "tuple":
            found.update(_written(s["items"], list(a)))
        elif s["kind"] == "field" and s["written"]:
            found[s["name"]] = a
    return found


def _sync(xp: Any) -> None:
    if xp is not np:
        xp.cuda.Device().synchronize()


def _chosen_launches(prog: Any) -> list[dict[str, Any]]:
    """stencilkit only: the kernels its tune stage settled on (name, block, grid), per plan.

    Internals, informative only: a change of a program's time between runs can then be told
    apart from a change of the variant chosen. Empty for gt4py or when the internals moved.
    """
    try:
        from stencilkit_benchmarks.devices import kernel_names, launches

        out = []
        for plan in prog._runner.plans.values():
            kls = launches(plan)
            out += [
                {"kernel": nm, "block": list(kl.block), "grid": list(kl.grid)}
                for kl, nm in zip(kls, kernel_names(plan, kls))
            ]
        return out
    except Exception:
        return []


def _run_program(p: dict[str, Any], gtx: Any, backend: Any, provider: dict[str, Any], dims: dict[str, Any],
                 xp: Any, gpu: bool, handler: Any, out_dir: Path, copy_bw: float, opts: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    name = p["name"]
    res: dict[str, Any] = {"name": name}
    try:
        prog = _load(p["module"], name).with_backend(backend)
        args, nbytes = _make_args(p["params"], gtx, backend, dims, xp)
        res["field_bytes"] = nbytes
        if handler is not None:
            handler.lines.clear()
        _sync(xp)
        profile = cProfile.Profile() if opts.profile_first else None
        t0 = time.perf_counter()
        if profile is not None:
            profile.enable()
        prog(*args, offset_provider=provider)
        _sync(xp)
        res["first_call_s"] = time.perf_counter() - t0
        if profile is not None:  # where the first call's time goes, beyond the stage log
            profile.disable()
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(45)
            res["first_call_profile"] = text.getvalue().splitlines()
        if handler is not None:
            res["first_call_log"] = list(handler.lines)
        wait = getattr(gtx, "wait_for_tuning", None)  # stencilkit: the variants' background builds
        if wait is not None:
            if handler is not None:
                handler.lines.clear()
            t0 = time.perf_counter()
            wait()
            prog(*args, offset_provider=provider)  # the final choice of variants
            _sync(xp)
            res["final_tuning_s"] = time.perf_counter() - t0
            if handler is not None:  # the variant builds and the search's choices
                res["final_tuning_log"] = list(handler.lines)
        with _gpu_lock(opts.lock):  # the timed part: never beside another process's kernels
            for _ in range(WARM):
                prog(*args, offset_provider=provider)
            _sync(xp)
            calls = opts.calls
            t0 = time.perf_counter()
            if gpu:
                start, end = xp.cuda.Event(), xp.cuda.Event()
                start.record()
                for _ in range(calls):
                    prog(*args, offset_provider=provider)
                end.record()
                host = time.perf_counter() - t0
                end.synchronize()
                res["ms"] = xp.cuda.get_elapsed_time(start, end) / calls
            else:
                for _ in range(calls):
                    prog(*args, offset_provider=provider)
                host = time.perf_counter() - t0
                res["ms"] = 1e3 * host / calls
            res["host_ms_per_call"] = 1e3 * host / calls
            if gpu:
                res["fraction_of_copy"] = nbytes / (res["ms"] / 1e3) / copy_bw
            del args
            _free(xp)
            args, _ = _make_args(
                p["params"], gtx, backend, dims, xp
            )  # fresh inputs: one call, saved
            prog(*args, offset_provider=provider)
            _sync(xp)
            save = out_dir / name
            save.mkdir(exist_ok=True)
            for fname, f in _written(p["params"], args).items():
                np.save(save / f"{fname}.npy", f.asnumpy())
        launched = _chosen_launches(prog)
        if launched:
            res["launches"] = launched
        res["ok"] = True
        print(f"{name:72s} first {res['first_call_s']:7.2f} s  {res['ms']:8.3f} ms"
              + (f"  {res['fraction_of_copy']:.2f} of copy" if gpu else ""), flush=True)  # fmt: skip
    except Exception as err:  # reported in the table: a failed program must not hide the others
        res["ok"] = False
        res["error"] = f"{type(err).__name__}: {str(err)[:2000]}"
        print(f"{name:72s} FAILED {res['error'][:300]}", flush=True)
    return res


# ----------------------------------------------------------------------------- compare
def _agreement(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    if a.shape != b.shape:
        return {"equal": False, "note": f"shapes {a.shape} vs {b.shape}"}
    if a.dtype.kind in "biu":
        bad = int(np.count_nonzero(a != b))
        return {"equal": bad == 0, "bitwise": bad == 0, "max_rel": float(bad)}
    na, nb = np.isnan(a), np.isnan(b)
    if not np.array_equal(na, nb):
        return {"equal": False, "note": f"NaN in {int(na.sum())} vs {int(nb.sum())} points"}
    fa, fb = a[~na].astype(np.float64), b[~nb].astype(np.float64)
    scale = float(np.max(np.abs(fa))) if fa.size else 1.0
    diff = np.abs(fa - fb)
    rel = float(diff.max() / scale) if fa.size and scale else 0.0
    return {"equal": rel <= 1e-12, "bitwise": bool(np.array_equal(fa, fb)), "max_rel": rel,
            "points_differing": int(np.count_nonzero(diff))}  # fmt: skip


def compare(opts: argparse.Namespace) -> None:
    base = Path(opts.dir)
    runs = {}
    for impl in opts.impls:  # one file per run, or one per program of runs made in parallel
        docs = [json.loads(p.read_text()) for p in sorted((base / impl).glob("results*.json"))]
        if not docs:
            raise SystemExit(f"no results of {impl} in {base / impl}")
        runs[impl] = {**docs[0], "programs": [r for d in docs for r in d["programs"]]}
    sk, gt = opts.impls[0], opts.impls[1]
    extra = opts.impls[2:]
    rows, sums = [], {sk: 0.0, gt: 0.0}
    lines = [
        f"mesh {runs[sk]['mesh']}; device copy {runs[sk]['copy_GBps']:.0f} GB/s ({sk}), {runs[gt]['copy_GBps']:.0f} GB/s ({gt})",
        "",
        f"| program | {gt} ms | {sk} ms | {sk}/{gt} | {sk} of copy | {gt} of copy | {sk} first call s | {gt} first call s | outputs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    by = {impl: {r["name"]: r for r in runs[impl]["programs"]} for impl in runs}
    for name in by[sk]:
        a, b = by[sk].get(name), by[gt].get(name)
        if not (a and b and a.get("ok") and b.get("ok")):
            why = (a or {}).get("error") or (b or {}).get("error") or "missing"
            lines.append(f"| {name} | | | | | | | | FAILED: {why[:200]} |")
            rows.append({"name": name, "failed": why})
            continue
        sums[sk] += a["ms"]
        sums[gt] += b["ms"]
        agree = {}
        for npy in sorted((base / sk / name).glob("*.npy")):
            other = base / gt / name / npy.name
            agree[npy.stem] = (
                _agreement(np.load(npy), np.load(other))
                if other.exists()
                else {"equal": False, "note": "missing"}
            )
            for e in extra:  # e.g. stencilkit with contraction: does it explain the difference?
                o = base / e / name / npy.name
                if o.exists() and other.exists():
                    agree[npy.stem][f"vs_{e}"] = _agreement(np.load(o), np.load(other))
        worst = max((v.get("max_rel", 0.0) for v in agree.values()), default=0.0)
        bitwise = all(v.get("bitwise") for v in agree.values())
        text = "bitwise" if bitwise else f"max rel {worst:.1e}"
        for e in extra:
            ex = [v.get(f"vs_{e}", {}) for v in agree.values()]
            if ex and all(x.get("bitwise") for x in ex):
                text += f"; {e}: bitwise"
            elif ex:
                text += f"; {e}: max rel {max(x.get('max_rel', 0.0) for x in ex):.1e}"
        lines.append(
            f"| {name} | {b['ms']:.3f} | {a['ms']:.3f} | {a['ms'] / b['ms']:.2f} | {a.get('fraction_of_copy', float('nan')):.2f}"
            f" | {b.get('fraction_of_copy', float('nan')):.2f} | {a['first_call_s']:.2f} | {b['first_call_s']:.2f} | {text} |"
        )  # fmt: skip
        rows.append({"name": name, sk: a, gt: b, "agreement": agree})
    if sums[gt]:
        lines.append(
            f"| **sum** | **{sums[gt]:.2f}** | **{sums[sk]:.2f}** | **{sums[sk] / sums[gt]:.2f}** | | | | | |"
        )
    text = "\n".join(lines)
    print(text)
    (base / "comparison.md").write_text(text + "\n")
    (base / "comparison.json").write_text(json.dumps(rows, indent=1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare", help="write specs.json (stencilkit)")
    p.add_argument("--dir", required=True)
    p.add_argument(
        "--cells", type=int, default=163_840, help="cells of the mesh (default 2 x R2B5)"
    )
    p.add_argument("--nlev", type=int, default=80)
    p.add_argument("--only", nargs="*", default=[])
    r = sub.add_parser("run", help="time the programs with one library")
    r.add_argument("--dir", required=True)
    r.add_argument(
        "--impl", required=True, help="a label: stencilkit (the alias is installed) or gt4py (real)"
    )
    r.add_argument("--backend", default="gpu", choices=("gpu", "cpu", "embedded"))
    r.add_argument("--calls", type=int, default=CALLS)
    r.add_argument("--only", nargs="*", default=[])
    r.add_argument("--lock", default="", help="a file lock held while timing (parallel runs)")
    r.add_argument(
        "--profile-first", action="store_true", help="cProfile each first call (in the JSON)"
    )
    r.add_argument(
        "--column-layout", default="", help="stencilkit: the GPU layout of column fields"
    )
    c = sub.add_parser("compare", help="the side-by-side table")
    c.add_argument("--dir", required=True)
    c.add_argument(
        "impls",
        nargs="+",
        help="our run, the reference run, then runs to classify differences with",
    )
    opts = ap.parse_args(argv)
    if opts.step == "run" and opts.impl.startswith("stencilkit"):
        os.environ.setdefault("STENCILKIT_LOG", "info")
    {"prepare": prepare, "run": run, "compare": compare}[opts.step](opts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
