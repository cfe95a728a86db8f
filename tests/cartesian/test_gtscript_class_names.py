"""Each build is an instance of its own ``StencilObject`` subclass, named after the definition
and the build (as gt4py's generated classes are): NDSL keys its build and run reports and the
aggregated ``exec_info`` by ``type(stencil_object).__name__``. Found by running NDSL's
``test_timing_collector`` against stencilkit (every stencil was reported as "StencilObject")."""

from __future__ import annotations

import numpy as np

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, interval
from stencilkit.cartesian.stencil_object import StencilObject

F64 = Field[np.float64]


def _copy(backend: str, scale: float) -> StencilObject:
    def copy_scaled(a: F64, out: F64):
        from __externals__ import S

        with computation(PARALLEL), interval(...):
            out = S * a

    return gtscript.stencil(backend=backend, definition=copy_scaled, externals={"S": scale})


def test_class_names_tell_builds_apart(backend) -> None:
    one, two = _copy(backend, 1.0), _copy(backend, 2.0)
    assert isinstance(one, StencilObject) and isinstance(two, StencilObject)
    assert type(one).__name__.startswith("copy_scaled__")
    assert type(one).__name__ != type(two).__name__
    assert type(one).__name__.isidentifier()


def test_exec_info_aggregates_per_stencil(backend, arrays) -> None:
    one, two = _copy(backend, 1.0), _copy(backend, 2.0)
    a, out = arrays.random(4, 3, 2), arrays.random(4, 3, 2)
    info: dict = {"__aggregate_data": True}
    for _ in range(3):
        one(a, out, exec_info=info)
    np.testing.assert_array_equal(arrays.host(out), arrays.host(a))
    two(a, out, exec_info=info)
    np.testing.assert_array_equal(arrays.host(out), 2.0 * arrays.host(a))
    assert info[type(one).__name__]["ncalls"] == 3
    assert info[type(two).__name__]["ncalls"] == 1
    assert "StencilObject" not in info
