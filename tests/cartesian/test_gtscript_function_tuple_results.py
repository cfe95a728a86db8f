"""``a, b, c = f(a, b, c)``: a ``gtscript.function``'s tuple result assigned to the fields it
was called with. gt4py inlines the callee with its assigned names as temporaries, computed
before the targets are written one after the other; names it does not assign stay the caller's
and are read as the targets are written. pyFV3's ``remap_profile.remap_constraint`` (the
vertical remapping of the dycore) depends on it: its ``elif`` conditions read ``a4_2`` and
``a4_3``, which the tuple assignment writes before ``a4_4``. Every backend against a NumPy
reference on random data."""

from __future__ import annotations

import numpy as np

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, interval

F64 = Field[np.float64]
BOOL = Field[np.bool_]


# pyFV3's remap_profile.remap_constraint, as written there (annotations left out)
@gtscript.function
def remap_constraint(a4_1, a4_2, a4_3, a4_4, extm):
    da1 = a4_3 - a4_2
    da2 = da1 * da1
    a6da = a4_4 * da1
    if extm:
        a4_2 = a4_1
        a4_3 = a4_1
        a4_4 = 0.0
    elif a6da < -da2:
        a4_4 = 3.0 * (a4_2 - a4_1)
        a4_3 = a4_2 - a4_4
    elif a6da > da2:
        a4_4 = 3.0 * (a4_3 - a4_1)
        a4_2 = a4_3 - a4_4
    return a4_1, a4_2, a4_3, a4_4


def constrain(a4_1: F64, a4_2: F64, a4_3: F64, a4_4: F64, extm: BOOL):
    with computation(PARALLEL), interval(1, None):
        a4_1, a4_2, a4_3, a4_4 = remap_constraint(a4_1, a4_2, a4_3, a4_4, extm)


def reference(a1, a2, a3, a4, extm):
    n2, n3, n4 = a2.copy(), a3.copy(), a4.copy()
    da1 = a3 - a2
    da2 = da1 * da1
    a6da = a4 * da1
    lt = ~extm & (a6da < -da2)
    gt = ~extm & ~lt & (a6da > da2)
    n2[extm], n3[extm], n4[extm] = a1[extm], a1[extm], 0.0
    n4[lt] = 3.0 * (a2[lt] - a1[lt])
    n3[lt] = a2[lt] - n4[lt]
    n4[gt] = 3.0 * (a3[gt] - a1[gt])
    n2[gt] = a3[gt] - n4[gt]
    return a1, n2, n3, n4


def test_remap_constraint_in_place(backend, arrays) -> None:
    shape = (6, 5, 7)
    rng = np.random.default_rng(11)
    a = [rng.standard_normal(shape) for _ in range(4)]
    extm = rng.random(shape) < 0.3
    want = reference(*(x[:, :, 1:] for x in a), extm[:, :, 1:])
    s = gtscript.stencil(backend=backend, definition=constrain)
    fields = [arrays.put(x) for x in a]
    s(*fields, arrays.put(extm))
    for x, got, w in zip(a, fields, want, strict=True):
        got = arrays.host(got)
        np.testing.assert_array_equal(got[:, :, 1:], w)
        np.testing.assert_array_equal(got[:, :, 0], x[:, :, 0])  # outside the interval


@gtscript.function
def swap(x, y):
    return y, x


@gtscript.function
def swap_through_locals(x, y):
    t = x
    return y, t


def test_names_the_callee_does_not_assign_are_read_as_written(backend, arrays) -> None:
    """gt4py's ``x, y = swap(x, y)`` is ``x = y; y = x``: y gets the new x (old y), while a
    local the callee assigns (``t = x``) is computed before: y gets the old x."""

    def plain(x: F64, y: F64):
        with computation(PARALLEL), interval(...):
            x, y = swap(x, y)

    def through_locals(x: F64, y: F64):
        with computation(PARALLEL), interval(...):
            x, y = swap_through_locals(x, y)

    rng = np.random.default_rng(5)
    x0, y0 = rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 3, 2))
    for definition, want_y in ((plain, y0), (through_locals, x0)):
        s = gtscript.stencil(backend=backend, definition=definition)
        x, y = arrays.put(x0), arrays.put(y0)
        s(x, y)
        np.testing.assert_array_equal(arrays.host(x), y0)
        np.testing.assert_array_equal(arrays.host(y), want_y)
