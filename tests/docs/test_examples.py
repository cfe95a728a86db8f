"""The programs in examples/ on every backend, against their NumPy references, on random data."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from helpers.examples import EXAMPLES, load_example
from stencilkit.meshes import periodic_triangular_mesh

hdiff = load_example("hdiff")
tridiagonal = load_example("tridiagonal")
icon = load_example("icon_operators")


def _untouched(result: np.ndarray, sentinel: np.ndarray, written: tuple[slice, ...]) -> None:
    """Every point outside ``written`` keeps its sentinel value, bit for bit."""
    outside = np.ones(result.shape, bool)
    outside[written] = False
    assert outside.any()
    np.testing.assert_array_equal(result[outside], sentinel[outside])


# --- hdiff ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(20, 15, 4), (9, 8, 1)])
def test_hdiff(case, rng, shape) -> None:
    in_data = rng.random(shape)
    coeff = 0.025 + 0.05 * rng.random(shape)
    sentinel = rng.standard_normal(shape)
    out = hdiff.run(case.backend, in_data, coeff, sentinel.copy(), allocator=case.allocator)
    interior = (slice(2, -2), slice(2, -2))
    np.testing.assert_allclose(
        out[interior], hdiff.hdiff_numpy(in_data, coeff), rtol=1e-13, atol=1e-14
    )
    _untouched(out, sentinel, interior)
    # the limiter took both branches on this data, so both are tested
    lap = 4.0 * in_data[1:-1, 1:-1] - (
        in_data[2:, 1:-1] + in_data[:-2, 1:-1] + in_data[1:-1, 2:] + in_data[1:-1, :-2]
    )
    limited = (lap[1:] - lap[:-1]) * (in_data[2:-1, 1:-1] - in_data[1:-2, 1:-1]) > 0
    assert limited.any() and not limited.all()


# --- tridiagonal solve ---------------------------------------------------------------------------


@pytest.mark.parametrize("window", [None, (1, 6, 2, 5)])
def test_tridiagonal(case, rng, window) -> None:
    shape = (7, 5, 24)
    a = rng.uniform(-1.0, -0.1, shape)
    c = rng.uniform(-1.0, -0.1, shape)
    a[..., 0] = 0.0
    c[..., -1] = 0.0
    b = 2.5 + rng.random(shape)
    d = rng.standard_normal(shape)
    sentinels = (rng.standard_normal(shape), rng.standard_normal(shape), rng.standard_normal(shape))
    x = tridiagonal.run(
        case.backend,
        a,
        b,
        c,
        d,
        tuple(s.copy() for s in sentinels),
        window,
        allocator=case.allocator,
    )
    i0, i1, j0, j1 = window or (0, shape[0], 0, shape[1])
    cols = (slice(i0, i1), slice(j0, j1))
    expected = tridiagonal.solve_numpy(a[cols], b[cols], c[cols], d[cols])
    np.testing.assert_allclose(x[cols], expected, rtol=1e-11, atol=1e-12)
    if window:
        _untouched(x, sentinels[2], cols)


def test_tridiagonal_implicit_diffusion_conserves_the_column_sum(case, rng) -> None:
    shape = (4, 3, 30)
    a, b, c = tridiagonal.diffusion_system(0.5 + rng.random(shape))
    d = rng.random(shape)
    scratch = (rng.random(shape), rng.random(shape), rng.random(shape))
    x = tridiagonal.run(case.backend, a, b, c, d, scratch, allocator=case.allocator)
    np.testing.assert_allclose(x, tridiagonal.solve_numpy(a, b, c, d), rtol=1e-11)
    np.testing.assert_allclose(x.sum(-1), d.sum(-1), rtol=1e-13)


# --- ICON operators ------------------------------------------------------------------------------


MESHES = [pytest.param(False, id="periodic"), pytest.param(True, id="bounded")]


@pytest.mark.parametrize("bounded", MESHES)
def test_icon_divergence(case, rng, bounded) -> None:
    mesh = periodic_triangular_mesh(7, 5, bounded=bounded)
    vn = rng.standard_normal((mesh.n_edges, icon.N_LEVELS))
    div = icon.run_divergence(
        case.backend,
        mesh,
        vn,
        rng.standard_normal((mesh.n_cells, icon.N_LEVELS)),
        allocator=case.allocator,
    )
    np.testing.assert_allclose(div, icon.divergence_numpy(mesh, vn), rtol=1e-12, atol=1e-11)
    if not bounded:  # discrete Stokes on the torus
        total = (mesh.cell_area[:, None] * div).sum(axis=0)
        np.testing.assert_allclose(total, 0.0, atol=1e-12)


@pytest.mark.parametrize("bounded", MESHES)
def test_icon_gradient(case, rng, bounded) -> None:
    mesh = periodic_triangular_mesh(6, 4, bounded=bounded)
    psi = rng.standard_normal((mesh.n_cells, icon.N_LEVELS))
    sentinel = rng.standard_normal((mesh.n_edges, icon.N_LEVELS))
    grad = icon.run_gradient(case.backend, mesh, psi, sentinel.copy(), allocator=case.allocator)
    inner = (slice(mesh.n_boundary_edges, None),)
    np.testing.assert_allclose(grad[inner], icon.gradient_numpy(mesh, psi), rtol=1e-12, atol=1e-12)
    if bounded:  # boundary edges have one cell: the program leaves them alone
        _untouched(grad, sentinel, inner)


@pytest.mark.parametrize("bounded", MESHES)
def test_icon_vorticity(case, rng, bounded) -> None:
    mesh = periodic_triangular_mesh(5, 6, bounded=bounded)
    vn = rng.standard_normal((mesh.n_edges, icon.N_LEVELS))
    rot = icon.run_vorticity(
        case.backend,
        mesh,
        vn,
        rng.standard_normal((mesh.n_vertices, icon.N_LEVELS)),
        allocator=case.allocator,
    )
    np.testing.assert_allclose(rot, icon.vorticity_numpy(mesh, vn), rtol=1e-12, atol=1e-11)


def test_icon_rotation_of_gradient_vanishes(case, rng) -> None:
    mesh = periodic_triangular_mesh(6, 5)
    psi = rng.standard_normal((mesh.n_cells, icon.N_LEVELS))
    grad = icon.run_gradient(
        case.backend,
        mesh,
        psi,
        rng.standard_normal((mesh.n_edges, icon.N_LEVELS)),
        allocator=case.allocator,
    )
    rot = icon.run_vorticity(
        case.backend,
        mesh,
        grad,
        rng.standard_normal((mesh.n_vertices, icon.N_LEVELS)),
        allocator=case.allocator,
    )
    np.testing.assert_allclose(rot, 0.0, atol=1e-10)


# --- the example scripts themselves --------------------------------------------------------------


@pytest.mark.parametrize(
    "module", [hdiff, tridiagonal, icon], ids=lambda m: m.__name__.split("_", 2)[-1]
)
def test_example_main_runs_and_checks(
    module: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    module.main()
    assert "max" in capsys.readouterr().out


def test_examples_use_only_the_gt4py_compatible_surface() -> None:
    # swapping `import stencilkit as gtx` for `import gt4py.next as gtx` (and the cartesian
    # imports for gt4py.cartesian.gtscript / gt4py.storage) must be the whole port
    cartesian = (
        "from stencilkit.cartesian import gtscript",
        "from stencilkit.cartesian.gtscript import ",
        "from stencilkit.cartesian import storage as gt_storage",
    )
    for path in EXAMPLES.glob("*.py"):
        imports = [
            line
            for line in path.read_text().splitlines()
            if line.startswith(("import stencilkit", "from stencilkit"))
        ]
        assert imports[0] == "import stencilkit as gtx" or imports[0].startswith(cartesian), (
            path.name
        )
        # the DSL through gtx only; meshes and the data tools (ICON grids, plots) are extras
        assert all(
            i == "import stencilkit as gtx"
            or i.startswith(
                ("from stencilkit.meshes ", "from stencilkit.meshes.plot ", "from stencilkit.io ")
            )
            or i.startswith(cartesian)
            for i in imports
        ), path.name
