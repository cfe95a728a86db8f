"""Decorator keywords: gt4py.next 1.2.3's are accepted by name, anything else is refused with the
valid list and the user's line (regression: ``@gtx.program(backed=gtx.cpu)`` ran embedded)."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.next.decorator_keywords import KEYWORDS

I = gtx.Dimension("I")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
F = Field[Dims[I], float64]


def test_a_misspelt_backend_is_refused_naming_backend() -> None:
    with pytest.raises(
        TypeError,
        match=r"program\(\) got an unexpected keyword argument 'backed' "
        r"\(did you mean 'backend'\?\)",
    ) as info:

        @gtx.program(backed=gtx.cpu)
        def p(a: F, b: F):
            pass

    assert isinstance(info.value, gtx.StencilTypeError)
    assert "program() takes: backend, grid_type, enable_jit, static_params" in str(info.value)
    assert f"{__file__}:" in str(info.value)  # the user's line


@pytest.mark.parametrize("decorator", ["field_operator", "scan_operator"])
def test_unknown_keywords_of_the_operators(decorator) -> None:
    extra = {"axis": K} if decorator == "scan_operator" else {}
    with pytest.raises(
        TypeError, match=rf"{decorator}\(\) got an unexpected keyword argument 'foward'"
    ):
        getattr(gtx, decorator)(foward=True, **extra)
    with pytest.raises(
        TypeError, match=rf"{decorator}\(\) takes: {', '.join(KEYWORDS[decorator])}"
    ):
        getattr(gtx, decorator)(nonsense=1, **extra)


def test_gt4py_keywords_are_accepted(rng) -> None:
    @gtx.field_operator(
        backend=gtx.cpu,
        grid_type=gtx.GridType.CARTESIAN,
        enable_jit=True,
        static_params=[],
        connectivities={},
        static_domains=False,
    )
    def twice(a: F) -> F:
        return 2.0 * a

    @gtx.program(
        backend=gtx.cpu,
        grid_type=gtx.GridType.CARTESIAN,
        enable_jit=True,
        static_params=("a",),
        connectivities=None,
        static_domains=True,
        frozen=False,
    )
    def run(a: F, b: F):
        twice(a, out=b)

    @gtx.scan_operator(
        axis=K, forward=False, init=1.0, backend=None, grid_type=gtx.GridType.CARTESIAN
    )
    def prod(carry: float, x: float) -> float:
        return carry * x

    data = rng.standard_normal(7)
    b = gtx.zeros({I: 7})
    run(gtx.as_field([I], data), b, offset_provider={})
    np.testing.assert_array_equal(b.asnumpy(), 2.0 * data)
    col = rng.standard_normal(5)
    out = gtx.zeros({K: 5})
    prod(gtx.as_field([K], col), out=out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), np.cumprod(col[::-1])[::-1], rtol=1e-14)


@pytest.mark.parametrize(
    ("keyword", "value", "must"),
    [
        ("enable_jit", "yes", "True or False"),
        ("static_params", "a", "a list of parameter names"),
        ("static_domains", 1, "True or False"),
        ("connectivities", [1], "an offset provider"),
    ],
)
def test_compilation_options_of_the_wrong_type(keyword, value, must) -> None:
    with pytest.raises(TypeError, match=rf"program\({keyword}=\.\.\.\) must be {must}"):
        gtx.program(**{keyword: value})
