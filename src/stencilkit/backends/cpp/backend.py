"""The ``cpu`` backend: generated C++17 + OpenMP, built into a shared library, called via ctypes.

Its stages (see ``stencilkit.stages``): ``generate`` (codegen.py), ``build`` (a shared library in
the build cache), ``load`` (ctypes), ``tune`` (nothing: one call runs every kernel).
"""

from __future__ import annotations

import _ctypes
import ctypes
import functools
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ...core.device import DeviceType
from ...core.records import record
from ...ir import nodes as ir
from ...stages.artefacts import Built, Launches, Planned, Source
from ...stages.binding import Bound
from ...toolchain.cache import cache_key, get_or_build
from ...toolchain.cxx import build_shared_library, find_cxx
from ...toolchain.threads import load_library
from .codegen import generate_cpp

ENTRY = "sk_program"
BINARY = "program.so"


@record(weakref=True)
class LoadedLibrary:
    """A built program loaded with ctypes: ``fn(block address)`` runs every kernel. The library
    is unloaded (``dlclose``) once nothing uses it: no program, plan or bound call holds its
    function (a notebook's edited cells do not keep every old library mapped)."""

    built: Built
    fn: Any

    def bind(self, launches: Launches, block: np.ndarray) -> Callable[[], None]:
        return functools.partial(self.fn, block.ctypes.data)  # type: ignore[no-any-return]


#: the libraries loaded now, by cache key, as long as something uses them
_LOADED: weakref.WeakValueDictionary[str, LoadedLibrary] = weakref.WeakValueDictionary()


def _unload(handle: int) -> None:
    """``dlclose`` a library nothing refers to any more (its ctypes objects are gone)."""
    try:
        _ctypes.dlclose(handle)  # type: ignore[attr-defined]
    except (AttributeError, OSError):  # not on this platform: the mapping stays
        pass


class CppTarget:
    name = "cpu"
    device_type = DeviceType.CPU

    def generate(self, planned: Planned) -> Source:
        assert planned.layout is not None
        return Source(planned, "c++", generate_cpp(planned.sprog, planned.layout, ENTRY))

    def build(self, source: Source) -> Built:
        sprog = source.planned.sprog
        key = cache_key([("ir", str(sprog)), ("source", source.text), *find_cxx().key_parts()])
        entry = get_or_build(
            key, lambda d: _build(d, source.text, sprog), {"program": sprog.name, "target": "cpu"}
        )
        return Built(source, key, entry.path, entry.built, BINARY)

    def load(self, built: Built) -> LoadedLibrary:
        hit = _LOADED.get(built.key)
        if hit is not None:
            return hit
        lib = load_library(
            built.path / BINARY
        )  # bound to the thread settings (toolchain/threads.py)
        fn = getattr(lib, ENTRY)
        fn.argtypes = [ctypes.c_void_p]
        fn.restype = ctypes.c_int
        # the function object keeps the library object alive; when both are collected, no
        # Python object can call into the library any more and it is closed
        weakref.finalize(lib, _unload, lib._handle)
        loaded = _LOADED[built.key] = LoadedLibrary(built, fn)
        return loaded

    def tune(
        self, loaded: LoadedLibrary, planned: Planned, bound: Bound, final: bool = False
    ) -> Launches:
        return Launches(self.name)  # one call of the library runs every kernel: nothing to choose

    def scratch(self, nbytes: int) -> tuple[np.ndarray, int]:
        """Zeroed memory and its address, for a probe run's outputs (compiled.py)."""
        mem = np.zeros(nbytes, dtype=np.uint8)
        return mem, int(mem.ctypes.data)

    def copy_memory(self, dst: int, src: int, nbytes: int) -> None:
        """Host memory to host memory (a probe run's copies of the written fields)."""
        ctypes.memmove(dst, src, nbytes)

    def ready_to_retune(self, loaded: LoadedLibrary) -> bool:
        """Never: the cpu tune stage makes no provisional choice."""
        return False

    def synchronize(self) -> None:
        """Nothing to wait for: a call of the library returns when its kernels are done."""

    def error_word(self) -> np.ndarray:
        """The guards' error word (backends/cprelude.py ``sk_guard``): read after each call."""
        return np.zeros(2, dtype=np.int64)


def _build(d: Path, source: str, sprog: ir.StencilProgram) -> None:
    (d / "program.ir").write_text(str(sprog))
    build_shared_library(source, d, "program")
