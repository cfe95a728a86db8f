"""A PARALLEL computation that reads at a K offset a field it writes is refused at decoration,
with the user's line and the fix (FORWARD/BACKWARD), also where the read goes through a
temporary; the fix the hint names gives gt4py's answer (checked against NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptDefinitionError
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, interval


def test_a_k_offset_read_through_a_temporary_is_refused_at_decoration() -> None:
    """Before: decoration passed and the first call failed in the engine, naming an internal
    block (``..._c0b0``), no line, and the hint "write into a temporary"."""
    with pytest.raises(GTScriptDefinitionError) as info:

        @gtscript.stencil(backend="numpy")
        def bad(a: Field[float], b: Field[float]):
            with computation(PARALLEL), interval(1, None):
                tmp = a
                a = tmp[0, 0, -1] + b

    text = str(info.value)
    assert __file__ in text and "a = tmp[0, 0, -1] + b" in text  # the user's line
    assert "'a' is written and read at a K offset (-1, through the temporary 'tmp')" in text
    assert "hint: use FORWARD or BACKWARD" in text
    assert "make 'tmp' in a computation of its own first" in text
    assert "_c0b0" not in text


def test_the_direct_read_is_refused_with_its_line() -> None:
    with pytest.raises(
        GTScriptDefinitionError, match=r"'a' is written and read at a K offset \(-1\)"
    ) as info:

        @gtscript.stencil(backend="numpy")
        def bad(a: Field[float], b: Field[float]):
            with computation(PARALLEL), interval(1, None):
                a = a[0, 0, -1] + b

    assert "a = a[0, 0, -1] + b" in str(info.value) and "through" not in str(info.value)


@pytest.mark.parametrize("backend", ["numpy", "gt:cpu_ifirst"])
def test_the_hinted_fix_reads_the_old_values(backend: str) -> None:
    """The temporary made in a computation of its own: the old values of ``a`` one level down."""

    @gtscript.stencil(backend=backend)
    def fixed(a: Field[float], b: Field[float]):
        with computation(PARALLEL), interval(...):
            tmp = a
        with computation(PARALLEL), interval(1, None):
            a = tmp[0, 0, -1] + b

    rng = np.random.default_rng(7)
    a, b = rng.random((5, 4, 6)), rng.random((5, 4, 6))
    expected = a.copy()
    expected[:, :, 1:] = a[:, :, :-1] + b[:, :, 1:]
    fixed(a, b)
    np.testing.assert_allclose(a, expected, rtol=1e-14)
