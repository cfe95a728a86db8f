"""Acceptance run: every stencil of an installed icon4py, imported through the gt4py alias,
parsed, run on random inputs on embedded and compiled backends, compared.

    python -m stencilkit.compat.icon4py --json icon4py.json --markdown icon4py.md [--backend cpu]
        [--backend gpu] [--jobs 2] [--only dycore] [--timeout 120]

Stencils are found by reading icon4py's source (``discover``); each module is imported through
``stencilkit.compat.install_gt4py_alias`` (a module that fails to import fails all its
stencils, with the reason); each decorated object is run by ``run.run_stencil`` on the
ICON-like mesh of ``mesh``. ``--jobs N`` splits the modules over N processes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from .discover import StencilSource, find_stencils

__all__ = ["main", "run_all", "stencil_sources"]


def stencil_sources(package: str = "icon4py", only: str = "") -> list[StencilSource]:
    """The decorated stencils of an installed package (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{package} is not installed in {sys.executable}")
    found: list[StencilSource] = []
    for pkg_dir in _installed_locations(package, list(spec.submodule_search_locations)):
        found.extend(find_stencils(pkg_dir, pkg_dir.parent))
    return [s for s in found if only in s.module]


def _installed_locations(package: str, locations: list[str]) -> list[Path]:
    """The parts of a (namespace) package that an installed distribution provides: a directory
    named like the package elsewhere on ``sys.path`` (``tests/icon4py``) is not icon4py."""
    paths = [Path(loc) for loc in locations]
    installed = [p for p in paths if any(p.parent.glob(f"{package}*.dist-info"))]
    return installed or paths


def _backends(names: list[str]) -> dict[str, tuple[Any, Any]]:
    import stencilkit as gtx

    table = {"cpu": (gtx.cpu, None), "gpu": (gtx.gpu, gtx.gpu)}
    return {n: table[n] for n in names}


def _import(module: str, timeout: float) -> tuple[Any, str]:
    """The module, or None and why it failed (with the innermost line of its package)."""
    from .run import StageTimeout, describe, time_limit

    try:
        with time_limit(timeout):
            return importlib.import_module(module), ""
    except StageTimeout as err:
        return None, f"import timed out: {describe(err)}"
    except Exception as err:
        return None, describe(err, where=module.split(".")[0] + "/")


def run_all(
    sources: list[StencilSource],
    backends: list[str],
    *,
    seed: int = 0,
    timeout: float = 120.0,
    rtol: float = 1e-12,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """One record per stencil (see ``docs/icon4py.md`` for the fields)."""
    from ..gt4py.alias import install_gt4py_alias
    from .mesh import icon_mesh
    from .run import run_stencil

    install_gt4py_alias()
    warnings.simplefilter("ignore", RuntimeWarning)  # random inputs overflow exp() and the like
    mesh = icon_mesh()
    chosen = _backends(backends)
    records: list[dict[str, Any]] = []
    modules: dict[str, tuple[Any, str]] = {}
    for i, src in enumerate(sources):
        if src.module not in modules:
            modules[src.module] = _import(src.module, timeout)
        module, why = modules[src.module]
        rec: dict[str, Any] = {
            "module": src.module,
            "name": src.name,
            "kind": src.kind,
            "line": src.line,
            "status": {},
            "reasons": {},
        }
        records.append(rec)
        obj = getattr(module, src.name, None) if module is not None else None
        if module is None:
            rec["status"]["import"], rec["reasons"]["import"] = "fail", why
        elif obj is None:
            rec["status"]["import"] = "fail"
            rec["reasons"]["import"] = "not reachable as a module attribute" + (
                " (defined inside a function)" if src.nested else ""
            )
        else:
            rec["status"]["import"] = "ok"
            out = run_stencil(obj, mesh, chosen, seed=seed, rtol=rtol, timeout=timeout)
            rec["status"].update(out.status)
            rec["reasons"].update(out.reasons)
            rec.update(attempt=out.attempt, max_error=out.max_error, seconds=round(out.seconds, 3))
        if progress:
            print(
                f"[{i + 1}/{len(sources)}] {src.module}.{src.name}: {_verdict(rec)}",
                file=sys.stderr,
                flush=True,
            )
    return records


def _verdict(rec: dict[str, Any]) -> str:
    bad = [s for s, v in rec["status"].items() if v != "ok"]
    if not bad:
        return "ok"
    return f"{bad[0]} {rec['status'][bad[0]]}: {rec['reasons'].get(bad[0], '')}"


def _sharded(args: argparse.Namespace, sources: list[StencilSource]) -> list[dict[str, Any]]:
    """Split the modules over ``args.jobs`` processes (largest modules first) and merge."""
    per_module: dict[str, int] = {}
    for s in sources:
        per_module[s.module] = per_module.get(s.module, 0) + 1
    load = [0] * args.jobs
    shard_of: dict[str, int] = {}
    for mod, n in sorted(per_module.items(), key=lambda kv: -kv[1]):
        j = load.index(min(load))
        shard_of[mod], load[j] = j, load[j] + n
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for j in range(args.jobs):
            mods = sorted(m for m, s in shard_of.items() if s == j)
            listing = Path(tmp, f"modules{j}.txt")
            listing.write_text("\n".join(mods))
            cmd = [
                sys.executable,
                "-m",
                "stencilkit.compat.icon4py",
                "--modules-from",
                str(listing),
                "--json",
                str(Path(tmp, f"part{j}.json")),
                "--seed",
                str(args.seed),
                "--timeout",
                str(args.timeout),
                "--rtol",
                str(args.rtol),
            ]
            cmd += [a for b in args.backend for a in ("--backend", b)]
            if args.progress:
                cmd.append("--progress")
            procs.append(subprocess.Popen(cmd))
        codes = [p.wait() for p in procs]
        if any(codes):
            raise SystemExit(f"a worker process failed: exit codes {codes}")
        parts = [
            json.loads(Path(tmp, f"part{j}.json").read_text())["stencils"] for j in range(args.jobs)
        ]
    order = {(s.module, s.name, s.line): i for i, s in enumerate(sources)}
    merged = [r for p in parts for r in p]
    return sorted(merged, key=lambda r: order[(r["module"], r["name"], r["line"])])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m stencilkit.compat.icon4py", description=__doc__.split("\n\n")[0]
    )
    p.add_argument(
        "--backend",
        action="append",
        choices=["cpu", "gpu"],
        default=None,
        help="compiled backend(s) to compare with embedded (default: cpu)",
    )
    p.add_argument("--json", type=Path, help="write the per-stencil records and counts here")
    p.add_argument("--markdown", type=Path, help="write the report here")
    p.add_argument("--only", default="", help="only modules whose name contains this")
    p.add_argument(
        "--modules-file",
        type=Path,
        help="only the modules named in this file (one per line), e.g. to finish an interrupted run",
    )
    p.add_argument("--modules-from", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per import and per stencil"
    )
    p.add_argument("--rtol", type=float, default=1e-12)
    p.add_argument("--progress", action="store_true")
    args = p.parse_args(argv)
    args.backend = args.backend or ["cpu"]
    sources = stencil_sources(only=args.only)
    for listing in (args.modules_file, args.modules_from):
        if listing is not None:
            wanted = set(listing.read_text().split())
            sources = [s for s in sources if s.module in wanted]
    t0 = time.perf_counter()
    if args.jobs > 1 and args.modules_from is None:
        records = _sharded(args, sources)
    else:
        records = run_all(
            sources,
            args.backend,
            seed=args.seed,
            timeout=args.timeout,
            rtol=args.rtol,
            progress=args.progress,
        )
    from .report import counts, markdown

    summary = counts(records, args.backend)
    result = {
        "backends": args.backend,
        "seed": args.seed,
        "rtol": args.rtol,
        "seconds": round(time.perf_counter() - t0, 1),
        "python": sys.version.split()[0],
        "icon4py": _version("icon4py-common"),
        "stencilkit": _commit(),
        "counts": summary,
        "stencils": records,
    }
    if args.json is not None:
        args.json.write_text(_dumps(result))
    if args.markdown is not None:
        args.markdown.write_text(markdown(result))
    if args.modules_from is None:
        print(json.dumps(summary, indent=1))
    return 0


def _dumps(result: dict[str, Any]) -> str:
    """JSON with one line per stencil record (small, and diffs line by line)."""
    head = {k: v for k, v in result.items() if k != "stencils"}
    lines = [json.dumps(r, sort_keys=False) for r in result["stencils"]]
    return (
        json.dumps(head, indent=1)[:-2]
        + ',\n "stencils": [\n  '
        + ",\n  ".join(lines)
        + "\n ]\n}\n"
    )


def _commit() -> str:
    """stencilkit's git commit (short hash, ``+`` if the tree has changes; ``$STENCILKIT_COMMIT``
    for a copy without git), or its version."""
    import stencilkit

    if os.environ.get("STENCILKIT_COMMIT"):
        return os.environ["STENCILKIT_COMMIT"]
    here = Path(stencilkit.__file__).parent
    try:
        head = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return str(stencilkit.__version__)
    return head + ("+" if dirty else "")


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"
