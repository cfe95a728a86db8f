"""Annotations that name a local of the enclosing function, under ``from __future__ import
annotations`` (strings evaluated at decoration): found in the enclosing frame, on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.core.errors import StencilTypeError


@pytest.mark.parametrize("backend", [None, gtx.cpu], ids=["embedded", "cpu"])
def test_annotation_names_a_local_of_the_enclosing_function(rng, backend) -> None:
    X = gtx.Dimension("X")
    Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)  # named only in the annotations
    F = Field[Dims[X, Z], float64]

    @gtx.field_operator
    def shift(a: F) -> F:
        return a(X + 1) - a

    @gtx.program(backend=backend)
    def run(a: F, out: F):
        shift(a, out=out, domain={X: (0, 7), Z: (0, 5)})

    data = rng.standard_normal((8, 5))
    out = gtx.as_field([X, Z], np.full((8, 5), np.nan))
    run(gtx.as_field([X, Z], data), out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy()[:7], data[1:] - data[:-1])
    assert np.isnan(out.asnumpy()[7]).all()  # outside the domain: untouched


def test_an_unknown_annotation_name_is_a_located_error() -> None:
    X = gtx.Dimension("X")

    with pytest.raises(StencilTypeError, match="cannot evaluate the annotations of f") as info:

        @gtx.field_operator
        def f(a: Field[Dims[X], Nowhere]) -> Field[Dims[X], float64]:  # noqa: F821
            return a

    assert "Nowhere" in str(info.value) and "from __future__ import annotations" in str(info.value)
