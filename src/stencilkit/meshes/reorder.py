"""Renumbering a mesh for memory locality: cells, edges and vertices along a space-filling curve.

On a GPU, a warp of 32 consecutive edges gathering ``c(E2C)`` touches as many memory sectors as
there are distinct groups of neighbouring cell indices. A mesh numbered family by family (all
horizontal edges, then all vertical ones, ...) puts the cells of consecutive edges far apart, so
each gather drags in sectors it uses a fraction of. ICON grids are numbered so that neighbours in
space are neighbours in memory; ``reorder_for_locality`` gives any ``Mesh`` that property by
sorting each location along a Morton (Z-order) curve of its coordinates.

>>> from stencilkit.meshes import periodic_triangular_mesh, reorder_for_locality
>>> mesh = reorder_for_locality(periodic_triangular_mesh(8, 8))
>>> mesh.n_cells, mesh.n_edges
(128, 192)
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from .mesh import SKIP_VALUE, FloatArray, IntArray, Mesh

_U64 = npt.NDArray[np.uint64]
_BITS = 16  # 65536 steps per axis: finer than any mesh this module builds


def morton_keys(x: FloatArray, y: FloatArray) -> _U64:
    """Z-order key of points in the unit square: the bits of x and y interleaved (x lowest)."""
    scale = float(1 << _BITS)

    def quantize(v: FloatArray) -> _U64:
        return np.clip(np.floor(np.asarray(v) * scale), 0, scale - 1).astype(np.uint64)

    def spread(v: _U64) -> _U64:  # bit b of v moves to bit 2b
        for shift, mask in ((8, 0x00FF00FF), (4, 0x0F0F0F0F), (2, 0x33333333), (1, 0x55555555)):
            v = (v | (v << np.uint64(shift))) & np.uint64(mask)
        return v

    keys: _U64 = spread(quantize(x)) | (spread(quantize(y)) << np.uint64(1))
    return keys


def _inverse(order: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    inv = np.empty_like(order)
    inv[order] = np.arange(len(order))
    return inv


def _renumber(table: IntArray, new_index: npt.NDArray[np.int64]) -> IntArray:
    """Entries of ``table`` mapped to their new indices; skip values stay skip values."""
    mapped = np.where(table == SKIP_VALUE, SKIP_VALUE, new_index[np.maximum(table, 0)])
    return np.ascontiguousarray(mapped, dtype=np.int32)


def reorder_for_locality(mesh: Mesh) -> Mesh:
    """The same mesh with cells, edges and vertices numbered along a Morton curve.

    Every table, geometry array and orientation moves with its element, so a stencil gives the
    same values, permuted. Boundary edges of a bounded mesh stay first (numbered
    ``0 .. n_boundary_edges``), each group in curve order. Row contents keep their order
    (counterclockwise rows stay counterclockwise).
    """
    cells = np.argsort(morton_keys(mesh.cell_x, mesh.cell_y), kind="stable")
    interior_edge = mesh.e2c[:, 1] != SKIP_VALUE
    edges = np.lexsort((morton_keys(mesh.edge_x, mesh.edge_y), interior_edge))
    vertices = np.argsort(morton_keys(mesh.vertex_x, mesh.vertex_y), kind="stable")
    new_c, new_e, new_v = _inverse(cells), _inverse(edges), _inverse(vertices)

    def rows(a: FloatArray, order: npt.NDArray[np.int64]) -> FloatArray:
        return np.ascontiguousarray(a[order])

    return dataclasses.replace(
        mesh,
        e2c=_renumber(mesh.e2c[edges], new_c),
        c2e=_renumber(mesh.c2e[cells], new_e),
        e2v=_renumber(mesh.e2v[edges], new_v),
        v2e=_renumber(mesh.v2e[vertices], new_e),
        c2v=_renumber(mesh.c2v[cells], new_v),
        v2c=_renumber(mesh.v2c[vertices], new_c),
        vertex_x=rows(mesh.vertex_x, vertices),
        vertex_y=rows(mesh.vertex_y, vertices),
        cell_x=rows(mesh.cell_x, cells),
        cell_y=rows(mesh.cell_y, cells),
        edge_x=rows(mesh.edge_x, edges),
        edge_y=rows(mesh.edge_y, edges),
        edge_normal_x=rows(mesh.edge_normal_x, edges),
        edge_normal_y=rows(mesh.edge_normal_y, edges),
        edge_length=rows(mesh.edge_length, edges),
        dual_edge_length=rows(mesh.dual_edge_length, edges),
        cell_area=rows(mesh.cell_area, cells),
        dual_area=rows(mesh.dual_area, vertices),
        c2e_orientation=rows(mesh.c2e_orientation, cells),
        v2e_orientation=rows(mesh.v2e_orientation, vertices),
    )
