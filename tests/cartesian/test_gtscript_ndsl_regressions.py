"""Regressions found by NDSL's offline tests (issue 24, second run): NDSL's
``DataDimensionsField`` subclasses ``gtscript._FieldDescriptor`` through
``gtscript._FieldDescriptorMaker``, registers tables as ``Field[[], (dtype, (n,))]`` and reads
``f.A[n, m]``; its ``FrozenStencil`` calls ``lazy_stencil`` without a backend when the config is
a mock. Every backend against NumPy on random data."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptSyntaxError
from stencilkit.cartesian.gtscript import IJK, PARALLEL, Field, computation, interval

F64 = Field[np.float64]


class _NamedDescriptor(gtscript._FieldDescriptor):
    """NDSL's _DataDimensionsFieldDescriptor: a descriptor with a name mapping of its own."""

    def __init__(self, dtype, axes, data_dims=()):  # type: ignore[no-untyped-def]
        super().__init__(dtype, axes, data_dims)
        self.mapping = {"H": 7}


class _NamedMaker(gtscript._FieldDescriptorMaker):
    def __getitem__(self, spec):  # type: ignore[no-untyped-def]
        d = super().__getitem__(spec)
        return _NamedDescriptor(d.dtype, d.axes, d.data_dims)


NAMED = _NamedMaker()
TRACERS = NAMED[IJK, (np.float64, (8,))]
PLUMES = NAMED[IJK, (np.float64, (8, 3))]
TABLE = NAMED[[], (np.int64, (42,))]  # no spatial axis: a GlobalTable


def test_descriptor_subclass_and_empty_axes_table() -> None:
    assert TRACERS.axes == ("I", "J", "K") and TRACERS.data_dims == (8,)
    assert TRACERS.mapping == {"H": 7}
    assert (TABLE.axes, TABLE.data_dims, TABLE.dtype) == ((), (42,), np.dtype(np.int64))
    assert Field[[gtscript.I, gtscript.J], np.float32].axes == ("I", "J")


def test_data_dims_absolute_index_and_table(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def plumes(q: PLUMES, table: TABLE, add: F64, out: F64):
        with computation(PARALLEL), interval(...):
            out = q.A[1, 2] + add * table.A[5]

    q, add, out = arrays.random(4, 3, 5, 8, 3), arrays.random(4, 3, 5), arrays.random(5, 4, 5)
    table_h = np.random.default_rng(7).integers(-9, 9, 42)
    before = arrays.host(out)
    plumes(q, arrays.put(table_h), add, out, domain=(4, 3, 5))
    ref = before.copy()
    ref[:4, :3] = arrays.host(q)[..., 1, 2] + arrays.host(add) * table_h[5]
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_element_writes_in_a_while_loop_with_a_table(backend, arrays) -> None:
    """NDSL's _the_stencil_table: out[0, 0, 0][n] written for a run-time n in a loop."""

    @gtscript.stencil(backend=backend, externals={"count": 8})
    def fill(inp: F64, table: TABLE, out: TRACERS):
        from __externals__ import count

        with computation(PARALLEL), interval(...):
            n = 0
            while n < count:
                out[0, 0, 0][n] = inp * n + table.A[5]
                n += 1

    inp, out = arrays.random(3, 4, 5), arrays.random(3, 4, 5, 8)
    table_h = np.random.default_rng(8).integers(-9, 9, 42)
    fill(inp, arrays.put(table_h), out)
    ref = arrays.host(inp)[..., None] * np.arange(8) + table_h[5]
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_absolute_data_index_errors(define) -> None:
    cases = [
        ("out = q.A[1]", r"give 2 data index\(es\), got 1"),
        ("out = q.A[8, 0]", r"data index 8 of 'q' is outside \[0, 8\)"),
        ("out = a.A[0]", "fields have no attribute 'A'"),
    ]
    for body, match in cases:
        fn = define(body, {"q": PLUMES, "a": F64, "out": F64})
        with pytest.raises(GTScriptSyntaxError, match=match) as info:
            gtscript.stencil(backend="numpy", definition=fn)
        assert info.value.location.line == 4, body


def test_lazy_stencil_without_a_backend_builds_for_numpy() -> None:
    def copy(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            b = a

    lazy = gtscript.lazy_stencil(definition=copy)
    a, b = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    lazy(a, b)
    np.testing.assert_array_equal(a, b)
    assert lazy.backend == "numpy"


def test_generated_cuda_of_absolute_data_index_and_element_loop_compiles(generated_cuda) -> None:
    @gtscript.stencil(backend="gt:gpu")
    def both(q: PLUMES, table: TABLE, add: F64, out: F64, tr: TRACERS):
        with computation(PARALLEL), interval(...):
            out = q.A[1, 2] + add * table.A[5]
            n = 0
            while n < 8:
                tr[0, 0, 0][n] = add * n + table.A[n]
                n += 1

    rng = np.random.default_rng(0)
    arrs = {
        "q": rng.standard_normal((4, 3, 5, 8, 3)),
        "table": rng.integers(0, 9, 42),
        "add": rng.standard_normal((4, 3, 5)),
        "out": np.zeros((4, 3, 5)),
        "tr": np.zeros((4, 3, 5, 8)),
    }
    origin = {
        "q": (0, 0, 0, 0, 0), "table": (0,), "add": (0, 0, 0), "out": (0, 0, 0),
        "tr": (0, 0, 0, 0),
    }  # fmt: skip
    assert "while (true)" in generated_cuda(both, (4, 3, 5), origin, arrs)


def _copy(a: F64, b: F64) -> None:  # type: ignore[valid-type]
    with computation(PARALLEL), interval(...):
        b = a


def _scale(a: F64, b: F64) -> None:  # type: ignore[valid-type]
    with computation(PARALLEL), interval(...):
        b = 2.0 * a


def test_axis_class_and_stencil_ids() -> None:
    """Third run: NDSL annotates ``Sequence[gtscript.Axis]`` when its module is imported, and
    ``CompareToNumpyStencil`` reads ``stencil_object._gt_id_``."""
    assert isinstance(gtscript.I, gtscript.Axis) and "Axis" in gtscript.__all__
    copy_np = gtscript.stencil(backend="numpy", definition=_copy)
    copy_cpu = gtscript.stencil(backend="gt:cpu_ifirst", definition=_copy)
    scale_np = gtscript.stencil(backend="numpy", definition=_scale)
    ids = {copy_np._gt_id_, copy_cpu._gt_id_, scale_np._gt_id_}
    assert len(ids) == 3 and all(isinstance(i, str) and len(i) == 40 for i in ids)
    assert gtscript.stencil(backend="numpy", definition=_copy)._gt_id_ == copy_np._gt_id_
    assert type(copy_np)._gt_id_ == copy_np._gt_id_  # a class attribute, as gt4py's
    a = np.random.default_rng(3).standard_normal((4, 5, 6))
    b = np.full_like(a, -7.0)
    scale_np(a, b)
    np.testing.assert_array_equal(b, 2.0 * a)
