"""The ``Mesh`` record: an unstructured triangular mesh as NumPy tables, its dimensions and offsets.

The names follow GT4Py / icon4py: horizontal dimensions ``Cell``, ``Edge``, ``Vertex``; local
dimensions named after their table (``E2CDim = Dimension("E2C", kind=LOCAL)``); field offsets
``E2C = FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))``. Since dimensions compare by
value, a user's own ``Cell = gtx.Dimension("Cell")`` is the same dimension as ``meshes.Cell``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ..core import Dimension, DimensionKind, FieldOffset
from ..fields import Connectivity, as_connectivity

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]

Cell = Dimension("Cell")
Edge = Dimension("Edge")
Vertex = Dimension("Vertex")
E2CDim = Dimension("E2C", kind=DimensionKind.LOCAL)
C2EDim = Dimension("C2E", kind=DimensionKind.LOCAL)
E2VDim = Dimension("E2V", kind=DimensionKind.LOCAL)
V2EDim = Dimension("V2E", kind=DimensionKind.LOCAL)
C2VDim = Dimension("C2V", kind=DimensionKind.LOCAL)
V2CDim = Dimension("V2C", kind=DimensionKind.LOCAL)
E2C = FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))
C2E = FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
E2V = FieldOffset("E2V", source=Vertex, target=(Edge, E2VDim))
V2E = FieldOffset("V2E", source=Edge, target=(Vertex, V2EDim))
C2V = FieldOffset("C2V", source=Vertex, target=(Cell, C2VDim))
V2C = FieldOffset("V2C", source=Cell, target=(Vertex, V2CDim))

OFFSETS: tuple[FieldOffset, ...] = (E2C, C2E, E2V, V2E, C2V, V2C)
SKIP_VALUE = -1


@dataclass(frozen=True, eq=False)
class Mesh:
    """A 2-D triangular mesh: counts, neighbour tables (int32, -1 = no neighbour) and geometry.

    Tables (row = element, column = local neighbour):

    - ``e2c`` (n_edges, 2): ``e2c[e, 0]`` lies left of the edge's tangent (``e2v[e, 0]`` ->
      ``e2v[e, 1]``), ``e2c[e, 1]`` right of it; the edge normal points from ``e2c[e, 0]`` to
      ``e2c[e, 1]``. On a bounded mesh a boundary edge has ``e2c[e, 1] == -1`` (its normal points
      out of the domain) and boundary edges are numbered first: ``0 .. n_boundary_edges``.
    - ``c2v`` (n_cells, 3) counterclockwise; ``c2e[c, k]`` joins ``c2v[c, k]`` and ``c2v[c, k+1]``.
    - ``e2v`` (n_edges, 2); ``v2e`` / ``v2c`` (n_vertices, 6) counterclockwise around the
      vertex, ``v2c[v, k]`` between ``v2e[v, k]`` and ``v2e[v, k+1]`` (on a bounded mesh the
      missing neighbours of a boundary vertex are -1 at the end of the row).

    Geometry (unit square, periodic or not):

    - ``edge_length``: primal edge length; ``dual_edge_length``: the distance between the
      centroids of ``e2c[e, 0]`` and ``e2c[e, 1]`` measured along the edge normal (to the edge
      midpoint at a boundary edge), so ``sum(edge_length * dual_edge_length) / 2`` is the area.
    - ``cell_area``; ``dual_area``: the barycentric area of a vertex (a third of each adjacent cell).
    - ``c2e_orientation`` (n_cells, 3): +1 where the edge normal points out of the cell, else -1.
    - ``v2e_orientation`` (n_vertices, 6): +1 where the edge normal turns counterclockwise
      around the vertex (the vertex is ``e2v[e, 1]``), -1 where it turns clockwise, 0 for a
      missing neighbour.
    - coordinates ``vertex_x/y``, cell centroids ``cell_x/y``, edge midpoints ``edge_x/y``,
      unit edge normals ``edge_normal_x/y`` (in [0, 1); wrapped on the periodic mesh).

    >>> mesh = periodic_triangular_mesh(4, 3)
    >>> mesh.n_cells, mesh.n_edges, mesh.n_vertices
    (24, 36, 12)
    """

    Cell: ClassVar[Dimension] = Cell
    Edge: ClassVar[Dimension] = Edge
    Vertex: ClassVar[Dimension] = Vertex
    E2CDim: ClassVar[Dimension] = E2CDim
    C2EDim: ClassVar[Dimension] = C2EDim
    E2VDim: ClassVar[Dimension] = E2VDim
    V2EDim: ClassVar[Dimension] = V2EDim
    C2VDim: ClassVar[Dimension] = C2VDim
    V2CDim: ClassVar[Dimension] = V2CDim
    E2C: ClassVar[FieldOffset] = E2C
    C2E: ClassVar[FieldOffset] = C2E
    E2V: ClassVar[FieldOffset] = E2V
    V2E: ClassVar[FieldOffset] = V2E
    C2V: ClassVar[FieldOffset] = C2V
    V2C: ClassVar[FieldOffset] = V2C

    nx: int
    ny: int
    periodic: bool
    n_boundary_edges: int
    e2c: IntArray
    c2e: IntArray
    e2v: IntArray
    v2e: IntArray
    c2v: IntArray
    v2c: IntArray
    vertex_x: FloatArray
    vertex_y: FloatArray
    cell_x: FloatArray
    cell_y: FloatArray
    edge_x: FloatArray
    edge_y: FloatArray
    edge_normal_x: FloatArray
    edge_normal_y: FloatArray
    edge_length: FloatArray
    dual_edge_length: FloatArray
    cell_area: FloatArray
    dual_area: FloatArray
    c2e_orientation: FloatArray
    v2e_orientation: FloatArray
    _sizes: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "_sizes",
            {"Cell": len(self.c2e), "Edge": len(self.e2c), "Vertex": len(self.v2e)},
        )

    def __repr__(self) -> str:
        """One line: the shape, the counts and what the record holds (never the arrays, which
        ``repr`` of a dataclass would print: 47,000 characters for a 16 x 16 mesh)."""
        kind = "periodic" if self.periodic else f"bounded ({self.n_boundary_edges} boundary edges)"
        tables = " ".join(o.value.lower() for o in OFFSETS)
        return (
            f"Mesh({self.nx}x{self.ny} {kind}, {self.n_cells} cells, {self.n_edges} edges, "
            f"{self.n_vertices} vertices; tables {tables}; geometry: lengths, areas, "
            "normals, orientations, coordinates)"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython: the same one line
        printer.text(repr(self))

    @property
    def n_cells(self) -> int:
        """The number of cells."""
        return self._sizes["Cell"]

    @property
    def n_edges(self) -> int:
        """The number of edges."""
        return self._sizes["Edge"]

    @property
    def n_vertices(self) -> int:
        """The number of vertices."""
        return self._sizes["Vertex"]

    def size(self, dim: Dimension) -> int:
        """The number of elements along ``Cell``, ``Edge`` or ``Vertex``."""
        return self._sizes[dim.value]

    def table(self, offset: FieldOffset | str) -> IntArray:
        """The NumPy table of an offset: ``mesh.table("E2C") is mesh.e2c``."""
        name = offset if isinstance(offset, str) else offset.value
        table: IntArray = getattr(self, name.lower())
        return table

    def offset_provider(self, allocator: Any = None) -> dict[str, Connectivity]:
        """``{"E2C": as_connectivity(...), ...}`` for every table, on ``allocator``'s device.

        >>> run(vn, out, offset_provider=mesh.offset_provider(allocator=gtx.gpu))
        """
        provider = {}
        for offset in OFFSETS:
            table = self.table(offset)
            skip = SKIP_VALUE if bool((table == SKIP_VALUE).any()) else None
            provider[offset.value] = as_connectivity(
                list(offset.target), offset.source, table, allocator=allocator, skip_value=skip
            )
        return provider
