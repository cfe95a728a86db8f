"""Region-restricted read extents: a read inside ``horizontal(region[...])`` needs a halo only
where the region meets the computed points (as in gt4py), so NDSL's calls on the whole array
(origin 0) of corner copies and of fxadv's edge stencils run; reads that really leave the
array are still refused before anything runs, naming the read and its line.

Every backend against a NumPy reference on random data, the points no region writes checked
to keep their values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptCallError, GTScriptSyntaxError
from stencilkit.cartesian.gtscript import (
    PARALLEL,
    Field,
    I,
    J,
    computation,
    horizontal,
    interval,
    region,
)
from stencilkit.core.errors import StencilValueError

F64 = Field[np.float64]
F2 = Field[gtscript.IJ, np.float64]

#: embedded (numpy, debug), cpu (both loop orders), gpu
ALL_BACKENDS = [
    pytest.param("numpy", id="numpy"),
    pytest.param("debug", id="debug"),
    pytest.param("gt:cpu_ifirst", id="cpu_ifirst"),
    pytest.param("gt:cpu_kfirst", id="cpu_kfirst"),
    pytest.param("gt:gpu", id="gpu", marks=pytest.mark.gpu),
]


@pytest.fixture(params=ALL_BACKENDS)
def any_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _put(backend: str, a: np.ndarray) -> Any:
    if backend == "gt:gpu":
        import cupy

        return cupy.asarray(a)
    return a.copy()


def _host(a: Any) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.array(a, copy=True)


def _edges(halo: int, shape: tuple[int, ...]) -> dict[str, Any]:
    """NDSL's ``axis_offsets`` for a call on the whole array whose tile has ``halo`` points
    on each side (the array may be longer by spare points beyond the halo)."""
    return {
        "i_start": I[0] + halo,
        "i_end": I[-1] - halo,
        "j_start": J[0] + halo,
        "j_end": J[-1] - halo,
        "local_is": I[0] + halo,
        "local_ie": I[-1] - halo,
        "local_js": J[0] + halo,
        "local_je": J[-1] - halo,
    }


# ------------------------------------------------------------------ a corner copy (delnflux)
#: (region I, region J, read offset) as in delnflux's copy_corners_y_nord: i_start/i_end and
#: j_start/j_end bounds plus a constant, the read pointing back into the tile
_CORNER_ROWS = [
    (("i_start", -3), ("j_start", -3), (5, 0)),
    (("i_start", -2), ("j_start", -3), (4, 1)),
    (("i_start", -1), ("j_start", -2), (2, 1)),
    (("i_start", -3), ("j_end", 3), (5, 0)),
    (("i_start", -1), ("j_end", 1), (1, 0)),
    (("i_end", 1), ("j_start", -3), (-3, 2)),
    (("i_end", 3), ("j_start", -1), (-3, -2)),
    (("i_end", 2), ("j_end", 2), (-3, 0)),
    (("i_end", 3), ("j_end", 3), (-5, 0)),
]


def _corner_source(path: Any) -> Any:
    lines = [
        "from stencilkit.cartesian.gtscript import PARALLEL, computation, horizontal, interval,"
        " region, Field",
        "import numpy as np",
        "F = Field[np.float64]",
        "def corners(q_in: F, q_out: F):",
        "    from __externals__ import i_end, i_start, j_end, j_start",
        "    with computation(PARALLEL), interval(...):",
    ]
    for (ia, ic), (ja, jc), (di, dj) in _CORNER_ROWS:
        lines.append(f"        with horizontal(region[{ia} + ({ic}), {ja} + ({jc})]):")
        lines.append(f"            q_out = q_in[{di}, {dj}, 0]")
    path.write_text("\n".join(lines) + "\n")
    scope: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    return scope["corners"]


def test_corner_copy_on_the_whole_array(any_backend, tmp_path) -> None:
    """delnflux's corner copies are called on the whole array (origin 0): each region is a
    halo corner point reading up to 5 points into the tile; gt4py needs no halo for them."""
    shape, halo = (11, 10, 3), 3
    stencil = gtscript.stencil(
        backend=any_backend,
        definition=_corner_source(tmp_path / "c.py"),
        externals=_edges(halo, shape),
    )
    assert stencil.field_info["q_in"].boundary == ((0, 0), (0, 0), (0, 0))
    rng = np.random.default_rng(1)
    q, out = rng.standard_normal(shape), rng.standard_normal(shape)
    ref = out.copy()
    at = {
        "i_start": halo,
        "i_end": shape[0] - 1 - halo,
        "j_start": halo,
        "j_end": shape[1] - 1 - halo,
    }
    for (ia, ic), (ja, jc), (di, dj) in _CORNER_ROWS:
        i, j = at[ia] + ic, at[ja] + jc
        ref[i, j] = q[i + di, j + dj]
    q_d, out_d = _put(any_backend, q), _put(any_backend, out)
    stencil(q_d, out_d, origin=(0, 0, 0), domain=shape)
    np.testing.assert_array_equal(_host(out_d), ref)  # a copy: bitwise, untouched points too


# ------------------------------------------------------------ fxadv-like edges, whole array
@gtscript.function
def _contravariant(v1, v2, cosa):
    return v1 - v2 * cosa


@gtscript.function
def _edge_doubled(q):
    from __externals__ import i_start

    r = q
    with horizontal(region[i_start - 1, :]):  # a region inside a function (a ternary)
        r = 2.0 * q[1, 0, 0]
    return r


def test_fxadv_like_edges_on_the_whole_array(any_backend) -> None:
    """fxadv's stencils run on the whole array (origin 0, domain = the array less its one
    spare point): reads at offsets only inside edge regions, a temporary copied before the
    regions and written back in others, a region in a gtscript.function."""

    def edges(uc: F64, vc: F64, cosa: F2, uc_contra: F64, vc_contra: F64, w: F64):
        from __externals__ import i_end, i_start, j_end, j_start, local_ie, local_is

        with computation(PARALLEL), interval(...):
            utmp = uc_contra
            with horizontal(region[local_is - 1 : local_ie + 3, :]):
                v = 0.25 * (vc[-1, 0, 0] + vc + vc[-1, 1, 0] + vc[0, 1, 0])
                uc_contra = _contravariant(uc, v, cosa)
            with horizontal(region[:, j_start - 1 : j_start + 1], region[:, j_end : j_end + 2]):
                uc_contra = utmp
            with horizontal(region[i_start, :], region[i_end + 1, :]):
                vc_contra = (vc / cosa[-1, 0]) if (vc > 0) else (vc * cosa)
            w = _edge_doubled(uc)

    shape, halo = (13, 12, 4), 3
    dom = (shape[0] - 1, shape[1] - 1, shape[2])
    stencil = gtscript.stencil(backend=any_backend, definition=edges, externals=_edges(halo, dom))
    info = stencil.field_info
    assert info["vc"].boundary == ((0, 0), (0, 1), (0, 0))  # j unbounded: vc[0, 1, 0] at the top
    assert info["cosa"].boundary == ((0, 0), (0, 0))
    assert info["uc"].boundary == ((0, 0), (0, 0), (0, 0))
    rng = np.random.default_rng(2)
    uc, vc, ucc, vcc, w = (rng.standard_normal(shape) for _ in range(5))
    cosa = rng.uniform(0.5, 1.5, shape[:2])
    args = [_put(any_backend, a) for a in (uc, vc, cosa, ucc, vcc, w)]
    stencil(*args, origin=(0, 0, 0), domain=dom)

    nx, ny = dom[0], dom[1]
    i_start, i_end, j_start, j_end = halo, nx - 1 - halo, halo, ny - 1 - halo
    ref_u, ref_v, ref_w = ucc.copy(), vcc.copy(), w.copy()
    c3 = cosa[:, :, None]
    for i in range(i_start - 1, i_end + 3):
        v = 0.25 * (vc[i - 1, :ny] + vc[i, :ny] + vc[i - 1, 1 : ny + 1] + vc[i, 1 : ny + 1])
        ref_u[i, :ny] = uc[i, :ny] - v * c3[i, :ny]
    for j in (*range(j_start - 1, j_start + 1), *range(j_end, j_end + 2)):
        ref_u[:nx, j] = ucc[:nx, j]
    for i in (i_start, i_end + 1):
        ref_v[i, :ny] = np.where(
            vc[i, :ny] > 0, vc[i, :ny] / c3[i - 1, :ny], vc[i, :ny] * c3[i, :ny]
        )
    ref_w[:nx, :ny] = uc[:nx, :ny]
    ref_w[i_start - 1, :ny] = 2.0 * uc[i_start, :ny]
    got = [_host(a) for a in args]
    np.testing.assert_allclose(got[3], ref_u, rtol=1e-14, atol=0)
    np.testing.assert_allclose(got[4], ref_v, rtol=1e-14, atol=0)
    np.testing.assert_array_equal(got[5], ref_w)
    for a, ref in ((got[3], ucc), (got[4], vcc), (got[5], w)):  # the spare points: untouched
        np.testing.assert_array_equal(a[nx:], ref[nx:])
        np.testing.assert_array_equal(a[:, ny:], ref[:, ny:])


# --------------------------------------------------- halos where the region needs them, only
def _reaches(q: F64, out: F64):
    from __externals__ import i_end, i_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1 : i_start + 1, :]):
            out = q[-2, 0, 0] + q
        with horizontal(region[i_end, :]):
            out = q[2, 0, 1]


def test_boundary_counts_only_where_regions_are() -> None:
    # i_start = I[0] + 1: the region is [0, 2), read 2 before: 2 before the domain; the
    # region at i_end = I[-1] - 1 reads 2 after: 1 beyond the domain's last point
    st = gtscript.stencil(
        backend="numpy", definition=_reaches, externals={"i_start": I[0] + 1, "i_end": I[-1] - 1}
    )
    assert st.field_info["q"].boundary == ((2, 1), (0, 0), (0, 1))
    # further inside: no halo along I (the K read is over every level: one above)
    inner = gtscript.stencil(
        backend="numpy", definition=_reaches, externals={"i_start": I[0] + 3, "i_end": I[-1] - 2}
    )
    assert inner.field_info["q"].boundary == ((0, 0), (0, 0), (0, 1))


def test_regions_off_this_rank_need_no_halo(any_backend) -> None:
    """NDSL puts ``I[0] - 32767`` in ``i_start`` on ranks without that tile edge: the region
    lies far outside, so its reads need no halo and nothing is written."""
    st = gtscript.stencil(
        backend=any_backend,
        definition=_reaches,
        externals={"i_start": I[0] - 32767, "i_end": I[-1] + 32767},
    )
    # (not even along K: the region's K read never happens; gt4py 1.2.1 gives the same)
    assert st.field_info["q"].boundary == ((0, 0), (0, 0), (0, 0))
    rng = np.random.default_rng(3)
    q, out = rng.standard_normal((6, 5, 4)), rng.standard_normal((6, 5, 4))
    q_d, out_d = _put(any_backend, q), _put(any_backend, out)
    st(q_d, out_d, origin=(0, 0, 0), domain=(6, 5, 3))
    np.testing.assert_array_equal(_host(out_d), out)


@pytest.mark.parametrize("backend", ["numpy", "gt:cpu_ifirst"])
def test_reads_that_leave_the_array_are_refused(backend) -> None:
    """The region [0, 2) reads 2 points before it: with origin 0 that is outside the array.
    Refused before anything runs, with the read and its line; run() (no validation) is
    refused by the engine's own check of the region, also before anything runs."""
    st = gtscript.stencil(
        backend=backend, definition=_reaches, externals={"i_start": I[0] + 1, "i_end": I[-1] - 3}
    )
    rng = np.random.default_rng(4)
    q, out = rng.standard_normal((8, 5, 4)), rng.standard_normal((8, 5, 4))
    before = out.copy()
    line = _reaches.__code__.co_firstlineno + 5
    with pytest.raises(GTScriptCallError, match=r"'q' is read 2 point\(s\) before its origin") as e:
        st(q, out, origin=(0, 0, 0), domain=(8, 5, 3))
    assert f"q[-2, 0, 0] at {__file__}:{line}" in str(e.value)
    assert "origin of at least 2 along I" in str(e.value)
    with pytest.raises(StencilValueError, match=r"reads field 'q' along I over -2:"):
        st.run(q=q, out=out, _origin_={"q": (0, 0, 0), "out": (0, 0, 0)}, _domain_=(8, 5, 3),
               exec_info=None)  # fmt: skip
    np.testing.assert_array_equal(out, before)
    # with the halo it needs (origin 2 along I) the same region runs
    st(q, out, origin=(2, 0, 0), domain=(6, 5, 3))
    ref = before.copy()
    for i in (2, 3):  # the region [0, 2) of the compute domain, which starts at index 2
        ref[i, :, :3] = q[i - 2, :, :3] + q[i, :, :3]
    ref[2 + 6 - 1 - 3, :, :3] = q[2 + 6 - 1 - 3 + 2, :, 1:4]
    np.testing.assert_array_equal(out, ref)


