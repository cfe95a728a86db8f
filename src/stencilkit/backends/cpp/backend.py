"""The ``cpu`` backend: generated C++17 + OpenMP, built into a shared library, called via ctypes."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...core.device import DeviceType
from ...ir import nodes as ir
from ...toolchain.cache import cache_key, get_or_build
from ...toolchain.cxx import build_shared_library, find_cxx
from ...toolchain.threads import load_library
from ..abi import ArgLayout, Specialization
from ..compiled import Plan
from .codegen import generate_cpp

ENTRY = "sk_program"


@dataclass
class LoadedLibrary:
    path: Path
    source: str
    fn: Any
    built: bool

    def launch(self, plan: Plan, buf: np.ndarray) -> None:
        self.fn(buf.ctypes.data)


_LOADED: dict[str, LoadedLibrary] = {}


class CppTarget:
    name = "cpu"
    device_type = DeviceType.CPU

    def generate(self, sprog: ir.StencilProgram, layout: ArgLayout) -> str:
        return generate_cpp(sprog, layout, ENTRY)

    def compile(self, sprog: ir.StencilProgram, layout: ArgLayout, spec: Specialization) -> LoadedLibrary:
        source = self.generate(sprog, layout)
        cxx = find_cxx()
        key = cache_key([("ir", str(sprog)), ("source", source), *cxx.key_parts()])
        if key in _LOADED:
            return _LOADED[key]
        entry = get_or_build(key, lambda d: _build(d, source, sprog), {"program": sprog.name, "target": "cpu"})
        lib = load_library(entry.path / "program.so")
        fn = getattr(lib, ENTRY)
        fn.argtypes = [ctypes.c_void_p]
        fn.restype = ctypes.c_int
        loaded = LoadedLibrary(entry.path, source, fn, entry.built)
        _LOADED[key] = loaded
        return loaded


def _build(d: Path, source: str, sprog: ir.StencilProgram) -> None:
    (d / "program.ir").write_text(str(sprog))
    build_shared_library(source, d, "program")
