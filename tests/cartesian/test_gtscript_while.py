"""``while`` loops (CARTESIAN.md 2.7): in stencil bodies and in ``gtscript.function``s, with
field and scalar conditions, in PARALLEL and FORWARD/BACKWARD computations; each point loops
until its condition is false (an in-kernel loop on the compiled backends). Every backend against
a NumPy reference on random data; NDSL's ``column_max``/``column_min`` (``.at(K=...)``,
``ddim=[...]``) as NDSL writes them."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptDefinitionError, GTScriptSyntaxError
from stencilkit.cartesian.gtscript import (
    BACKWARD,
    FORWARD,
    IJ,
    IJK,
    PARALLEL,
    Field,
    I,
    computation,
    horizontal,
    interval,
    region,
)
from stencilkit.core.errors import StencilValueError

F64 = Field[np.float64]
F64IJ = Field[IJ, np.float64]
DDIM = Field[IJK, (np.float64, (2,))]


# NDSL's ndsl/stencils/column_operations.py, as written there
@gtscript.function
def column_max(field, start_index, end_index):
    max_index = start_index
    level = start_index
    while level <= end_index:
        new = field.at(K=level)
        old = field.at(K=max_index)
        if new > old:
            max_index = level
        level += 1

    return field.at(K=max_index), max_index


@gtscript.function
def column_min_ddim(field, ddim, start_index, end_index):
    min_index = start_index
    level = start_index
    while level <= end_index:
        new = field.at(K=level, ddim=[ddim])
        old = field.at(K=min_index, ddim=[ddim])
        if new < old:
            min_index = level
        level += 1

    return field.at(K=min_index, ddim=[ddim]), min_index


def test_ndsl_column_max(backend, arrays) -> None:
    def column_max_stencil(data: F64, max_value: F64IJ, max_index: F64IJ):
        from __externals__ import k_end

        with computation(FORWARD), interval(0, 1):
            max_value, max_index = column_max(data, 0, k_end)

    s = gtscript.stencil(backend=backend, definition=column_max_stencil, externals={"k_end": 9})
    data, mv, mi = arrays.random(4, 3, 10), arrays.random(4, 3), arrays.random(4, 3)
    s(data, mv, mi)
    d = arrays.host(data)
    np.testing.assert_array_equal(arrays.host(mv), d.max(axis=2))
    np.testing.assert_array_equal(arrays.host(mi), d.argmax(axis=2))


def test_ndsl_column_min_of_a_data_dimension(backend, arrays) -> None:
    def column_min_ddim_stencil(data: DDIM, min_value: F64IJ, min_index: F64IJ):
        from __externals__ import k_end

        with computation(FORWARD), interval(0, 1):
            min_value, min_index = column_min_ddim(data, 1, 5, k_end)

    s = gtscript.stencil(
        backend=backend, definition=column_min_ddim_stencil, externals={"k_end": 9}
    )
    data, mv, mi = arrays.random(3, 4, 10, 2), arrays.random(3, 4), arrays.random(3, 4)
    s(data, mv, mi)
    d = arrays.host(data)[:, :, 5:, 1]
    np.testing.assert_array_equal(arrays.host(mv), d.min(axis=2))
    np.testing.assert_array_equal(arrays.host(mi), 5 + d.argmin(axis=2))


def test_parallel_while_with_a_field_condition(backend, arrays) -> None:
    """Each point doubles until it passes ``limit``: a different number of steps per point."""

    @gtscript.stencil(backend=backend)
    def grow(a: F64, out: F64, steps: F64, limit: float):
        with computation(PARALLEL), interval(1, None):
            x = abs(a) + 0.01
            n = 0.0
            while x < limit:
                x = x * 2.0
                n += 1.0
            out = x
            steps = n

    a, out, steps = arrays.random(5, 4, 6), arrays.random(5, 4, 6), arrays.random(5, 4, 6)
    before_out, before_steps = arrays.host(out), arrays.host(steps)
    grow(a, out, steps, 3.0)
    x = np.abs(arrays.host(a)) + 0.01
    n = np.zeros_like(x)
    while (x < 3.0).any():
        n = np.where(x < 3.0, n + 1.0, n)
        x = np.where(x < 3.0, x * 2.0, x)
    ref_out, ref_steps = before_out.copy(), before_steps.copy()
    ref_out[:, :, 1:], ref_steps[:, :, 1:] = x[:, :, 1:], n[:, :, 1:]
    np.testing.assert_array_equal(arrays.host(out), ref_out)
    np.testing.assert_array_equal(arrays.host(steps), ref_steps)
    assert arrays.host(steps)[:, :, 1:].max() > arrays.host(steps)[:, :, 1:].min()


def test_scalar_condition_and_loop_local_temporary(backend, arrays) -> None:
    """A counter against a scalar parameter; ``t`` is first assigned inside the loop."""

    @gtscript.stencil(backend=backend)
    def power_sum(a: F64, out: F64, count: int):
        with computation(PARALLEL), interval(...):
            acc = 0.0
            k = 0
            while k < count:
                t = a * acc + 1.0
                acc = t
                k = k + 1
            out = acc

    a, out = arrays.random(4, 4, 3), arrays.random(4, 4, 3)
    power_sum(a, out, 4)
    ah = arrays.host(a)
    acc = np.zeros_like(ah)
    for _ in range(4):
        acc = ah * acc + 1.0
    np.testing.assert_allclose(arrays.host(out), acc, rtol=1e-15)


def test_forward_while_reads_the_level_below(backend, arrays) -> None:
    """In a FORWARD loop the condition reads the level just written: a monotone column."""

    @gtscript.stencil(backend=backend)
    def monotone(a: F64, b: F64):
        with computation(FORWARD):
            with interval(0, 1):
                b = a
            with interval(1, None):
                x = a
                while x < b[0, 0, -1]:
                    x = x + 0.5
                b = x

    a, b = arrays.random(3, 4, 7), arrays.random(3, 4, 7)
    monotone(a, b)
    ah = arrays.host(a)
    ref = np.empty_like(ah)
    ref[:, :, 0] = ah[:, :, 0]
    for k in range(1, 7):
        x = ah[:, :, k].copy()
        while (x < ref[:, :, k - 1]).any():
            x = np.where(x < ref[:, :, k - 1], x + 0.5, x)
        ref[:, :, k] = x
    np.testing.assert_array_equal(arrays.host(b), ref)


def test_forward_loop_variable_read_at_the_level_below(backend, arrays) -> None:
    """A field the loop writes, read in the loop one level down: memory, final there."""

    @gtscript.stencil(backend=backend)
    def climb(a: F64, b: F64):
        with computation(FORWARD):
            with interval(0, 1):
                b = a
            with interval(1, None):
                b = a
                while b < b[0, 0, -1]:
                    b = b + 0.25

    a, b = arrays.random(3, 4, 6), arrays.random(3, 4, 6)
    climb(a, b)
    ah = arrays.host(a)
    ref = ah.copy()
    for k in range(1, 6):
        x = ah[:, :, k].copy()
        while (x < ref[:, :, k - 1]).any():
            x = np.where(x < ref[:, :, k - 1], x + 0.25, x)
        ref[:, :, k] = x
    np.testing.assert_array_equal(arrays.host(b), ref)


def test_nested_while_in_a_field_if_backward(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def nested(a: F64, out: F64):
        with computation(BACKWARD), interval(...):
            total = 0.0
            if a > 0.0:
                i = 0
                while i < 3:
                    j = 0
                    while j < i:
                        total += a
                        j += 1
                    i += 1
            out = total

    a, out = arrays.random(4, 3, 5), arrays.random(4, 3, 5)
    nested(a, out)
    ah = arrays.host(a)
    np.testing.assert_allclose(arrays.host(out), np.where(ah > 0, 3.0 * ah, 0.0), rtol=1e-15)


def test_region_inside_a_loop_and_a_2d_result(backend, arrays) -> None:
    """A horizontal region in the body, a condition of a field and a scalar, and a loop in a
    one-level PARALLEL block giving a 2-D field."""

    @gtscript.stencil(backend=backend)
    def steps(a: F64, out: F64, top: F64IJ, n: int):
        with computation(PARALLEL), interval(...):
            x = a
            k = 0
            while x < 4.0 and k < n:
                x = x + 1.0
                with horizontal(region[I[0], :]):
                    x = x + 1.0
                k += 1
            out = x
        with computation(PARALLEL), interval(0, 1):
            y = a
            while y > -1.0:
                y = y - 0.5
            top = y

    a, out, top = arrays.random(4, 3, 5), arrays.random(4, 3, 5), arrays.random(4, 3)
    steps(a, out, top, 3)
    ah = arrays.host(a)
    x, k = ah.copy(), np.zeros(ah.shape, dtype=int)
    while ((x < 4.0) & (k < 3)).any():
        m = (x < 4.0) & (k < 3)
        new = x + 1.0
        new[0] = new[0] + 1.0  # the region: the first point along I
        x, k = np.where(m, new, x), np.where(m, k + 1, k)
    y = ah[:, :, 0].copy()
    while (y > -1.0).any():
        y = np.where(y > -1.0, y - 0.5, y)
    np.testing.assert_array_equal(arrays.host(out), x)
    np.testing.assert_array_equal(arrays.host(top), y)


def test_while_errors_name_the_line() -> None:
    def offset_in_loop(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            while b < 1.0:
                b = b[1, 0, 0] + a

    def always(a: F64):
        with computation(PARALLEL), interval(...):
            while True:
                a = a + 1.0

    def with_else(a: F64):
        with computation(PARALLEL), interval(...):
            while a < 1.0:
                a = a + 1.0
            else:
                a = 0.0

    def float_cond(a: F64):
        with computation(PARALLEL), interval(...):
            while a:
                a = a - 1.0

    cases = [
        (offset_in_loop, GTScriptDefinitionError, "written in a while loop and read there", 3),
        (always, GTScriptDefinitionError, "always true", 2),
        (with_else, GTScriptSyntaxError, "while ... else", 2),
        (float_cond, GTScriptSyntaxError, "condition must be bool", 2),
    ]
    for fn, cls, message, line in cases:
        with pytest.raises(cls, match=message) as info:
            gtscript.stencil(backend="numpy", definition=fn)
        assert info.value.location.line == fn.__code__.co_firstlineno + line, fn.__name__


@pytest.mark.parametrize("name", ["numpy", "gt:cpu_ifirst"])
def test_a_level_out_of_range_in_a_loop_is_an_error_only_where_the_loop_runs(name) -> None:
    """The embedded backend evaluates all points' steps together: a point that stopped looping
    reads nothing (``level`` past the top there is fine); a point still looping reading past the
    top is an error (on the cpu backend reported by the kernel's guard after it ran)."""

    @gtscript.stencil(backend=name)
    def walk(a: F64, out: F64IJ, top: int):
        with computation(FORWARD), interval(0, 1):
            level = 0
            s = 0.0
            while level < top:
                s += a.at(K=level)
                level += 1
            out = s

    rng = np.random.default_rng(1)
    a, out = rng.random((3, 3, 4)), rng.random((3, 3))
    walk(a, out, 4)
    np.testing.assert_allclose(out, a.sum(axis=2), rtol=1e-15)
    with pytest.raises(StencilValueError, match=r"outside|defined only"):
        walk(a, out, 5)


def test_generated_cuda_of_while_loops_compiles(generated_cuda) -> None:
    @gtscript.stencil(backend="gt:gpu")
    def loops(data: DDIM, a: F64, mv: F64IJ, mi: F64IJ, out: F64):
        with computation(FORWARD), interval(0, 1):
            mv, mi = column_min_ddim(data, 0, 0, 4)
        with computation(PARALLEL), interval(...):
            x = a
            while x < 2.0:
                x = x * 2.0 + 0.1
            out = x

    rng = np.random.default_rng(0)
    arrs = {
        "data": rng.random((4, 3, 5, 2)),
        "a": rng.random((4, 3, 5)),
        "mv": np.zeros((4, 3)),
        "mi": np.zeros((4, 3)),
        "out": np.zeros((4, 3, 5)),
    }
    origin = {"data": (0, 0, 0, 0), "a": (0, 0, 0), "mv": (0, 0), "mi": (0, 0), "out": (0, 0, 0)}
    assert generated_cuda(loops, (4, 3, 5), origin, arrs).count("while (true)") >= 2
