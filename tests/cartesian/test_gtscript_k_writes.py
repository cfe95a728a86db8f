"""Writes at a K offset in FORWARD/BACKWARD computations (``f[0, 0, d] = ...``, CARTESIAN.md
2.6, P3): gt4py writes level ``k + d`` at once, ahead of the loop or behind it, by one level or
several. Every backend against a NumPy loop on random data (the same cases were bitwise equal
to real gt4py 1.2.1's debug and numpy backends), the refusals with their lines, and the
generated CUDA compiled."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptDefinitionError, GTScriptNotSupportedError
from stencilkit.cartesian.gtscript import BACKWARD, FORWARD, PARALLEL, Field, computation, interval

F64 = Field[np.float64]


def test_forward_write_ahead_is_seen_by_the_level_and_the_next(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def fwd(a: F64, f: F64, g: F64):
        with computation(FORWARD), interval(0, -1):
            g = f + a
            f[0, 0, 1] = f + 2.0 * a
            g = g + f[0, 0, 1]

    a, f, g = arrays.random(4, 3, 7), arrays.random(4, 3, 7), arrays.random(4, 3, 7)
    ah, fr, gr = arrays.host(a), arrays.host(f), arrays.host(g)
    fwd(a, f, g)
    for k in range(6):
        gr[..., k] = fr[..., k] + ah[..., k]
        fr[..., k + 1] = fr[..., k] + 2.0 * ah[..., k]
        gr[..., k] = gr[..., k] + fr[..., k + 1]
    np.testing.assert_array_equal(arrays.host(f), fr)
    np.testing.assert_array_equal(arrays.host(g), gr)  # g[..., 6] untouched
    assert fwd.field_info["f"].boundary == ((0, 0), (0, 0), (0, 0))  # as gt4py reports


def test_masked_backward_writes_and_nested_intervals(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def bwd(a: F64, f: F64, h: F64):
        with computation(BACKWARD):
            with interval(-1, None):
                h = a
            with interval(2, -1):
                if a > 0.0:
                    f[0, 0, -1] = a * f + f[0, 0, -2] + h[0, 0, 1]
                h = f[0, 0, -1] * 3.0 - h[0, 0, 1]

    a, f, h = arrays.random(5, 4, 9), arrays.random(5, 4, 9), arrays.random(5, 4, 9)
    ah, fr, hr = arrays.host(a), arrays.host(f), arrays.host(h)
    bwd(a, f, h)
    hr[..., 8] = ah[..., 8]
    for k in range(7, 1, -1):
        m = ah[..., k] > 0.0
        new = ah[..., k] * fr[..., k] + fr[..., k - 2] + hr[..., k + 1]
        fr[..., k - 1] = np.where(m, new, fr[..., k - 1])
        hr[..., k] = fr[..., k - 1] * 3.0 - hr[..., k + 1]
    np.testing.assert_array_equal(arrays.host(f), fr)
    np.testing.assert_array_equal(arrays.host(h), hr)


def test_a_temporary_written_ahead(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def tmp(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            t = a * 2.0
        with computation(FORWARD), interval(0, -1):
            t[0, 0, 1] = t[0, 0, 1] + t * 0.5
            out = t
        with computation(PARALLEL), interval(-1, None):
            out = t

    a, out = arrays.random(3, 4, 6), arrays.random(3, 4, 6)
    t = 2.0 * arrays.host(a)
    tmp(a, out)
    for k in range(5):
        t[..., k + 1] = t[..., k + 1] + t[..., k] * 0.5
    np.testing.assert_array_equal(arrays.host(out), t)


def test_the_default_domain_leaves_out_the_levels_written_beyond_it(backend, arrays) -> None:
    """As gt4py's K boundary, writes count: f[0, 0, 1] over interval(...) gives f a K halo of
    one above, so the default domain stops a level below the top (the top level is written from
    the level below); a domain reaching the top is refused before anything runs."""

    @gtscript.stencil(backend=backend)
    def full(a: F64, f: F64):
        with computation(FORWARD), interval(...):
            f[0, 0, 1] = f + a

    @gtscript.stencil(backend=backend)
    def down(a: F64, f: F64):
        with computation(BACKWARD), interval(...):
            f[0, 0, -1] = f * a

    assert full.field_info["f"].boundary == ((0, 0), (0, 0), (0, 1))
    assert down.field_info["f"].boundary == ((0, 0), (0, 0), (1, 0))
    a, f = arrays.random(3, 2, 6), arrays.random(3, 2, 6)
    before = arrays.host(f)
    with pytest.raises(ValueError, match=r"too small along K: origin 0 \+ domain 6 \+ halo 1"):
        full(a, f, domain=(3, 2, 6))
    np.testing.assert_array_equal(arrays.host(f), before)
    full(a, f)
    ref = before.copy()
    for k in range(5):
        ref[..., k + 1] = ref[..., k] + arrays.host(a)[..., k]
    np.testing.assert_array_equal(arrays.host(f), ref)

    f = arrays.random(3, 2, 6)
    ref = arrays.host(f)
    with pytest.raises(ValueError, match="read 1 point"):
        down(a, f)
    down(a, f, origin=(0, 0, 1))  # levels 1..5 visited from the top, each writes the one below
    for k in range(5, 0, -1):
        ref[..., k - 1] = ref[..., k] * arrays.host(a)[..., k]
    np.testing.assert_array_equal(arrays.host(f), ref)


def test_writes_two_levels_ahead_masked_and_read_around(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def fwd2(a: F64, f: F64, g: F64):
        with computation(FORWARD), interval(1, -2):
            if a > 0.5:
                f[0, 0, 2] = a + f[0, 0, 1] - f[0, 0, -1]
            f = f * 0.5 + f[0, 0, 2]
            g = f[0, 0, 1] + f[0, 0, 3] * a

    a, f, g = arrays.random(4, 3, 11), arrays.random(4, 3, 11), arrays.random(4, 3, 11)
    ah, fr, gr = arrays.host(a), arrays.host(f), arrays.host(g)
    fwd2(a, f, g, domain=(4, 3, 8))  # f[0, 0, 3] is read at the top level: three levels above
    for k in range(1, 6):
        m = ah[..., k] > 0.5
        fr[..., k + 2] = np.where(m, ah[..., k] + fr[..., k + 1] - fr[..., k - 1], fr[..., k + 2])
        fr[..., k] = fr[..., k] * 0.5 + fr[..., k + 2]
        gr[..., k] = fr[..., k + 1] + fr[..., k + 3] * ah[..., k]
    np.testing.assert_array_equal(arrays.host(f), fr)  # levels 0 and 8.. untouched
    np.testing.assert_array_equal(arrays.host(g), gr)


def test_backward_writes_two_levels_ahead(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def bwd(a: F64, f: F64):
        with computation(BACKWARD):
            with interval(-1, None):
                f = a
            with interval(2, -1):
                f[0, 0, -2] = f[0, 0, 1] + a * f[0, 0, -1]
                a = f[0, 0, -2] + f

    a, f = arrays.random(3, 4, 9), arrays.random(3, 4, 9)
    ah, fr = arrays.host(a), arrays.host(f)
    bwd(a, f)
    fr[..., 8] = ah[..., 8]
    for k in range(7, 1, -1):
        fr[..., k - 2] = fr[..., k + 1] + ah[..., k] * fr[..., k - 1]
        ah[..., k] = fr[..., k - 2] + fr[..., k]
    np.testing.assert_array_equal(arrays.host(f), fr)
    np.testing.assert_array_equal(arrays.host(a), ah)


@pytest.mark.parametrize("order", ["FORWARD", "BACKWARD"])
def test_writes_behind_the_loop_are_seen_by_later_levels(order, backend, arrays) -> None:
    if order == "FORWARD":

        @gtscript.stencil(backend=backend)
        def behind(a: F64, f: F64, g: F64):
            with computation(FORWARD), interval(3, None):
                f = f + a
                f[0, 0, -2] = f * 2.0 + f[0, 0, -3] + f[0, 0, -2] + f[0, 0, -1]
                g = f[0, 0, -3] - f[0, 0, -2]

    else:

        @gtscript.stencil(backend=backend)
        def behind(a: F64, f: F64, g: F64):
            with computation(BACKWARD), interval(0, -3):
                if a < 0.7:
                    f[0, 0, 2] = a + f[0, 0, 3] * f[0, 0, 4] + f[0, 0, 1]
                g = f + f[0, 0, 2] + f[0, 0, 3]

    a, f, g = arrays.random(4, 5, 10), arrays.random(4, 5, 10), arrays.random(4, 5, 10)
    ah, fr, gr = arrays.host(a), arrays.host(f), arrays.host(g)
    behind(a, f, g, domain=(4, 5, 9) if order == "BACKWARD" else (4, 5, 10))
    if order == "FORWARD":
        for k in range(3, 10):
            fr[..., k] = fr[..., k] + ah[..., k]
            fr[..., k - 2] = fr[..., k] * 2.0 + fr[..., k - 3] + fr[..., k - 2] + fr[..., k - 1]
            gr[..., k] = fr[..., k - 3] - fr[..., k - 2]
    else:
        for k in range(5, -1, -1):
            new = ah[..., k] + fr[..., k + 3] * fr[..., k + 4] + fr[..., k + 1]
            fr[..., k + 2] = np.where(ah[..., k] < 0.7, new, fr[..., k + 2])
            gr[..., k] = fr[..., k] + fr[..., k + 2] + fr[..., k + 3]
    np.testing.assert_array_equal(arrays.host(f), fr)
    np.testing.assert_array_equal(arrays.host(g), gr)


def _stencil(body: str, tmp_path, order: str = "FORWARD"):  # type: ignore[no-untyped-def]
    path = tmp_path / f"kw_{abs(hash(body))}.py"
    path.write_text(
        "import numpy as np\n"
        "from stencilkit.cartesian.gtscript import *\n"
        "def d(a: Field[np.float64], f: Field[np.float64]):\n"
        f"    with computation({order}), interval(1, -1):\n"
        f"        {body}\n"
    )
    scope: dict[str, object] = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    return scope["d"]


@pytest.mark.parametrize(
    "body, order, error, match",
    [
        ("f[0, 0, 1] = f[1, 0, 0]", "FORWARD", GTScriptNotSupportedError, r"read at the horizontal offset \[1, 0, 0\]"),
        ("f[0, 0, 1] = a if a > 0.0 else f", "BACKWARD", None, None),
        ("f[0, 0, 1] = a; f[0, 0, 2] = a", "FORWARD", GTScriptNotSupportedError, r"'f' is written at two K offsets \(1 and 2\)"),
        ("f[0, 0, 1] = a", "PARALLEL", GTScriptDefinitionError, "only in FORWARD/BACKWARD"),
        ("f[0, 0, 1] = f.at(K=2)", "FORWARD", GTScriptDefinitionError, "read at a variable K offset"),
    ],
)  # fmt: skip
def test_refused_k_writes_name_the_line(body, order, error, match, tmp_path) -> None:
    if error is None:  # accepted (a write behind a BACKWARD loop)
        gtscript.stencil(backend="numpy", definition=_stencil(body, tmp_path, order))
        return
    with pytest.raises(error, match=match) as info:
        gtscript.stencil(backend="numpy", definition=_stencil(body, tmp_path, order))
    assert info.value.location.line == 5


def test_generated_cuda_of_k_writes_compiles(generated_cuda) -> None:
    @gtscript.stencil(backend="gt:gpu")
    def fwd(a: F64, f: F64):
        with computation(FORWARD), interval(0, -1):
            if a > 0.0:
                f[0, 0, 1] = f + 2.0 * a
        with computation(BACKWARD), interval(0, -2):
            f[0, 0, 2] = a + f[0, 0, 3] + f

    rng = np.random.default_rng(0)
    arrs = {"a": rng.standard_normal((4, 3, 6)), "f": rng.standard_normal((4, 3, 6))}
    assert "f__kw" in generated_cuda(fwd, (4, 3, 5), {"a": (0, 0, 0), "f": (0, 0, 0)}, arrs)
