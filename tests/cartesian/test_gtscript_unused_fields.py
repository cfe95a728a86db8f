"""A field the stencil never accesses (pruned by its externals) is not checked, as in gt4py:
pyFV3's ``remap_profile.set_initial_vals`` declares ``qs: FloatFieldIJ``, reads it only when
``iv == -2``, and mapn_tracer passes a 3-D quantity for it. A field that is accessed is still
checked. Every backend against a NumPy reference on random data, the unused array untouched."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import AccessKind, GTScriptCallError
from stencilkit.cartesian.gtscript import __INLINED, PARALLEL, Field, computation, interval

F64 = Field[np.float64]
F64_IJ = Field[gtscript.IJ, np.float64]
BACKENDS = [
    pytest.param("numpy", id="numpy"),
    pytest.param("gt:cpu_ifirst", id="cpu_ifirst"),
    pytest.param("gt:cpu_kfirst", id="cpu_kfirst"),
    pytest.param("gt:gpu", id="gpu", marks=pytest.mark.gpu),
]


def _initial_vals(backend: str, iv: int):  # type: ignore[no-untyped-def]
    @gtscript.stencil(backend=backend, externals={"iv": iv})
    def set_initial_vals(q: F64, qs: F64_IJ, a4: F64):
        from __externals__ import iv

        with computation(PARALLEL), interval(...):
            if __INLINED(iv == -2):
                a4 = qs
            else:
                a4 = 1.5 * q - 0.5

    return set_initial_vals


def _put(backend: str, a: np.ndarray):  # type: ignore[no-untyped-def]
    if backend == "gt:gpu":
        import cupy

        return cupy.asarray(a)
    return a.copy()


def _host(a) -> np.ndarray:  # type: ignore[no-untyped-def]
    return a.get() if hasattr(a, "get") else np.array(a, copy=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pruned_2d_field_may_be_given_a_3d_array(backend: str) -> None:
    s = _initial_vals(backend, 0)
    assert s.field_info["qs"].access == AccessKind.NONE
    rng = np.random.default_rng(21)
    q_h, qs_h, a4_h = (rng.standard_normal((6, 5, 4)) for _ in range(3))
    q, qs, a4 = (_put(backend, x) for x in (q_h, qs_h, a4_h))
    s(q, qs, a4, origin=(1, 1, 0), domain=(4, 3, 4))
    ref = a4_h.copy()
    ref[1:5, 1:4] = 1.5 * q_h[1:5, 1:4] - 0.5
    np.testing.assert_array_equal(_host(a4), ref)
    np.testing.assert_array_equal(_host(qs), qs_h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_accessed_2d_field_is_still_checked(backend: str) -> None:
    s = _initial_vals(backend, -2)
    rng = np.random.default_rng(22)
    q, qs, a4 = (_put(backend, rng.standard_normal((6, 5, 4))) for _ in range(3))
    with pytest.raises(
        GTScriptCallError, match="Storage for 'qs' has 3 dimensions but the API signature expects 2"
    ):
        s(q, qs, a4, origin=(1, 1, 0), domain=(4, 3, 4))
    qs2_h = rng.standard_normal((6, 5))
    a4_h = _host(a4)
    s(q, _put(backend, qs2_h), a4, origin=(1, 1, 0), domain=(4, 3, 4))
    a4_h[1:5, 1:4] = qs2_h[1:5, 1:4, None]
    np.testing.assert_array_equal(_host(a4), a4_h)
