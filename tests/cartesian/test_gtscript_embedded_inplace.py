"""The embedded backend's bound kernels computing arithmetic into memory the call has
(backends/embedded/inplace.py): into an operand made by the same call, into the output's
window, or stored without ``put``. Their results are the evaluator's bit for bit, where they
apply and where they must not (mixed dtypes, broadcasts that grow a value, values used twice, a
2-D field written level by level whose levels share memory, an output read at an offset by the
same statement)."""

from __future__ import annotations

from typing import Any

import numpy as np

from stencilkit.backends.embedded import bound, inplace
from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval

F64 = Field[np.float64]
F32 = Field[np.float32]
I64 = Field[np.int64]


def _mixed(
    a: F64, b: F64, c: F64, s2: Field[IJ, np.float64], i1: I64, i2: I64, f: F32,
    out: F64, out2: F64, iout: I64, fout: F32, acc: F64, col: Field[IJ, np.float64],
    w: float,
):  # fmt: skip
    with computation(PARALLEL), interval(...):
        t = (a + b) * c - a / b  # a chain: each operation into the first one's array
        out = t * -(a - c) * w + t  # t used twice: not computed into
        out2 = s2 * 2.0 + a  # an IJ value grown by the broadcast: not into its array
        iout = i1 * i2 + i1 - 3  # integers wrap the same either way
        fout = f + f * 2.0  # a float32 field and a float64 literal: put casts
    with computation(FORWARD):
        with interval(0, 1):
            acc = a
            col = b
        with interval(1, None):
            acc = acc[0, 0, -1] * 0.5 + b  # each level stored without put
            col = col + a * 0.25  # a 2-D field written level by level (K stride 0)


def _args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    shape = (6, 5, 4)
    return {
        "a": rng.standard_normal(shape),
        "b": rng.standard_normal(shape) + 3.0,
        "c": rng.standard_normal(shape),
        "s2": rng.standard_normal(shape[:2]),
        "i1": rng.integers(-(2**40), 2**40, shape),
        "i2": rng.integers(-(2**40), 2**40, shape),
        "f": rng.standard_normal(shape).astype(np.float32),
        "out": rng.standard_normal(shape),
        "out2": rng.standard_normal(shape),
        "iout": rng.integers(-5, 5, shape),
        "fout": rng.standard_normal(shape).astype(np.float32),
        "acc": rng.standard_normal(shape),
        "col": rng.standard_normal(shape[:2]),
        "w": 1.5,
    }


def _fast_and_slow(definition: Any) -> tuple[Any, Any]:
    fast = gtscript.stencil(backend="numpy", definition=definition, rebuild=True)
    slow = gtscript.stencil(backend="numpy", definition=definition, rebuild=True)
    slow._runner.bindable = False  # every call evaluated by the evaluator
    return fast, slow


def _chosen(st: Any) -> list[tuple[inplace.Choice, bound.KernelCode]]:
    """The specialised codes made for ``st``'s kernels (their choice, their code)."""
    kernels = [k for p in st._runner.plans.values() for k, _ in p.kernels]
    return [
        (choice, code)
        for k in kernels
        for choice, code in list((bound._CODE.get(k) or {}).items())
        if code is not None and choice != ((), (), ())
    ]


def test_arithmetic_computed_into_memory_gives_the_evaluators_results_bit_for_bit() -> None:
    fast, slow = _fast_and_slow(_mixed)
    for seed in range(2):
        args_fast, args_slow = _args(seed), _args(seed)
        for call in range(3):  # the later calls run the bound kernels
            fast(**args_fast, origin=(0, 0, 0), domain=(6, 5, 4))
            slow.run(_domain_=(6, 5, 4), _origin_=dict.fromkeys(fast.field_info, (0, 0, 0)),
                     exec_info=None, **args_slow)  # fmt: skip
            for name in ("out", "out2", "iout", "fout", "acc", "col"):
                np.testing.assert_array_equal(
                    args_fast[name], args_slow[name], err_msg=f"{name}, call {call}"
                )
            for x in (args_fast, args_slow):  # the same arrays changed in place
                x["a"] += 0.5
                x["col"] *= 0.5
    sources = "\n".join(code.source for _, code in _chosen(fast))
    assert ", out=t" in sources  # into an operand's array
    assert "W[0][...] = v_0" in sources  # a plain store (the four outputs are one kernel's)
    assert "put(" in sources  # and put where a cast is needed (float32 output)


def test_a_2d_output_written_level_by_level() -> None:
    """A 2-D field written by a FORWARD loop is seen as 3-D with K stride 0 over its levels:
    each level's window is computed into (its one level has no shared points)."""

    def colsum(a: F64, col: Field[IJ, np.float64]):
        with computation(FORWARD), interval(...):
            col = col + a

    fast, slow = _fast_and_slow(colsum)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 3, 5))
    col_fast = rng.standard_normal((4, 3))
    col_slow = col_fast.copy()
    for _ in range(3):
        fast(a, col_fast, origin=(0, 0, 0), domain=(4, 3, 5))
        slow(a, col_slow, origin=(0, 0, 0), domain=(4, 3, 5))
        np.testing.assert_array_equal(col_fast, col_slow)


def test_an_output_window_overlapping_a_read() -> None:
    """One array passed as the input and the output: NumPy computes a ufunc whose output
    overlaps an input as if apart, so ``add(.., out=W)`` gives what ``put`` gives."""

    def shifted(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            out = a[1, 0, 0] * 0.5 + a

    fast, slow = _fast_and_slow(shifted)
    x = np.random.default_rng(5).standard_normal((5, 3, 3))
    y = x.copy()
    for _ in range(3):
        fast(x, x, origin=(0, 0, 0), domain=(4, 3, 3))
        slow(y, y, origin=(0, 0, 0), domain=(4, 3, 3))
        np.testing.assert_array_equal(x, y)
    assert any(", out=W[0])" in code.source for _, code in _chosen(fast))


def test_choose_leaves_casts_and_shared_windows_to_put() -> None:
    from stencilkit.core.types import ScalarType
    from stencilkit.ir import nodes as ir

    f64 = ScalarType("float64")
    one = ir.Literal(1.0, f64)
    x = ir.BinOp("+", one, one, f64)  # scalars alone: a NumPy scalar, not an array
    y = ir.UnaryOp("-", one, f64)
    z = ir.BinOp("*", x, y, f64)
    info = inplace.infos([one, x, y, z], [], [], ())
    assert info[id(z)] == ((), np.dtype("float64"))
    window = np.zeros((2, 2))
    counts = {id(one): 3, id(x): 1, id(y): 1, id(z): 1}
    assert inplace.choose([one, x, y, z], counts, [z], info, [window]) == ((), ((3, 0),), ())
    # a float32 window: the float64 value is cast by put, neither computed into nor stored
    assert inplace.choose([one, x, y, z], counts, [z], info, [window.astype("float32")]) == (
        (),
        (),
        (),
    )
    # a window whose points share memory (K stride 0): put's last-level-wins store
    shared = np.lib.stride_tricks.as_strided(np.zeros(2), shape=(2, 3), strides=(8, 0))
    assert inplace.choose([one, x, y, z], counts, [z], info, [shared]) == ((), (), ())
