"""``experimental.as_offset``: Cartesian shifts by an integer field. Every read is checked: on the
host before a plan's first call (and before every call on embedded, or with
STENCILKIT_OFFSET_CHECKS=every), by guards in the compiled kernels on later calls."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32
from stencilkit.experimental import as_offset

X = gtx.Dimension("X")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
Xoff = gtx.FieldOffset("Xoff", source=X, target=(X,))
Zoff = gtx.FieldOffset("Zoff", source=Z, target=(Z,))
FX = Field[Dims[X], float64]
IX = Field[Dims[X], int32]
FXZ = Field[Dims[X, Z], float64]
IXZ = Field[Dims[X, Z], int32]
NX, NZ = 9, 6


@gtx.field_operator
def gather_x(g: FX, idx: IX) -> FX:
    return g(as_offset(Xoff, idx))


@gtx.field_operator
def vertical(g: FXZ, k: IXZ) -> FXZ:
    return g(as_offset(Zoff, k)) + 2.0 * g


@gtx.field_operator
def chained(g: FXZ, i: IXZ, k: IXZ) -> FXZ:
    return g(as_offset(Xoff, i))(as_offset(Zoff, k))(Z + 1)


def test_gt4py_example(case) -> None:
    @gtx.program(backend=case.backend)
    def run(g: FX, idx: IX, out: FX):
        gather_x(g, idx, out=out)

    out = case.field([X], np.zeros(4))
    run(
        case.field([X], np.array([1.0, 2, 4, 8])),
        case.field([X], np.array([1, 1, -1, 0], dtype=np.int32)),
        out,
        offset_provider={"Xoff": X},
    )
    np.testing.assert_array_equal(out.asnumpy(), [2.0, 4, 2, 8])


def test_vertical_offsets_from_a_field(case, rng) -> None:
    g = rng.standard_normal((NX, NZ))
    kk = np.arange(NZ)[None, :]
    k = (rng.integers(0, NZ, (NX, NZ)) - kk).astype(np.int32)  # every read lands in [0, NZ)
    od = rng.standard_normal((NX, NZ))

    @gtx.program(backend=case.backend)
    def run(g: FXZ, k: IXZ, out: FXZ):
        vertical(g, k, out=out, domain={X: (1, NX), Z: (0, NZ)})

    out = case.field([X, Z], od)
    run(case.field([X, Z], g), case.field([X, Z], k), out, offset_provider={})
    expected = od.copy()
    ii = np.arange(NX)[:, None]
    expected[1:] = (g[ii, kk + k] + 2.0 * g)[1:]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-14)


def test_chained_dynamic_and_constant_shifts(case, rng) -> None:
    g = rng.standard_normal((NX, NZ))
    ii, kk = np.arange(NX)[:, None], np.arange(NZ)[None, :]
    i = (rng.integers(0, NX, (NX, NZ)) - ii).astype(np.int32)
    k = (rng.integers(0, NZ - 1, (NX, NZ)) - kk).astype(np.int32)  # plus one level: still inside
    od = rng.standard_normal((NX, NZ))

    @gtx.program(backend=case.backend)
    def run(g: FXZ, i: IXZ, k: IXZ, out: FXZ):
        chained(g, i, k, out=out)

    out = case.field([X, Z], od)
    # g(A)(B)(Z + 1)[p] = g[p with Z += 1, then Z += k at that point, then X += i at that point]
    zk = np.empty((NX, NZ), dtype=int)
    xi = np.empty((NX, NZ), dtype=int)
    for x in range(NX):
        for z in range(NZ):
            zz = z + 1
            zk[x, z] = zz + k[x, zz] if zz < NZ else -1
            xi[x, z] = x + i[x, zk[x, z]] if 0 <= zk[x, z] < NZ else -1
    # the last level would read k at Z = NZ: out of the field, so restrict the domain instead
    out2 = case.field([X, Z], od)

    @gtx.program(backend=case.backend)
    def run2(g: FXZ, i: IXZ, k: IXZ, out: FXZ):
        chained(g, i, k, out=out, domain={X: (0, NX), Z: (0, NZ - 1)})

    run2(
        case.field([X, Z], g),
        case.field([X, Z], i),
        case.field([X, Z], k),
        out2,
        offset_provider={},
    )
    expected = od.copy()
    for x in range(NX):
        for z in range(NZ - 1):
            expected[x, z] = g[xi[x, z], zk[x, z]]
    np.testing.assert_allclose(out2.asnumpy(), expected, rtol=1e-14)
    with pytest.raises(gtx.StencilValueError):
        run(
            case.field([X, Z], g),
            case.field([X, Z], i),
            case.field([X, Z], k),
            out,
            offset_provider={},
        )
    np.testing.assert_array_equal(out.asnumpy(), od)


def _gather_program(backend):
    @gtx.program(backend=backend)
    def run(g: FX, idx: IX, out: FX):
        gather_x(g, idx, out=out)

    return run


def test_out_of_range_offsets_on_a_first_call_are_an_error_before_writing(case, rng) -> None:
    g, od = rng.standard_normal(NX), rng.standard_normal(NX)
    run = _gather_program(case.backend)
    for bad_value, where in ((NX, 0), (-1, 0), (1, NX - 1)):
        bad = np.zeros(NX, dtype=np.int32)
        bad[where] = bad_value
        out = case.field([X], od)
        with pytest.raises(
            gtx.StencilValueError, match=r"as_offset reads? (of )?field 'g' along X"
        ):
            run(case.field([X], g), case.field([X], bad), out, offset_provider={})
        np.testing.assert_array_equal(out.asnumpy(), od)
        run = _gather_program(case.backend)  # a new program: its next call is a first call again


def test_out_of_range_offsets_on_later_calls(case, rng) -> None:
    """After a plan's first call, compiled kernels guard each as_offset read (a read outside
    the field reads inside it instead) and report it: the cpu backend at the call, the gpu
    backend at the program's next call (no synchronisation per call). Embedded checks before
    every call."""
    g, od = rng.standard_normal(NX), rng.standard_normal(NX)
    run = _gather_program(case.backend)
    good = rng.integers(0, NX, NX).astype(np.int32) - np.arange(NX, dtype=np.int32)
    fg = case.field([X], g)
    for bad_value, where in ((NX, 0), (-1, 0), (NX, NX - 1), (-3, 5)):  # (index read, at)
        out = case.field([X], od)
        run(fg, case.field([X], good), out, offset_provider={})  # the same signature, good data
        np.testing.assert_array_equal(out.asnumpy(), g[np.arange(NX) + good])
        bad = good.copy()
        bad[where] = bad_value - where
        out = case.field([X], od)
        if case.backend is None:
            with pytest.raises(
                gtx.StencilValueError, match=r"as_offset reads? (of )?field 'g' along X"
            ):
                run(fg, case.field([X], bad), out, offset_provider={})
            np.testing.assert_array_equal(out.asnumpy(), od)
            continue
        message = (
            rf"in (this|an earlier) call, an as_offset read of field 'g' along X was at index"
            rf" {bad_value}, outside the field's range \[0, {NX}\)"
        )
        if case.name == "cpu":
            with pytest.raises(gtx.StencilValueError, match=message):
                run(fg, case.field([X], bad), out, offset_provider={})
        else:
            run(fg, case.field([X], bad), out, offset_provider={})
            with pytest.raises(gtx.StencilValueError, match=message):
                run(fg, case.field([X], good), case.field([X], od), offset_provider={})
        got = out.asnumpy()
        ok = np.arange(NX) != where  # every other point is right; the bad one read inside g
        np.testing.assert_array_equal(got[ok], g[(np.arange(NX) + bad)[ok]])
        assert got[where] == g[0]
    out = case.field([X], od)  # the error word was cleared: good calls run on
    run(fg, case.field([X], good), out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), g[np.arange(NX) + good])


def test_every_call_checked_before_running_when_asked(case, rng, monkeypatch) -> None:
    """STENCILKIT_OFFSET_CHECKS=every: the host check before every call, nothing written."""
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv("STENCILKIT_OFFSET_CHECKS", "every")
    reset_config()
    try:
        g, od = rng.standard_normal(NX), rng.standard_normal(NX)
        run = _gather_program(case.backend)
        good = np.zeros(NX, dtype=np.int32)
        out = case.field([X], od)
        run(case.field([X], g), case.field([X], good), out, offset_provider={})
        np.testing.assert_array_equal(out.asnumpy(), g)
        bad = good.copy()
        bad[4] = NX
        out = case.field([X], od)
        with pytest.raises(
            gtx.StencilValueError, match=r"as_offset reads? (of )?field 'g' along X"
        ):
            run(case.field([X], g), case.field([X], bad), out, offset_provider={})
        np.testing.assert_array_equal(out.asnumpy(), od)
    finally:
        monkeypatch.delenv("STENCILKIT_OFFSET_CHECKS")
        reset_config()


def test_vertical_offsets_of_later_calls_are_guarded(case, rng) -> None:
    """An ICON-shaped read (K + an offset field, 2-D) out of the levels on a later call: never a
    read outside the field, and reported."""
    g = rng.standard_normal((NX, NZ))
    kk = np.arange(NZ)[None, :]
    k = (rng.integers(0, NZ, (NX, NZ)) - kk).astype(np.int32)
    od = rng.standard_normal((NX, NZ))

    @gtx.program(backend=case.backend)
    def run(g: FXZ, k: IXZ, out: FXZ):
        vertical(g, k, out=out, domain={X: (1, NX), Z: (0, NZ)})

    fg = case.field([X, Z], g)
    run(fg, case.field([X, Z], k), case.field([X, Z], od), offset_provider={})
    bad = k.copy()
    bad[3, 2] = NZ + 5
    out = case.field([X, Z], od)
    with pytest.raises(gtx.StencilValueError, match="along Z"):
        run(fg, case.field([X, Z], bad), out, offset_provider={})
        run(
            fg, case.field([X, Z], k), case.field([X, Z], od), offset_provider={}
        )  # gpu: reported here


def test_decoration_errors() -> None:
    E = gtx.Dimension("E")
    with pytest.raises(gtx.StencilTypeError, match="only supported for Cartesian offsets"):

        @gtx.field_operator
        def not_cartesian(g: FX, idx: IX) -> FX:
            return g(as_offset(gtx.FieldOffset("X2E", source=E, target=(X,)), idx))

    with pytest.raises(gtx.StencilTypeError, match="must be an integer field"):

        @gtx.field_operator
        def float_offsets(g: FX, idx: FX) -> FX:
            return g(as_offset(Xoff, idx))

    with pytest.raises(gtx.StencilTypeError, match="must be a field over Z"):

        @gtx.field_operator
        def wrong_dims(g: FXZ, idx: IX) -> FXZ:
            return g(as_offset(Zoff, idx))


@gtx.field_operator
def offsets_of(idx: IX) -> IX:
    return idx + int32(0)


def test_offsets_written_by_the_same_call(case, rng) -> None:
    """Embedded checks each kernel's reads before its writes; compiled code, which runs all
    kernels in one launch, checks a first call by running its kernels on copies of the fields
    it writes (the offsets are computed by the call itself): a bad offset raises before the read
    field's consumer writes (compiled: before anything is written)."""
    g = rng.standard_normal(NX)
    idx = rng.integers(0, NX, NX).astype(np.int32) - np.arange(NX, dtype=np.int32)
    od = rng.standard_normal(NX)

    @gtx.program(backend=case.backend)
    def run(g: FX, idx: IX, tmp: IX, out: FX):
        offsets_of(idx, out=tmp)
        gather_x(g, tmp, out=out)

    bad = idx.copy()
    bad[3] = NX
    out, tmp = case.field([X], od), case.field([X], np.zeros(NX, dtype=np.int32))
    with pytest.raises(gtx.StencilValueError, match=r"as_offset read.* field 'g'"):
        run(case.field([X], g), case.field([X], bad), tmp, out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), od)
    if case.backend is not None:
        np.testing.assert_array_equal(tmp.asnumpy(), 0)
    run(case.field([X], g), case.field([X], idx), tmp, out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), g[np.arange(NX) + idx])
    np.testing.assert_array_equal(tmp.asnumpy(), idx)
