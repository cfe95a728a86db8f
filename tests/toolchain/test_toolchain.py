"""C++ toolchain: compiler discovery, its errors, and failed builds that explain themselves."""

from __future__ import annotations

import shutil

import pytest

from stencilkit.core.errors import BackendUnavailableError, BuildError
from stencilkit.toolchain import cxx
from stencilkit.toolchain.config import reset_config


@pytest.fixture
def fresh_discovery(monkeypatch):
    reset_config()
    cxx.find_cxx.cache_clear()
    yield monkeypatch
    reset_config()
    cxx.find_cxx.cache_clear()


def test_missing_compiler_names_what_and_how(fresh_discovery) -> None:
    fresh_discovery.setenv("CXX", "no-such-compiler-xyz")
    with pytest.raises(
        BackendUnavailableError,
        match=r"no C\+\+ compiler found \(looked for \$CXX=no-such-compiler-xyz\)",
    ) as info:
        cxx.find_cxx()
    assert "apt-get install g++" in str(info.value)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
def test_cxx_override_and_detection(fresh_discovery) -> None:
    fresh_discovery.setenv("CXX", "g++")
    found = cxx.find_cxx()
    assert found.path == shutil.which("g++")
    assert "-O3" in found.flags and "-std=c++17" in found.flags
    assert ("-fopenmp" in found.flags) == found.openmp
    parts = dict(found.key_parts())
    assert parts["cxx-version"] and parts["cxx-flags"] == " ".join(found.flags)


def test_extra_flags_from_the_environment(fresh_discovery) -> None:
    fresh_discovery.setenv("STENCILKIT_CXXFLAGS", "-DSTENCILKIT_TEST_FLAG=1 -g")
    assert cxx.find_cxx().flags[-2:] == ("-DSTENCILKIT_TEST_FLAG=1", "-g")


def test_failed_build_shows_command_stderr_and_kept_source(tmp_path, fresh_discovery) -> None:
    with pytest.raises(BuildError) as info:
        cxx.build_shared_library("int main( { syntax error", tmp_path, "broken")
    err = info.value
    assert err.command[0] == cxx.find_cxx().path
    assert "error" in err.stderr
    with open(err.source_path) as f:
        assert "syntax error" in f.read()
    assert err.source_path in str(err) and "compiler output:" in str(err)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
def test_detection_is_remembered_for_new_processes(fresh_discovery, tmp_path) -> None:
    """A new process with its programs built must not start the compiler to compute the cache
    key: the detection result is kept in the cache directory."""
    import subprocess as sp

    fresh_discovery.setenv("STENCILKIT_CACHE_DIR", str(tmp_path / "cache"))
    fresh_discovery.setenv("CXX", "g++")
    reset_config()
    first = cxx.find_cxx()
    assert list((tmp_path / "cache" / "toolchain").glob("cxx-*.json"))
    cxx.find_cxx.cache_clear()

    def no_compiler(*args, **kwargs):
        raise AssertionError(f"the compiler was started: {args}")

    fresh_discovery.setattr(sp, "run", no_compiler)
    again = cxx.find_cxx()
    assert again == first
    fresh_discovery.setenv("STENCILKIT_CXXFLAGS", "-g")  # flags from the environment still apply
    reset_config()
    cxx.find_cxx.cache_clear()
    assert cxx.find_cxx().flags == (*first.flags, "-g")


def test_a_broken_detection_record_is_ignored(fresh_discovery, tmp_path) -> None:
    fresh_discovery.setenv("STENCILKIT_CACHE_DIR", str(tmp_path / "cache"))
    reset_config()
    first = cxx.find_cxx()
    for record in (tmp_path / "cache" / "toolchain").glob("cxx-*.json"):
        record.write_text("{not json")
    cxx.find_cxx.cache_clear()
    assert cxx.find_cxx() == first


@pytest.mark.parametrize("gcc", [True, False])
def test_very_large_sources_are_built_at_O1(gcc: bool) -> None:
    from stencilkit.toolchain.cxx import LARGE_SOURCE_LINES, build_flags

    flags = ("-std=c++17", "-O3", "-march=native")
    assert build_flags(flags, "int x;\n" * 10, gcc=gcc) == flags
    no_threading = ("-fno-thread-jumps",) if gcc else ()
    assert build_flags(flags, "int x;\n" * (LARGE_SOURCE_LINES + 1), gcc=gcc) == (
        "-std=c++17",
        "-O1",
        "-march=native",
        *no_threading,
    )


def test_long_gcc_sources_are_built_without_jump_threading() -> None:
    """GCC's CFG cleanup after jump threading grows far faster than a long kernel (a 100-deep
    shifted chain: over 400 s at -O3, 16 s without it): long sources drop it, GCC only."""
    from stencilkit.toolchain.cxx import JUMP_THREADING_LINES, build_flags

    flags = ("-std=c++17", "-O3")
    short = "int x;\n" * JUMP_THREADING_LINES
    long = short + "int y;\n"
    assert build_flags(flags, short, gcc=True) == flags
    assert build_flags(flags, long, gcc=True) == (*flags, "-fno-thread-jumps")
    assert build_flags(flags, long, gcc=False) == flags  # clang warns of GCC-only flags


@pytest.mark.parametrize(
    "version, gcc",
    [
        ("g++ (Debian 12.2.0-14+deb12u1) 12.2.0", True),
        ("c++ (Ubuntu 13.2.0-23ubuntu4) 13.2.0", True),
        ("x86_64-conda-linux-gnu-c++ (conda-forge gcc 13.3.0-1) 13.3.0", True),
        ("Debian clang version 14.0.6", False),
        ("Apple clang version 15.0.0 (clang-1500.3.9.4)", False),
        ("Intel(R) oneAPI DPC++/C++ Compiler 2024.1.0 (2024.1.0.20240308)", False),
    ],
)
def test_gcc_is_told_from_its_version_line(version: str, gcc: bool) -> None:
    from stencilkit.toolchain.cxx import CxxCompiler

    assert CxxCompiler("/usr/bin/c++", version, (), True).is_gcc is gcc


def test_cpu_builds_have_no_fma_contraction_unless_asked(monkeypatch) -> None:
    """GCC contracts a*b + c under -march=native, so cpu results could differ from NumPy's and
    from the gpu backend's (built with --fmad=false): -ffp-contract=off unless the user's
    STENCILKIT_CXXFLAGS names an -ffp-contract setting itself."""
    from stencilkit.toolchain import cxx
    from stencilkit.toolchain.config import reset_config

    cxx.find_cxx.cache_clear()
    assert "-ffp-contract=off" in cxx.find_cxx().flags
    monkeypatch.setenv("STENCILKIT_CXXFLAGS", "-ffp-contract=fast")
    reset_config()
    cxx.find_cxx.cache_clear()
    try:
        flags = cxx.find_cxx().flags
        assert "-ffp-contract=off" not in flags and "-ffp-contract=fast" in flags
    finally:
        monkeypatch.delenv("STENCILKIT_CXXFLAGS")
        reset_config()
        cxx.find_cxx.cache_clear()
