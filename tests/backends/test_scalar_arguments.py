"""Scalar arguments of types outside the plain Python/NumPy ones (an ``IntEnum``, as icon4py
passes its RayleighType every substep; ``np.float16``) on the compiled backend: the first call
checks the type (a plan), the next calls reuse that check instead of planning again; a type the
plan refuses is still refused every time."""

from __future__ import annotations

import enum

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.core.errors import DSLError

I = gtx.Dimension("I")


class Kind(enum.IntEnum):
    PLAIN = 0
    SCALED = 2


@gtx.field_operator
def _blend(a: Field[Dims[I], float64], kind: int32, w: float64) -> Field[Dims[I], float64]:
    return a * w + gtx.astype(kind, float64)


@gtx.program(backend=gtx.cpu)
def blend(a: Field[Dims[I], float64], kind: int32, w: float64, out: Field[Dims[I], float64]):
    _blend(a, kind, w, out=out, domain={I: (1, 7)})


@pytest.fixture
def plans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made: list[int] = []
    original = CompiledRunner.make_plan

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CompiledRunner, "make_plan", counting)
    return made


def test_an_int_enum_scalar_is_checked_once(plans: list[int]) -> None:
    rng = np.random.default_rng(7)
    data = rng.standard_normal(8)
    a = gtx.as_field([I], data)
    for call, (kind, w) in enumerate([(Kind.SCALED, 0.5), (Kind.PLAIN, np.float16(1.5))] * 3):
        before = rng.standard_normal(8)
        out = gtx.as_field([I], before.copy())
        blend(a, kind, w, out, offset_provider={})
        expected = before.copy()
        expected[1:7] = data[1:7] * float(w) + int(kind)
        np.testing.assert_array_equal(out.asnumpy(), expected, err_msg=f"call {call}")
    # the first call's plan, one check for the IntEnum and one for np.float16: then none
    assert len(plans) <= 3, len(plans)


def test_a_refused_scalar_type_stays_refused(plans: list[int]) -> None:
    a = gtx.as_field([I], np.random.default_rng(8).standard_normal(8))
    out = gtx.as_field([I], np.zeros(8))
    blend(a, Kind.PLAIN, 1.0, out, offset_provider={})
    for _ in range(2):
        with pytest.raises(DSLError):
            blend(a, "2", 1.0, out, offset_provider={})
