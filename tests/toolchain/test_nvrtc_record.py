"""NVRTC's version for the cache key, remembered so that a process with its programs built
neither imports NVRTC's bindings nor loads the library; asked again whenever a file it could
come from changes."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stencilkit.core.errors import BuildError
from stencilkit.toolchain import cache
from stencilkit.toolchain import cuda as cuda_toolchain
from stencilkit.toolchain.config import reset_config

SRC = str(Path(__file__).parents[2] / "src")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("STENCILKIT_CACHE_DIR", str(tmp_path / "cache"))
    reset_config()
    cuda_toolchain.find_cuda_compiler.cache_clear()
    yield monkeypatch
    reset_config()
    cuda_toolchain.find_cuda_compiler.cache_clear()


def _fake_bindings(root: Path) -> Path:
    """A ``cuda/bindings`` package with an NVRTC module file (never imported here)."""
    package = root / "cuda" / "bindings"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "_version.py").write_text("__version__ = '0'\n")
    module = package / cuda_toolchain._NVRTC_MODULES[0]
    module.write_bytes(b"not a module")
    return module


def test_the_fingerprint_follows_every_file_and_setting(tmp_path, fresh) -> None:
    module = _fake_bindings(tmp_path / "site")
    fresh.setattr(sys, "path", [str(tmp_path / "site")])
    libs = tmp_path / "libs"
    libs.mkdir()
    lib = libs / "libnvrtc.so.13"
    lib.write_bytes(b"x" * 10)
    fresh.setenv("LD_LIBRARY_PATH", str(libs))
    found = cuda_toolchain.nvrtc_files()
    assert found is not None and found[0] == str(module)
    assert str(lib) in found[1] and str(module) in found[1]
    os.utime(lib, ns=(1, 1))  # the library replaced by one of the same size
    assert cuda_toolchain.nvrtc_files() != found
    (libs / "libnvrtc-builtins.so.13.9").write_bytes(b"y")  # a new file beside it
    again = cuda_toolchain.nvrtc_files()
    assert again is not None and "libnvrtc-builtins.so.13.9" in again[1]
    fresh.setenv("CUDA_HOME", str(tmp_path / "elsewhere"))
    assert cuda_toolchain.nvrtc_files() != again
    module.write_bytes(b"another module")
    assert cuda_toolchain.nvrtc_files() != again


def test_no_bindings_package_gives_no_fingerprint(tmp_path, fresh) -> None:
    fresh.setattr(sys, "path", [str(tmp_path)])
    assert cuda_toolchain.nvrtc_files() is None
    package = tmp_path / "cuda" / "bindings"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")  # a package without an NVRTC module
    assert cuda_toolchain.nvrtc_files() is None


class _FakeNvrtc:
    """cuda-bindings' NVRTC module as far as find_cuda_compiler uses it."""

    def __init__(self, path: str, version: tuple[int, int]) -> None:
        self.__file__ = path
        self.version = version
        self.asked = 0

    def nvrtcVersion(self) -> tuple[int, int, int]:
        self.asked += 1
        return 0, *self.version


def _installed(
    tmp_path: Path, fresh: pytest.MonkeyPatch, imported_from: Path | None = None
) -> tuple[Path, _FakeNvrtc]:
    """A fake bindings package on ``sys.path`` (its module file, for the listing) and a fake
    NVRTC module in ``sys.modules`` (for the import), imported from ``imported_from`` (default:
    the file the listing finds), version 13.7."""
    import types

    module = _fake_bindings(tmp_path / "site")
    fresh.setattr(sys, "path", [str(tmp_path / "site")])
    fake = _FakeNvrtc(str(imported_from or module), (13, 7))
    package = types.ModuleType("cuda.bindings")
    package.nvrtc = fake  # type: ignore[attr-defined]
    fresh.setitem(sys.modules, "cuda.bindings", package)
    fresh.setitem(sys.modules, "cuda.bindings.nvrtc", fake)  # type: ignore[arg-type]
    return module, fake


def test_the_version_is_asked_once_then_read_from_the_record(tmp_path, fresh) -> None:
    module, fake = _installed(tmp_path, fresh)
    first = cuda_toolchain.find_cuda_compiler("nvrtc")
    assert (first.version, first.path, fake.asked) == ("13.7", str(module), 1)
    assert list((tmp_path / "cache" / cache.TOOLCHAIN_RECORDS).glob("nvrtc-*.json"))
    cuda_toolchain.find_cuda_compiler.cache_clear()
    assert cuda_toolchain.find_cuda_compiler("nvrtc") == first and fake.asked == 1
    # a new library where NVRTC is looked for: asked again, the new version in the key
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "libnvrtc.so.13").write_bytes(b"new")
    fresh.setenv("LD_LIBRARY_PATH", str(libs))
    fake.version = (13, 9)
    cuda_toolchain.find_cuda_compiler.cache_clear()
    assert cuda_toolchain.find_cuda_compiler("nvrtc").version == "13.9" and fake.asked == 2
    # `stencilkit cache clear` removes the records: asked again
    cache.clear_cache()
    cuda_toolchain.find_cuda_compiler.cache_clear()
    assert cuda_toolchain.find_cuda_compiler("nvrtc").version == "13.9" and fake.asked == 3


