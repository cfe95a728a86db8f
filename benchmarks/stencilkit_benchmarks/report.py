"""The design targets, the result table, the checks and the JSON document of a run."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

DESIGN: dict[str, float] = {  # DESIGN.md section 4
    "laplacian_fraction_of_copy": 0.85,
    "plain_cuda_fraction_of_copy": 0.75,
    "scan_fraction_of_copy": 0.90,
    "triton_scan_fraction_of_copy": 0.93,
    "neighbour_sum_fraction_of_copy": 0.65,
    "overhead_2_us": 10.0,
    "overhead_25_us": 15.0,
    "gpu_first_compile_s": 0.5,
    "cpu_first_compile_s": 2.0,
    "cached_new_process_s": 0.050,
    "cpu_vs_embedded_speedup": 10.0,
    "import_s": 0.3,
    # CARTESIAN.md 5.1 (GTScript); run()/frozen use overhead_2_us/overhead_25_us above
    "cartesian_call_factor": 2.0,  # __call__(validate_args=False) <= this x run()'s target
    "cartesian_validated_us": 100.0,
    "cartesian_gpu_python_us": 5.0,
    "cartesian_parallel_fraction_of_copy": 0.8,
    "cartesian_forward_fraction_of_copy": 0.6,
}


class Runner:
    """Runs named sections; a failing section prints its traceback and the rest run."""

    def __init__(self, verbose: bool = True) -> None:
        self.verbose = verbose
        self.results: dict[str, Any] = {}
        self.failures: dict[str, str] = {}
        self.rows: list[tuple[str, str, str, str, str]] = []  # what, time, rate, ratio, note
        self.checks: list[tuple[str, bool, str]] = []
        #: performance targets (met or missed): printed like checks, kept out of ``ok`` (a timing
        #: on a shared machine is a measurement, not a correctness failure)
        self.targets: list[tuple[str, bool, str]] = []
        self.autosave: tuple[str, dict[str, Any]] | None = (
            None  # (JSON path, env): saved after each section
        )

    def say(self, text: str) -> None:
        if self.verbose:
            print(text, flush=True)

    def section(self, name: str, fn: Callable[[], Any]) -> None:
        self.say(f"\n=== {name}")
        t0 = time.perf_counter()
        try:
            self.results[name] = fn()
        except Exception:
            tb = traceback.format_exc()
            self.failures[name] = tb
            print(f"!!! section {name} FAILED:\n{tb}", file=sys.stderr, flush=True)
        self.say(f"=== {name}: {time.perf_counter() - t0:.1f} s")
        if self.autosave:  # a run killed by a time limit still leaves the sections it finished
            try:
                self.dump(*self.autosave, quiet=True)
            except Exception as err:
                print(f"could not save {self.autosave[0]}: {err!r}", file=sys.stderr)

    def row(
        self,
        what: str,
        time_: str = "",
        rate: str = "",
        ratio: str = "",
        note: str = "",
        target: tuple[str, bool] | None = None,
    ) -> None:
        """One row of the table. A row that states a target passes it as ``target=(text,
        met)``: the note says whether it was met and the footer counts it, so the rows and the
        footer's "targets: m/n met" always agree (a target in a free-text note is refused)."""
        if target is not None:
            text, met = target
            self.target(f"{what.strip()}: {text}", met, " ".join(x for x in (time_, ratio) if x))
            shown = f"{text}: {'met' if met else 'MISSED'}"
            note = f"{shown}; {note}" if note else shown
        elif "target" in note:
            raise ValueError(f"row {what!r}: a target goes in target=(text, met), not the note")
        self.rows.append((what, time_, rate, ratio, note))
        self.say(f"  {what:<50} {time_:>12} {rate:>12} {ratio:>9}  {note}")

    def check(self, what: str, ok: bool, detail: str = "") -> bool:
        self.checks.append((what, bool(ok), detail))
        if self.verbose or not ok:
            print(f"  check {'ok  ' if ok else 'FAIL'} {what} {detail}", flush=True)
        return bool(ok)

    def target(self, what: str, met: bool, detail: str = "") -> bool:
        self.targets.append((what, bool(met), detail))
        if self.verbose or not met:
            print(f"  check {'ok  ' if met else 'MISS'} target: {what} {detail}", flush=True)
        return bool(met)

    def table(self, title: str) -> str:
        head = ("what", "time", "rate", "ratio", "note")
        rows = [head, *self.rows]
        w = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = [f"---- {title}"]
        for r in rows:
            lines.append(
                f"{r[0]:<{w[0]}}  {r[1]:>{w[1]}}  {r[2]:>{w[2]}}  {r[3]:>{w[3]}}  {r[4]}".rstrip()
            )
        bad = [c for c in self.checks if not c[1]]
        lines.append(
            f"checks: {len(self.checks) - len(bad)}/{len(self.checks)} passed"
            + "".join(f"\n  FAILED CHECK: {c[0]} {c[2]}" for c in bad)
        )
        if self.targets:
            missed = [t for t in self.targets if not t[1]]
            lines.append(
                f"targets: {len(self.targets) - len(missed)}/{len(self.targets)} met"
                + "".join(f"\n  MISSED TARGET: {t[0]} {t[2]}" for t in missed)
            )
        lines.append("sections failed: " + (", ".join(self.failures) if self.failures else "none"))
        return "\n".join(lines)

    @property
    def ok(self) -> bool:
        return not self.failures and all(c[1] for c in self.checks)

    def document(self, env: dict[str, Any]) -> dict[str, Any]:
        return {
            "env": env,
            "results": self.results,
            "failures": self.failures,
            "checks": [{"what": w, "ok": o, "detail": d} for w, o, d in self.checks],
            "targets": [{"what": w, "met": m, "detail": d} for w, m, d in self.targets],
            "table": [dict(zip(("what", "time", "rate", "ratio", "note"), r)) for r in self.rows],
            "ok": self.ok,
        }

    def dump(self, path: str | None, env: dict[str, Any], quiet: bool = False) -> None:
        if not path:
            return
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(f"{path}.tmp")
        tmp.write_text(json.dumps(self.document(env), indent=1, default=_jsonable))
        tmp.replace(path)
        if not quiet:
            print(f"wrote {path}")


def _jsonable(x: Any) -> Any:
    try:
        import numpy as np

        if isinstance(x, np.generic):
            return x.item()
        if isinstance(x, np.ndarray):
            return x.tolist()
    except ImportError:
        pass
    return repr(x)


def base_env() -> dict[str, Any]:
    env: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "argv": sys.argv,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "STENCILKIT_CACHE_DIR": os.environ.get("STENCILKIT_CACHE_DIR"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "design_targets": DESIGN,
    }
    try:
        env["loadavg"] = os.getloadavg()
    except OSError:
        pass
    try:
        import numpy as np

        env["numpy"] = np.__version__
    except ImportError:
        pass
    try:
        from stencilkit import __version__

        env["stencilkit"] = __version__
    except Exception as err:
        env["stencilkit"] = f"unknown: {err!r}"
    return env


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child Python process of the suite: ``PYTHONPATH`` starts with the
    folders holding the ``stencilkit`` and ``stencilkit_benchmarks`` running this, so the child
    measures the same code (installed, editable, or a source tree on ``PYTHONPATH``)."""
    import stencilkit

    env = dict(os.environ, **extra)
    roots = {
        str(Path(stencilkit.__file__).resolve().parents[1]),
        str(Path(__file__).resolve().parents[1]),
    }
    env["PYTHONPATH"] = os.pathsep.join([*sorted(roots), *filter(None, [env.get("PYTHONPATH")])])
    return env
