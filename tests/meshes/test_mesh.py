"""stencilkit.meshes: topology invariants, orientation, geometry and offset providers."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import meshes
from stencilkit.meshes import Mesh, periodic_triangular_mesh, reorder_for_locality

PERIODIC = [(2, 2), (3, 5), (8, 6)]
BOUNDED = [(1, 1), (3, 2), (6, 5)]
ALL = [(nx, ny, False) for nx, ny in PERIODIC] + [(nx, ny, True) for nx, ny in BOUNDED]


def _mesh(nx: int, ny: int, bounded: bool) -> Mesh:
    return periodic_triangular_mesh(nx, ny, bounded=bounded)


@pytest.fixture(autouse=True, params=["as built", "locality order"])
def numbering(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every property below must hold for the mesh as built and renumbered for locality."""
    if request.param == "locality order":
        built = periodic_triangular_mesh

        def renumbered(nx: int, ny: int, bounded: bool = False) -> Mesh:
            return reorder_for_locality(built(nx, ny, bounded=bounded))

        monkeypatch.setitem(globals(), "periodic_triangular_mesh", renumbered)
    return str(request.param)


def _pairs(table: np.ndarray) -> set[tuple[int, int]]:
    """``{(row, entry)}`` of a table, without skip values."""
    rows, cols = np.nonzero(table != meshes.SKIP_VALUE)
    return set(zip(rows.tolist(), table[rows, cols].tolist()))


def _inverse(pairs: set[tuple[int, int]]) -> set[tuple[int, int]]:
    return {(b, a) for a, b in pairs}


@pytest.mark.parametrize(("nx", "ny"), PERIODIC)
def test_periodic_counts_and_euler_characteristic(nx: int, ny: int) -> None:
    mesh = periodic_triangular_mesh(nx, ny)
    assert (mesh.n_vertices, mesh.n_edges, mesh.n_cells) == (nx * ny, 3 * nx * ny, 2 * nx * ny)
    assert mesh.n_vertices - mesh.n_edges + mesh.n_cells == 0  # a torus
    assert mesh.n_boundary_edges == 0
    for offset in meshes.OFFSETS:
        assert (mesh.table(offset) >= 0).all(), f"{offset} has skip values on the torus"


@pytest.mark.parametrize(("nx", "ny"), BOUNDED)
def test_bounded_counts_and_euler_characteristic(nx: int, ny: int) -> None:
    mesh = periodic_triangular_mesh(nx, ny, bounded=True)
    assert mesh.n_vertices == (nx + 1) * (ny + 1)
    assert mesh.n_cells == 2 * nx * ny
    assert mesh.n_vertices - mesh.n_edges + mesh.n_cells == 1  # a disk
    assert mesh.n_boundary_edges == 2 * (nx + ny)
    # boundary edges come first and have exactly one cell, in e2c[:, 0]
    assert (mesh.e2c[: mesh.n_boundary_edges, 1] == -1).all()
    assert (mesh.e2c[mesh.n_boundary_edges :] >= 0).all()
    assert (mesh.e2c[:, 0] >= 0).all()
    # missing vertex neighbours are at the end of each row
    for table in (mesh.v2e, mesh.v2c):
        valid = table >= 0
        assert (np.sort(valid, axis=1)[:, ::-1] == valid).all()
    n_v2e = (mesh.v2e >= 0).sum(axis=1)
    assert sorted(set(n_v2e.tolist())) == ([2, 3, 4, 6] if min(nx, ny) > 1 else [2, 3])
    assert ((mesh.v2c >= 0).sum(axis=1) == n_v2e - (n_v2e < 6)).all()


@pytest.mark.parametrize(("nx", "ny", "bounded"), ALL)
def test_tables_are_int32_in_range_and_of_the_right_shape(nx: int, ny: int, bounded: bool) -> None:
    mesh = _mesh(nx, ny, bounded)
    for offset in meshes.OFFSETS:
        table = mesh.table(offset)
        source, (target, local) = offset.source, offset.target
        assert table.dtype == np.int32 and table.flags.c_contiguous
        assert table.shape == (
            mesh.size(target),
            {"E2C": 2, "E2V": 2, "C2E": 3, "C2V": 3, "V2E": 6, "V2C": 6}[local.value],
        )
        assert table.min() >= -1 and table.max() < mesh.size(source)
    assert mesh.table("E2C") is mesh.e2c


