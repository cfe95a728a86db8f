"""2-D temporaries: ``tmp: Field[IJ, dtype] = ...`` (also through a ``dtypes`` key, as NDSL's
``FloatFieldIJ``): one value per column, written at some levels and read at every level, on
every backend, compared with NumPy on random data."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import (
    GTScriptDefinitionError,
    GTScriptSyntaxError,
)
from stencilkit.cartesian.gtscript import FORWARD, IJ, IJK, PARALLEL, Field, computation, interval

F64 = Field[np.float64]
DTYPES = {"FIJ32": Field[IJ, np.float32], "BIJ": Field[IJ, np.bool_], "F32": np.float32}


def test_column_sum_read_at_every_level(backend, arrays) -> None:
    @gtscript.stencil(backend=backend, dtypes=DTYPES)
    def colsum(a: F64, out: F64):
        with computation(FORWARD), interval(0, 1):
            total: Field[IJ, np.float64] = a
            scale: "FIJ32" = 0.1  # noqa: UP037 (a dtypes key); cast to float32 on assignment
            positive: "BIJ" = a > 0.0  # noqa: UP037 (a dtypes key)
            half: Field[IJ, "F32"] = 0.5  # noqa: UP037 (a dtypes key as the dtype)
        with computation(FORWARD), interval(1, None):
            total = total + a
        with computation(PARALLEL), interval(...):
            if positive:
                out = total * scale * half
            else:
                out = -total

    a_h = np.random.default_rng(1).standard_normal((6, 5, 7))
    out_h = np.random.default_rng(2).standard_normal((8, 7, 7))
    a, out = arrays.put(a_h), arrays.put(out_h)
    colsum(a, out, origin={"a": (0, 0, 0), "out": (1, 1, 0)}, domain=(6, 5, 7))
    total = a_h.sum(axis=2, keepdims=True)
    scale = np.float64(np.float32(0.1))
    ref = out_h.copy()
    ref[1:7, 1:6, :] = np.where(a_h[:, :, :1] > 0.0, total * scale * 0.5, -total)
    np.testing.assert_allclose(arrays.host(out), ref, rtol=1e-13, atol=0)


def test_written_again_in_a_later_call_starts_from_its_writes(backend, arrays) -> None:
    """The temporary's memory is reused between calls: each call writes it before reading."""

    @gtscript.stencil(backend=backend)
    def top_value(a: F64, out: F64):
        with computation(FORWARD), interval(-1, None):
            top: Field[IJ, np.float64] = a
        with computation(PARALLEL), interval(...):
            out = a - top

    for seed in (3, 4):
        a_h = np.random.default_rng(seed).standard_normal((4, 3, 5))
        a, out = arrays.put(a_h), arrays.put(np.zeros((4, 3, 5)))
        top_value(a, out)
        np.testing.assert_array_equal(arrays.host(out), a_h - a_h[:, :, -1:])


def test_typed_ijk_annotation_is_a_typed_temporary(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def narrow(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            t: Field[IJK, np.float32] = a
            out = t

    a_h = np.random.default_rng(5).standard_normal((3, 4, 2))
    a, out = arrays.put(a_h), arrays.put(np.zeros((3, 4, 2)))
    narrow(a, out)
    np.testing.assert_array_equal(arrays.host(out), a_h.astype(np.float32).astype(np.float64))


def test_3d_value_over_several_parallel_levels_is_refused() -> None:
    def ambiguous(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            t: Field[IJ, np.float64] = a
            out = t

    with pytest.raises(GTScriptDefinitionError, match=r"2-D temporary 't'.*which level"):
        gtscript.stencil(backend="numpy", definition=ambiguous)


def test_data_dimension_temporary_inside_a_computation_is_refused() -> None:
    """Declared at the top of the definition instead (gt4py's form, test_gtscript_vectors.py)."""

    def ddim(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            t: Field[IJK, (np.float64, (2,))] = a
            out = t

    with pytest.raises(GTScriptSyntaxError, match="declared at the top of the definition"):
        gtscript.stencil(backend="numpy", definition=ddim)


def test_a_bare_dtypes_name_and_a_2d_temporary_bounding_an_interval(backend, arrays) -> None:
    """gt4py's test_2d_temporaries and test_runtime_interval_bounds: ``tmp: MyFancySymbol = 0``
    with ``dtypes={"MyFancySymbol": Field[IJ, np.float64]}`` (a name bound nowhere in Python),
    and ``interval(0, tmp)`` with a 2-D temporary, one bound per column (a float truncated)."""

    @gtscript.stencil(backend=backend, dtypes={"MyFancySymbol": Field[IJ, np.float64]})
    def bounded(a: F64, kb: Field[IJ, np.int64], out: F64):
        with computation(FORWARD), interval(0, 1):
            top: MyFancySymbol = kb + 0.5  # type: ignore[name-defined]
        with computation(PARALLEL), interval(0, top):
            out = a * 2.0

    rng = np.random.default_rng(31)
    a_h, out_h = rng.standard_normal((4, 3, 6)), rng.standard_normal((4, 3, 6))
    kb_h = rng.integers(0, 7, (4, 3)).astype(np.int64)
    a, kb, out = arrays.put(a_h), arrays.put(kb_h), arrays.put(out_h)
    bounded(a, kb, out)
    ref = out_h.copy()
    for i in range(4):
        for j in range(3):
            ref[i, j, : kb_h[i, j]] = 2.0 * a_h[i, j, : kb_h[i, j]]  # levels above untouched
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_a_typed_temporary_over_k_alone_is_refused_in_gt4py_words() -> None:
    with pytest.raises(GTScriptSyntaxError, match="Typed temporaries must be IJ,"):

        @gtscript.stencil(backend="numpy")
        def over_k(a: F64, out: F64):
            with computation(FORWARD), interval(0, 1):
                tmp: Field[gtscript.K, np.float64] = 0  # type: ignore[valid-type]
            with computation(FORWARD), interval(...):
                out = tmp + a
