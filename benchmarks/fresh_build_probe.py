"""A GPU program's build (generate + NVRTC, no launch) in new processes: on a cache that has
never seen NVRTC, then on a cache that keeps only its toolchain records (a machine where NVRTC was
found before, building a program it has not built), three times each. Reports the build's time
and whether cuda-bindings was imported (``toolchain/nvrtc.py`` compiles without it where the
record names the library). No GPU needed: the build is for sm_90.

    PYTHONPATH=src python3 benchmarks/fresh_build_probe.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])  # benchmarks/: contraction.py's Laplacian
from contraction import I, J, K, run_lap
import stencilkit as gtx
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda import CudaTarget
from stencilkit.stages.interface import interface_of

n = 16
a, out = (gtx.as_field([I, J, K], np.asfortranarray(np.random.rand(n, n, n)), copy=None) for _ in range(2))
target = CudaTarget(arch="90")
source = CompiledRunner(interface_of(run_lap.definition), target).stages(
    [a, out, n], {}, check_device=False, until="generate").source
t0 = time.perf_counter()
target.build(source)
print("PROBE " + json.dumps({"build_s": time.perf_counter() - t0,
                             "cuda_bindings_imported": "cuda.bindings" in sys.modules}))
"""


def _run(cache: Path, script: Path) -> dict[str, object]:
    env = {**os.environ, "STENCILKIT_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, str(script), str(Path(__file__).parent)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the build child failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("PROBE "))
    result: dict[str, object] = json.loads(line[6:])
    return result


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="sk-fresh-build-"))
    script = work / "child.py"  # a file: the frontend reads the definitions' source
    script.write_text(CHILD)
    for label, keep_records in (
        ("no record (fresh cache)", False),
        ("toolchain record kept", True),
    ):
        runs = []
        for _ in range(3):
            cache = Path(tempfile.mkdtemp(dir=work))
            if keep_records:
                _run(cache, script)  # finds NVRTC and writes the record; then its build is removed
                for entry in cache.iterdir():
                    if entry.name != "toolchain":
                        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            runs.append(_run(cache, script))
            shutil.rmtree(cache, ignore_errors=True)
        times = [round(float(r["build_s"]) * 1e3, 1) for r in runs]  # type: ignore[arg-type]
        imported = {r["cuda_bindings_imported"] for r in runs}
        print(
            f"{label:28s} build {min(times):6.1f} ms (runs {times}); cuda-bindings imported: {imported}"
        )


if __name__ == "__main__":
    main()