@pytest.mark.parametrize(("nx", "ny", "bounded"), ALL)
def test_tables_are_consistent_with_each_other(nx: int, ny: int, bounded: bool) -> None:
    mesh = _mesh(nx, ny, bounded)
    assert _pairs(mesh.e2c) == _inverse(_pairs(mesh.c2e))
    assert _pairs(mesh.e2v) == _inverse(_pairs(mesh.v2e))
    assert _pairs(mesh.c2v) == _inverse(_pairs(mesh.v2c))
    # no neighbour twice in a row
    for table in (mesh.e2c, mesh.c2e, mesh.e2v, mesh.v2e, mesh.c2v, mesh.v2c):
        for row in table:
            valid = row[row >= 0]
            assert len(set(valid.tolist())) == len(valid)
    # c2e[c, k] joins c2v[c, k] and c2v[c, k+1]; c2v is counterclockwise
    ends = np.sort(mesh.e2v[mesh.c2e], axis=2)
    joined = np.sort(np.stack([mesh.c2v, np.roll(mesh.c2v, -1, axis=1)], axis=2), axis=2)
    np.testing.assert_array_equal(ends, joined)
    # e2c[e, 0] is left of the tangent: it walks the edge forwards
    for e, (c0, c1) in enumerate(mesh.e2c):
        k0 = list(mesh.c2e[c0]).index(e)
        assert mesh.c2v[c0, k0] == mesh.e2v[e, 0]
        if c1 >= 0:
            k1 = list(mesh.c2e[c1]).index(e)
            assert mesh.c2v[c1, k1] == mesh.e2v[e, 1]
    # v2c[v, k] lies between v2e[v, k] and v2e[v, k+1]: it holds both edges
    for v in range(mesh.n_vertices):
        edges = mesh.v2e[v]
        for k, c in enumerate(mesh.v2c[v]):
            if c >= 0:
                assert {edges[k], edges[(k + 1) % 6]} <= set(mesh.c2e[c].tolist())


@pytest.mark.parametrize(("nx", "ny"), PERIODIC)
def test_every_edge_is_in_exactly_two_cells_on_the_torus(nx: int, ny: int) -> None:
    mesh = periodic_triangular_mesh(nx, ny)
    counts = np.bincount(mesh.c2e.ravel(), minlength=mesh.n_edges)
    assert (counts == 2).all()
    # ... once with each orientation, so the orientations of an edge sum to zero
    per_edge = np.zeros(mesh.n_edges)
    np.add.at(per_edge, mesh.c2e.ravel(), mesh.c2e_orientation.ravel())
    assert (per_edge == 0).all()
    assert (np.bincount(mesh.c2v.ravel()) == 6).all() and (np.bincount(mesh.e2v.ravel()) == 6).all()


@pytest.mark.parametrize(("nx", "ny"), BOUNDED)
def test_bounded_edges_are_in_one_or_two_cells(nx: int, ny: int) -> None:
    mesh = periodic_triangular_mesh(nx, ny, bounded=True)
    counts = np.bincount(mesh.c2e.ravel(), minlength=mesh.n_edges)
    np.testing.assert_array_equal(counts, np.where(mesh.e2c[:, 1] >= 0, 2, 1))


