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
