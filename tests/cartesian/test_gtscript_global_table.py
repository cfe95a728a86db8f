"""``GlobalTable[dtype, (n, m)]`` (gt4py 1.2.3's form, CARTESIAN.md 2.2): a read-only array with
no spatial axis, read as ``t.A[i, j]`` at absolute constant or run-time indices; every backend
against NumPy on random data, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import (
    AccessKind,
    GTScriptCallError,
    GTScriptDefinitionError,
    GTScriptSyntaxError,
)
from stencilkit.cartesian.gtscript import PARALLEL, Field, GlobalTable, computation, interval

F64 = Field[np.float64]
TABLE = GlobalTable[np.float64, (5, 3)]


def test_table_reads(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def lookup(a: F64, idx: Field[np.int64], t: TABLE, out: F64):
        with computation(PARALLEL), interval(...):
            out = t.A[idx, 2] + a * t.A[1, idx % 3]

    rng = np.random.default_rng(3)
    a, t, out = arrays.random(4, 3, 2), arrays.random(5, 3), arrays.random(6, 3, 2)
    idx_h = rng.integers(0, 5, (4, 3, 2))
    before = arrays.host(out)
    lookup(a, arrays.put(idx_h), t, out, domain=(4, 3, 2))
    th = arrays.host(t)
    ref = before.copy()
    ref[:4] = th[idx_h, 2] + arrays.host(a) * th[1, idx_h % 3]
    np.testing.assert_array_equal(arrays.host(out), ref)
    info = lookup.field_info["t"]
    assert (info.access, info.axes, info.data_dims) == (AccessKind.READ, (), (5, 3))


def test_table_errors(define) -> None:
    bodies = [
        ("t.A[0, 0] = out", GTScriptSyntaxError, "'t' is a GlobalTable, which is read-only"),
        ("out = t", GTScriptSyntaxError, r"read its elements at absolute indices"),
        ("out = t[1]", GTScriptSyntaxError, "it has no offsets"),
        ("out = t.A[5, 0]", GTScriptSyntaxError, r"data index 5 of 't' is outside \[0, 5\)"),
        ("out = t.A[0]", GTScriptSyntaxError, r"give 2 data index\(es\), got 1"),
        ("out = t.A[out, 0]", GTScriptDefinitionError, "the data index of 't' must be an integer"),
    ]
    for body, error, match in bodies:
        fn = define(body, {"t": TABLE, "out": F64})
        with pytest.raises(error, match=match) as info:
            gtscript.stencil(backend="numpy", definition=fn)
        assert info.value.location.line == 4, body


def test_a_table_of_the_wrong_shape_is_refused_before_anything_runs() -> None:
    @gtscript.stencil(backend="numpy")
    def lookup(t: TABLE, out: F64):
        with computation(PARALLEL), interval(...):
            out = t.A[4, 2]

    out = np.random.default_rng(0).random((3, 3, 3))
    before = out.copy()
    with pytest.raises(
        GTScriptCallError, match=r"expects data dimensions \(5, 3\) but got \(4, 3\)"
    ):
        lookup(np.zeros((4, 3)), out)
    np.testing.assert_array_equal(out, before)


def test_generated_cuda_of_a_table_read_compiles(generated_cuda) -> None:
    @gtscript.stencil(backend="gt:gpu")
    def lookup(idx: Field[np.int64], t: TABLE, out: F64):
        with computation(PARALLEL), interval(...):
            out = t.A[idx, 1]

    rng = np.random.default_rng(0)
    arrs = {
        "idx": rng.integers(0, 5, (4, 3, 2)),
        "t": rng.random((5, 3)),
        "out": np.zeros((4, 3, 2)),
    }
    assert "__global__" in generated_cuda(
        lookup, (4, 3, 2), {"idx": (0, 0, 0), "t": (), "out": (0, 0, 0)}, arrs
    )
