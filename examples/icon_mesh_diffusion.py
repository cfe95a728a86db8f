# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Tracer diffusion on an ICON-like triangular mesh
#
# A percent-format script (open it as a notebook with jupytext, or run it with
# `python examples/icon_mesh_diffusion.py`). It needs the `icon-grid` and `plot` extras:
# `pip install 'stencilkit[icon-grid,plot]'`.
#
# The mesh comes from an ICON grid file, read with `stencilkit.io.read_icon_grid` exactly as
# a real `icon_grid_*.nc` would be: ICON's planar torus grid from icon-grid-generator
# (`pip install icon-grid-generator`) where it is installed, else one we write from
# stencilkit's `periodic_equilateral_mesh` (the same kind of mesh: near-equilateral triangles,
# circumcentres, Voronoi dual). Not `periodic_triangular_mesh`: on its right triangles with a
# centroid dual, ICON's div(grad) is a checkerboard, not a Laplacian. A tracer on the cells diffuses with ICON's operators: the
# normal gradient on the edges (`E2C`) and its divergence on the cells (`C2E`,
# `neighbor_sum`). The backend comes from `STENCILKIT_EXAMPLE_BACKEND` (`embedded`, `cpu`,
# `gpu`); the grid file and the plot go to `STENCILKIT_EXAMPLE_OUT` (default: `.`).

# %%
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

import stencilkit as gtx
from stencilkit.io import read_icon_grid, write_icon_grid
from stencilkit.meshes import C2E, E2C, C2EDim, Cell, Edge, periodic_equilateral_mesh
from stencilkit.meshes.plot import plot_cell_field

_BACKENDS = {"embedded": None, "cpu": gtx.cpu, "gpu": gtx.gpu}
_NAME = os.environ.get("STENCILKIT_EXAMPLE_BACKEND", "embedded")
if _NAME not in _BACKENDS:
    raise SystemExit(f"STENCILKIT_EXAMPLE_BACKEND={_NAME!r}: use one of {', '.join(_BACKENDS)}")
BACKEND = _BACKENDS[_NAME]
OUT = Path(os.environ.get("STENCILKIT_EXAMPLE_OUT", "."))
OUT.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## The grid file
#
# ICON stores each neighbour table transposed and 1-based (`edge_of_cell(nv, cell)`, ...);
# the reader gives 0-based `int32` tables with -1 for a missing neighbour, and the geometry.

# %%
GRID = OUT / "torus_grid.nc"
try:  # 24 triangles per row, 28 rows: the triangles closest to equilateral
    from grid_generator import TorusGridSpec, generate_grid

    generate_grid(TorusGridSpec(nx=24, ny=28, edge_length=1 / 24)).to_netcdf(GRID)
    source = "ICON torus grid from icon-grid-generator"
except ImportError:
    write_icon_grid(periodic_equilateral_mesh(24, 28), GRID)
    source = "stencilkit's periodic_equilateral_mesh (icon-grid-generator is not installed)"
mesh = read_icon_grid(GRID)
with xr.open_dataset(GRID) as ds:  # the torus is domain_length x domain_height
    LX, LY = float(ds.attrs["domain_length"]), float(ds.attrs["domain_height"])
print(f"{mesh.n_cells} cells, {mesh.n_edges} edges, {mesh.n_vertices} vertices: {source}")

# %% [markdown]
# ## The operators
#
# `grad` is the normal derivative on each edge (from cell `E2C[0]` to `E2C[1]`), `lap` its
# divergence: a sum over the three edges of each cell with the coefficients
# `orientation * edge_length / cell_area`.

# %%
CellField = gtx.Field[gtx.Dims[Cell], gtx.float64]


@gtx.field_operator
def laplacian(
    q: CellField,
    inv_dual_edge_length: gtx.Field[gtx.Dims[Edge], gtx.float64],
    geofac_div: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64],
) -> CellField:
    grad = (q(E2C[1]) - q(E2C[0])) * inv_dual_edge_length
    return gtx.neighbor_sum(grad(C2E) * geofac_div, axis=C2EDim)


@gtx.field_operator
def diffusion_step(
    q: CellField,
    inv_dual_edge_length: gtx.Field[gtx.Dims[Edge], gtx.float64],
    geofac_div: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64],
    nu: gtx.float64,
) -> CellField:
    return q + nu * laplacian(q, inv_dual_edge_length, geofac_div)


