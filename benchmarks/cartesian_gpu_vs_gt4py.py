"""GTScript stencils on the GPU, stencilkit beside a real gt4py 1.2.1 (``gt:gpu``) in ONE process
on the same CuPy arrays (CARTESIAN.md 5.1): the bandwidth of a PARALLEL stencil (7-point
Laplacian) and of FORWARD stencils (a tridiagonal Thomas solve, a column running sum) as a
fraction of the device-to-device copy measured in the same process, and the per-call host time
of ``run()``/``__call__`` with its Python part (the call minus a bare ``cuLaunchKernel`` of the
same kernel; target <= 5 us). Every output is checked against NumPy (the untouched part too) and
the two libraries' outputs are compared with each other.

Both libraries parse the same file, ``stencilkit_benchmarks/cartesian_gpu_defs.py``, loaded once
per library with its ``gtscript`` module (stencilkit's ``stencilkit.cartesian.gtscript`` is used
directly, not through the gt4py alias, so real gt4py can be imported beside it). Steps::

    # gt4py's nvcc builds, one process per stencil, in parallel, into GT_CACHE_ROOT (cached)
    python benchmarks/cartesian_gpu_vs_gt4py.py build --impl gt4py --backend gt:gpu --dir D
    # every measurement, both libraries in this process (a library that fails is recorded)
    PYTHONPATH=src python benchmarks/cartesian_gpu_vs_gt4py.py run --impls stencilkit,gt4py \\
        --backend gt:gpu --dir D
    python benchmarks/cartesian_gpu_vs_gt4py.py report --dir D      # the markdown tables

``scripts/cartesian_gpu_bench.sh`` runs them on a GPU machine with gt4py from ``.whl-cart``.
With ``--backend gt:cpu_ifirst`` the same code runs on the CPU (NumPy arrays, host clock, no
copy ceiling): the plumbing test. Real gt4py is an oracle in a scratch venv, never a stencilkit
dependency. ``result.json`` is rewritten after every part, so a run cut short keeps what it did.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

DEFS = Path(__file__).resolve().parent / "stencilkit_benchmarks" / "cartesian_gpu_defs.py"
IMPLS = ("stencilkit", "gt4py")
BANDWIDTH_KINDS = ("lap7", "tridiag", "cumsum")
#: targets of CARTESIAN.md 5.1 (fractions of the copy; the GPU Python part per call)
TARGETS = {"PARALLEL": 0.8, "FORWARD": 0.6, "python_us": 5.0}
#: calls per timed batch of the per-call loop, the device drained (untimed) between batches
BATCH = 100
N_CALL = 8  # per-call stencil: 8^3


def is_gpu(backend: str) -> bool:
    return "gpu" in backend or backend == "cuda"


# ----------------------------------------------------------------------------- the libraries


def gtscript_of(impl: str) -> ModuleType:
    """The ``gtscript`` module of ``impl``; for gt4py, checked to be a real one."""
    if impl == "stencilkit":
        return importlib.import_module("stencilkit.cartesian.gtscript")
    gs = importlib.import_module("gt4py.cartesian.gtscript")
    import gt4py

    if getattr(gt4py, "__stencilkit_alias__", False):
        raise RuntimeError("gt4py here is stencilkit's alias, not a real gt4py")
    return gs


def storage_of(impl: str) -> ModuleType:
    if impl == "stencilkit":
        return importlib.import_module("stencilkit.cartesian.storage")
    return importlib.import_module("gt4py.storage")


def version_of(impl: str) -> str:
    if impl == "stencilkit":
        import stencilkit

        return f"stencilkit {getattr(stencilkit, '__version__', '?')} ({stencilkit.__file__})"
    import gt4py

    return f"gt4py {gt4py.__version__} ({gt4py.__file__})"


def load_defs(impl: str) -> ModuleType:
    """``cartesian_gpu_defs`` as a module of its own whose ``gtscript`` is ``impl``'s."""
    name = f"cartesian_gpu_defs_{impl}"
    spec = importlib.util.spec_from_file_location(name, DEFS)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    mod.GTSCRIPT = gtscript_of(impl)  # type: ignore[attr-defined]
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def stencil_options(impl: str, backend: str) -> dict[str, Any]:
    # gt4py's gt:gpu synchronises the device after every call unless told not to; a user
    # timing it (and stencilkit, which never does) queues calls back to back
    return {"device_sync": False} if impl == "gt4py" and is_gpu(backend) else {}


