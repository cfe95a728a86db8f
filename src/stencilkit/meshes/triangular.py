"""A structured grid of quads, each split into two triangles, as an unstructured ICON-like mesh.

The unit square holds ``nx x ny`` quads of ``dx = 1/nx`` by ``dy = 1/ny``; quad ``(i, j)`` is cut
along its diagonal from ``(i, j)`` to ``(i+1, j+1)`` into a lower cell ``2q`` (below the
diagonal) and an upper cell ``2q + 1``, where ``q = j * nx + i``. Every vertex ``(i, j)`` owns
three edges: horizontal to ``(i+1, j)``, vertical to ``(i, j+1)`` and diagonal to
``(i+1, j+1)``, numbered in three blocks (all horizontal, all vertical, all diagonal edges).

On the periodic mesh (a torus) every table is full. On the bounded mesh the outer edges and
vertices have fewer neighbours (-1 in the tables); boundary edges are renumbered to come first.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .mesh import SKIP_VALUE, FloatArray, IntArray, Mesh

_Ints = npt.NDArray[np.int64]


class _Grid:
    """Index arithmetic of the structured blocks (vertices, quads, the three edge families)."""

    def __init__(self, nx: int, ny: int, periodic: bool, shift: int = 0) -> None:
        # ``shift``: on the sheared torus, row ``j + ny`` is row ``j`` moved ``shift`` columns
        self.nx, self.ny, self.periodic, self.shift = nx, ny, periodic, shift
        extra = 0 if periodic else 1
        # (columns, rows) of each block; on the torus the extra row/column wraps onto the first
        self.shape = {
            "vertex": (nx + extra, ny + extra),
            "quad": (nx, ny),
            "h": (nx, ny + extra),
            "v": (nx + extra, ny),
            "d": (nx, ny),
        }
        n_h, n_v = np.prod(self.shape["h"]), np.prod(self.shape["v"])
        self.base = {"vertex": 0, "quad": 0, "h": 0, "v": int(n_h), "d": int(n_h + n_v)}

    def count(self, block: str) -> int:
        cols, rows = self.shape[block]
        return cols * rows

    def grid(self, block: str) -> tuple[_Ints, _Ints]:
        """``(i, j)`` of every element of a block, flattened row by row (``j * cols + i``)."""
        cols, rows = self.shape[block]
        j, i = np.divmod(np.arange(cols * rows, dtype=np.int64), cols)
        return i, j

    def index(self, block: str, i: _Ints, j: _Ints) -> _Ints:
        """The index of element ``(i, j)``: wrapped on the torus, -1 outside a bounded mesh."""
        cols, rows = self.shape[block]
        if self.periodic:
            i = i + (j // rows) * self.shift
            return self.base[block] + (j % rows) * cols + (i % cols)
        inside = (i >= 0) & (i < cols) & (j >= 0) & (j < rows)
        return np.where(inside, self.base[block] + j * cols + i, SKIP_VALUE)

    def cell(self, i: _Ints, j: _Ints, upper: int) -> _Ints:
        q = self.index("quad", i, j)
        return np.where(q >= 0, 2 * q + upper, SKIP_VALUE)


def periodic_triangular_mesh(nx: int, ny: int, *, bounded: bool = False) -> Mesh:
    """The ``nx x ny``-quad triangular mesh of the unit square, periodic in both directions.

    Right triangles with centroids as cell centres: the dual edges (centroid to centroid) do
    not cross the edges at right angles, so ICON's div(grad) of a smooth field is a
    checkerboard, not its Laplacian (the error grows with resolution). Good for tables, skip
    values and identities that do not depend on the geometry; for a model mesh use
    :func:`periodic_equilateral_mesh` (or an ICON grid file:
    :func:`stencilkit.io.icon_grid.read_icon_grid`).

    ``bounded=True`` gives the same mesh without the periodic wrap: ``(nx+1)(ny+1)`` vertices,
    boundary entries in the tables are -1 (skip values).

    Its tables are a program's ``offset_provider`` (``run(vn, div,
    offset_provider=mesh.offset_provider())``), its dimensions ``mesh.Cell``, ``mesh.Edge``,
    ``mesh.C2E``, ...:

    >>> mesh = periodic_triangular_mesh(8, 8)
    >>> mesh.n_vertices, mesh.n_edges, mesh.n_cells
    (64, 192, 128)
    >>> mesh.n_vertices - mesh.n_edges + mesh.n_cells     # a torus
    0
    >>> sorted(mesh.offset_provider())
    ['C2E', 'C2V', 'E2C', 'E2V', 'V2C', 'V2E']
    >>> float(mesh.cell_area.sum())                       # the unit square
    1.0
    """
    periodic = not bounded
    smallest = 2 if periodic else 1
    if int(nx) != nx or int(ny) != ny or nx < smallest or ny < smallest:
        raise ValueError(
            f"a {'periodic' if periodic else 'bounded'} triangular mesh needs at least"
            f" {smallest} x {smallest} quads, got nx={nx}, ny={ny}"
        )
    return _triangular(_Grid(int(nx), int(ny), periodic), sheared=False)


def periodic_equilateral_mesh(nx: int, ny: int | None = None) -> Mesh:
    """An ICON-like periodic mesh of the unit square: near-equilateral triangles, Voronoi dual.

    ``nx`` triangles' bases per row, ``ny`` rows (even; by default the even number nearest to
    ``nx * 2 / sqrt(3)``, which makes the triangles closest to equilateral). Every second row of
    vertices is shifted by half an edge, so each triangle is isosceles with base ``1/nx`` and
    height ``1/ny`` (all angles acute). As on ICON grids, cell centres are the circumcentres,
    the dual edges join the circumcentres of neighbouring cells (orthogonal to the edges, of
    length ``dual_edge_length``) and the dual cells are the Voronoi cells of the vertices, so
    the textbook discrete operators (normal gradient ``(q(E2C[1]) - q(E2C[0])) /
    dual_edge_length``, divergence ``sum(orientation * edge_length * v) / cell_area``) are
    consistent: their Laplacian converges to the exact one.

    :func:`periodic_triangular_mesh` (right triangles, centroid dual) has the same tables but
    not this property: its div(grad) of a smooth field is a checkerboard, not the Laplacian.

    >>> mesh = periodic_equilateral_mesh(16)
    >>> mesh.ny, mesh.n_cells, mesh.n_vertices - mesh.n_edges + mesh.n_cells
    (18, 576, 0)
    >>> round(float(mesh.cell_area.sum()), 12), round(float(mesh.dual_area.sum()), 12)
    (1.0, 1.0)
    """
    if int(nx) != nx or nx < 2:
        raise ValueError(f"a periodic equilateral mesh needs nx >= 2 triangles per row, got {nx}")
    if ny is None:
        ny = max(2, 2 * round(nx / np.sqrt(3.0)))
    if int(ny) != ny or ny < 2 or ny % 2:
        raise ValueError(
            f"a periodic equilateral mesh needs an even number of rows ny >= 2 (every second row"
            f" is shifted by half an edge), got ny={ny}; leave ny out for the nearest to"
            f" equilateral"
        )
    return _triangular(_Grid(int(nx), int(ny), True, shift=-(int(ny) // 2)), sheared=True)


def _triangular(g: _Grid, *, sheared: bool) -> Mesh:
    dx, dy = 1.0 / g.nx, 1.0 / g.ny

    # cells: counterclockwise vertices; edge k joins vertex k and vertex k+1
    qi, qj = g.grid("quad")

    def vtx(di: int, dj: int) -> _Ints:
        return g.index("vertex", qi + di, qj + dj)

    lower_v = [vtx(0, 0), vtx(1, 0), vtx(1, 1)]
    upper_v = [vtx(0, 0), vtx(1, 1), vtx(0, 1)]
    lower_e = [g.index("h", qi, qj), g.index("v", qi + 1, qj), g.index("d", qi, qj)]
    upper_e = [g.index("d", qi, qj), g.index("h", qi, qj + 1), g.index("v", qi, qj)]
    c2v = _interleave(lower_v, upper_v)
    c2e = _interleave(lower_e, upper_e)

    # edges: start vertex and tangent (in grid steps) per family
    starts, tangents, e2v_blocks = [], [], []
    for block, (ti, tj) in (("h", (1, 0)), ("v", (0, 1)), ("d", (1, 1))):
        i, j = g.grid(block)
        starts.append(np.stack([i, j], axis=1))
        tangents.append(np.broadcast_to([ti, tj], (len(i), 2)))
        e2v_blocks.append(np.stack([g.index("vertex", i, j), g.index("vertex", i + ti, j + tj)], 1))
    start = np.concatenate(starts).astype(np.float64)
    tangent = np.concatenate(tangents).astype(np.float64)
    e2v = np.concatenate(e2v_blocks)
    n_edges = len(e2v)

    # e2c[e, 0] is the cell left of the tangent: the one walking the edge forwards
    cells = np.repeat(np.arange(len(c2e), dtype=np.int64), 3)
    edges = c2e.ravel()
    forward = e2v[edges, 0] == c2v.ravel()
    left = np.full(n_edges, SKIP_VALUE, np.int64)
    right = np.full(n_edges, SKIP_VALUE, np.int64)
    left[edges[forward]] = cells[forward]
    right[edges[~forward]] = cells[~forward]
    # a boundary edge with its only cell on the right is turned round: normals point outwards
    flip = left == SKIP_VALUE
    left[flip], right[flip] = right[flip], SKIP_VALUE
    e2v[flip] = e2v[flip][:, ::-1]
    start[flip] += tangent[flip]
    tangent[flip] *= -1.0
    e2c = np.stack([left, right], axis=1)

    # vertices: six edges and six cells counterclockwise, starting at the +x edge
    vi, vj = g.grid("vertex")
    v2e = np.stack(
        [
            g.index("h", vi, vj),
            g.index("d", vi, vj),
            g.index("v", vi, vj),
            g.index("h", vi - 1, vj),
            g.index("d", vi - 1, vj - 1),
            g.index("v", vi, vj - 1),
        ],
        axis=1,
    )
    v2c = np.stack(
        [
            g.cell(vi, vj, 0),
            g.cell(vi, vj, 1),
            g.cell(vi - 1, vj, 0),
            g.cell(vi - 1, vj - 1, 1),
            g.cell(vi - 1, vj - 1, 0),
            g.cell(vi, vj - 1, 1),
        ],
        axis=1,
    )
    v2e, v2c = _rotate_missing_last(v2e, v2c)

    # boundary edges first (ICON numbers its lateral boundary first)
    order = np.argsort(e2c[:, 1] != SKIP_VALUE, kind="stable")
    renumber = np.empty(n_edges, np.int64)
    renumber[order] = np.arange(n_edges)
    e2c, e2v, start, tangent = e2c[order], e2v[order], start[order], tangent[order]
    c2e = renumber[c2e]
    v2e = np.where(v2e == SKIP_VALUE, SKIP_VALUE, renumber[np.maximum(v2e, 0)])

    return _with_geometry(g, dx, dy, e2c, c2e, e2v, v2e, c2v, v2c, start, tangent, sheared)


def _interleave(lower: list[Any], upper: list[Any]) -> Any:
    """Rows ``2q`` from ``lower``, rows ``2q + 1`` from ``upper``."""
    return np.stack([np.stack(lower, 1), np.stack(upper, 1)], axis=1).reshape(-1, len(lower))


def _rotate_missing_last(v2e: _Ints, v2c: _Ints) -> tuple[_Ints, _Ints]:
    """Turn each row so that a boundary vertex's neighbours come first, still counterclockwise.

    The missing edges of a vertex are one contiguous (cyclic) run, so the row starts at the
    first edge after that run; cells turn with the edges, keeping ``v2c[v, k]`` between
    ``v2e[v, k]`` and ``v2e[v, k+1]``.
    """
    valid = v2e != SKIP_VALUE
    first = valid & ~np.roll(valid, 1, axis=1)
    shift = np.argmax(first, axis=1)
    cols = (shift[:, None] + np.arange(v2e.shape[1])) % v2e.shape[1]
    return np.take_along_axis(v2e, cols, 1), np.take_along_axis(v2c, cols, 1)


def _with_geometry(
    g: _Grid,
    dx: float,
    dy: float,
    e2c: _Ints,
    c2e: _Ints,
    e2v: _Ints,
    v2e: _Ints,
    c2v: _Ints,
    v2c: _Ints,
    start: FloatArray,
    tangent: FloatArray,
    sheared: bool,
) -> Mesh:
    # lattice (i, j) -> (x, y): a rectangular lattice, or one with row j moved j/2 columns left
    lattice = np.array([[dx, 0.0], [-dx / 2 if sheared else 0.0, dy]])
    vi, vj = g.grid("vertex")
    qi, qj = g.grid("quad")
    if sheared:  # circumcentres (Voronoi dual), as on ICON grids
        corners = [
            np.stack([qi + a, qj + b], axis=1).astype(np.float64) @ lattice
            for a, b in ((0, 0), (1, 0), (1, 1), (0, 1))
        ]
        lower, upper = _circumcentre(*corners[:3]), _circumcentre(corners[0], *corners[2:])
        centroid = _interleave([lower[:, 0], lower[:, 1]], [upper[:, 0], upper[:, 1]])
    else:  # centroids: lower cell (i + 2/3, j + 1/3), upper cell (i + 1/3, j + 2/3)
        centroid = _interleave([qi + 2 / 3, qj + 1 / 3], [qi + 1 / 3, qj + 2 / 3]) @ lattice
    t = tangent @ lattice
    edge_length = np.hypot(t[:, 0], t[:, 1])
    normal = np.stack([t[:, 1], -t[:, 0]], axis=1) / edge_length[:, None]  # right of tangent
    midpoint = start @ lattice + t / 2

    def towards(cells: _Ints) -> FloatArray:
        """From each edge midpoint to the centroid of a cell (0 where there is none)."""
        d = centroid[np.maximum(cells, 0)] - midpoint
        if g.periodic:
            d -= np.round(d)  # nearest image on the unit torus
        out: FloatArray = np.where((cells != SKIP_VALUE)[:, None], d, 0.0)
        return out

    dual_edge_length = np.einsum("ed,ed->e", towards(e2c[:, 1]) - towards(e2c[:, 0]), normal)
    cell_area = np.full(len(c2e), dx * dy / 2)
    if sheared:  # Voronoi cells: each edge's kite (edge x dual edge / 2) halved between its ends
        kite = edge_length * dual_edge_length / 4
        dual_area = np.bincount(e2v.ravel(), np.repeat(kite, 2), minlength=g.count("vertex"))
    else:
        dual_area = np.bincount(
            c2v.ravel(), weights=np.repeat(cell_area / 3, 3), minlength=g.count("vertex")
        )
    c2e_orientation = np.where(e2c[c2e, 0] == np.arange(len(c2e))[:, None], 1.0, -1.0)
    here = np.arange(len(v2e))[:, None]
    ends = e2v[np.maximum(v2e, 0)]
    v2e_orientation = np.select(
        [v2e == SKIP_VALUE, ends[..., 1] == here, ends[..., 0] == here], [0.0, 1.0, -1.0], np.nan
    )
    vertex = np.stack([vi, vj], axis=1).astype(np.float64) @ lattice
    if g.periodic:
        midpoint %= 1.0
        vertex %= 1.0
        centroid %= 1.0
    return Mesh(
        nx=g.nx,
        ny=g.ny,
        periodic=g.periodic,
        n_boundary_edges=int((e2c[:, 1] == SKIP_VALUE).sum()),
        e2c=_i32(e2c),
        c2e=_i32(c2e),
        e2v=_i32(e2v),
        v2e=_i32(v2e),
        c2v=_i32(c2v),
        v2c=_i32(v2c),
        vertex_x=_f64(vertex[:, 0]),
        vertex_y=_f64(vertex[:, 1]),
        cell_x=_f64(centroid[:, 0]),
        cell_y=_f64(centroid[:, 1]),
        edge_x=_f64(midpoint[:, 0]),
        edge_y=_f64(midpoint[:, 1]),
        edge_normal_x=_f64(normal[:, 0]),
        edge_normal_y=_f64(normal[:, 1]),
        edge_length=_f64(edge_length),
        dual_edge_length=_f64(dual_edge_length),
        cell_area=_f64(cell_area),
        dual_area=_f64(dual_area),
        c2e_orientation=_f64(c2e_orientation),
        v2e_orientation=_f64(v2e_orientation),
    )


def _circumcentre(a: FloatArray, b: FloatArray, c: FloatArray) -> FloatArray:
    """The circumcentre of each triangle ``(a[k], b[k], c[k])`` (rows of points)."""
    ab, ac = b - a, c - a
    d = 2.0 * (ab[:, 0] * ac[:, 1] - ab[:, 1] * ac[:, 0])
    ab2, ac2 = (ab**2).sum(axis=1), (ac**2).sum(axis=1)
    ux = (ac[:, 1] * ab2 - ab[:, 1] * ac2) / d
    uy = (ab[:, 0] * ac2 - ac[:, 0] * ab2) / d
    out: FloatArray = a + np.stack([ux, uy], axis=1)
    return out


def _i32(a: Any) -> IntArray:
    return np.ascontiguousarray(a, dtype=np.int32)


def _f64(a: Any) -> FloatArray:
    return np.ascontiguousarray(a, dtype=np.float64)
