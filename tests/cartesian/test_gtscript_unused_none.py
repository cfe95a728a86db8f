"""A field or scalar the stencil never touches may be passed as None (gt4py's optional
arguments); one the stencil uses may not."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptCallError
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, interval


def _optional(backend: str, use: bool):
    def tend(
        a: Field[np.float64], out: Field[np.float64], extra: Field[(np.float64, (2,))] = None,
        *, dt: float, scale: float = None,  # noqa: RUF013 - gt4py's optional scalar
    ):  # fmt: skip
        from __externals__ import USE

        with computation(PARALLEL), interval(...):
            out = a * dt
            if __INLINED(USE):
                out = out + extra[0, 0, 0][1] * scale

    return gtscript.stencil(backend, tend, externals={"USE": use})


def test_none_for_an_unused_field_and_scalar(backend: str, arrays) -> None:
    st = _optional(backend, use=False)
    assert {n for n in ("extra", "scale")} <= set(st._unused)
    a_host = np.random.default_rng(3).standard_normal((4, 5, 3))
    a, out = arrays.put(a_host), arrays.put(np.full((4, 5, 3), 9.0))
    st(a, out, None, dt=0.5, scale=None, origin=(1, 1, 0), domain=(2, 3, 3))
    want = np.full((4, 5, 3), 9.0)
    want[1:3, 1:4] = a_host[1:3, 1:4] * 0.5
    np.testing.assert_array_equal(arrays.host(out), want)
    st(a=a, out=out, dt=0.25)  # left to its default (None), full domain
    np.testing.assert_array_equal(arrays.host(out), a_host * 0.25)


def test_none_for_a_used_field_is_refused(backend: str, arrays) -> None:
    st = _optional(backend, use=True)
    a = arrays.random(4, 5, 3)
    out = arrays.random(4, 5, 3)
    with pytest.raises(GTScriptCallError, match="field 'extra' must be an array, got NoneType"):
        st(a, out, None, dt=0.5, scale=2.0)
