"""The gt4py alias serves gt4py.storage and gt4py.cartesian (config, backend, the pass names,
the compiler settings; gtscript once stencilkit.cartesian.gtscript exists)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from stencilkit.cartesian import backend_names, layout_registry, storage
from stencilkit.compat import install_gt4py_alias, uninstall_gt4py_alias

SRC = Path(__file__).parents[2] / "src"
HAS_GTSCRIPT = importlib.util.find_spec("stencilkit.cartesian.gtscript") is not None


@pytest.fixture
def alias() -> Iterator[None]:
    install_gt4py_alias()
    yield
    uninstall_gt4py_alias()


def test_gt4py_storage_is_stencilkits(alias: None) -> None:
    import gt4py.storage as gt_storage
    from gt4py.storage import empty, from_array, full, ones, zeros
    from gt4py.storage.cartesian import layout
    from gt4py.storage.cartesian.layout import from_name

    assert gt_storage is storage
    assert (empty, zeros, ones, full, from_array) == (
        storage.empty,
        storage.zeros,
        storage.ones,
        storage.full,
        storage.from_array,
    )
    assert layout is layout_registry and from_name is layout_registry.from_name
    assert gt_storage.layout.from_name("gt:gpu")["alignment"] == 32
    data = np.random.default_rng(1).random((4, 3, 2))
    a = gt_storage.from_array(data, backend="gt:cpu_ifirst", aligned_index=(1, 0, 0))
    np.testing.assert_array_equal(a, data)
    assert a.strides == (8, 32, 96)


def test_cartesian_backend_from_name(alias: None) -> None:
    from gt4py.cartesian import backend as gt_backend

    for name, rec in backend_names.BACKENDS.items():
        cls = gt_backend.from_name(name)
        assert cls.name == name
        info = cls.storage_info
        assert info["device"] == rec.device and info["alignment"] == rec.alignment
        assert info["layout_map"](("I", "J", "K")) == rec.layout_map(("I", "J", "K"))
    assert gt_backend.from_name("numpy").languages["computation"] == "python"
    assert gt_backend.from_name("gt:gpu").languages == {
        "computation": "cuda",
        "bindings": ["python"],
    }
    # NDSL's Backend.is_fortran_aligned(): the layout map against the I-first one
    ifirst = gt_backend.from_name("gt:cpu_ifirst").storage_info["layout_map"](("I", "J", "K"))
    assert ifirst == (2, 1, 0)
    for error in (ValueError, NotImplementedError):
        with pytest.raises(error, match=r"backend 'gtc:gt:cpu_ifirst' is not implemented"):
            gt_backend.from_name("gtc:gt:cpu_ifirst")


def test_cartesian_config_as_ndsl_reads_it(alias: None) -> None:
    import gt4py
    from gt4py.cartesian import config

    assert gt4py.cartesian.config is config  # NDSL: gt4py.cartesian.config.cache_settings[...]
    assert {"root_path", "dir_name"} <= set(config.cache_settings)
    assert isinstance(config.GT4PY_COMPILE_OPT_LEVEL, str)
    assert isinstance(config.build_settings["extra_compile_args"]["cxx"], list)


def test_bare_import_gt4py_reaches_storage_and_backend(alias: None) -> None:
    # NDSL's gt4py_utils: `import gt4py`, then gt4py.storage.zeros / gt4py.cartesian.backend
    import gt4py

    assert gt4py.storage.zeros is storage.zeros
    assert gt4py.cartesian.backend.from_name("gt:gpu").storage_info["device"] == "gpu"
    with pytest.raises(AttributeError, match=r"module 'gt4py' has no attribute 'nothing'"):
        gt4py.nothing  # noqa: B018


def test_pass_names_for_skip_passes(alias: None) -> None:
    from gt4py.cartesian.gtc.passes.oir_pipeline import DefaultPipeline, OirPipeline

    assert OirPipeline is not None
    by_name = {step.__name__: step for step in DefaultPipeline.all_steps()}
    assert {"HorizontalExecutionMerging", "PruneKCacheFills", "PruneKCacheFlushes"} <= set(by_name)
    pipe = DefaultPipeline(skip=[by_name["PruneKCacheFills"]])
    assert by_name["PruneKCacheFills"] not in pipe.steps and len(pipe.steps) == 12
    assert pipe.run("oir") == "oir"
    assert hash(pipe) == hash(DefaultPipeline(skip=[by_name["PruneKCacheFills"]]))
    assert "PruneKCacheFills" in repr(pipe)


def test_pass_classes_from_gt4pys_pass_modules(alias: None) -> None:
    """NDSL's tests import a pass from its gt4py module and look for it in the pipeline."""
    from gt4py.cartesian.gtc.passes.oir_optimizations.caches import PruneKCacheFills
    from gt4py.cartesian.gtc.passes.oir_optimizations.horizontal_execution_merging import (
        HorizontalExecutionMerging,
    )
    from gt4py.cartesian.gtc.passes.oir_pipeline import DefaultPipeline

    assert HorizontalExecutionMerging in DefaultPipeline().steps
    pipe = DefaultPipeline(skip=[HorizontalExecutionMerging, PruneKCacheFills])
    assert HorizontalExecutionMerging in pipe.skip and HorizontalExecutionMerging not in pipe.steps
    assert PruneKCacheFills not in pipe.steps


