"""Values read at several neighbours of each point, computed once into a temporary over their own
location (``ir/neighbour_values.py``): which values are hoisted, and results on every backend
against NumPy, with the rewrite on and off."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.ir import nodes as ir
from stencilkit.ir.neighbour_values import PREFIX
from stencilkit.meshes import (
    C2E,
    E2C,
    E2V,
    V2E,
    C2EDim,
    Cell,
    E2CDim,
    E2VDim,
    Edge,
    V2EDim,
    Vertex,
)
from stencilkit.meshes.triangular import periodic_triangular_mesh

K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Koff = gtx.FieldOffset("Koff", source=K, target=(K,))
NLEV = 6


@gtx.field_operator
def _rot(
    vn: Field[Dims[Edge, K], float64], geofac_rot: Field[Dims[Vertex, V2EDim], float64]
) -> Field[Dims[Vertex, K], float64]:
    return gtx.neighbor_sum(vn(V2E) * geofac_rot, axis=V2EDim)


@gtx.field_operator
def _ekin_cells(
    ekin: Field[Dims[Edge, K], float64], w: Field[Dims[Cell, C2EDim], float64]
) -> Field[Dims[Cell, K], float64]:
    return gtx.neighbor_sum(w * ekin(C2E), axis=C2EDim)


@gtx.field_operator
def _tendency(
    vn: Field[Dims[Edge, K], float64],
    ekin: Field[Dims[Edge, K], float64],
    geofac_rot: Field[Dims[Vertex, V2EDim], float64],
    w: Field[Dims[Cell, C2EDim], float64],
    coeff: Field[Dims[Edge, E2CDim], float64],
    f: Field[Dims[Edge], float64],
) -> Field[Dims[Edge, K], float64]:
    # the shape of icon4py's compute_advection_in_horizontal_momentum: the vorticity at vertices
    # (a sum over V2E) read from edges at both vertices, summed and differenced; the kinetic
    # energy at cells (a sum over C2E) read at both cells of an edge, one level up as well
    vort = 1.5 * _rot(vn, geofac_rot)
    ekc = _ekin_cells(ekin, w)
    coriolis = vn * (f + 0.5 * gtx.neighbor_sum(vort(E2V), axis=E2VDim))
    gradient = vort(E2V[1]) - vort(E2V[0])
    advection = coeff[E2CDim(1)] * ekc(E2C[1]) - coeff[E2CDim(0)] * ekc(Koff[1])(E2C[0])
    return coriolis + gradient * ekin + advection


@gtx.program
def tendency(
    vn: Field[Dims[Edge, K], float64],
    ekin: Field[Dims[Edge, K], float64],
    geofac_rot: Field[Dims[Vertex, V2EDim], float64],
    w: Field[Dims[Cell, C2EDim], float64],
    coeff: Field[Dims[Edge, E2CDim], float64],
    f: Field[Dims[Edge], float64],
    out: Field[Dims[Edge, K], float64],
    e0: gtx.int32,
    e1: gtx.int32,
):
    _tendency(vn, ekin, geofac_rot, w, coeff, f, out=out, domain={Edge: (e0, e1), K: (1, NLEV - 1)})


def _reference(tables, vn, ekin, geofac_rot, w, coeff, f):
    v2e, e2v, c2e, e2c = (tables[n] for n in ("V2E", "E2V", "C2E", "E2C"))
    vals = np.where((v2e >= 0)[:, :, None], vn[v2e] * geofac_rot[:, :, None], 0.0)
    vort = 1.5 * vals.sum(axis=1)
    ekc = np.where((c2e >= 0)[:, :, None], w[:, :, None] * ekin[c2e], 0.0).sum(axis=1)
    ekc_up = np.full_like(ekc, np.nan)
    ekc_up[:, :-1] = ekc[:, 1:]
    coriolis = vn * (f[:, None] + 0.5 * (vort[e2v[:, 0]] + vort[e2v[:, 1]]))
    gradient = vort[e2v[:, 1]] - vort[e2v[:, 0]]
    advection = coeff[:, 1:2] * ekc[e2c[:, 1]] - coeff[:, 0:1] * ekc_up[e2c[:, 0]]
    return coriolis + gradient * ekin + advection


def test_the_values_read_at_several_neighbours_are_hoisted() -> None:
    prog = tendency.definition
    temps = [t for t in prog.temps if t.name.startswith(PREFIX)]
    assert [t.type.dims for t in temps] == [(Vertex, K), (Cell, K)] or [
        t.type.dims for t in temps
    ] == [(Cell, K), (Vertex, K)]
    assert len(prog.body) == 3
    # the last statement reads the temporaries, no longer the V2E/C2E reductions
    last = prog.body[-1]
    offsets = {x.offset for x in _walk(last.expr) if isinstance(x, ir.NeighborShift)}
    assert offsets == {"E2V", "E2C"}


def _walk(e):
    from stencilkit.ir.visit import walk

    return walk(e)


def test_a_value_read_once_per_point_is_not_hoisted() -> None:
    @gtx.field_operator
    def once(
        ekin: Field[Dims[Edge, K], float64], w: Field[Dims[Cell, C2EDim], float64]
    ) -> Field[Dims[Edge, K], float64]:
        return _ekin_cells(ekin, w)(E2C[0])

    @gtx.program
    def run(
        ekin: Field[Dims[Edge, K], float64],
        w: Field[Dims[Cell, C2EDim], float64],
        out: Field[Dims[Edge, K], float64],
    ):
        once(ekin, w, out=out)

    assert not run.definition.temps


def test_a_value_on_the_outputs_own_location_is_not_hoisted() -> None:
    @gtx.field_operator
    def cell_smooth(
        ekin: Field[Dims[Edge, K], float64], w: Field[Dims[Cell, C2EDim], float64]
    ) -> Field[Dims[Cell, K], float64]:
        x = _ekin_cells(ekin, w)  # on cells, like the output: read at its neighbours, not hoisted
        z = gtx.neighbor_sum(x(E2C), axis=E2CDim)  # on edges: hoisted
        return gtx.neighbor_sum(w * z(C2E), axis=C2EDim)

    @gtx.program
    def run(
        ekin: Field[Dims[Edge, K], float64],
        w: Field[Dims[Cell, C2EDim], float64],
        out: Field[Dims[Cell, K], float64],
    ):
        cell_smooth(ekin, w, out=out)

    assert [t.type.dims for t in run.definition.temps] == [(Edge, K)]


def test_a_value_read_at_one_neighbour_of_two_branches_is_not_hoisted() -> None:
    @gtx.field_operator
    def upwind(
        vn: Field[Dims[Edge, K], float64],
        ekin: Field[Dims[Edge, K], float64],
        w: Field[Dims[Cell, C2EDim], float64],
    ) -> Field[Dims[Edge, K], float64]:
        # an upwind choice: each edge reads the cell value on one side only
        x = _ekin_cells(ekin, w)
        return gtx.where(vn > 0.0, x(E2C[0]), x(E2C[1]))

    @gtx.program
    def run(
        vn: Field[Dims[Edge, K], float64],
        ekin: Field[Dims[Edge, K], float64],
        w: Field[Dims[Cell, C2EDim], float64],
        out: Field[Dims[Edge, K], float64],
    ):
        upwind(vn, ekin, w, out=out)

    assert not run.definition.temps


@pytest.mark.parametrize("hoist", [True, False], ids=["hoisted", "inlined"])
def test_results_against_numpy(case, rng, hoist, monkeypatch) -> None:
    monkeypatch.setattr(gtx.config, "NEIGHBOUR_TEMPORARIES", hoist)
    mesh = periodic_triangular_mesh(6, 5)
    ne, nv, nc = mesh.n_edges, mesh.n_vertices, mesh.n_cells
    v2e = mesh.v2e.copy()
    v2e[rng.random(v2e.shape) < 0.15] = -1  # missing neighbours: the reductions skip them
    tables = {"V2E": v2e, "E2V": mesh.e2v, "C2E": mesh.c2e, "E2C": mesh.e2c}
    vn = rng.standard_normal((ne, NLEV))
    ekin = rng.standard_normal((ne, NLEV))
    geofac_rot = rng.standard_normal((nv, mesh.v2e.shape[1]))
    w = rng.standard_normal((nc, mesh.c2e.shape[1]))
    coeff = rng.standard_normal((ne, 2))
    f = rng.standard_normal(ne)
    before = rng.standard_normal((ne, NLEV))
    e0, e1 = 3, ne - 2
    prog = tendency.__class__(
        None, case.backend, tendency.__wrapped__, tendency.grid_type
    )  # parsed now, with this setting
    out = case.field([Edge, K], before)
    prog(
        case.field([Edge, K], vn),
        case.field([Edge, K], ekin),
        case.field([Vertex, V2EDim], geofac_rot),
        case.field([Cell, C2EDim], w),
        case.field([Edge, E2CDim], coeff),
        case.field([Edge], f),
        out,
        e0,
        e1,
        offset_provider={
            "V2E": case.connectivity([Vertex, V2EDim], Edge, v2e, skip_value=-1),
            "E2V": case.connectivity([Edge, E2VDim], Vertex, mesh.e2v),
            "C2E": case.connectivity([Cell, C2EDim], Edge, mesh.c2e),
            "E2C": case.connectivity([Edge, E2CDim], Cell, mesh.e2c),
            "Koff": K,
        },
    )
    assert bool(any(t.name.startswith(PREFIX) for t in prog.definition.temps)) == hoist
    got = out.asnumpy()
    want = before.copy()
    want[e0:e1, 1 : NLEV - 1] = _reference(tables, vn, ekin, geofac_rot, w, coeff, f)[
        e0:e1, 1 : NLEV - 1
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got[:e0], before[:e0])  # the untouched part stays untouched
    np.testing.assert_array_equal(got[:, 0], before[:, 0])


def test_threads_calling_one_program_do_not_share_its_temporaries(case, rng) -> None:
    """Two threads calling the hoisted program at once with inputs of their own: each thread's
    temporaries are its own (a shared one would mix the vorticities of both calls)."""
    import threading

    mesh = periodic_triangular_mesh(24, 20)
    ne, nv, nc = mesh.n_edges, mesh.n_vertices, mesh.n_cells
    tables = {"V2E": mesh.v2e, "E2V": mesh.e2v, "C2E": mesh.c2e, "E2C": mesh.e2c}
    provider = {
        "V2E": case.connectivity([Vertex, V2EDim], Edge, mesh.v2e),
        "E2V": case.connectivity([Edge, E2VDim], Vertex, mesh.e2v),
        "C2E": case.connectivity([Cell, C2EDim], Edge, mesh.c2e),
        "E2C": case.connectivity([Edge, E2CDim], Cell, mesh.e2c),
        "Koff": K,
    }
    prog = tendency.with_backend(case.backend)
    assert any(t.name.startswith(PREFIX) for t in prog.definition.temps)
    geofac_rot = rng.standard_normal((nv, mesh.v2e.shape[1]))
    w = rng.standard_normal((nc, mesh.c2e.shape[1]))
    coeff = rng.standard_normal((ne, 2))
    f = rng.standard_normal(ne)
    shared = [
        case.field([Vertex, V2EDim], geofac_rot),
        case.field([Cell, C2EDim], w),
        case.field([Edge, E2CDim], coeff),
        case.field([Edge], f),
    ]
    start = threading.Barrier(2)
    failures: list[str] = []

    def worker(t: int) -> None:
        r = np.random.default_rng(500 + t)
        vn, ekin = r.standard_normal((ne, NLEV)) * (t + 1), r.standard_normal((ne, NLEV))
        want = _reference(tables, vn, ekin, geofac_rot, w, coeff, f)[:, 1 : NLEV - 1]
        fields = [case.field([Edge, K], vn), case.field([Edge, K], ekin)]
        out = case.field([Edge, K], np.zeros((ne, NLEV)))
        start.wait()
        for i in range(40):
            prog(
                *fields[:2],
                shared[0],
                shared[1],
                shared[2],
                shared[3],
                out,
                0,
                ne,
                offset_provider=provider,
            )
            got = out.asnumpy()[:, 1 : NLEV - 1]
            if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
                failures.append(f"thread {t} call {i}")
                return

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert failures == []
