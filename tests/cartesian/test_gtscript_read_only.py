"""Read-only arrays in GTScript calls: an array the stencil only reads may be read-only (a
memory-mapped file opened read-only, a frozen input); it is used in
place on every CPU backend and every call path, and its later contents are seen. An array the
stencil writes must be writable: refused before anything runs, naming the argument. Arrays with
zero strides (``np.broadcast_to``, also CuPy's on the GPU) are used in place when only read, as
gt4py's ``numpy`` backend does (its compiled backends refuse them); written, they are refused.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import FORWARD, PARALLEL, Field, computation, interval
from stencilkit.core.errors import StencilValueError

F64 = Field[np.float64]
BACKENDS = ["numpy", "gt:cpu_ifirst", "gt:cpu_kfirst"]
HOWS = ["run", "frozen", "validated", "unvalidated"]
ALL_BACKENDS = [*BACKENDS, pytest.param("gt:gpu", marks=pytest.mark.gpu)]


def _stencil(backend: str) -> Any:
    @gtscript.stencil(backend=backend)
    def smooth(a: F64, w: F64, out: F64):
        with computation(PARALLEL), interval(...):
            out = w * (a[1, 0, 0] + a[-1, 0, 0]) + a[0, 1, 0]

    return smooth


def _call(s: Any, a: Any, w: Any, out: Any, how: str) -> None:
    o, d = (1, 0, 0), (out.shape[0] - 2, out.shape[1] - 1, out.shape[2])
    if how == "run":
        s.run(a=a, w=w, out=out, _domain_=d, _origin_={"a": o, "w": o, "out": o})
    elif how == "frozen":
        s.freeze(origin={"_all_": o}, domain=d)(a=a, w=w, out=out)
    else:
        s(a, w, out, origin=o, domain=d, validate_args=how == "validated")


def _expect(a: np.ndarray, w: np.ndarray, out: np.ndarray) -> np.ndarray:
    e = out.copy()
    e[1:-1, :-1] = w[1:-1, :-1] * (a[2:, :-1] + a[:-2, :-1]) + a[1:-1, 1:]
    return e


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_read_only_inputs_are_used_in_place(backend: str, how: str) -> None:
    rng = np.random.default_rng(7)
    s = _stencil(backend)
    a = rng.standard_normal((7, 5, 4))
    a.flags.writeable = False
    w = np.asfortranarray(rng.standard_normal((7, 5, 4)))
    w.flags.writeable = False
    out = rng.standard_normal((7, 5, 4))
    before = out.copy()
    _call(s, a, w, out, how)
    np.testing.assert_allclose(out, _expect(a, w, before), rtol=1e-14, atol=1e-14)
    # the array's later contents are seen (it is shared, never copied)
    a.flags.writeable = True
    a[...] = rng.standard_normal(a.shape)
    a.flags.writeable = False
    _call(s, a, w, out, how)
    np.testing.assert_allclose(out, _expect(a, w, before), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_read_only_output_is_refused_naming_it(backend: str, how: str) -> None:
    rng = np.random.default_rng(8)
    s = _stencil(backend)
    a, w = rng.standard_normal((2, 7, 5, 4))
    out = rng.standard_normal((7, 5, 4))
    kept = out.copy()
    out.flags.writeable = False
    with pytest.raises(StencilValueError, match="argument 'out' is written by the stencil") as e:
        _call(s, a, w, out, how)
    assert "read-only" in str(e.value) and "smooth()" in str(e.value)
    np.testing.assert_array_equal(out, kept)  # nothing written


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_read_only_input_of_a_forward_computation(backend: str) -> None:
    @gtscript.stencil(backend=backend)
    def cumsum(a: F64, out: F64):
        with computation(FORWARD):
            with interval(0, 1):
                out = a
            with interval(1, None):
                out = out[0, 0, -1] + a

    rng = np.random.default_rng(9)
    a = rng.standard_normal((3, 4, 6))
    a.flags.writeable = False
    out = np.full(a.shape, np.nan)
    cumsum(a, out)
    np.testing.assert_allclose(out, np.cumsum(a, axis=2), rtol=1e-14, atol=1e-14)


def _device(backend: str) -> Any:
    if backend == "gt:gpu":
        import cupy

        return cupy
    return np


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_zero_stride_inputs_are_used_in_place(backend: str, how: str) -> None:
    xp = _device(backend)
    rng = np.random.default_rng(10)
    s = _stencil(backend)
    column = xp.asarray(rng.standard_normal(4))  # a K profile, the same in every column
    rows = xp.asarray(rng.standard_normal((7, 1, 1)))
    a = xp.broadcast_to(column, (7, 5, 4))
    w = xp.broadcast_to(rows, (7, 5, 4))
    assert a.strides[:2] == (0, 0) and w.strides[1:] == (0, 0)
    out = xp.asarray(rng.standard_normal((7, 5, 4)))
    before = _host(out)
    _call(s, a, w, out, how)
    np.testing.assert_allclose(
        _host(out), _expect(_host(a), _host(w), before), rtol=1e-14, atol=1e-14
    )
    column[...] = xp.asarray(rng.standard_normal(4))  # its later contents are seen
    _call(s, a, w, out, how)
    np.testing.assert_allclose(
        _host(out), _expect(_host(a), _host(w), before), rtol=1e-14, atol=1e-14
    )


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_a_zero_stride_output_is_refused_naming_it(backend: str) -> None:
    xp = _device(backend)
    rng = np.random.default_rng(11)
    s = _stencil(backend)
    a, w = (xp.asarray(x) for x in rng.standard_normal((2, 7, 5, 4)))
    base = xp.asarray(rng.standard_normal((7, 1, 4)))
    if xp is np:
        out = np.lib.stride_tricks.as_strided(base, (7, 5, 4), (32, 0, 8), writeable=True)
    else:
        out = xp.lib.stride_tricks.as_strided(base, (7, 5, 4), (32, 0, 8))
    kept = _host(base)
    with pytest.raises(StencilValueError, match="argument 'out' is written by the stencil") as e:
        _call(s, a, w, out, "validated")
    assert "zero stride" in str(e.value) and "smooth()" in str(e.value)
    np.testing.assert_array_equal(_host(base), kept)  # nothing written


def _host(x: Any) -> np.ndarray:
    return x.get() if hasattr(x, "get") else np.array(x)