def test_compiler_settings(alias: None) -> None:
    from gt4py.cartesian.utils.compiler import cxx_compiler_defaults, gpu_configuration

    cxx = cxx_compiler_defaults("3")
    assert isinstance(cxx.cxx_compile_flags, str) and isinstance(cxx.enable_openmp, bool)
    assert "-ffp-contract=off" in cxx_compiler_defaults("0").cxx_compile_flags
    gpu = gpu_configuration("0")
    assert gpu.gpu_compile_flags == ["-fmad=false"] or os.environ.get(
        "GT4PY_CARTESIAN_EXTRA_CUDA_COMPILE_ARGS"
    )
    assert gpu.binary_path.endswith("bin") and gpu.library_path.endswith("lib64")


def test_gtscript_when_the_language_exists(alias: None) -> None:
    import gt4py.cartesian

    if HAS_GTSCRIPT:
        import gt4py.cartesian.gtscript as gtscript

        import stencilkit.cartesian.gtscript

        assert gtscript is stencilkit.cartesian.gtscript
        assert gt4py.cartesian.gtscript is gtscript
    else:
        with pytest.raises(ModuleNotFoundError, match=r"gt4py\.cartesian\.gtscript"):
            import gt4py.cartesian.gtscript
        assert not hasattr(gt4py.cartesian, "gtscript")
    with pytest.raises(AttributeError, match=r"no attribute 'nope'"):
        gt4py.cartesian.nope  # noqa: B018


def test_fresh_process_ndsl_import_order(tmp_path: Path) -> None:
    # what an NDSL process does first: the alias, then `import gt4py` and its module-level names
    script = textwrap.dedent("""
        import time
        t0 = time.perf_counter()
        from stencilkit.compat import install_gt4py_alias
        install_gt4py_alias()
        import gt4py
        import gt4py.storage as gt_storage
        from gt4py.cartesian import backend as gt_backend
        from gt4py.cartesian.gtc.passes.oir_pipeline import DefaultPipeline
        dt = time.perf_counter() - t0
        settings = gt4py.cartesian.config.cache_settings
        settings["dir_name"] = settings["dir_name"] + "_rank3"
        from gt4py.cartesian.config import cache_settings
        assert cache_settings["dir_name"] == "mycache_rank3", cache_settings
        info = gt_backend.from_name("gt:cpu_kfirst").storage_info
        a = gt_storage.zeros((3, 4, 5), backend="gt:cpu_kfirst")
        assert info["is_optimal_layout"](a, ("I", "J", "K"))
        print(f"imports {dt * 1e3:.0f} ms")
    """)
    env = dict(
        os.environ,
        PYTHONPATH=str(SRC),
        GT_CACHE_DIR_NAME="mycache",
        GT_CACHE_ROOT=str(tmp_path),
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("imports ")
