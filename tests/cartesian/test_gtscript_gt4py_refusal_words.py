"""The refusals GT4Py's own tests match on carry gt4py's words first, then stencilkit's
explanation with the user's line (its integration tests: test_code_generation.py,
test_call_interface.py)."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptSyntaxError
from stencilkit.cartesian.gtscript import PARALLEL, Field, I, J, K, computation, interval

F64 = Field[np.float64]
I32 = Field[np.int32]


def test_horizontal_self_assignment_and_read_after_write() -> None:
    with pytest.raises(ValueError, match=r"Self-assignment with offset in I or J is illegal\."):

        @gtscript.stencil(backend="debug")
        def same(field: F64):
            with computation(PARALLEL), interval(...):
                field = (field[I - 1] + field[I + 1]) / 2

    with pytest.raises(ValueError, match="Illegal write and read with horizontal offset"):

        @gtscript.stencil(backend="debug")
        def through(field: F64):
            with computation(PARALLEL), interval(...):
                tmp = (field[J - 1] + field[J + 1]) / 2
                field = tmp * 2


@pytest.mark.parametrize("via_temporary", [False, True])
def test_k_offset_read_of_a_field_written_in_parallel(via_temporary: bool) -> None:
    with pytest.raises(ValueError, match="write and read with k-offsets in PARALLEL") as e:
        if via_temporary:

            @gtscript.stencil(backend="debug")
            def tmp_read(field: I32):
                with computation(PARALLEL), interval(1, None):
                    tmp = field[K - 1]
                    field = tmp * 2

        else:

            @gtscript.stencil(backend="debug")
            def direct(field: I32):
                with computation(PARALLEL), interval(1, None):
                    field = field[K - 1] * 2

    assert "test_gtscript_gt4py_refusal_words.py" in str(e.value)  # the user's line


def test_variable_k_read_before_the_write_in_parallel() -> None:
    """gt4py refuses a read at a variable K offset or .at(K=...) of a field the PARALLEL
    computation writes, before the write as after it (levels have no order there)."""
    for make in ("at", "offset"):
        with pytest.raises(ValueError, match="write and read with `VariableKOffset` and/or"):
            if make == "at":

                @gtscript.stencil(backend="debug")
                def at(field: I32):
                    with computation(PARALLEL), interval(...):
                        level = field.at(K=1)
                        field = 2 * level

            else:

                @gtscript.stencil(backend="debug")
                def offset(field: I32, off: int = -1):
                    with computation(PARALLEL), interval(1, None):
                        bottom = field[0, 0, off]
                        field = field + 2 * bottom


def test_variable_k_read_of_a_field_not_written_still_runs() -> None:
    @gtscript.stencil(backend="numpy")
    def fine(a: F64, out: F64, off: int):
        with computation(PARALLEL), interval(1, None):
            out = a[0, 0, off] + a.at(K=0)

    rng = np.random.default_rng(3)
    a, out = rng.standard_normal((3, 2, 5)), rng.standard_normal((3, 2, 5))
    ref = out.copy()
    fine(a, out, -1)
    ref[:, :, 1:] = a[:, :, :-1] + a[:, :, :1]
    np.testing.assert_array_equal(out, ref)  # level 0 untouched


def test_data_index_out_of_bounds() -> None:
    with pytest.raises(GTScriptSyntaxError, match=r"Data index out of bounds\.") as e:

        @gtscript.stencil(backend="numpy")
        def ddim(out: Field[(np.float64, (2,))]):
            with computation(PARALLEL), interval(...):
                out[0, 0, 0][2] = 1.0

    assert "data index 2 of 'out' is outside [0, 2)" in str(e.value)
