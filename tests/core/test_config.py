"""Configuration: every STENCILKIT_* variable parsed once; a bad value names its variable, stops
only the code that needs it, and ``stencilkit info`` still reports everything else."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import stencilkit as gtx
from stencilkit.cli import main
from stencilkit.core.errors import ConfigurationError
from stencilkit.toolchain import cuda as cuda_toolchain
from stencilkit.toolchain import cxx
from stencilkit.toolchain.config import VARIABLES, config, require, reset_config

ROOT = Path(__file__).parents[2]


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Change the environment; the cached configuration and discoveries are forgotten around."""
    reset_config()
    cuda_toolchain.find_cuda_compiler.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    reset_config()
    cxx.find_cxx.cache_clear()
    cuda_toolchain.find_cuda_compiler.cache_clear()


BAD = {
    "STENCILKIT_CUDA_COMPILER": ("nvvc", "use one of nvrtc, nvcc"),
    "STENCILKIT_SANITIZE": ("adress", "unknown sanitizer"),
    "STENCILKIT_NUM_THREADS": ("0", "whole number >= 1"),
    "STENCILKIT_PARALLEL_MIN_WORK": ("lots", "whole number >= 0"),
    "STENCILKIT_LOG": ("verbose", "use one of off, error, warning, info, debug"),
    "STENCILKIT_PARSE_AT_DECORATION": ("maybe", "use one of 1, true, yes, on or 0, false, no, off"),
}


@pytest.mark.parametrize("variable", sorted(BAD))
def test_a_bad_value_is_kept_as_a_problem_naming_the_variable(env, variable) -> None:
    value, why = BAD[variable]
    env.setenv(variable, value)
    cfg = config()  # never raises
    assert list(cfg.problems) == [variable]
    with pytest.raises(
        ConfigurationError, match=re.escape(f"{variable}={value!r}") + ".*" + re.escape(why)
    ) as info:
        require(variable)
    assert info.value.variable == variable and isinstance(info.value, ValueError)
    assert isinstance(info.value, gtx.errors.DSLError)  # one family: every stencilkit user error
    assert f"fix or unset {variable}" in str(info.value)
    require(*(v for v in VARIABLES if v != variable))  # the others are fine


def test_every_variable_is_documented() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text()
    for variable in [
        *VARIABLES,
        "STENCILKIT_PARSE_AT_DECORATION",
        "OMP_NUM_THREADS",
        "OMP_WAIT_POLICY",
        "CXX",
        "CUDA_HOME",
    ]:
        assert f"`{variable}" in doc, variable


def test_valid_values_are_parsed(env, tmp_path) -> None:
    env.setenv("STENCILKIT_CACHE_DIR", str(tmp_path / "c"))
    env.setenv("STENCILKIT_CUDA_COMPILER", "NVCC")
    env.setenv("STENCILKIT_NUM_THREADS", " 4 ")
    env.setenv("STENCILKIT_PARALLEL_MIN_WORK", "0")
    env.setenv("STENCILKIT_LOG", "Debug")
    cfg = config()
    assert (cfg.cache_dir, cfg.cuda_compiler, cfg.num_threads, cfg.parallel_min_work, cfg.log) == (
        tmp_path / "c",
        "nvcc",
        4,
        0,
        "debug",
    )
    assert not cfg.problems


