"""gt4py.next's Domain / UnitRange / Dimension / NamedRange API and generic Field aliases."""

from __future__ import annotations

import dataclasses
import typing
from typing import TypeAlias, TypeVar

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float32, float64
from stencilkit.core import FieldType
from stencilkit.next.annotations import type_from_annotation

X, Y = gtx.Dimension("X"), gtx.Dimension("Y")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)

T = TypeVar("T", float32, float64)
DimsT = TypeVar("DimsT")
XZField: TypeAlias = Field[Dims[X, Z], T]


# -- generic Field aliases (icon4py's CellKField[wpfloat]) ------------------------------------


def test_generic_alias_substitutes_and_reads() -> None:
    assert XZField.__parameters__ == (T,)
    assert type_from_annotation(XZField[float64]) == FieldType((X, Z), "float64")
    assert type_from_annotation(XZField[float32]) == FieldType((X, Z), "float32")
    generic_dims = Field[Dims[DimsT], T]
    assert type_from_annotation(generic_dims[Dims[X], float64]) == FieldType((X,), "float64")
    assert type_from_annotation(Field[Dims[()], float64]) == FieldType((), "float64")


def test_unbound_type_variable_is_refused() -> None:
    with pytest.raises(TypeError, match="not bound"):
        type_from_annotation(XZField)


def test_generic_alias_in_optional_dataclass_fields() -> None:
    @dataclasses.dataclass
    class State:
        a: XZField[float64] | None = None
        b: typing.Optional[XZField[float32]] = None  # noqa: UP045 - the old spelling must work too

    hints = typing.get_type_hints(State)
    assert typing.get_args(hints["a"])[1] is type(None)
    assert type_from_annotation(typing.get_args(hints["a"])[0]) == FieldType((X, Z), "float64")


@pytest.mark.parametrize("backend", [None, gtx.cpu])
def test_operator_with_generic_alias_annotations(backend: typing.Any) -> None:
    @gtx.field_operator(backend=backend)
    def add_one(a: XZField[float64]) -> XZField[float64]:
        return a + 1.0

    rng = np.random.default_rng(0)
    data = rng.random((4, 3))
    out = gtx.zeros({X: 4, Z: 3})
    add_one(gtx.as_field([X, Z], data), out=out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), data + 1.0)


# -- UnitRange ------------------------------------------------------------------------------


def test_unit_range() -> None:
    r = gtx.UnitRange(2, 8)
    assert len(r) == 6 and r[0] == 2 and r[-1] == 7 and r[1:3] == gtx.UnitRange(3, 5)
    assert r & gtx.UnitRange(5, 10) == gtx.UnitRange(5, 8)
    assert r + 1 == gtx.UnitRange(3, 9) and r - 2 == gtx.UnitRange(0, 6)
    assert gtx.UnitRange(3, 4) <= r and not r <= gtx.UnitRange(3, 4) and r >= gtx.UnitRange(2, 8)
    assert gtx.UnitRange(4, 2).is_empty() and not r.is_empty()
    inf = gtx.UnitRange.infinite()
    assert not inf.is_finite() and r <= inf and inf & r == r
    assert gtx.unit_range(None) == inf
    assert gtx.unit_range((None, 3)).stop == 3 and not gtx.unit_range((None, 3)).is_finite()
    assert gtx.unit_range(range(1, 4)) == gtx.UnitRange(1, 4) and gtx.unit_range(
        5
    ) == gtx.UnitRange(0, 5)


# -- Domain ---------------------------------------------------------------------------------