def test_a_region_at_the_end_needs_its_halo_there() -> None:
    """``region[i_end, :]`` with ``i_end = I[-1]`` reads 2 points after the domain's end."""
    st = gtscript.stencil(
        backend="numpy", definition=_reaches, externals={"i_start": I[0] + 3, "i_end": I[-1]}
    )
    assert st.field_info["q"].boundary == ((0, 2), (0, 0), (0, 1))
    rng = np.random.default_rng(5)
    q, out = rng.standard_normal((8, 5, 4)), rng.standard_normal((8, 5, 4))
    with pytest.raises(GTScriptCallError, match=r"too small along I.*halo 2 \(q\[2, 0, 1\] at"):
        st(q, out, origin=(0, 0, 0), domain=(8, 5, 3))
    st(q, out, origin=(0, 0, 0), domain=(6, 5, 3))  # 2 spare points after the domain: fits


# ------------------------------------------------------ temporaries grown only where needed
def test_temporary_grown_only_where_the_region_reads_it(any_backend) -> None:
    """A temporary written in a region and read around another: computed beyond the compute
    domain only as far as the reading region reaches (boundaries and values as gt4py 1.2.1's
    numpy backend gives them for this definition)."""

    def grown(a: F64, out: F64):
        from __externals__ import i_start

        with computation(PARALLEL), interval(...):
            with horizontal(region[i_start - 1 : i_start + 2, :]):
                t = 3.0 * a[-1, 0, 0]
        with computation(PARALLEL), interval(...):
            out = a
            with horizontal(region[i_start, :]):
                out = t[-1, 0, 0] + t[1, 0, 0]

    rng = np.random.default_rng(6)
    for start, lo in ((0, 2), (1, 1), (2, 0)):  # the region's column: t is read 1 before it
        st = gtscript.stencil(
            backend=any_backend, definition=grown, externals={"i_start": I[0] + start}
        )
        assert st.field_info["a"].boundary[0] == (lo, 0)
        a, out = rng.standard_normal((7, 4, 3)), rng.standard_normal((7, 4, 3))
        a_d, out_d = _put(any_backend, a), _put(any_backend, out)
        st(a_d, out_d, origin=(lo, 0, 0), domain=(7 - lo - 1, 4, 3))
        ref = out.copy()
        ref[lo:6, :, :] = a[lo:6]
        c = lo + start
        ref[c] = 3.0 * a[c - 2] + 3.0 * a[c]
        np.testing.assert_allclose(_host(out_d), ref, rtol=1e-15, atol=0)