def test_a_module_imported_from_elsewhere_writes_no_record(tmp_path, fresh) -> None:
    """Where Python imports NVRTC's module from another file than the one the listing found,
    the listing's fingerprint does not describe it: nothing is remembered."""
    _, fake = _installed(tmp_path, fresh, imported_from=tmp_path / "other" / "nvrtc.so")
    cuda_toolchain.find_cuda_compiler("nvrtc")
    cuda_toolchain.find_cuda_compiler.cache_clear()
    cuda_toolchain.find_cuda_compiler("nvrtc")
    assert fake.asked == 2
    assert not list((tmp_path / "cache" / cache.TOOLCHAIN_RECORDS).glob("nvrtc-*.json"))


def test_a_broken_record_is_ignored(tmp_path, fresh) -> None:
    _, fake = _installed(tmp_path, fresh)
    first = cuda_toolchain.find_cuda_compiler("nvrtc")
    for record in (tmp_path / "cache" / cache.TOOLCHAIN_RECORDS).glob("nvrtc-*.json"):
        record.write_text("[1, 2")
    cuda_toolchain.find_cuda_compiler.cache_clear()
    assert cuda_toolchain.find_cuda_compiler("nvrtc") == first and fake.asked == 2


def _two_new_processes(tmp_path: Path, probe: str) -> list[list[str]]:
    """``probe`` run in two new processes one after the other, on one cache: their words."""
    env = {
        **os.environ,
        "STENCILKIT_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    return [
        subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]


@pytest.mark.nvrtc
def test_a_new_process_finds_nvrtc_without_loading_it(tmp_path) -> None:
    """The real bindings: the second process answers from the record, with neither
    ``cuda.bindings.nvrtc`` imported nor ``libnvrtc`` mapped."""
    probe = (
        "import sys; from stencilkit.toolchain import cuda as c; f = c.find_cuda_compiler('nvrtc');"
        "maps = open('/proc/self/maps').read();"
        "print(f.version, f.path, 'cuda.bindings.nvrtc' in sys.modules, 'libnvrtc.so' in maps)"
    )
    out = _two_new_processes(tmp_path, probe)
    assert out[0][2:] == ["True", "True"]  # the first process asked NVRTC
    assert out[1][:2] == out[0][:2] and out[1][2:] == ["False", "False"]


_KERNEL = 'extern "C" __global__ void k(double* a, int n) { int i = threadIdx.x; if (i < n) a[i] *= 2.0; }'


@pytest.mark.nvrtc
def test_the_c_api_compiles_what_the_bindings_compile(tmp_path, fresh) -> None:
    """Through ctypes from the recorded library and through cuda-bindings: the same cubin; a
    source that does not compile gives NVRTC's log with its line, either way."""
    found = cuda_toolchain.find_cuda_compiler("nvrtc")
    assert found.library and os.path.isabs(found.library) and "libnvrtc" in found.library
    bindings = dataclasses.replace(found, library="")
    ours = cuda_toolchain.compile_cubin(_KERNEL, "90", tmp_path, "a", found).read_bytes()
    theirs = cuda_toolchain.compile_cubin(_KERNEL, "90", tmp_path, "b", bindings).read_bytes()
    assert ours == theirs and len(ours) > 100
    broken = _KERNEL.replace("*= 2.0;", "*= undefined_name;")
    for compiler in (found, bindings):
        with pytest.raises(BuildError) as err:
            cuda_toolchain.compile_cubin(broken, "90", tmp_path, "c", compiler)
        assert "undefined_name" in str(err.value) and "c.cu(1)" in str(err.value)


@pytest.mark.nvrtc
def test_a_new_process_with_the_record_compiles_without_the_bindings(tmp_path) -> None:
    """A process that builds a new program on a machine where NVRTC was found before compiles
    through the recorded library: cuda-bindings is never imported."""
    probe = (
        "import sys, pathlib, tempfile; from stencilkit.toolchain import cuda as c;"
        "f = c.find_cuda_compiler('nvrtc');"
        f"p = c.compile_cubin({_KERNEL!r}, '90', pathlib.Path(tempfile.mkdtemp()), 'k', f);"
        "print(p.stat().st_size > 100, 'cuda.bindings' in sys.modules)"
    )
    out = _two_new_processes(tmp_path, probe)
    assert out == [["True", "True"], ["True", "False"]]
