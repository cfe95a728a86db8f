"""COMPAT.md §5.1 "Further rules" and §6.1: a scan parameter annotated as a named collection (or
tuple) of scalars accepts any structurally equal collection or tuple of fields and scalars (the
Python class is not compared), positionally or by keyword, from operators, programs and Python."""

from __future__ import annotations

import dataclasses
import typing

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64

X = gtx.Dimension("X")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
FXZ = Field[Dims[X, Z], float64]


class Pair(typing.NamedTuple):
    a: float64
    b: float64


class FieldPair(typing.NamedTuple):
    a: FXZ
    b: FXZ


@dataclasses.dataclass
class Mixed:
    a: FXZ
    b: float64


class Nested(typing.NamedTuple):
    p: Pair
    c: float64


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def _weighted(acc: float, p: Pair) -> float:
    return acc + p.a * p.b


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def _weighted_t(acc: float, p: tuple[float, float]) -> float:
    return acc + p[0] * p[1]


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def _nested(acc: float, n: Nested) -> float:
    return acc + n.p.a * n.p.b + n.c


@gtx.field_operator
def _from_tuple(v: FXZ) -> FXZ:
    return _weighted((v, v))


@gtx.field_operator
def _from_other_collection_by_keyword(v: FXZ) -> FXZ:
    return _weighted(p=FieldPair(v, v))


@gtx.field_operator
def _from_dataclass_param(q: Mixed) -> FXZ:
    return _weighted(q)


@gtx.field_operator
def _tuple_param_from_collection(v: FieldPair) -> FXZ:
    return _weighted_t(v)


@gtx.program
def _prog(a: FXZ, s: float64, o: FXZ):
    _nested(((a, s), a), out=o)


def test_scan_collection_parameters_take_equal_structures(case, rng) -> None:
    x0 = rng.standard_normal((2, 4))
    x = case.field([X, Z], x0)
    sq, twice = np.cumsum(x0 * x0, axis=1), np.cumsum(2.0 * x0, axis=1)
    calls = [
        (lambda o: _from_tuple.with_backend(case.backend)(x, out=o, offset_provider={}), sq),
        (
            lambda o: _from_other_collection_by_keyword.with_backend(case.backend)(
                x, out=o, offset_provider={}
            ),
            sq,
        ),
        (
            lambda o: _from_dataclass_param.with_backend(case.backend)(
                Mixed(x, 2.0), out=o, offset_provider={}
            ),
            twice,
        ),
        (
            lambda o: _tuple_param_from_collection.with_backend(case.backend)(
                FieldPair(x, x), out=o, offset_provider={}
            ),
            sq,
        ),
        (
            lambda o: _weighted.with_backend(case.backend)(p=(x, 2.0), out=o, offset_provider={}),
            twice,
        ),
        (
            lambda o: _weighted.with_backend(case.backend)(
                FieldPair(x, x), out=o, offset_provider={}
            ),
            sq,
        ),
        (
            lambda o: _prog.with_backend(case.backend)(x, 2.0, o, offset_provider={}),
            np.cumsum(3.0 * x0, axis=1),
        ),
    ]
    for call, expect in calls:
        o = case.field([X, Z], np.zeros((2, 4)))
        call(o)
        np.testing.assert_allclose(o.asnumpy(), expect, rtol=1e-14)
