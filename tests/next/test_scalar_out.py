"""A program whose ``out=`` is a scalar parameter (icon4py's ``fall_speed_scalar`` and
``T_from_internal_energy_scalar``): it parses, as in gt4py, and every call or compile raises
the error with the statement's location before anything runs."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I = gtx.Dimension("I")
FI = Field[Dims[I], float64]


@gtx.field_operator
def _double(a: FI) -> FI:
    return 2.0 * a


@gtx.field_operator
def _scaled(x: float64) -> float64:
    return 2.0 * x


@gtx.program
def scalar_out(a: FI, x: float64, speed: float64, b: FI):
    _double(a, out=b)
    _scaled(x, out=speed)


def test_it_parses_without_the_statement() -> None:
    definition = scalar_out.definition  # parsing does not raise
    assert definition.name == "scalar_out" and len(definition.body) == 1
    assert "_double" in scalar_out.ir_text()


@pytest.mark.parametrize("backend", [None, gtx.cpu], ids=["embedded", "cpu"])
def test_every_call_and_compile_raises_before_anything_runs(backend, rng) -> None:
    prog = scalar_out.with_backend(backend)
    a = gtx.as_field([I], rng.random(8))
    b0 = rng.random(8)
    b = gtx.as_field([I], b0.copy())
    for _ in range(2):  # every call, not only the first
        with pytest.raises(TypeError, match=r"out= must be fields, 'speed' is a float64") as info:
            prog(a, 1.5, 0.0, b, offset_provider={})
        assert "test_scalar_out.py" in str(info.value)  # the statement's location
        np.testing.assert_array_equal(b.asnumpy(), b0)  # the first statement did not run either
    with pytest.raises(TypeError, match="out= must be fields"):
        prog.compile()