@pytest.mark.parametrize(("nx", "ny", "bounded"), ALL)
def test_orientation_signs(nx: int, ny: int, bounded: bool) -> None:
    mesh = _mesh(nx, ny, bounded)
    assert set(np.unique(mesh.c2e_orientation).tolist()) == {-1.0, 1.0}
    outward = mesh.e2c[mesh.c2e, 0] == np.arange(mesh.n_cells)[:, None]
    np.testing.assert_array_equal(mesh.c2e_orientation, np.where(outward, 1.0, -1.0))
    valid = mesh.v2e >= 0
    assert set(np.unique(mesh.v2e_orientation[valid]).tolist()) <= {-1.0, 1.0}
    assert (mesh.v2e_orientation[~valid] == 0).all()
    # every edge: -1 at its first vertex, +1 at its second
    for v, k in zip(*np.nonzero(valid)):
        e = mesh.v2e[v, k]
        assert mesh.v2e_orientation[v, k] == (1.0 if mesh.e2v[e, 1] == v else -1.0)


def _divergence(mesh: Mesh, vn: np.ndarray) -> np.ndarray:
    return (mesh.c2e_orientation * mesh.edge_length[mesh.c2e] * vn[mesh.c2e]).sum(
        1
    ) / mesh.cell_area


def _rotation(mesh: Mesh, vn: np.ndarray) -> np.ndarray:
    weights = mesh.v2e_orientation * mesh.dual_edge_length[np.maximum(mesh.v2e, 0)]
    return (weights * vn[np.maximum(mesh.v2e, 0)]).sum(1) / mesh.dual_area


def _normal_component(mesh: Mesh, u: float, v: float) -> np.ndarray:
    return u * mesh.edge_normal_x + v * mesh.edge_normal_y


@pytest.mark.parametrize(("nx", "ny", "bounded"), ALL)
def test_divergence_of_a_constant_vector_field_is_zero(nx: int, ny: int, bounded: bool) -> None:
    mesh = _mesh(nx, ny, bounded)
    for u, v in ((1.0, 0.0), (0.0, 1.0), (0.3, -1.7)):
        np.testing.assert_allclose(
            _divergence(mesh, _normal_component(mesh, u, v)), 0.0, atol=1e-12 * max(nx, ny)
        )


@pytest.mark.parametrize(("nx", "ny"), PERIODIC)
def test_discrete_stokes_on_the_torus(nx: int, ny: int, rng: np.random.Generator) -> None:
    mesh = periodic_triangular_mesh(nx, ny)
    vn = rng.standard_normal(mesh.n_edges)
    total = (mesh.cell_area * _divergence(mesh, vn)).sum()
    assert abs(total) < 1e-13 * np.abs(vn).sum()


@pytest.mark.parametrize(("nx", "ny"), BOUNDED)
def test_discrete_gauss_on_the_bounded_mesh(nx: int, ny: int, rng: np.random.Generator) -> None:
    # the total divergence is the outward flux through the boundary edges
    mesh = periodic_triangular_mesh(nx, ny, bounded=True)
    vn = rng.standard_normal(mesh.n_edges)
    nb = mesh.n_boundary_edges
    flux = (mesh.edge_length[:nb] * vn[:nb]).sum()
    np.testing.assert_allclose((mesh.cell_area * _divergence(mesh, vn)).sum(), flux, rtol=1e-12)


@pytest.mark.parametrize(("nx", "ny", "bounded"), ALL)
def test_rotation_of_a_gradient_is_zero_at_inner_vertices(
    nx: int, ny: int, bounded: bool, rng: np.random.Generator
) -> None:
    mesh = _mesh(nx, ny, bounded)
    psi = rng.standard_normal(mesh.n_cells)
    grad = np.zeros(mesh.n_edges)
    inner = mesh.e2c[:, 1] >= 0
    grad[inner] = (psi[mesh.e2c[inner, 1]] - psi[mesh.e2c[inner, 0]]) / mesh.dual_edge_length[inner]
    full = (mesh.v2e >= 0).all(axis=1)
    assert full.any() or bounded
    np.testing.assert_allclose(_rotation(mesh, grad)[full], 0.0, atol=1e-12 * max(nx, ny) ** 2)
    # and a constant vector field has no circulation either
    np.testing.assert_allclose(
        _rotation(mesh, _normal_component(mesh, 0.4, -1.1))[full], 0.0, atol=1e-12 * max(nx, ny)
    )