# ----------------------------------------------------------------------------- the device


class Device:
    """Arrays, clock and copy of the backend's device: CuPy and CUDA events on a GPU, NumPy and
    the host clock on the CPU."""

    def __init__(self, backend: str) -> None:
        self.gpu = is_gpu(backend)
        #: host wall time per call of the last :meth:`time_ms`, the final drain included
        self.last_wall_ms = 0.0
        if self.gpu:
            import cupy as cp

            n = cp.cuda.runtime.getDeviceCount()  # raises when no driver / no device
            if n < 1:
                raise RuntimeError("CuPy sees no GPU")
            self.cp: Any = cp
            self.xp: Any = cp
        else:
            self.cp = None
            self.xp = np

    def describe(self) -> dict[str, Any]:
        if not self.gpu:
            return {"device": "cpu", "processor": platform.processor(), "cpus": os.cpu_count()}
        cp = self.cp
        props = cp.cuda.runtime.getDeviceProperties(0)
        return {
            "device": props["name"].decode(),
            "compute_capability": cp.cuda.Device(0).compute_capability,
            "memory_GiB": props["totalGlobalMem"] / 2**30,
            "cupy": cp.__version__,
            "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
            "cuda_driver": cp.cuda.runtime.driverGetVersion(),
        }

    def sync(self) -> None:
        if self.gpu:
            self.cp.cuda.get_current_stream().synchronize()

    def stream_ptr(self) -> int:
        return int(self.cp.cuda.get_current_stream().ptr)

    def to_host(self, a: Any) -> np.ndarray:
        return np.asarray(self.cp.asnumpy(a) if self.gpu else a)

    def time_ms(self, fn: Callable[[], Any], reps: int, warmup: int = 2) -> list[float]:
        """Per-call times in ms: CUDA events around each call, calls queued back to back on
        the current stream (one synchronize at the end); the host clock on the CPU."""
        for _ in range(warmup):
            fn()
        self.sync()
        if not self.gpu:
            out = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                out.append((time.perf_counter() - t0) * 1e3)
            self.last_wall_ms = sum(out) / reps
            return out
        cp = self.cp
        s = cp.cuda.get_current_stream()
        pairs = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
        t0 = time.perf_counter()
        for e0, e1 in pairs:
            e0.record(s)
            fn()
            e1.record(s)
        pairs[-1][1].synchronize()
        self.last_wall_ms = (time.perf_counter() - t0) * 1e3 / reps
        return [float(cp.cuda.get_elapsed_time(e0, e1)) for e0, e1 in pairs]

    def copiers(self, dst: Any, src: Any) -> dict[str, Callable[[], Any]]:
        """Device-to-device copies of ``src`` into ``dst`` (same shape, C order)."""
        if not self.gpu:
            return {"numpy.copyto": lambda: np.copyto(dst, src)}
        cp, rt = self.cp, self.cp.cuda.runtime
        return {
            "cupy.copyto": lambda: cp.copyto(dst, src),
            "cudaMemcpyAsync D2D": lambda: rt.memcpyAsync(
                dst.data.ptr, src.data.ptr, src.nbytes, rt.memcpyDeviceToDevice, self.stream_ptr()
            ),
        }

    def free(self) -> None:
        if self.gpu:
            self.sync()
            self.cp.get_default_memory_pool().free_all_blocks()


# ----------------------------------------------------------------------------- one case


class Case:
    """One stencil of one library on arrays of ``shape`` shared with the other library."""

    def __init__(self, D: ModuleType, stencil: Any, kind: str, arrays: dict[str, Any]) -> None:
        self.D, self.stencil, self.kind, self.arrays = D, stencil, kind, arrays
        names = list(arrays)
        self.out_name = names[-1]
        shape = arrays[names[0]].shape
        h = D.HALO[kind]
        self.origin = (h, h, 0)
        self.domain = (shape[0] - 2 * h, shape[1] - 2 * h, shape[2])
        self.origins = {n: self.origin for n in names}

    def variants(self) -> dict[str, Callable[[], Any]]:
        st, f, dom, org, origins = self.stencil, self.arrays, self.domain, self.origin, self.origins
        out: dict[str, Callable[[], Any]] = {
            "run()": lambda: st.run(_domain_=dom, _origin_=origins, exec_info=None, **f),
        }
        if hasattr(st, "freeze"):
            frozen = st.freeze(origin=origins, domain=dom)
            out["frozen"] = lambda: frozen(**f)
        out["__call__ validate_args=False"] = lambda: st(
            **f, origin=org, domain=dom, validate_args=False
        )
        out["__call__ validated"] = lambda: st(**f, origin=org, domain=dom)
        return out