# ------------------------------------------------------------ the generated CUDA, compiled
def test_generated_cuda_of_a_whole_array_corner_copy_compiles(generated_cuda, tmp_path) -> None:
    """gt:gpu without a GPU: the whole-array corner copy is generated with its region reads
    guarded and compiled for sm_90."""
    shape = (11, 10, 3)
    st = gtscript.stencil(
        backend="gt:gpu", definition=_corner_source(tmp_path / "g.py"), externals=_edges(3, shape)
    )
    rng = np.random.default_rng(7)
    arrs = {"q_in": rng.standard_normal(shape), "q_out": rng.standard_normal(shape)}
    text = generated_cuda(st, shape, {"q_in": (0, 0, 0), "q_out": (0, 0, 0)}, arrs)
    assert "__global__" in text


def test_written_before_a_region_and_read_there_at_an_offset_is_refused() -> None:
    """gt4py's rule (CARTESIAN.md 2.4): a name assigned outside regions earlier in the
    definition, in any computation, must not be read at a horizontal offset in a region."""

    def late(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            t = 3.0 * a
        with computation(PARALLEL), interval(...):
            with horizontal(region[I[0], :]):
                out = t[1, 0, 0]

    with pytest.raises(GTScriptSyntaxError, match=r"'t' is written before this horizontal region"):
        gtscript.stencil(backend="numpy", definition=late)

    def fine(a: F64, out: F64):  # a temporary read at the point: allowed
        with computation(PARALLEL), interval(...):
            t = 3.0 * a
            with horizontal(region[I[0], :]):
                out = t + a[1, 0, 0]

    gtscript.stencil(backend="numpy", definition=fine)


def test_region_value_read_at_an_offset_in_another_region(any_backend) -> None:
    """A temporary assigned in one region and read at an offset in another (inlined: its mask
    moves with the offset), on the whole array: reads only inside the array, as gt4py 1.2.1's
    boundary and values for this definition."""

    def moved(q: F64, out: F64):
        from __externals__ import i_start

        with computation(PARALLEL), interval(...):
            with horizontal(region[i_start - 1 : i_start + 1, :]):
                t = q[-1, 0, 0]
            with horizontal(region[i_start, :]):
                out = t[-1, 0, 0] * 2.0

    st = gtscript.stencil(backend=any_backend, definition=moved, externals={"i_start": I[0] + 2})
    assert st.field_info["q"].boundary == ((0, 0), (0, 0), (0, 0))
    rng = np.random.default_rng(8)
    q, out = rng.standard_normal((6, 4, 3)), rng.standard_normal((6, 4, 3))
    q_d, out_d = _put(any_backend, q), _put(any_backend, out)
    st(q_d, out_d, origin=(0, 0, 0), domain=(6, 4, 3))
    ref = out.copy()
    ref[2] = 2.0 * q[0]  # t at column 1 is q at column 0
    np.testing.assert_array_equal(_host(out_d), ref)