def test_a_cache_dir_that_is_a_file_is_refused(env, tmp_path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    env.setenv("STENCILKIT_CACHE_DIR", str(f))
    with pytest.raises(ConfigurationError, match=r"STENCILKIT_CACHE_DIR.*not a directory"):
        require("STENCILKIT_CACHE_DIR")


def test_a_bad_cuda_compiler_stops_gpu_builds_not_the_cpu_backend(env, rng) -> None:
    env.setenv("STENCILKIT_CUDA_COMPILER", "nvvc")
    with pytest.raises(ConfigurationError, match="STENCILKIT_CUDA_COMPILER"):
        cuda_toolchain.find_cuda_compiler()
    assert cxx.find_cxx().path  # the cpu backend's compiler is still found
    I = gtx.Dimension("I")
    a = gtx.as_field([I], rng.standard_normal(6))
    out = gtx.zeros({I: 6})
    _copy_program()(a, out, offset_provider={})
    assert (out.asnumpy() == a.asnumpy()).all()


def _copy_program():
    from tests_config_programs import copy_program  # type: ignore[import-not-found]

    return copy_program


@pytest.fixture(autouse=True)
def _programs_module(tmp_path_factory, monkeypatch) -> None:
    """A module with a cpu program (the DSL reads source, so it lives in a file)."""
    d = tmp_path_factory.mktemp("progs")
    (d / "tests_config_programs.py").write_text(
        "import stencilkit as gtx\nfrom stencilkit import Dims, Field, float64\nI = gtx.Dimension('I')\n"
        "@gtx.field_operator\ndef ident(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:\n    return a\n"
        "@gtx.program(backend=gtx.cpu)\ndef copy_program(a: Field[Dims[I], float64], b: Field[Dims[I], float64]):\n"
        "    ident(a, out=b)\n"
    )
    monkeypatch.syspath_prepend(str(d))


def test_info_reports_the_bad_variable_and_everything_else(env, capsys) -> None:
    env.setenv("STENCILKIT_CUDA_COMPILER", "nvvc")
    env.setenv("STENCILKIT_NUM_THREADS", "two")
    cxx.find_cxx.cache_clear()
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    rows = dict(
        line.split(None, 1) if " " in line else (line, "")
        for line in (
            re.sub(
                r"^(C\+\+ compiler|CUDA compiler|CPU threads|NVIDIA driver)",
                lambda m: m.group(1).replace(" ", "_"),
                x,
            )
            for x in out.splitlines()
        )
    )
    assert "STENCILKIT_CUDA_COMPILER='nvvc'" in rows["configuration"]
    assert "STENCILKIT_NUM_THREADS='two'" in rows["configuration"]
    assert rows["C++_compiler"].startswith("/") and "OpenMP" in rows["C++_compiler"]  # still found
    assert "entries" in rows["cache"]  # still reported
    assert "STENCILKIT_CUDA_COMPILER" in rows["CUDA_compiler"]  # this row names its variable
    assert "STENCILKIT_NUM_THREADS" in rows["CPU_threads"]


def test_info_rows_when_all_is_well(env, capsys) -> None:
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    for row in (
        "configuration",
        "NVIDIA driver",
        "CuPy",
        "cuda-bindings",
        "GPU",
        "C++ compiler",
        "CPU threads",
        "CUDA compiler",
        "cache",
        "logging",
    ):
        assert re.search(rf"^{re.escape(row)} ", out, re.M), row
    assert re.search(r"^configuration +ok", out, re.M)


def test_a_bad_flag_read_at_import_warns_naming_it_and_keeps_the_default() -> None:
    import os
    import subprocess
    import sys

    env = dict(os.environ, STENCILKIT_PARSE_AT_DECORATION="maybe", PYTHONPATH=str(ROOT / "src"))
    r = subprocess.run(
        [sys.executable, "-c", "import stencilkit; print(stencilkit.config.PARSE_AT_DECORATION)"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    assert r.stdout.strip() == "False"
    assert "STENCILKIT_PARSE_AT_DECORATION='maybe' is not valid" in r.stderr


# -- the variables read outside toolchain.config: each bad value names its variable ------------

IMPORT_TIME_BAD = {
    "STENCILKIT_LOG": "verbose",
    "STENCILKIT_PARSE_AT_DECORATION": "maybe",
    "STENCILKIT_VERIFY_IR": "perhaps",
    "GT4PY_COLLECT_METRICS_LEVEL": "high",
    "GT4PY_BUILD_CACHE_LIFETIME": "forever",
    "GT4PY_CMAKE_BUILD_TYPE": "fast",
}


@pytest.mark.parametrize("variable", sorted(IMPORT_TIME_BAD))
def test_a_bad_import_time_value_warns_naming_the_variable(variable: str) -> None:
    import os
    import subprocess
    import sys

    value = IMPORT_TIME_BAD[variable]
    env = {**os.environ, variable: value}
    r = subprocess.run(
        [sys.executable, "-c", "import stencilkit"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr  # importing never fails
    assert (
        f"ConfigurationWarning: the environment variable {variable}={value!r} is not valid"
        in r.stderr
    )
    strict = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", "import stencilkit"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert strict.returncode != 0 and variable in strict.stderr


def test_stencilkit_log_verbose_is_not_ignored_silently() -> None:
    import os
    import subprocess
    import sys

    code = "import logging, stencilkit; print(logging.getLogger('stencilkit').level)"
    r = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "STENCILKIT_LOG": "verbose"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.stdout.strip() == "0"  # logging stays off ...
    assert "STENCILKIT_LOG='verbose'" in r.stderr and "info, debug" in r.stderr  # ... and says so


@pytest.mark.parametrize(
    ("variable", "value", "why"),
    [
        ("OMP_NUM_THREADS", "many", "whole number >= 1"),
        ("OMP_NUM_THREADS", "0", "whole number >= 1"),
        ("OMP_WAIT_POLICY", "sleepy", "active or passive"),
    ],
)
def test_a_bad_openmp_value_stops_the_cpu_backend_naming_it(variable, value, why, env) -> None:
    from stencilkit.toolchain import threads

    env.setenv(variable, value)
    with pytest.raises(ConfigurationError, match=re.escape(f"{variable}={value!r}") + ".*" + why):
        threads.omp_num_threads() if variable == "OMP_NUM_THREADS" else threads.check_wait_policy()
    env.setenv("OMP_NUM_THREADS", "4,2")
    assert threads.omp_num_threads() == 4


def test_a_bad_mpi_cuda_value_names_the_variable(env) -> None:
    from stencilkit.distributed.comm import cuda_aware

    env.setenv("STENCILKIT_MPI_CUDA", "sometimes")
    with pytest.raises(ConfigurationError, match="STENCILKIT_MPI_CUDA='sometimes'"):
        cuda_aware()
    env.setenv("STENCILKIT_MPI_CUDA", "yes")
    assert cuda_aware() is True


def test_every_environment_variable_the_library_reads_is_documented() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text()
    read = set()
    for path in (ROOT / "src" / "stencilkit").rglob("*.py"):
        read |= set(
            re.findall(
                r"environ(?:\.get\(|\[)\s*\"((?:STENCILKIT|GT4PY|OMP)_[A-Z_]+)\"", path.read_text()
            )
        )
        read |= set(
            re.findall(
                r"_(?:flag|one_of|level)\(\s*\"((?:STENCILKIT|GT4PY)_[A-Z_]+)\"", path.read_text()
            )
        )
    assert len(read) >= 10, read
    missing = sorted(v for v in read if f"`{v}" not in doc)
    assert not missing, missing


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_cache_dir_is_the_default_not_the_cwd(
    value: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from stencilkit.toolchain import config as tc

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STENCILKIT_CACHE_DIR", value)
    tc.reset_config()
    try:
        cfg = tc.require("STENCILKIT_CACHE_DIR")
        assert cfg.cache_dir == tc._default_cache_dir()
        assert cfg.cache_dir.resolve() != tmp_path.resolve()
        assert "STENCILKIT_CACHE_DIR" not in cfg.problems
    finally:
        monkeypatch.undo()  # the suite's own cache directory back, then read again
        tc.reset_config()
