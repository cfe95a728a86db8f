"""Sanitizer builds of the cpu backend: ``STENCILKIT_SANITIZE=address,undefined``.

The generated C++ is built with AddressSanitizer and UBSan (stopping at the first error) and run
in a child Python with the sanitizer runtime preloaded. To run any tests that way:

    STENCILKIT_SANITIZE=address,undefined ASAN_OPTIONS=detect_leaks=0 \\
    LD_PRELOAD=$(g++ -print-file-name=libasan.so) python -m pytest -k cpu tests/next/test_unstructured.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stencilkit.toolchain.config import config, reset_config
from stencilkit.toolchain.cxx import find_cxx, sanitizer_flags

ROOT = Path(__file__).resolve().parents[2]


def _asan_runtime() -> str | None:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        return None
    name = "libasan.so" if "clang" not in cxx else "libclang_rt.asan-x86_64.so"
    found = subprocess.run(
        [cxx, f"-print-file-name={name}"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return found if os.path.isabs(found) and os.path.exists(found) else None


ASAN = _asan_runtime()
needs_asan = pytest.mark.skipif(
    ASAN is None, reason="the C++ compiler has no AddressSanitizer runtime (libasan)"
)


def _run_sanitized(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(code))
    env = dict(
        os.environ,
        STENCILKIT_SANITIZE="address,undefined",
        LD_PRELOAD=str(ASAN),
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
        UBSAN_OPTIONS="print_stacktrace=1",
        STENCILKIT_CACHE_DIR=str(tmp_path / "cache"),
        OMP_NUM_THREADS="2",
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")]),
    )
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )


def test_the_option_is_read_once_and_enters_the_flags(monkeypatch) -> None:
    monkeypatch.setenv("STENCILKIT_SANITIZE", "address, Undefined")
    reset_config()
    find_cxx.cache_clear()
    try:
        assert config().sanitize == ("address", "undefined")
        assert sanitizer_flags()[0] == "-fsanitize=address,undefined"
        assert "-fsanitize=address,undefined" in find_cxx().flags  # so in the build cache key too
        monkeypatch.setenv("STENCILKIT_SANITIZE", "adress")
        reset_config()
        with pytest.raises(ValueError, match=r"STENCILKIT_SANITIZE.*unknown sanitizer.*adress"):
            sanitizer_flags()  # the bad value is refused where it is used, naming the variable
    finally:
        monkeypatch.delenv("STENCILKIT_SANITIZE")
        reset_config()
        find_cxx.cache_clear()
    assert "-fsanitize" not in " ".join(find_cxx().flags)


@needs_asan
def test_sanitized_programs_run_and_agree_with_numpy(tmp_path: Path) -> None:
    r = _run_sanitized(
        """
        import numpy as np
        import stencilkit as gtx
        from stencilkit import Dims, Field, float64
        from stencilkit.toolchain.cxx import find_cxx

        assert "-fsanitize=address,undefined" in find_cxx().flags
        I = gtx.Dimension("I"); K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
        Cell = gtx.Dimension("Cell"); Edge = gtx.Dimension("Edge")
        C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
        C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
        IK = Field[Dims[I, K], float64]

        @gtx.scan_operator(axis=K, forward=False, init=(0.0, 1.0))
        def scan(c: tuple[float64, float64], x: float64) -> tuple[float64, float64]:
            return 0.5 * c[0] + x, gtx.maximum(c[1], x)

        @gtx.field_operator
        def op(a: IK) -> tuple[IK, IK]:
            s, m = scan(a(I + 1) - a(K - 1))
            return s, m

        @gtx.field_operator
        def red(e: Field[Dims[Edge], float64]) -> Field[Dims[Cell], float64]:
            return gtx.neighbor_sum(e(C2E), axis=C2EDim) + gtx.max_over(e(C2E), axis=C2EDim)

        rng = np.random.default_rng(0)
        a = rng.standard_normal((9, 7)); s = np.full((9, 7), 5.0); m = np.full((9, 7), 5.0)
        fs, fm = gtx.as_field([I, K], s), gtx.as_field([I, K], m)
        op.with_backend(gtx.cpu)(gtx.as_field([I, K], a), out=(fs, fm),
                                 domain={I: (0, 8), K: (1, 7)}, offset_provider={})
        s, m = fs.asnumpy(), fm.asnumpy()
        x = a[1:9, 1:7] - a[0:8, 0:6]
        es, em = np.empty_like(x), np.empty_like(x); cs, cm = np.zeros(8), np.ones(8)
        for k in reversed(range(6)):
            cs, cm = 0.5 * cs + x[:, k], np.maximum(cm, x[:, k]); es[:, k], em[:, k] = cs, cm

        table = rng.integers(0, 30, (20, 4)).astype(np.int32); table[rng.random((20, 4)) < 0.3] = -1
        table[0] = -1
        e = rng.standard_normal(30); out = gtx.zeros({Cell: 20})
        red.with_backend(gtx.cpu)(gtx.as_field([Edge], e), out=out, offset_provider={
            "C2E": gtx.as_connectivity([Cell, C2EDim], Edge, table, skip_value=-1)})
        ok = np.where(table >= 0, e[np.where(table >= 0, table, 0)], 0)
        hi = np.where(table >= 0, e[np.where(table >= 0, table, 0)], np.finfo(np.float64).min).max(axis=1)
        print("ok" if np.allclose(s[:8, 1:], es) and np.allclose(m[:8, 1:], em)
              and np.allclose(out.asnumpy(), ok.sum(axis=1) + hi) else "WRONG")
    """,
        tmp_path,
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
    assert "ERROR: AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr


@needs_asan
def test_the_sanitizer_is_live(tmp_path: Path) -> None:
    """A deliberate heap overflow in a library built the same way is caught (not silently run)."""
    r = _run_sanitized(
        """
        import ctypes, pathlib
        from stencilkit.toolchain.cxx import build_shared_library
        src = '#include <vector>\\nextern "C" int oob(int i) { std::vector<int> v(4, 1); return v.data()[i]; }\\n'
        lib = ctypes.CDLL(str(build_shared_library(src, pathlib.Path(".").resolve(), "oob")))
        print(lib.oob(2), flush=True)
        print(lib.oob(4), flush=True)
    """,
        tmp_path,
    )
    assert r.returncode != 0 and "heap-buffer-overflow" in r.stderr, r.stdout + r.stderr
