"""The benchmark rows of issue 13 without a GPU: the random numbering is the same mesh, the
gathers section runs end to end on the cpu backend (both layouts, both numberings, checked
against NumPy), and the first-call child script is valid Python."""

from __future__ import annotations

import numpy as np

from stencilkit_benchmarks import gathers
from stencilkit_benchmarks.devices import Dev
from stencilkit_benchmarks.meshes import build_mesh
from stencilkit_benchmarks.options import Options
from stencilkit_benchmarks.programs import import_programs
from stencilkit_benchmarks.report import Runner


def test_random_numbering_is_the_same_mesh() -> None:
    mesh, _ = build_mesh(6, 4, locality=True)
    c2e, e2c = gathers.random_numbering(mesh.c2e, mesh.e2c)
    assert c2e.dtype == np.int32 and c2e.shape == mesh.c2e.shape and e2c.shape == mesh.e2c.shape
    assert not np.array_equal(c2e, mesh.c2e)
    for cell in range(c2e.shape[0]):  # every edge of a cell has that cell among its two cells
        assert all(cell in e2c[e] for e in c2e[cell])
    assert sorted(np.bincount(c2e.ravel())) == sorted(np.bincount(mesh.c2e.ravel()))


def test_gathers_section_on_the_cpu(tmp_path) -> None:
    runner = Runner(verbose=False)
    opts = Options(gpu=False, mesh=(8, 4, 5), reps=2)
    res = gathers.gathers_section(runner, Dev(gpu=False), import_programs(tmp_path), opts, {})
    assert runner.ok, runner.failures
    for key in ("c2e random", "c2e locality", "e2c random", "e2c locality"):
        assert set(gathers.GATHER_LAYOUTS) <= set(res[key])
    strides = {
        lay: res["c2e random"]["setup"][lay]["strides_bytes"] for lay in gathers.GATHER_LAYOUTS
    }
    assert strides["vertical-contiguous"][1] == 8 and strides["horizontal-contiguous"][0] == 8


def test_first_call_child_is_valid_python() -> None:
    compile(gathers.FIRST_CALL_CHILD, "child.py", "exec")
    assert set(gathers.FIRST_CALL_CASES) == {"laplacian", "scan", "c2e_random"}
