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
    with pytest.raises(BackendUnavailableError, match=r"no C\+\+ compiler found \(looked for \$CXX=no-such-compiler-xyz\)") as info:
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
