"""Ahead-of-time compilation of many programs at once, in parallel, with a progress display.

Builds run in threads: the C++ and nvcc compilers are separate processes and NVRTC releases
the interpreter while it compiles, so threads give real parallelism without the
``if __name__ == "__main__"`` guard that process pools force on scripts.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

__all__ = ["CompileJob", "CompileReport", "compile_programs"]


@dataclass(frozen=True, slots=True)
class CompileJob:
    """One program and example arguments like those it will be called with."""

    program: Any
    args: tuple[Any, ...]
    offset_provider: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class CompileReport:
    """How one job went: the program's ``name``, the ``seconds`` its build took, and the
    ``error`` that stopped it (None when it compiled)."""

    name: str
    seconds: float
    error: BaseException | None


def compile_programs(
    jobs: Sequence[CompileJob | tuple[Any, ...]],
    *,
    max_workers: int | None = None,
    progress: bool = True,
) -> list[CompileReport]:
    """Take every job's program through every stage for its arguments (``Program.compile``:
    bind, lower, plan, generate, build, load and tune; nothing runs, so the first real call only
    launches); return one report per job, in order. Errors are collected, not raised, so one bad
    program does not stop the others.

    >>> compile_programs([CompileJob(run_lap, (a, out)), CompileJob(run_div, (vn, div), {"C2E": c2e})])
    """
    normalized = [
        j
        if isinstance(j, CompileJob)
        else CompileJob(j[0], tuple(j[1]), j[2] if len(j) > 2 else None)
        for j in jobs
    ]
    workers = max_workers or min(len(normalized), os.cpu_count() or 1) or 1

    def build(job: CompileJob) -> CompileReport:
        t0 = time.perf_counter()
        try:
            job.program.compile(*job.args, offset_provider=job.offset_provider)
            return CompileReport(job.program.__name__, time.perf_counter() - t0, None)
        except Exception as err:  # reported per job
            return CompileReport(job.program.__name__, time.perf_counter() - t0, err)

    reports: list[CompileReport | None] = [None] * len(normalized)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(build, job): i for i, job in enumerate(normalized)}
        if progress:
            from rich.progress import Progress

            with Progress(transient=True) as bar:
                task = bar.add_task(f"compiling {len(normalized)} programs", total=len(normalized))
                for fut in as_completed(futures):
                    reports[futures[fut]] = fut.result()
                    bar.advance(task)
        else:
            for fut in as_completed(futures):
                reports[futures[fut]] = fut.result()
    return [r for r in reports if r is not None]