@pytest.mark.parametrize(("nx", "ny", "bounded"), ALL)
def test_geometry(nx: int, ny: int, bounded: bool) -> None:
    mesh = _mesh(nx, ny, bounded)
    dx, dy = 1.0 / nx, 1.0 / ny
    assert np.allclose(
        np.sort(np.unique(mesh.edge_length.round(14))),
        np.sort(np.unique(np.round([dx, dy, np.hypot(dx, dy)], 14))),
    )
    assert (mesh.dual_edge_length > 0).all()
    np.testing.assert_allclose(mesh.cell_area.sum(), 1.0, rtol=1e-14)
    np.testing.assert_allclose(mesh.dual_area.sum(), 1.0, rtol=1e-14)
    # edge-centred kites (two vertices, two centroids) tile the domain
    np.testing.assert_allclose(
        (mesh.edge_length * mesh.dual_edge_length).sum() / 2, 1.0, rtol=1e-13
    )
    np.testing.assert_allclose(np.hypot(mesh.edge_normal_x, mesh.edge_normal_y), 1.0, rtol=1e-15)
    for coords in (
        mesh.vertex_x,
        mesh.vertex_y,
        mesh.cell_x,
        mesh.cell_y,
        mesh.edge_x,
        mesh.edge_y,
    ):
        assert coords.min() >= 0.0 and coords.max() <= 1.0
    # the normal is perpendicular to the edge, pointing right of the tangent e2v[:, 0] -> e2v[:, 1]
    tx = mesh.vertex_x[mesh.e2v[:, 1]] - mesh.vertex_x[mesh.e2v[:, 0]]
    ty = mesh.vertex_y[mesh.e2v[:, 1]] - mesh.vertex_y[mesh.e2v[:, 0]]
    if not bounded:
        tx, ty = tx - np.round(tx), ty - np.round(ty)
    if bounded or min(nx, ny) > 2:  # with 2 quads a periodic tangent of half the width is ambiguous
        np.testing.assert_allclose(
            tx * mesh.edge_normal_x + ty * mesh.edge_normal_y, 0.0, atol=1e-15
        )
        assert (ty * mesh.edge_normal_x - tx * mesh.edge_normal_y > 0).all()
    if bounded:
        nb = mesh.n_boundary_edges
        outward = (mesh.edge_x[:nb] - 0.5) * mesh.edge_normal_x[:nb] + (
            mesh.edge_y[:nb] - 0.5
        ) * mesh.edge_normal_y[:nb]
        assert (outward > 0).all()


def test_offset_provider() -> None:
    for bounded, skip in ((False, None), (True, -1)):
        mesh = periodic_triangular_mesh(4, 3, bounded=bounded)
        provider = mesh.offset_provider()
        assert sorted(provider) == ["C2E", "C2V", "E2C", "E2V", "V2C", "V2E"]
        for offset in meshes.OFFSETS:
            conn = provider[offset.value]
            assert isinstance(conn, gtx.Connectivity)
            np.testing.assert_array_equal(conn.asnumpy(), mesh.table(offset))
            assert conn.domain.dims == offset.target
            assert conn.skip_value == (skip if offset.value in ("E2C", "V2E", "V2C") else None)


def test_mesh_dimensions_follow_the_gt4py_names() -> None:
    mesh = periodic_triangular_mesh(3, 3)
    assert mesh.Cell == gtx.Dimension("Cell") and mesh.Vertex == meshes.Vertex
    assert mesh.V2EDim == gtx.Dimension("V2E", kind=gtx.DimensionKind.LOCAL)
    assert mesh.E2C.source == mesh.Cell and mesh.E2C.target == (mesh.Edge, mesh.E2CDim)


@pytest.mark.parametrize(("nx", "ny", "bounded"), [(1, 4, False), (4, 0, True), (2.5, 3, False)])
def test_too_small_or_fractional_sizes_are_refused(nx: float, ny: int, bounded: bool) -> None:
    with pytest.raises(ValueError, match="triangular mesh needs at least"):
        periodic_triangular_mesh(nx, ny, bounded=bounded)  # type: ignore[arg-type]


