"""periodic_equilateral_mesh: ICON-like tables and geometry, and a Laplacian that converges.

ICON's div(grad) is a Laplacian only where the dual edges join circumcentres at right angles
to the edges (a Voronoi dual). The right-triangle mesh has a centroid dual and gives a
checkerboard that grows with resolution; these tests pin down both behaviours, and that the
mesh ``stencilkit demo`` uses is the convergent one.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stencilkit.cli import main
from stencilkit.meshes import periodic_equilateral_mesh, periodic_triangular_mesh
from stencilkit.models import mesh_laplacian
from stencilkit.models.mesh_laplacian import (
    DemoMesh,
    compute_laplacian,
    demo_mesh,
    geofac_div,
    icon_generator_available,
    laplacian_numpy,
    run_mesh_check,
)

SIZES = [(4, 4), (8, None), (5, 6), (16, None)]


def _nearest(d: np.ndarray) -> np.ndarray:
    return d - np.round(d)  # nearest image on the unit torus


def _lap_error(mesh, length: float = 1.0, height: float = 1.0) -> float:
    """max |div(grad psi) + k^2 psi| / k^2 for psi = sin(2 pi x / Lx) sin(2 pi y / Ly)."""
    kx, ky = 2 * np.pi / length, 2 * np.pi / height
    psi = np.sin(kx * mesh.cell_x) * np.sin(ky * mesh.cell_y)
    k2 = kx**2 + ky**2
    return float(np.max(np.abs(laplacian_numpy(mesh, psi) + k2 * psi)) / k2)


@pytest.mark.parametrize(("nx", "ny"), SIZES)
def test_counts_areas_and_euler_characteristic(nx: int, ny: int | None) -> None:
    mesh = periodic_equilateral_mesh(nx, ny)
    rows = mesh.ny
    assert rows % 2 == 0 and (ny is None or rows == ny)
    assert (mesh.n_vertices, mesh.n_edges, mesh.n_cells) == (
        nx * rows,
        3 * nx * rows,
        2 * nx * rows,
    )
    assert mesh.n_vertices - mesh.n_edges + mesh.n_cells == 0  # a torus
    np.testing.assert_allclose(mesh.cell_area.sum(), 1.0, rtol=1e-13)
    np.testing.assert_allclose(mesh.dual_area.sum(), 1.0, rtol=1e-13)  # Voronoi cells tile it
    assert (mesh.dual_area > 0).all() and (mesh.dual_edge_length > 0).all()


@pytest.mark.parametrize(("nx", "ny"), SIZES)
def test_tables_are_consistent(nx: int, ny: int | None) -> None:
    mesh = periodic_equilateral_mesh(nx, ny)
    for table in (mesh.e2c, mesh.c2e, mesh.e2v, mesh.v2e, mesh.c2v, mesh.v2c):
        assert table.dtype == np.int32 and table.min() >= 0  # full tables on the torus
        assert all(len(set(row.tolist())) == len(row) for row in table)
    # every edge in exactly two cells, and e2c is the inverse of c2e
    counts = np.bincount(mesh.c2e.ravel(), minlength=mesh.n_edges)
    np.testing.assert_array_equal(counts, 2)
    for c in range(mesh.n_cells):
        for e in mesh.c2e[c]:
            assert c in mesh.e2c[e]
    # c2e[c, k] joins c2v[c, k] and c2v[c, k+1]; e2c[e, 0] walks the edge forwards
    ends = np.sort(mesh.e2v[mesh.c2e], axis=2)
    joined = np.sort(np.stack([mesh.c2v, np.roll(mesh.c2v, -1, axis=1)], axis=2), axis=2)
    np.testing.assert_array_equal(ends, joined)
    for e, (c0, _) in enumerate(mesh.e2c):
        assert mesh.c2v[c0, list(mesh.c2e[c0]).index(e)] == mesh.e2v[e, 0]
    # six edges and six cells round every vertex, each cell holding the edges either side
    for v in range(mesh.n_vertices):
        for k, c in enumerate(mesh.v2c[v]):
            assert {mesh.v2e[v, k], mesh.v2e[v, (k + 1) % 6]} <= set(mesh.c2e[c].tolist())


@pytest.mark.parametrize(("nx", "ny"), SIZES)
def test_voronoi_geometry(nx: int, ny: int | None) -> None:
    mesh = periodic_equilateral_mesh(nx, ny)
    vx, vy = mesh.vertex_x, mesh.vertex_y
    centre = np.stack([mesh.cell_x, mesh.cell_y], axis=1)
    # cell centres are circumcentres: the same distance from the three corners
    r = [
        np.hypot(*_nearest(np.stack([vx[mesh.c2v[:, k]], vy[mesh.c2v[:, k]]], 1) - centre).T)
        for k in range(3)
    ]
    np.testing.assert_allclose(r[1], r[0], rtol=1e-12)
    np.testing.assert_allclose(r[2], r[0], rtol=1e-12)
    # edges: the distance of their vertices, the normal at right angles to them
    t = _nearest(
        np.stack(
            [vx[mesh.e2v[:, 1]] - vx[mesh.e2v[:, 0]], vy[mesh.e2v[:, 1]] - vy[mesh.e2v[:, 0]]], 1
        )
    )
    normal = np.stack([mesh.edge_normal_x, mesh.edge_normal_y], axis=1)
    np.testing.assert_allclose(np.hypot(*t.T), mesh.edge_length, rtol=1e-12)
    np.testing.assert_allclose(np.einsum("ed,ed->e", t, normal), 0.0, atol=1e-14)
    lengths = {round(x, 12) for x in mesh.edge_length.tolist()}
    assert lengths == {round(1 / nx, 12), round(np.hypot(0.5 / nx, 1 / mesh.ny), 12)}
    # dual edges join the two circumcentres along the normal (from e2c[0] to e2c[1])
    d = _nearest(centre[mesh.e2c[:, 1]] - centre[mesh.e2c[:, 0]])
    np.testing.assert_allclose(np.hypot(*d.T), mesh.dual_edge_length, rtol=1e-12)
    np.testing.assert_allclose(np.einsum("ed,ed->e", d, normal), mesh.dual_edge_length, rtol=1e-12)
    # and cross the edge at its midpoint
    mid = _nearest(np.stack([mesh.edge_x, mesh.edge_y], 1) - centre[mesh.e2c[:, 0]])
    np.testing.assert_allclose(np.einsum("ed,ed->e", mid, t), 0.0, atol=1e-14)


def test_divergence_is_discrete_gauss(rng: np.random.Generator) -> None:
    mesh = periodic_equilateral_mesh(12)
    vn = rng.standard_normal(mesh.n_edges)
    div = (vn[mesh.c2e] * geofac_div(mesh)).sum(axis=1)
    np.testing.assert_allclose((div * mesh.cell_area).sum(), 0.0, atol=1e-12)
    const = mesh.edge_normal_x * 0.3 - mesh.edge_normal_y * 1.7  # a constant vector field
    np.testing.assert_allclose((const[mesh.c2e] * geofac_div(mesh)).sum(axis=1), 0.0, atol=1e-11)


def test_laplacian_converges_on_the_equilateral_mesh() -> None:
    ns = [8, 16, 32, 64]
    errors = [_lap_error(periodic_equilateral_mesh(n)) for n in ns]
    for n, err in zip(ns, errors, strict=True):
        assert err <= mesh_laplacian.TOLERANCE_PER_EDGE / n, (n, err)
    for coarse, fine in itertools.pairwise(errors):
        assert coarse / fine > 1.6, errors  # first order: halves with the edge length


def test_the_right_triangle_mesh_gives_a_checkerboard() -> None:
    """Why the demo does not use periodic_triangular_mesh: the error grows with resolution."""
    errors = [_lap_error(periodic_triangular_mesh(n, n)) for n in (8, 16, 32)]
    assert errors[0] > 0.5 and errors[1] > errors[0] and errors[2] > errors[1], errors
    mesh = periodic_triangular_mesh(16, 16)
    psi = np.sin(2 * np.pi * mesh.cell_x) * np.sin(2 * np.pi * mesh.cell_y)
    assert np.abs(laplacian_numpy(mesh, psi)).max() > 1.5 * 8 * np.pi**2


def test_laplacian_program_matches_numpy(case, rng: np.random.Generator) -> None:
    mesh = periodic_equilateral_mesh(10)
    psi = rng.standard_normal(mesh.n_cells)
    from stencilkit.meshes import C2EDim, Cell, Edge

    out = case.field([Cell], np.full(mesh.n_cells, np.nan))
    program = (
        compute_laplacian if case.backend is None else compute_laplacian.with_backend(case.backend)
    )
    program(
        case.field([Cell], psi),
        case.field([Edge], 1.0 / mesh.dual_edge_length),
        case.field([Cell, C2EDim], geofac_div(mesh)),
        out,
        offset_provider=mesh.offset_provider(allocator=case.allocator),
    )
    np.testing.assert_allclose(out.asnumpy(), laplacian_numpy(mesh, psi), rtol=1e-12, atol=1e-9)


def test_demo_mesh_check_passes_and_tightens_with_resolution() -> None:
    coarse, fine = run_mesh_check(None, n=8), run_mesh_check(None, n=32)
    assert coarse.ok and fine.ok
    assert fine.tolerance == coarse.tolerance / 4 and fine.max_rel_error < coarse.max_rel_error / 3


def test_demo_fails_on_a_checkerboard_mesh(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    right = DemoMesh(periodic_triangular_mesh(32, 32), 1.0, 1.0, 1 / 32, "right triangles")
    monkeypatch.setattr(mesh_laplacian, "demo_mesh", lambda n: right)
    assert not run_mesh_check(None).ok
    assert main(["demo", "--backend", "embedded", "--steps", "2", "--size", "8", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "right triangles" in out and "FAILED" in out


@pytest.mark.parametrize("ny", [3, 0, 2.5])
def test_bad_sizes_are_refused_with_the_fix(ny: float) -> None:
    with pytest.raises(ValueError, match="even number of rows"):
        periodic_equilateral_mesh(8, ny)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nx >= 2"):
        periodic_equilateral_mesh(1)


@pytest.mark.skipif(
    not icon_generator_available(),
    reason="icon-grid-generator (pip install icon-grid-generator) and the icon-grid extra are "
    "not installed: the ICON torus is not tested here; the fallback mesh is, above",
)
def test_icon_torus_from_the_generator_converges() -> None:
    meshes = [mesh_laplacian.icon_torus(n) for n in (8, 16, 32)]
    errors = [_lap_error(m.mesh, m.length, m.height) for m in meshes]
    for m, err in zip(meshes, errors, strict=True):
        assert err <= mesh_laplacian.TOLERANCE_PER_EDGE * m.edge_length / m.length, errors
    assert errors[0] / errors[2] > 3, errors
    assert "icon-grid-generator" in demo_mesh(8).source