def allocate(
    dev: Device, storage: ModuleType, backend: str, kind: str, ins: list[np.ndarray], D: Any
) -> dict[str, Any]:
    """Device storages of ``backend``'s layout holding ``ins`` and a NaN output."""
    import inspect

    names = list(inspect.signature(D.DEFINITIONS[kind]).parameters)
    h = D.HALO[kind]
    data = [*ins, np.full(ins[0].shape, np.nan)]
    return {
        n: storage.from_array(x, np.float64, backend=backend, aligned_index=(h, h, 0))
        for n, x in zip(names, data)
    }


def check(dev: Device, D: Any, kind: str, out: Any, ref: np.ndarray) -> dict[str, Any]:
    """Max relative error on the written part against ``ref``; the rest must still be NaN."""
    host = dev.to_host(out)
    w = D.written(kind, host.shape)
    inner = host[w]
    mask = np.ones(host.shape, bool)
    mask[w] = False
    untouched = bool(np.isnan(host[mask]).all())
    err = float(np.max(np.abs(inner - ref)) / max(float(np.max(np.abs(ref))), 1e-300))
    return {"rel_error": err, "untouched_ok": untouched, "ok": err <= 1e-12 and untouched}


def per_call_us(dev: Device, fn: Callable[[], Any], n_calls: int, rounds: int) -> dict[str, Any]:
    """Host time per call, batches of BATCH calls, the device drained (untimed) between
    batches (so the launch queue never fills); the median of ``rounds`` rounds."""
    from stencilkit_benchmarks.timing import per_call_us as timed  # benchmarks/ is sys.path[0]

    r = timed(fn, n_calls, dev.sync, rounds=rounds, warmup=BATCH, batch=BATCH)
    return {"us": r["loop_us"], "rounds_us": r["loop_us_rounds"], "n_calls": n_calls}


def bare_launch(dev: Device, stencil: Any) -> Callable[[], Any] | None:
    """The kernel launches of a stencilkit stencil's plan, nothing else (internals: a bare
    ``cuLaunchKernel`` through cuda-bindings); None off the GPU."""
    if not dev.gpu:
        return None
    plan = list(stencil._runner.plans.values())[-1]  # the one used last
    kls = list(plan.block.run.launches)
    sptr = dev.stream_ptr()

    def bare() -> None:
        for launcher, grid, block in kls:
            launcher.launch(grid, block, sptr)

    return bare


# ----------------------------------------------------------------------------- the run


class Run:
    """The run's JSON document, rewritten after every part; a failing part is recorded."""

    def __init__(self, path: Path, doc: dict[str, Any]) -> None:
        self.path, self.doc = path, doc
        doc.setdefault("errors", [])
        self.save()

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.doc, indent=1, default=str))
        tmp.replace(self.path)

    def part(self, name: str, fn: Callable[[], Any]) -> Any:
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        try:
            return fn()
        except Exception as err:
            tb = traceback.format_exc()
            print(f"!! {name} FAILED: {type(err).__name__}: {err}\n{tb}", flush=True)
            self.doc["errors"].append({"part": name, "error": repr(err), "traceback": tb})
            return None
        finally:
            self.doc.setdefault("part_s", {})[name] = time.perf_counter() - t0
            self.save()


def _describe(dev: Device) -> dict[str, Any]:
    try:
        return dev.describe()
    except Exception as err:  # informative only: never the reason a run measures nothing
        return {"device": "?", "error": repr(err)}


def parse_sizes(text: str) -> list[tuple[int, int, int]]:
    out = []
    for s in text.split(","):
        n = tuple(int(x) for x in s.lower().split("x"))
        if len(n) != 3:
            raise SystemExit(f"--sizes: {s!r} is not NIxNJxNK")
        out.append(n)
    return out  # type: ignore[return-value]