@pytest.mark.parametrize(("nx", "ny", "bounded"), ALL)
def test_locality_order_is_a_renumbering(
    nx: int, ny: int, bounded: bool, rng: np.random.Generator
) -> None:
    """Same mesh, permuted: an E2C difference and a C2E sum give the same values at the same
    places (matched by coordinates)."""
    plain = meshes.periodic_triangular_mesh(
        nx, ny, bounded=bounded
    )  # as built, whatever the fixture
    moved = reorder_for_locality(plain)
    assert moved.n_boundary_edges == plain.n_boundary_edges
    assert (moved.e2c[: moved.n_boundary_edges, 1] == -1).all()

    def order(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.lexsort((np.round(y, 12), np.round(x, 12)))

    cells = [order(m.cell_x, m.cell_y) for m in (plain, moved)]
    edges = [order(m.edge_x, m.edge_y) for m in (plain, moved)]
    psi = rng.standard_normal(plain.n_cells)
    psi_moved = np.empty_like(psi)
    psi_moved[cells[1]] = psi[cells[0]]  # the same cell values under the new numbering

    def e2c_diff(m: Mesh, p: np.ndarray) -> np.ndarray:
        return np.where(m.e2c[:, 1] >= 0, p[m.e2c[:, 1]] - p[m.e2c[:, 0]], 0.0)

    np.testing.assert_array_equal(
        e2c_diff(plain, psi)[edges[0]], e2c_diff(moved, psi_moved)[edges[1]]
    )
    vn = rng.standard_normal(plain.n_edges)
    vn_moved = np.empty_like(vn)
    vn_moved[edges[1]] = vn[edges[0]]
    np.testing.assert_allclose(
        _divergence(plain, vn)[cells[0]],
        _divergence(moved, vn_moved)[cells[1]],
        rtol=1e-13,
        atol=1e-13,
    )
    np.testing.assert_array_equal(plain.cell_area[cells[0]], moved.cell_area[cells[1]])
    np.testing.assert_array_equal(
        plain.dual_edge_length[edges[0]], moved.dual_edge_length[edges[1]]
    )


def test_locality_order_gathers_fewer_sectors() -> None:
    """What the renumbering is for: the cells that 32 consecutive edges gather (one warp) fall
    into fewer 32-byte sectors of an fp64 field."""
    plain = meshes.periodic_triangular_mesh(64, 32)  # as built, whatever the fixture
    moved = reorder_for_locality(plain)

    def sectors_per_useful(m: Mesh) -> float:
        t = (
            m.e2c[: m.n_edges // 32 * 32].reshape(-1, 64) // 4
        )  # 32 edges x 2 cells, 4 doubles a sector
        s = np.sort(t, axis=1)
        return float((1 + (np.diff(s, axis=1) != 0).sum(axis=1)).sum() / (m.n_cells / 4))

    assert sectors_per_useful(moved) < 0.6 * sectors_per_useful(plain)


def test_morton_keys_interleave_bits() -> None:
    from stencilkit.meshes import morton_keys

    step = 1.0 / 2**16
    keys = morton_keys(
        np.array([0.0, step, 0.0, step, 2 * step, 1.0]), np.array([0.0, 0.0, step, step, 0.0, 1.0])
    )
    assert keys.tolist()[:5] == [0, 1, 2, 3, 4]
    assert keys[5] == 2**32 - 1  # 1.0 is clipped into the last cell


def test_the_mesh_docstring_example_runs() -> None:
    """periodic_triangular_mesh's docstring example uses only names it defines, and holds."""
    import doctest

    from stencilkit.meshes import triangular

    finder = doctest.DocTestFinder()
    (test,) = [t for t in finder.find(triangular) if t.name.endswith(".periodic_triangular_mesh")]
    assert test.examples, "the docstring has an example"
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
    assert result.failed == 0 and result.attempted == len(test.examples)
