"""Horizontal regions, externals, __INLINED, compile_assert and gtscript.function (nested,
keyword arguments, tuple returns, offsets of field arguments) on every backend."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptDefinitionError
from stencilkit.cartesian.gtscript import (
    __INLINED,
    PARALLEL,
    Field,
    I,
    J,
    compile_assert,
    computation,
    horizontal,
    interval,
    region,
)

F64 = Field[np.float64]


@gtscript.function
def avg_x(f):
    return 0.5 * (f[1, 0, 0] + f[-1, 0, 0])


@gtscript.function
def pair(a, b, scale=2.0):
    s = avg_x(a) + b
    if a > 0.0:
        d = a - b
    else:
        d = b - a
    return s * scale, d


def test_regions_relative_to_the_compute_domain(backend, arrays) -> None:
    @gtscript.stencil(backend=backend, externals={"i_start": I[0], "j_end": J[-1]})
    def edges(a: F64, out: F64):
        from __externals__ import i_start, j_end

        with computation(PARALLEL), interval(...):
            out = a
            with horizontal(region[i_start, :], region[:, j_end - 1 : j_end + 1]):
                out = out + 10.0
            with horizontal(region[I[-1] + 5 :, :]):  # wholly outside: nothing
                out = -1.0

    a, out = arrays.random(8, 7, 2), arrays.random(8, 7, 2)
    before = arrays.host(out)
    edges(a, out, origin=(1, 1, 0), domain=(5, 4, 2))
    A = arrays.host(a)
    ref = before.copy()
    ref[1:6, 1:5] = A[1:6, 1:5]
    ref[1, 1:5] += 10.0  # i_start: the first compute column
    ref[1:6, 3:5] += 10.0  # j_end - 1 .. j_end (inclusive)
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_region_on_a_temporary_in_the_halo(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def halo(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            t = a
            with horizontal(region[: I[0], :]):  # the halo column before the domain
                t = 100.0
        with computation(PARALLEL), interval(...):
            out = t[-1, 0, 0]

    a, out = arrays.random(6, 3, 2), arrays.random(6, 3, 2)
    before = arrays.host(out)
    halo(a, out, origin=(1, 0, 0), domain=(4, 3, 2))
    ref = before.copy()
    ref[1:5] = arrays.host(a)[0:4]
    ref[1] = 100.0
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_functions_externals_inlined_and_asserts(backend, arrays) -> None:
    @gtscript.stencil(backend=backend, externals={"MODE": 2, "C": {"k": 3.0}, "F": pair})
    def funcs(a: F64, b: F64, s: F64, d: F64):
        from __externals__ import MODE, C, F

        compile_assert(MODE > 1)
        with computation(PARALLEL), interval(...):
            t, d = F(a, b=b, scale=C.k)
            s = t
            if __INLINED(MODE == 2):
                d = d + avg_x(t)  # a temporary computed above, read at offsets
            else:
                d = undefined_name

    a, b, s, d = (arrays.random(7, 3, 2) for _ in range(4))
    before_s, before_d = arrays.host(s), arrays.host(d)
    funcs(a, b, s, d, origin=(2, 0, 0), domain=(3, 3, 2))
    A, B = arrays.host(a), arrays.host(b)
    S = 3.0 * (0.5 * (np.roll(A, -1, 0) + np.roll(A, 1, 0)) + B)
    D = np.where(A > 0, A - B, B - A) + 0.5 * (np.roll(S, -1, 0) + np.roll(S, 1, 0))
    rs, rd = before_s.copy(), before_d.copy()
    rs[2:5], rd[2:5] = S[2:5], D[2:5]
    np.testing.assert_allclose(arrays.host(s), rs, rtol=1e-14)
    np.testing.assert_allclose(arrays.host(d), rd, rtol=1e-14)


def test_offset_read_of_a_written_field_is_refused_with_its_location() -> None:
    def definition(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            b = a
            a = b[1, 0, 0]

    with pytest.raises(GTScriptDefinitionError, match="'b' is written and also read") as err:
        gtscript.stencil(backend="numpy", definition=definition)
    loc = err.value.location
    assert loc.filename == __file__ and loc.line == definition.__code__.co_firstlineno + 3
    assert loc.column == 17 and "^" in str(err.value) and "hint:" in str(err.value)


def test_compile_assert_fails_at_decoration_with_the_line() -> None:
    def definition(a: F64):
        from __externals__ import N

        compile_assert(N < 3)
        with computation(PARALLEL), interval(...):
            a = 1.0

    with pytest.raises(GTScriptDefinitionError, match="compile_assert failed: N < 3") as err:
        gtscript.stencil(backend="numpy", definition=definition, externals={"N": 5})
    assert err.value.location.line == definition.__code__.co_firstlineno + 3


def test_externals_are_part_of_the_build() -> None:
    def definition(a: F64):
        from __externals__ import X

        with computation(PARALLEL), interval(...):
            a = X

    s1 = gtscript.stencil(backend="numpy", definition=definition, externals={"X": 1.0})
    s2 = gtscript.stencil(backend="numpy", definition=definition, externals={"X": 2.0})
    s1b = gtscript.stencil(backend="numpy", definition=definition, externals={"X": 1.0})
    assert s1 is s1b and s1 is not s2
    a = np.zeros((2, 2, 2))
    s2(a)
    assert (a == 2.0).all()


def _error_of(definition, **kwargs):
    with pytest.raises(Exception) as err:
        gtscript.stencil(backend="numpy", definition=definition, **kwargs)
    return err.value


def test_definition_errors_name_the_construct_and_line() -> None:
    from stencilkit.cartesian.definitions import (
        GTScriptSymbolError,
        GTScriptSyntaxError,
    )

    def self_offset(a: F64):
        with computation(PARALLEL), interval(...):
            t = a
            t = t[1, 0, 0]

    def bool_arith(a: F64, m: Field[bool]):
        with computation(PARALLEL), interval(...):
            a = m + 1.0

    def missing_external(a: F64):
        from __externals__ import NOPE

        with computation(PARALLEL), interval(...):
            a = NOPE

    def ellipsis_read(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            a = b[...]

    def float_offset(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            a = b[0.5, 0, 0]

    def parallel_k(a: F64):
        with computation(PARALLEL), interval(1, None):
            a = a[0, 0, -1] + 1.0

    def early_return_function(a: F64):
        with computation(PARALLEL), interval(...):
            a = early(a)

    def undefined(a: F64):
        with computation(PARALLEL), interval(...):
            a = nothing_here

    def bad_interval(a: F64):
        with computation(PARALLEL), interval(3, 1):
            a = 1.0

    def absolute_k(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            a = b.at(K=1, ddim=[0])

    cases = [
        (
            self_offset,
            GTScriptDefinitionError,
            "'t' is assigned and read at a horizontal offset",
            3,
        ),
        (bool_arith, GTScriptSyntaxError, "arithmetic '\\+' on bool", 2),
        (missing_external, GTScriptSymbolError, "external 'NOPE' is imported but not given", 1),
        (ellipsis_read, GTScriptSyntaxError, "f\\[...\\] is not allowed", 2),
        (float_offset, GTScriptSyntaxError, "offset 0.5 is not an integer", 2),
        (parallel_k, GTScriptDefinitionError, "read at a K offset \\(-1\\) in a PARALLEL", 2),
        (early_return_function, GTScriptSyntaxError, "a return inside a branch", None),
        (undefined, GTScriptSymbolError, "'nothing_here' is not defined", 2),
        (bad_interval, GTScriptDefinitionError, "is empty", 1),
        (absolute_k, GTScriptSyntaxError, "'b' has no data dimensions: drop ddim=", 2),
    ]
    import re

    for fn, cls, message, line in cases:
        err = _error_of(fn)
        assert isinstance(err, cls), (fn.__name__, err)
        assert re.search(message, str(err)), (fn.__name__, str(err))
        if line is not None:
            assert err.location.line == fn.__code__.co_firstlineno + line, (
                fn.__name__,
                err.location,
            )
            assert err.location.filename == __file__
            assert "^" in str(err)


@gtscript.function
def early(x):
    if x > 0.0:
        return x
    return -x


def test_lazy_stencil_and_literal_precision() -> None:
    def half(a: Field[np.float32], b: Field[np.float32], n: int):
        with computation(PARALLEL), interval(...):
            b = a * 0.1 + n / 3

    lazy = gtscript.lazy_stencil(backend="numpy", definition=half)
    a = np.random.default_rng(0).standard_normal((3, 2, 2)).astype(np.float32)
    b64, b32 = np.zeros_like(a), np.zeros_like(a)
    lazy(a, b64, 1)
    assert lazy.field_info["b"].dtype == np.float32
    # 64-bit literals: float32 a is computed in float64, cast to float32 at the assignment;
    # n / 3 of integers divides in float32
    ref64 = (a.astype(np.float64) * 0.1 + np.float64(np.float32(1) / np.float32(3))).astype(
        np.float32
    )
    np.testing.assert_array_equal(b64, ref64)
    s32 = gtscript.stencil(
        backend="numpy", definition=half, literal_float_precision=32, literal_int_precision=32
    )
    s32(a, b32, 1)
    np.testing.assert_array_equal(b32, a * np.float32(0.1) + np.float32(1) / np.float32(3))
    assert s32.options["literal_float_precision"] == 32


def test_k_as_a_value_and_absolute_levels(backend, arrays) -> None:
    from stencilkit.cartesian.gtscript import K

    @gtscript.stencil(backend=backend)
    def levels(a: F64, out: F64, top: F64, n: int):
        with computation(PARALLEL), interval(...):
            out = a.at(K=n) + K * 10.0
        with computation(PARALLEL), interval(1, None):
            top = a[1, 0, 0].at(K=K - 1) if K > 1 else 0.0

    a, out, top = arrays.random(4, 2, 5), arrays.random(4, 2, 5), arrays.random(4, 2, 5)
    O0, T0, A = arrays.host(out), arrays.host(top), arrays.host(a)
    levels(a, out, top, 2, domain=(3, 2, 5))
    k = np.arange(5)
    ro, rt = O0.copy(), T0.copy()
    ro[:3] = A[:3, :, 2:3] + 10.0 * k
    rt[:3, :, 1:] = A[1:4, :, 0:4]
    rt[:3, :, 1] = 0.0
    np.testing.assert_array_equal(arrays.host(out), ro)
    np.testing.assert_array_equal(arrays.host(top), rt)


def test_a_temporary_written_under_a_mask_starts_at_zero_in_every_call(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def masked(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            if a > 0.0:
                t = a
        with computation(PARALLEL), interval(...):
            out = t[1, 0, 0]  # t materialised: read in a later block

    for _ in range(2):  # the second call must not see the first call's t
        a, out = arrays.random(5, 3, 2), arrays.random(5, 3, 2)
        O0, A = arrays.host(out), arrays.host(a)
        masked(a if _ == 0 else arrays.put(-np.abs(A)), out, domain=(4, 3, 2))
        src = A if _ == 0 else -np.abs(A)
        ref = O0.copy()
        ref[:4] = np.where(src[1:5] > 0, src[1:5], 0.0)
        np.testing.assert_array_equal(arrays.host(out), ref)
