"""Plotting fields on a :class:`~stencilkit.meshes.Mesh` with matplotlib (the ``plot`` extra).

- :func:`triangulation`: a ``matplotlib.tri.Triangulation`` with one triangle per cell, in
  cell order (triangle ``c`` is cell ``c``);
- :func:`plot_cell_field`: one colour per cell (``tripcolor`` with face colours);
- :func:`plot_vertex_field`: values at the vertices, interpolated over the cells (Gouraud);
- :func:`plot_edge_field`: each edge a line segment coloured by its value.

Every plot has labelled axes (``x``, ``y``: the mesh coordinates) and, by default, a colour bar
labelled ``label=`` (default: "<Cell|Vertex|Edge> value"). On a periodic mesh the cells (and
edges) that wrap around the torus are drawn unwrapped, their vertices moved by a period, so no
triangle stretches across the domain, and drawn a second time moved by one period the other
way; the axes are limited to one period, so the seam has no gap. ``period=`` sets the period
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


def _copies(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], period: Period
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The shapes (rows of corner coordinates ``x``, ``y``) to draw on a periodic mesh: each
    once as it is, plus a copy moved by one period for each that sticks out of ``[0, period)``
    (both directions, and the corner copy). Returns (index of the original row, x, y)."""
    index = [np.arange(len(x))]
    xs, ys = [x], [y]
    shifts_x = [0.0] if period[0] is None else [0.0, -period[0], period[0]]
    shifts_y = [0.0] if period[1] is None else [0.0, -period[1], period[1]]
    for sx in shifts_x:
        for sy in shifts_y:
            if sx == 0.0 and sy == 0.0:
                continue
            moved_x, moved_y = x + sx, y + sy
            inside = np.ones(len(x), dtype=bool)
            if period[0] is not None:
                inside &= (moved_x.max(1) > 0) & (moved_x.min(1) < period[0])
            if period[1] is not None:
                inside &= (moved_y.max(1) > 0) & (moved_y.min(1) < period[1])
            index.append(np.flatnonzero(inside))
            xs.append(moved_x[inside])
            ys.append(moved_y[inside])
    return np.concatenate(index), np.concatenate(xs), np.concatenate(ys)


def _cell_triangles(mesh: Mesh, period: Period | None) -> tuple[Any, npt.NDArray[np.intp]]:
    """The triangulation to draw and, per triangle, its cell: :func:`triangulation` where
    nothing wraps, else every cell plus the copies that fill the seam."""
    p = _period(mesh, period)
    if p == (None, None):
        return triangulation(mesh, period=period), np.arange(mesh.n_cells)
    mtri = require("matplotlib.tri", "plot", "stencilkit.meshes.plot")
    cell, x, y = _copies(*_corners(mesh, p), p)
    tri = mtri.Triangulation(
        x.ravel(), y.ravel(), triangles=np.arange(3 * len(cell)).reshape(-1, 3)
    )
    return tri, cell


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
    _, ax = plt.subplots(layout="constrained")
    ax.set_aspect("equal")
    return ax


def _finish(
    ax: Any, mesh: Mesh, art: Any, period: Period | None, colorbar: bool, label: str
) -> None:
    """Axis labels, limits to the mesh (one period where periodic: no margin, no seam) and the
    labelled colour bar."""
    p = _period(mesh, period)
    for coords, size, set_lim in (
        (mesh.vertex_x, p[0], ax.set_xlim),
        (mesh.vertex_y, p[1], ax.set_ylim),
    ):
        set_lim((0.0, size) if size is not None else (float(coords.min()), float(coords.max())))
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    if colorbar:
        ax.figure.colorbar(art, ax=ax, label=label)


def plot_cell_field(
    mesh: Mesh,
    values: Any,
    *,
    ax: Any = None,
    level: int = 0,
    period: Period | None = None,
    colorbar: bool = True,
    label: str = "Cell value",
    **kwargs: Any,
) -> Any:
    """Draw one colour per cell; returns the ``PolyCollection`` (``.figure`` is its figure).

    ``label`` names the colour bar; ``kwargs`` go to ``Axes.tripcolor`` (``cmap=``,
    ``vmin=``, ...). On a periodic mesh the collection also holds the copies of the cells that
    cross the seam (``art.get_array()`` has one value per drawn triangle).

    >>> art = plot_cell_field(mesh, div, level=3, cmap="RdBu_r", label="divergence (1/s)")
    """
    ax = _axes(ax)
    face = _values(values, mesh.n_cells, "Cell", level)
    tri, cell = _cell_triangles(mesh, period)
    art = ax.tripcolor(tri, facecolors=face[cell], **kwargs)
    _finish(ax, mesh, art, period, colorbar, label)
    return art


def plot_vertex_field(
    mesh: Mesh,
    values: Any,
    *,
    ax: Any = None,
    level: int = 0,
    period: Period | None = None,
    colorbar: bool = True,
    label: str = "Vertex value",
    **kwargs: Any,
) -> Any:
    """Draw values at the vertices, shaded across each cell; returns the matplotlib artist.

    >>> art = plot_vertex_field(mesh, psi, shading="gouraud", label="stream function")
    """
    ax = _axes(ax)
    point = _values(values, mesh.n_vertices, "Vertex", level)
    tri, cell = _cell_triangles(mesh, period)
    if len(tri.x) != mesh.n_vertices:  # one point per drawn corner: each takes its vertex's value
        point = point[mesh.c2v[cell]].ravel()
    kwargs.setdefault("shading", "gouraud")
    art = ax.tripcolor(tri, point, **kwargs)
    _finish(ax, mesh, art, period, colorbar, label)
    return art


def plot_edge_field(
    mesh: Mesh,
    values: Any,
    *,
    ax: Any = None,
    level: int = 0,
    period: Period | None = None,
    colorbar: bool = True,
    label: str = "Edge value",
    **kwargs: Any,
) -> Any:
    """Draw each edge as a line segment (vertex to vertex) in the colour of its value; returns
    the ``LineCollection``. ``kwargs`` go to it (``linewidths=``, ``cmap=``, ...).

    >>> art = plot_edge_field(mesh, vn, linewidths=2, label="normal velocity (m/s)")
    """
    collections = require("matplotlib.collections", "plot", "stencilkit.meshes.plot")
    ax = _axes(ax)
    colour = _values(values, mesh.n_edges, "Edge", level)
    p = _period(mesh, period)
    x, y = mesh.vertex_x[mesh.e2v], mesh.vertex_y[mesh.e2v]
    for c, size in ((x, p[0]), (y, p[1])):  # unwrap each edge around its first vertex
        if size is not None:
            c -= size * np.round((c - c[:, :1]) / size)
    edge, x, y = _copies(x, y, p)
    kwargs.setdefault("linewidths", 2.0)
    art = collections.LineCollection(np.stack([x, y], axis=-1), array=colour[edge], **kwargs)
    ax.add_collection(art)
    _finish(ax, mesh, art, period, colorbar, label)
    return art