@gtx.program(backend=BACKEND)
def diffuse(
    q: CellField,
    inv_dual_edge_length: gtx.Field[gtx.Dims[Edge], gtx.float64],
    geofac_div: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64],
    nu: gtx.float64,
    out: CellField,
):
    diffusion_step(q, inv_dual_edge_length, geofac_div, nu, out=out)


@gtx.program(backend=BACKEND)
def apply_laplacian(
    q: CellField,
    inv_dual_edge_length: gtx.Field[gtx.Dims[Edge], gtx.float64],
    geofac_div: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64],
    out: CellField,
):
    laplacian(q, inv_dual_edge_length, geofac_div, out=out)


# %% [markdown]
# ## Fields and coefficients from the grid's geometry

# %%
allocator = gtx.gpu if BACKEND is gtx.gpu else None
geofac = mesh.c2e_orientation * mesh.edge_length[mesh.c2e] / mesh.cell_area[:, None]
inv_dual = gtx.as_field([Edge], 1.0 / mesh.dual_edge_length, allocator=allocator)
geofac_div = gtx.as_field([Cell, C2EDim], geofac, allocator=allocator)
area = gtx.as_field([Cell], mesh.cell_area, allocator=allocator)
provider = mesh.offset_provider(allocator=allocator)

r2 = (mesh.cell_x - 0.35) ** 2 + (mesh.cell_y - 0.6) ** 2
q0 = np.exp(-r2 / 0.01) + 0.5 * (mesh.cell_x > 0.7)
q = gtx.as_field([Cell], q0, allocator=allocator)
p = gtx.as_field([Cell], q0, allocator=allocator)

# %% [markdown]
# ## The Laplacian is a Laplacian
#
# On this mesh `laplacian(psi)` of `psi = sin(2 pi x / LX) sin(2 pi y / LY)` approaches
# `-k^2 psi`; the error is first order in the edge length (here 1/24), as on any ICON grid.

# %%
kx, ky = 2 * np.pi / LX, 2 * np.pi / LY
wave = np.sin(kx * mesh.cell_x) * np.sin(ky * mesh.cell_y)
lap = gtx.as_field([Cell], np.zeros(mesh.n_cells), allocator=allocator)
apply_laplacian(
    gtx.as_field([Cell], wave, allocator=allocator),
    inv_dual,
    geofac_div,
    lap,
    offset_provider=provider,
)
lap_error = float(np.abs(lap.asnumpy() + (kx**2 + ky**2) * wave).max()) / (kx**2 + ky**2)
print(f"max |lap(psi) + k^2 psi| / k^2 = {lap_error:.3f}")
assert lap_error < 1 / 24

# %% [markdown]
# ## Time stepping; the tracer mass is conserved on the torus
#
# `np.sum` of a field is a NumPy scalar (a 0-d CuPy array for a GPU field).

# %%
STEPS = 30
NU = 0.1 * float(mesh.cell_area.min())
mass0 = float(np.sum(q * area))
for _ in range(STEPS):
    diffuse(q, inv_dual, geofac_div, NU, p, offset_provider=provider)
    q, p = p, q
mass = float(np.sum(q * area))
print(f"mass before {mass0:.12f}, after {mass:.12f}")
assert abs(mass - mass0) < 1e-12 * abs(mass0)

# %% [markdown]
# ## Check against NumPy gathers

# %%
ref = q0.copy()
for _ in range(STEPS):
    grad = (ref[mesh.e2c[:, 1]] - ref[mesh.e2c[:, 0]]) / mesh.dual_edge_length
    ref = ref + NU * (grad[mesh.c2e] * geofac).sum(axis=1)
np.testing.assert_allclose(q.asnumpy(), ref, rtol=1e-11, atol=1e-13)
print("matches NumPy; range", float(q.min()), "..", float(q.max()))

# %% [markdown]
# ## Plot on the mesh
#
# `plot_cell_field` draws one triangle per cell (cells that wrap around the torus unwrapped,
# and drawn again on the other side of the seam), labels the axes and the colour bar.

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), constrained_layout=True)
for ax, values, title in ((axes[0], q0, "initial tracer"), (axes[1], q, f"after {STEPS} steps")):
    plot_cell_field(mesh, values, ax=ax, cmap="magma", vmin=0.0, vmax=1.0, label="tracer")
    ax.set_title(title)
    ax.set_aspect("equal")
fig.savefig(OUT / "icon_mesh_diffusion.png", dpi=80)
print("wrote", OUT / "icon_mesh_diffusion.png")
