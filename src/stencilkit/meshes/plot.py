"""Plotting fields on a :class:`Mesh` with matplotlib (the ``plot`` extra).

- :func:`triangulation`: a ``matplotlib.tri.Triangulation`` with one triangle per cell, in
  cell order (triangle ``c`` is cell ``c``);
- :func:`plot_cell_field`: one colour per cell (``tripcolor`` with face colours);
- :func:`plot_vertex_field`: values at the vertices, interpolated over the cells (Gouraud);
- :func:`plot_edge_field`: one coloured dot per edge midpoint.

On a periodic mesh the cells that wrap around the torus are drawn unwrapped (their vertices
moved by a period), so no triangle stretches across the domain; ``period=`` sets the period
for other meshes, e.g. ``period=(2 * np.pi, None)`` for longitudes in radians.

Values are NumPy arrays or fields (a GPU field is copied to the host); a field with a
vertical dimension is drawn at ``level`` (default 0). Needs ``pip install 'stencilkit[plot]'``.

>>> import matplotlib; matplotlib.use("Agg")
>>> mesh = periodic_triangular_mesh(16, 16)
>>> art = plot_cell_field(mesh, np.sin(2 * np.pi * mesh.cell_x))
>>> art.figure.savefig("cells.png")
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.errors import StencilValueError
from ..fields import Field
from ..fields.extras import require
from .mesh import Mesh

Period = tuple[float | None, float | None]


def _period(mesh: Mesh, period: Period | None) -> Period:
    if period is not None:
        return period
    return (1.0, 1.0) if mesh.periodic else (None, None)


def _corners(mesh: Mesh, period: Period) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The (n_cells, 3) corner coordinates of every cell, unwrapped around its first corner."""
    xy = []
    for coords, p in ((mesh.vertex_x, period[0]), (mesh.vertex_y, period[1])):
        c = coords[mesh.c2v]
        if p is not None:
            c = c - p * np.round((c - c[:, :1]) / p)
        xy.append(c)
    return xy[0], xy[1]


def triangulation(mesh: Mesh, *, period: Period | None = None) -> Any:
    """A ``matplotlib.tri.Triangulation`` of the cells: triangle ``c`` is cell ``c``.

    Without wrapping cells the points are the mesh vertices; on a periodic mesh each cell has
    its own three (unwrapped) points, point ``3 * c + k`` being corner ``c2v[c, k]``.

    >>> tri = triangulation(mesh)
    >>> len(tri.triangles) == mesh.n_cells
    True
    """
    mtri = require("matplotlib.tri", "plot", "stencilkit.meshes.plot")
    p = _period(mesh, period)
    if p == (None, None):
        return mtri.Triangulation(mesh.vertex_x, mesh.vertex_y, triangles=mesh.c2v)
    x, y = _corners(mesh, p)
    return mtri.Triangulation(
        x.ravel(), y.ravel(), triangles=np.arange(3 * mesh.n_cells).reshape(-1, 3)
    )


def _values(values: Any, n: int, where: str, level: int) -> npt.NDArray[Any]:
    array = values.asnumpy() if isinstance(values, Field) else np.asarray(values)
    if array.ndim == 2:
        array = array[:, level]
    if array.shape != (n,):
        raise StencilValueError(
            f"a {where} field on this mesh has {n} values, got shape {array.shape}",
            hint=f"pass one value per {where} (or a [{where}, K] field and level=)",
        )
    return array


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    plt = require("matplotlib.pyplot", "plot", "stencilkit.meshes.plot")
    _, ax = plt.subplots()
    ax.set_aspect("equal")
    return ax


def plot_cell_field(
    mesh: Mesh,
    values: Any,
    *,
    ax: Any = None,
    level: int = 0,
    period: Period | None = None,
    colorbar: bool = True,
    **kwargs: Any,
) -> Any:
    """Draw one colour per cell; returns the ``PolyCollection`` (``.figure`` is its figure).

    ``kwargs`` go to ``Axes.tripcolor`` (``cmap=``, ``vmin=``, ...).

    >>> art = plot_cell_field(mesh, div, level=3, cmap="RdBu_r")
    """
    ax = _axes(ax)
    face = _values(values, mesh.n_cells, "Cell", level)
    art = ax.tripcolor(triangulation(mesh, period=period), facecolors=face, **kwargs)
    if colorbar:
        ax.figure.colorbar(art, ax=ax)
    return art


def plot_vertex_field(
    mesh: Mesh,
    values: Any,
    *,
    ax: Any = None,
    level: int = 0,
    period: Period | None = None,
    colorbar: bool = True,
    **kwargs: Any,
) -> Any:
    """Draw values at the vertices, shaded across each cell; returns the matplotlib artist.

    >>> art = plot_vertex_field(mesh, psi, shading="gouraud")
    """
    ax = _axes(ax)
    point = _values(values, mesh.n_vertices, "Vertex", level)
    tri = triangulation(mesh, period=period)
    if len(tri.x) != mesh.n_vertices:  # one point per cell corner: each takes its vertex's value
        point = point[mesh.c2v].ravel()
    kwargs.setdefault("shading", "gouraud")
    art = ax.tripcolor(tri, point, **kwargs)
    if colorbar:
        ax.figure.colorbar(art, ax=ax)
    return art


def plot_edge_field(
    mesh: Mesh, values: Any, *, ax: Any = None, level: int = 0, colorbar: bool = True, **kwargs: Any
) -> Any:
    """Draw one coloured dot per edge, at its midpoint; returns the ``PathCollection``.

    >>> art = plot_edge_field(mesh, vn, s=4)
    """
    ax = _axes(ax)
    colour = _values(values, mesh.n_edges, "Edge", level)
    art = ax.scatter(mesh.edge_x, mesh.edge_y, c=colour, **kwargs)
    if colorbar:
        ax.figure.colorbar(art, ax=ax)
    return art