def test_domain_sequence_protocol() -> None:
    d = gtx.domain({X: (0, 10), Y: (5, 15)})
    assert len(d) == 2 and d.ndim == 2 and d.shape == (10, 10) and d.size == 100
    nr = d[Y]
    assert nr.dim == Y and nr.unit_range.start == 5
    assert d[0] == gtx.NamedRange(X, gtx.UnitRange(0, 10))
    assert [dim for dim, _ in d] == [X, Y]
    assert d[1:] == gtx.domain({Y: (5, 15)})
    assert gtx.Domain(*d) == d
    assert gtx.Domain(dims=(X,), ranges=(gtx.UnitRange(0, 3),)) == gtx.domain({X: 3})
    assert d.dim_index(Y) == 1 and d.dim_index(Z, allow_missing=True) is None


def test_domain_slice_at() -> None:
    d = gtx.domain({X: (0, 10), Y: (5, 15)})
    assert d.slice_at[2:3, 2:5] == gtx.domain({X: (2, 3), Y: (7, 10)})
    assert d.slice_at[1:-1, :] == gtx.domain({X: (1, 9), Y: (5, 15)})
    assert d.slice_at[3] == gtx.domain({X: (3, 4), Y: (5, 15)})


def test_domain_replace_insert_pop() -> None:
    d = gtx.domain({X: 4, Y: 5})
    assert d.replace(Y, gtx.NamedRange(Z, gtx.UnitRange(0, 2))) == gtx.domain({X: 4, Z: 2})
    assert d.replace(0, gtx.NamedRange(X, gtx.UnitRange(1, 2))) == gtx.domain({X: (1, 2), Y: 5})
    assert d.insert(1, gtx.NamedRange(Z, gtx.UnitRange(0, 2))).dims == (X, Z, Y)
    assert d.pop() == gtx.domain({X: 4}) and d.pop(X) == gtx.domain({Y: 5})


def test_domain_intersection_union_and_empty() -> None:
    a = gtx.domain({X: (0, 10), Y: (0, 4)})
    assert a & gtx.domain({X: (5, 20)}) == gtx.domain({X: (5, 10), Y: (0, 4)})
    assert (gtx.domain({X: (0, 3)}) | gtx.domain({X: (3, 6)})) == gtx.domain({X: (0, 6)})
    with pytest.raises(NotImplementedError):
        gtx.domain({X: (0, 2)}) | gtx.domain({X: (4, 6)})
    with pytest.raises(NotImplementedError):
        a | a
    assert gtx.domain({X: (3, 3)}).is_empty() and not a.is_empty()
    assert gtx.domain({X: (0, 3)}).size == 3 and (X < 3).size is None


def test_dimension_comparisons_outside_the_dsl() -> None:
    assert X(5) == gtx.NamedIndex(X, 5) and X(5).dim == X and X(5).value == 5
    assert (X == 3) == gtx.domain({X: (3, 4)})
    assert (X < 3).ranges[0].stop == 3 and not (X < 3).is_finite()
    assert (X >= 1) & gtx.domain({X: 5}) == gtx.domain({X: (1, 5)})
    assert (X <= 2) & gtx.domain({X: 5}) == gtx.domain({X: (0, 3)})
    assert (X > 2) & gtx.domain({X: 5}) == gtx.domain({X: (3, 5)})
    with pytest.raises(NotImplementedError):
        _ = X != 3
    # between dimensions == stays equality, and dimensions stay usable as dict keys
    assert X == gtx.Dimension("X") and X != Y and {X: 1}[gtx.Dimension("X")] == 1


def test_staggered_helpers_and_domain_check() -> None:
    XH = gtx.flip_staggered(X)
    assert gtx.is_staggered(XH) and not gtx.is_staggered(X)
    assert gtx.as_non_staggered(XH) == X and gtx.flip_staggered(XH) == X
    assert gtx.common.flip_staggered is gtx.flip_staggered
    f = gtx.zeros({XH: (1, 4)})
    assert f.domain.dims == (XH,)
    # a domain may hold both (gt4py's rule: its test helpers keep every size in one); a field
    # may not
    assert gtx.domain({X: 3, XH: 4}).shape == (3, 4)
    with pytest.raises(ValueError, match="staggered counterpart"):
        gtx.zeros({X: 3, XH: 4})
