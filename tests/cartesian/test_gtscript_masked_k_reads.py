"""Variable K offsets that leave the array only where a branch or a ``while`` loop is not taken
(pyFV3's ``map_single.lagrangian_contributions``, the vertical remapping of the dycore).

Its ``else`` branch reads ``pe1[0, 0, lev + 1]`` in a ``while`` condition after ``lev = lev + 1``:
on the top level of the domain ``lev + 1`` is one past the last level of the buffer (NDSL's
interface fields have ``nz + 1`` levels) in every column that takes the ``if`` branch instead.
gt4py's numpy backend evaluates both branches on the whole plane and clips such indices into
the array (``broadcast_and_clip_variable_k`` in its generated module), its C++ backends never
read there: either way the value is discarded. stencilkit checks such a read where the branch
and the loop select it, so the stencil runs; a read out of the array on a point that uses it
is still refused. Every backend against a NumPy reference (the column algorithm written with
plain loops) on random data."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import FORWARD, IJ, Field, computation, interval
from stencilkit.core.errors import StencilValueError

F64 = Field[np.float64]
I64IJ = Field[IJ, np.int64]


# the remapping of pyFV3's map_single.lagrangian_contributions (as written there, renamed)
def remap(
    q: F64,
    pe1: F64,
    pe2: F64,
    q4_1: F64,
    q4_2: F64,
    q4_3: F64,
    q4_4: F64,
    dp1: F64,
    lev: I64IJ,
):
    with computation(FORWARD), interval(...):
        pl = (pe2 - pe1[0, 0, lev]) / dp1[0, 0, lev]
        if pe2[0, 0, 1] <= pe1[0, 0, lev + 1]:
            pr = (pe2[0, 0, 1] - pe1[0, 0, lev]) / dp1[0, 0, lev]
            q = (
                q4_2[0, 0, lev]
                + 0.5 * (q4_4[0, 0, lev] + q4_3[0, 0, lev] - q4_2[0, 0, lev]) * (pr + pl)
                - q4_4[0, 0, lev] * 1.0 / 3.0 * (pr * (pr + pl) + pl * pl)
            )
        else:
            qsum = (pe1[0, 0, lev + 1] - pe2) * (
                q4_2[0, 0, lev]
                + 0.5 * (q4_4[0, 0, lev] + q4_3[0, 0, lev] - q4_2[0, 0, lev]) * (1.0 + pl)
                - q4_4[0, 0, lev] * 1.0 / 3.0 * (1.0 + pl * (1.0 + pl))
            )
            lev = lev + 1
            while pe1[0, 0, lev + 1] < pe2[0, 0, 1]:
                qsum += dp1[0, 0, lev] * q4_1[0, 0, lev]
                lev = lev + 1
            dp = pe2[0, 0, 1] - pe1[0, 0, lev]
            esl = dp / dp1[0, 0, lev]
            qsum += dp * (
                q4_2[0, 0, lev]
                + 0.5
                * esl
                * (q4_3[0, 0, lev] - q4_2[0, 0, lev] + q4_4[0, 0, lev] * (1.0 - (2.0 / 3.0) * esl))
            )
            q = qsum / (pe2[0, 0, 1] - pe2)
        lev = lev - 1


def reference(q, pe1, pe2, q4_1, q4_2, q4_3, q4_4, dp1, lev, nz):
    """The column algorithm with plain loops; ``lev`` is an offset from the current level."""
    q, lev = q.copy(), lev.copy()
    for i in range(q.shape[0]):
        for j in range(q.shape[1]):
            p1, p2, d = pe1[i, j], pe2[i, j], dp1[i, j]
            a1, a2, a3, a4 = q4_1[i, j], q4_2[i, j], q4_3[i, j], q4_4[i, j]
            lv = int(lev[i, j])
            for k in range(nz):
                m = k + lv  # the level that pe1[0, 0, lev] reads
                pl = (p2[k] - p1[m]) / d[m]
                if p2[k + 1] <= p1[m + 1]:
                    pr = (p2[k + 1] - p1[m]) / d[m]
                    q[i, j, k] = (
                        a2[m]
                        + 0.5 * (a4[m] + a3[m] - a2[m]) * (pr + pl)
                        - a4[m] * 1.0 / 3.0 * (pr * (pr + pl) + pl * pl)
                    )
                else:
                    qsum = (p1[m + 1] - p2[k]) * (
                        a2[m]
                        + 0.5 * (a4[m] + a3[m] - a2[m]) * (1.0 + pl)
                        - a4[m] * 1.0 / 3.0 * (1.0 + pl * (1.0 + pl))
                    )
                    m += 1
                    while p1[m + 1] < p2[k + 1]:
                        qsum += d[m] * a1[m]
                        m += 1
                    dp = p2[k + 1] - p1[m]
                    esl = dp / d[m]
                    qsum += dp * (
                        a2[m] + 0.5 * esl * (a3[m] - a2[m] + a4[m] * (1.0 - (2.0 / 3.0) * esl))
                    )
                    q[i, j, k] = qsum / (p2[k + 1] - p2[k])
                lv = m - k - 1
            lev[i, j] = lv
    return q, lev


def columns(rng, ni, nj, nz):
    """Two partitions of each column with the same top and bottom (pe2 a remapped pe1)."""
    pe1 = np.cumsum(rng.uniform(0.5, 1.5, (ni, nj, nz + 1)), axis=2)
    pe1 -= pe1[:, :, :1]
    inner = np.sort(rng.uniform(0.0, 1.0, (ni, nj, nz - 1)), axis=2)
    pe2 = np.concatenate([np.zeros((ni, nj, 1)), inner * pe1[:, :, -1:], pe1[:, :, -1:]], axis=2)
    return pe1, pe2


def test_lagrangian_contributions_masked_reads_past_the_top(backend, arrays) -> None:
    ni, nj, nz = 5, 4, 7
    rng = np.random.default_rng(7)
    pe1, pe2 = columns(rng, ni, nj, nz)
    dp1 = np.zeros_like(pe1)
    dp1[:, :, :nz] = pe1[:, :, 1:] - pe1[:, :, :nz]
    dp1[:, :, nz] = rng.uniform(0.5, 1.5, (ni, nj))
    q4 = [rng.standard_normal((ni, nj, nz + 1)) for _ in range(4)]
    q = rng.standard_normal((ni, nj, nz + 1))
    lev = np.zeros((ni, nj), dtype=np.int64)
    # the top level takes the `if` in some columns and the `else` in others
    want_q, want_lev = reference(q, pe1, pe2, *q4, dp1, lev, nz)
    s = gtscript.stencil(backend=backend, definition=remap)
    args = [arrays.put(a) for a in (q, pe1, pe2, *q4, dp1)]
    lev_d = arrays.put(lev)
    s(*args, lev_d, origin=(0, 0, 0), domain=(ni, nj, nz))
    got_q = arrays.host(args[0])
    np.testing.assert_array_equal(got_q[:, :, :nz], want_q[:, :, :nz])
    np.testing.assert_array_equal(got_q[:, :, nz], q[:, :, nz])  # untouched level
    np.testing.assert_array_equal(arrays.host(lev_d), want_lev)
    for a, d in zip((pe1, pe2, *q4, dp1), args[1:], strict=True):
        np.testing.assert_array_equal(arrays.host(d), a)


def test_a_used_read_past_the_top_is_refused(backend, arrays) -> None:
    # pe2's bottom above pe1's: the loop runs past the last level of pe1 where it is taken
    ni, nj, nz = 3, 2, 4
    rng = np.random.default_rng(3)
    pe1, pe2 = columns(rng, ni, nj, nz)
    pe2[:, :, nz] += 1.0
    arrs = [pe1, pe2, *[rng.standard_normal((ni, nj, nz + 1)) for _ in range(5)]]
    dp1 = np.ones_like(pe1)
    s = gtscript.stencil(backend=backend, definition=remap)
    args = [arrays.put(a) for a in (arrs[2], pe1, pe2, *arrs[3:7], dp1)]
    with pytest.raises((StencilValueError, IndexError), match=r"pe1|outside|out of"):
        s(*args, arrays.put(np.zeros((ni, nj), np.int64)), origin=(0, 0, 0), domain=(ni, nj, nz))
