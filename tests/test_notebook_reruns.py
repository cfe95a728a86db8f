"""A notebook cell re-run or edited: what the old definition held is freed (issue 42.8).

Re-running the same cell defines new programs each time; stencilkit's caches by identity
(core/identity.py) drop an old program's lowering, interface and generated code when it is
collected, and a cpu library is closed when nothing uses it. Checked in a child process
(scripts/notebook_reruns.py, the measurement itself, at a smaller count)."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np

import stencilkit as gtx
from stencilkit.core.identity import IdentityCache
from stencilkit.ir import nodes as ir

ROOT = Path(__file__).parents[1]


def _reruns(tmp_path: Path, runs: int, edits: int) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), STENCILKIT_CACHE_DIR=str(tmp_path))
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "notebook_reruns.py"), str(runs), str(edits)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_re_running_a_cell_does_not_grow_stencilkits_memory(tmp_path: Path) -> None:
    small = _reruns(tmp_path, 150, 0)
    large = _reruns(tmp_path, 600, 0)

    def ours(text: str) -> float:
        m = re.search(r"generated kernels: ([0-9.]+) KiB", text)
        assert m, text
        return float(m.group(1))

    # bounded, not per run: 450 more runs add less than 100 bytes each (before: ~5,000)
    assert ours(large) - ours(small) < 450 * 100 / 1024, (small, large)


def test_edited_cells_do_not_keep_their_libraries_mapped(tmp_path: Path) -> None:
    out = _reruns(tmp_path, 1, 4)
    assert "4 edited cells (cpu): 1 program libraries mapped after the last" in out, out


def test_a_dropped_program_leaves_the_identity_caches() -> None:
    cache: IdentityCache[ir.Program, str] = IdentityCache(8)
    prog = ir.Program("p", (), (), ())
    ref = weakref.ref(prog)
    cache.put(prog, "lowered")
    assert cache.get(prog) == "lowered" and len(cache) == 1
    del prog
    gc.collect()
    assert ref() is None and len(cache) == 0  # the cache kept neither the key nor its entry


def test_a_cached_value_that_refers_to_its_key_is_held_weakly() -> None:
    cache: IdentityCache[ir.Program, list[object]] = IdentityCache(8, weak_values=True)
    prog = ir.Program("p", (), (), ())
    ref = weakref.ref(prog)

    class Face:
        def __init__(self, program: ir.Program) -> None:
            self.program = program

    face = cache.put(prog, Face(prog))  # type: ignore[arg-type]
    assert cache.get(prog) is face
    del prog, face
    gc.collect()
    assert ref() is None and len(cache) == 0


def test_programs_still_share_their_lowering_while_alive() -> None:
    """The caches still serve: a program and its with_backend copy lower once."""
    from stencilkit.stages import pipeline

    I = gtx.Dimension("I")

    @gtx.field_operator
    def inc(a: gtx.Field[gtx.Dims[I], gtx.float64]) -> gtx.Field[gtx.Dims[I], gtx.float64]:
        return a + 1.0

    @gtx.program
    def run(a: gtx.Field[gtx.Dims[I], gtx.float64], b: gtx.Field[gtx.Dims[I], gtx.float64]):
        inc(a, out=b)

    data = np.random.default_rng(3).random(6)
    a, b = gtx.as_field([I], data), gtx.zeros({I: 6})
    run(a, b, offset_provider={})
    lowered = pipeline.lower(run.definition, {})
    assert pipeline.lower(run.with_backend(None).definition, {}) is lowered
    np.testing.assert_allclose(b.asnumpy(), data + 1.0)