def run(opts: argparse.Namespace) -> int:
    os.environ.setdefault("GT_CACHE_ROOT", str(Path(opts.dir) / "gt_cache"))
    backend, impls = opts.backend, opts.impls.split(",")
    out_dir = Path(opts.dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        dev = Device(backend)
    except Exception as err:
        print(f"cartesian_gpu_vs_gt4py: no usable device for {backend}: {err!r}", flush=True)
        (out_dir / f"{opts.tag}.json").write_text(json.dumps({"fatal": repr(err)}))
        return 2
    R = Run(
        out_dir / f"{opts.tag}.json",
        {
            "backend": backend,
            "impls": impls,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "time": time.strftime("%Y-%m-%d %H:%M:%S"),
            "sizes": opts.sizes,
            "lap_sizes": opts.lap_sizes,
            "rounds": opts.rounds,
            "reps": opts.reps,
            "calls": opts.calls,
            "GT_CACHE_ROOT": os.environ["GT_CACHE_ROOT"],
            "STENCILKIT_CACHE_DIR": os.environ.get("STENCILKIT_CACHE_DIR"),
            "device": _describe(dev),
            "targets": TARGETS,
            "versions": {},
            "layouts": {},
            "builds": {},
            "per_call": {},
            "bandwidth": [],
        },
    )
    libs: dict[str, ModuleType] = {}
    stencils: dict[tuple[str, str], Any] = {}

    def load(impl: str) -> None:
        R.doc["versions"][impl] = version_of(impl)
        libs[impl] = load_defs(impl)

    def build(impl: str, kind: str) -> None:
        pre = out_dir / f"builds-{impl}.json"  # the build step's record: its failures not again
        if pre.exists():
            failed = json.loads(pre.read_text())["kinds"].get(kind, {})
            if "error" in failed:
                raise RuntimeError(f"the build step failed for {impl} {kind}: {failed['error']}")
        t0 = time.perf_counter()
        stencils[impl, kind] = libs[impl].build(kind, backend, **stencil_options(impl, backend))
        R.doc["builds"][f"{impl} {kind}"] = {"decorate_s": time.perf_counter() - t0}

    for impl in impls:
        R.part(f"import {impl}", lambda impl=impl: load(impl))  # type: ignore[misc]
    impls = [i for i in impls if i in libs]
    storage_impl = "gt4py" if "gt4py" in libs else impls[0] if impls else None
    if storage_impl is None:
        print("no library could be imported", flush=True)
        return 1
    storage = storage_of(storage_impl)
    R.doc["storage_from"] = storage_impl

    def layouts() -> None:
        for impl in impls:
            a = storage_of(impl).zeros(
                (37, 35, 9), np.float64, backend=backend, aligned_index=(1, 1, 0)
            )
            R.doc["layouts"][impl] = {
                "strides": list(a.strides),
                "type": type(a).__module__ + "." + type(a).__name__,
            }

    R.part("layouts", layouts)
    for impl in impls:
        for kind in ("copy2", *BANDWIDTH_KINDS):
            R.part(f"build {impl} {kind}", lambda impl=impl, kind=kind: build(impl, kind))  # type: ignore[misc]

    # per call: 8^3, every way of calling, each checked once before it is timed
    def per_call() -> None:
        D0 = libs[impls[0]]
        shape = (N_CALL, N_CALL, N_CALL)
        ins = D0.inputs("copy2", shape, seed=5)
        ref = D0.reference("copy2", ins)
        arrays = allocate(dev, storage, backend, "copy2", ins, D0)
        bare_us = None
        for impl in impls:
            if (impl, "copy2") not in stencils:
                continue
            case = Case(libs[impl], stencils[impl, "copy2"], "copy2", arrays)
            entry: dict[str, Any] = {}
            R.doc["per_call"][impl] = entry
            for name, fn in case.variants().items():
                arrays[case.out_name][...] = np.nan
                try:  # one variant failing leaves the others (and the other library) measured
                    fn()
                    dev.sync()
                    c = check(dev, libs[impl], "copy2", arrays[case.out_name], ref)
                    entry[name] = {**c, **per_call_us(dev, fn, opts.calls, opts.rounds)}
                except Exception as err:
                    entry[f"{name} error"] = repr(err)
                    R.doc["errors"].append({"part": f"per call {impl} {name}", "error": repr(err)})
                    continue
                print(
                    f"   {impl:10s} {name:30s} {entry[name]['us']:8.2f} us  ok={c['ok']}",
                    flush=True,
                )
            if impl == "stencilkit" and dev.gpu:
                try:
                    bare = bare_launch(dev, stencils[impl, "copy2"])
                    assert bare is not None
                    b = per_call_us(dev, bare, opts.calls, opts.rounds)
                    entry["bare cuLaunchKernel"] = b
                    bare_us = b["us"]
                    print(
                        f"   {impl:10s} {'bare cuLaunchKernel':30s} {bare_us:8.2f} us", flush=True
                    )
                except Exception as err:
                    entry["bare_error"] = repr(err)
        R.doc["per_call"]["bare_launch_us"] = bare_us
        if bare_us is not None:  # the Python part: the call minus the driver's launch
            for impl in impls:
                for v in R.doc["per_call"].get(impl, {}).values():
                    if isinstance(v, dict) and "ok" in v:
                        v["python_us"] = v["us"] - bare_us
        dev.free()

    R.part("per call", per_call)

    work = [(s, BANDWIDTH_KINDS) for s in parse_sizes(opts.sizes)]
    work += [(s, ("lap7",)) for s in parse_sizes(opts.lap_sizes)] if opts.lap_sizes else []
    for shape, kinds in work:
        R.part(
            f"bandwidth {'x'.join(map(str, shape))} {','.join(kinds)}",
            lambda shape=shape, kinds=kinds: bandwidth(  # type: ignore[misc]
                R, dev, libs, stencils, storage, backend, impls, shape, kinds, opts
            ),
        )
    R.doc["errors_count"] = len(R.doc["errors"])
    R.save()
    print(f"wrote {R.path}", flush=True)
    return 1 if R.doc["errors"] else 0


def bandwidth(
    R: Run,
    dev: Device,
    libs: dict[str, ModuleType],
    stencils: dict[tuple[str, str], Any],
    storage: ModuleType,
    backend: str,
    impls: list[str],
    shape: tuple[int, int, int],
    kinds: tuple[str, ...],
    opts: argparse.Namespace,
) -> None:
    """At ``shape``: the copy, then each kind with each library on the same arrays, in
    interleaved rounds (copy, kind x impl, ...); each checked, outputs compared."""
    xp = dev.xp
    D0 = libs[impls[0]]
    size = "x".join(map(str, shape))
    src = xp.asarray(np.random.default_rng(1).standard_normal(shape))
    dst = xp.full(shape, np.nan)
    copies = dev.copiers(dst, src)
    copy_bytes = 2 * src.nbytes
    cases: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        ins = D0.inputs(kind, shape, seed=7)
        ref = D0.reference(kind, ins)
        arrays = allocate(dev, storage, backend, kind, ins, D0)
        h = D0.HALO[kind]
        points = (shape[0] - 2 * h) * (shape[1] - 2 * h) * shape[2]
        entry: dict[str, Any] = {
            "kind": kind,
            "order": D0.ORDER[kind],
            "shape": list(shape),
            # bytes of the parameters: each input read once and the output written once over
            # the compute domain (temporaries and halo reads are the library's own cost)
            "bytes": 8 * points * len(arrays),
            "impls": {},
            "strides": list(arrays[next(iter(arrays))].strides),
        }
        outs: dict[str, np.ndarray] = {}
        runs: dict[str, Callable[[], Any]] = {}
        for impl in impls:
            if (impl, kind) not in stencils:
                continue
            case = Case(libs[impl], stencils[impl, kind], kind, arrays)
            fn = case.variants()["run()"]
            arrays[case.out_name][...] = np.nan
            try:
                fn()
                dev.sync()
            except Exception as err:
                entry["impls"][impl] = {"error": repr(err)}
                R.doc["errors"].append({"part": f"{size} {kind} {impl}", "error": repr(err)})
                continue
            c = check(dev, libs[impl], kind, arrays[case.out_name], ref)
            outs[impl] = dev.to_host(arrays[case.out_name])
            entry["impls"][impl] = {**c, "samples_ms": [], "wall_ms": []}
            runs[impl] = fn
        if len(outs) == 2:
            a, b = outs.values()
            w = D0.written(kind, shape)
            entry["bitwise_equal"] = bool(np.array_equal(a, b, equal_nan=True))
            entry["max_abs_diff"] = float(np.max(np.abs(a[w] - b[w])))
        cases[kind] = {"entry": entry, "runs": runs}
        del ref, ins
    copy_samples: dict[str, list[float]] = {k: [] for k in copies}
    for _ in range(opts.rounds):  # interleaved: drifting clocks hit every variant alike
        for name, fn in copies.items():
            copy_samples[name].append(statistics.median(dev.time_ms(fn, opts.reps)))
        for c in cases.values():
            for impl, fn in c["runs"].items():
                r = c["entry"]["impls"][impl]
                r["samples_ms"].append(statistics.median(dev.time_ms(fn, opts.reps)))
                # the wall clock too: events time the GPU's span of a call, which includes
                # what a library does between its launches (gt4py frees its temporaries)
                r["wall_ms"].append(dev.last_wall_ms)
    copy = {
        name: {
            "ms": statistics.median(s),
            "rounds_ms": s,
            "GBps": copy_bytes / (statistics.median(s) * 1e-3) / 1e9,
        }
        for name, s in copy_samples.items()
    }
    ceiling = max(v["GBps"] for v in copy.values())
    copy_ok = bool(dev.xp.array_equal(dst, src))
    R.doc["bandwidth"].append(
        {
            "kind": "copy",
            "shape": list(shape),
            "bytes": copy_bytes,
            "methods": copy,
            "ceiling_GBps": ceiling,
            "exact": copy_ok,
        }
    )
    print(f"   copy {size}: {ceiling:.0f} GB/s (exact: {copy_ok})", flush=True)
    for kind, c in cases.items():
        e = c["entry"]
        for impl, r in e["impls"].items():
            if "samples_ms" not in r or not r["samples_ms"]:
                continue
            ms = statistics.median(r["samples_ms"])
            r["ms"] = ms
            r["wall_ms_per_call"] = statistics.median(r["wall_ms"])
            r["GBps"] = e["bytes"] / (ms * 1e-3) / 1e9
            r["fraction_of_copy"] = r["GBps"] / ceiling if dev.gpu else None
            frac = "" if r["fraction_of_copy"] is None else f"{r['fraction_of_copy']:.2f} of copy"
            print(
                f"   {kind:8s} {size:12s} {impl:10s} {ms:8.3f} ms {r['GBps']:7.0f} GB/s {frac}  ok={r['ok']}",
                flush=True,
            )
        if "bitwise_equal" in e:
            print(
                f"   {kind:8s} {size:12s} libraries agree: bitwise {e['bitwise_equal']}, max abs diff {e['max_abs_diff']:.1e}",
                flush=True,
            )
        R.doc["bandwidth"].append(e)
    del cases, src, dst
    dev.free()


# ----------------------------------------------------------------------------- builds


def build_one(opts: argparse.Namespace) -> int:
    """This process's first build of one stencil (the child of ``build``): the decoration, then
    a first call on small arrays (stencilkit compiles at the first call, gt4py at the
    decoration), checked; one line ``SKCARTGPU {json}``."""
    t0 = time.perf_counter()
    D = load_defs(opts.impl)
    dev = Device(opts.backend)
    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    st = D.build(opts.kind, opts.backend, **stencil_options(opts.impl, opts.backend))
    t_decorate = time.perf_counter() - t0
    shape = (12, 11, 10)
    ins = D.inputs(opts.kind, shape, seed=3)
    arrays = allocate(dev, storage_of(opts.impl), opts.backend, opts.kind, ins, D)
    case = Case(D, st, opts.kind, arrays)
    t0 = time.perf_counter()
    case.variants()["run()"]()
    dev.sync()
    t_first = time.perf_counter() - t0
    c = check(dev, D, opts.kind, arrays[case.out_name], D.reference(opts.kind, ins))
    res = {
        "impl": opts.impl,
        "kind": opts.kind,
        "backend": opts.backend,
        "import_s": t_import,
        "decorate_s": t_decorate,
        "first_call_s": t_first,
        "build_s": t_decorate + t_first,
        **c,
    }
    print("SKCARTGPU " + json.dumps(res), flush=True)
    return 0 if c["ok"] else 1


def build(opts: argparse.Namespace) -> int:
    """One child process per stencil, all at once, building into the caches the run then hits
    (GT_CACHE_ROOT, STENCILKIT_CACHE_DIR); their times go to ``builds-<impl>.json``."""
    os.environ.setdefault("GT_CACHE_ROOT", str(Path(opts.dir) / "gt_cache"))
    Path(opts.dir).mkdir(parents=True, exist_ok=True)
    kinds = ("copy2", *BANDWIDTH_KINDS)
    t0 = time.perf_counter()
    procs = {
        k: subprocess.Popen(
            [
                sys.executable,
                __file__,
                "build-one",
                "--impl",
                opts.impl,
                "--kind",
                k,
                "--backend",
                opts.backend,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for k in kinds
    }
    res: dict[str, Any] = {
        "impl": opts.impl,
        "backend": opts.backend,
        "GT_CACHE_ROOT": os.environ["GT_CACHE_ROOT"],
        "kinds": {},
    }
    rc = 0
    for k, p in procs.items():
        try:
            text, _ = p.communicate(timeout=opts.timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            text, _ = p.communicate()
            text += f"\n(killed after {opts.timeout} s)"
        lines = [x for x in text.splitlines() if x.startswith("SKCARTGPU ")]
        if lines:  # built (a wrong result is in the record: the run checks it again)
            res["kinds"][k] = json.loads(lines[-1][len("SKCARTGPU ") :])
            rc = rc or int(p.returncode != 0)
        else:
            rc = 1
            res["kinds"][k] = {"error": f"exit {p.returncode}", "log_tail": text[-6000:]}
        print(
            f"   build {opts.impl} {k}: {res['kinds'][k].get('build_s', res['kinds'][k].get('error'))}",
            flush=True,
        )
        if "error" in res["kinds"][k]:
            print(text[-3000:], flush=True)
    res["wall_s"] = time.perf_counter() - t0
    (Path(opts.dir) / f"builds-{opts.impl}.json").write_text(json.dumps(res, indent=1))
    print(
        f"   builds of {opts.impl}: {res['wall_s']:.1f} s wall, {len(kinds)} in parallel",
        flush=True,
    )
    return rc


# ----------------------------------------------------------------------------- report


def report(opts: argparse.Namespace) -> int:
    root = Path(opts.dir)
    docs = sorted(root.glob("result*.json"))
    if not docs:
        print(f"no result*.json in {root}")
        return 1
    for path in docs:
        d = json.loads(path.read_text())
        if "fatal" in d:
            print(f"## {path.name}: FATAL {d['fatal']}\n")
            continue
        dev = d["device"]
        print(f"## {path.name}: {d['backend']} on {dev.get('device')}, {d['time']}")
        for v in d["versions"].values():
            print(f"- {v}")
        for impl, lay in d.get("layouts", {}).items():
            print(f"- {impl} storage (37,35,9) aligned (1,1,0): strides {lay['strides']}")
        print()
        pc = d.get("per_call", {})
        bare = pc.get("bare_launch_us")
        if pc:
            print(
                f"per call, {N_CALL}^3, 2 fields (host time incl. the launch; Python part = minus a bare cuLaunchKernel, {'-' if bare is None else f'{bare:.2f} us'}; target <= {TARGETS['python_us']:.0f} us)\n"
            )
            print(
                "| variant | "
                + " | ".join(f"{i} us | {i} Python us | {i} ok" for i in d["impls"] if i in pc)
                + " |"
            )
            print("|---|" + "---:|---:|---|" * sum(i in pc for i in d["impls"]))
            names = [  # every variant any library measured, in the order measured
                n
                for i in d["impls"]
                for n, v in pc.get(i, {}).items()
                if isinstance(v, dict) and "ok" in v
            ]
            for name in dict.fromkeys(names):
                cells = []
                for impl in (i for i in d["impls"] if i in pc):
                    e = pc[impl].get(name)
                    if e is None:
                        cells.append("- | - | -")
                        continue
                    py = e.get("python_us")
                    cells.append(
                        f"{e['us']:.2f} | {'-' if py is None else f'{py:.2f}'} | {e['ok']}"
                    )
                print(f"| {name} | " + " | ".join(cells) + " |")
            print()
        bw = d.get("bandwidth", [])
        if bw:
            print(
                f"bandwidth: CUDA events around each call (wall: host clock per call, drain"
                f" included), {d['reps']} calls x {d['rounds']} interleaved rounds, median;"
                " bytes = 8 x domain points x (inputs + outputs)\n"
            )
            print(
                "| stencil | order | shape | "
                + " | ".join(f"{i} ms (wall) | {i} GB/s | {i} / copy | {i} ok" for i in d["impls"])
                + " | libraries agree |"
            )
            print("|---|---|---|" + "---:|---:|---:|---|" * len(d["impls"]) + "---|")
            for e in bw:
                shape = "x".join(map(str, e["shape"]))
                if e["kind"] == "copy":
                    print(
                        f"| copy (ceiling) | | {shape} | {e['ceiling_GBps']:.0f} GB/s, exact {e['exact']} |"
                    )
                    continue
                cells = []
                for impl in d["impls"]:
                    r = e["impls"].get(impl, {})
                    if "ms" not in r:
                        cells.append(f"{r.get('error', '-')[:40]} | | | ")
                        continue
                    f = r.get("fraction_of_copy")
                    cells.append(
                        f"{r['ms']:.3f} ({r.get('wall_ms_per_call', float('nan')):.3f}) | {r['GBps']:.0f}"
                        f" | {'-' if f is None else f'{f:.2f}'} | {r['ok']}"
                    )
                agree = (
                    f"bitwise {e['bitwise_equal']}, max diff {e['max_abs_diff']:.1e}"
                    if "bitwise_equal" in e
                    else "-"
                )
                target = TARGETS.get(e["order"])
                print(
                    f"| {e['kind']} | {e['order']} (target >= {target}) | {shape} | "
                    + " | ".join(cells)
                    + f" | {agree} |"
                )
            print()
        for err in d.get("errors", []):
            print(f"- FAILED {err['part']}: {err['error'][:300]}")
        print()
    for path in sorted(root.glob("builds-*.json")):
        b = json.loads(path.read_text())
        times = ", ".join(
            f"{k} {v.get('build_s', float('nan')):.1f} s" if "build_s" in v else f"{k} FAILED"
            for k, v in b["kinds"].items()
        )
        print(
            f"- first builds, {b['impl']} {b['backend']}, in parallel processes ({b['wall_s']:.1f} s wall): {times}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    r = sub.add_parser("run", help="measure, both libraries in this process")
    r.add_argument("--impls", default="stencilkit,gt4py")
    r.add_argument("--backend", default="gt:gpu")
    r.add_argument("--dir", required=True)
    r.add_argument("--tag", default="result", help="the JSON's name (result*.json)")
    r.add_argument("--sizes", default="256x256x80,512x512x80,512x512x128")
    r.add_argument(
        "--lap-sizes", default="512x512x512", help="more sizes, the PARALLEL stencil only"
    )
    r.add_argument("--rounds", type=int, default=5)
    r.add_argument("--reps", type=int, default=10, help="calls timed per round (median)")
    r.add_argument("--calls", type=int, default=2000, help="calls per round of the per-call loop")
    b = sub.add_parser("build", help="first builds, one process per stencil, in parallel")
    b.add_argument("--impl", choices=IMPLS, required=True)
    b.add_argument("--backend", default="gt:gpu")
    b.add_argument("--dir", required=True)
    b.add_argument("--timeout", type=float, default=300)
    o = sub.add_parser("build-one")
    o.add_argument("--impl", choices=IMPLS, required=True)
    o.add_argument("--kind", required=True)
    o.add_argument("--backend", default="gt:gpu")
    p = sub.add_parser("report", help="markdown tables of every result*.json in --dir")
    p.add_argument("--dir", required=True)
    opts = ap.parse_args(argv)
    step: Callable[[argparse.Namespace], int] = {
        "run": run,
        "build": build,
        "build-one": build_one,
        "report": report,
    }[opts.step]
    return step(opts)


if __name__ == "__main__":
    sys.exit(main())
