"""Unstructured meshes for ICON-like stencils: neighbour tables, geometry and offset providers.

>>> from stencilkit.meshes import periodic_triangular_mesh
>>> mesh = periodic_triangular_mesh(16, 16)
>>> provider = mesh.offset_provider()          # {"E2C": Connectivity, "C2E": ..., ...}
"""

from .mesh import (
    C2E,
    C2V,
    E2C,
    E2V,
    OFFSETS,
    SKIP_VALUE,
    V2C,
    V2E,
    C2EDim,
    C2VDim,
    Cell,
    E2CDim,
    E2VDim,
    Edge,
    Mesh,
    V2CDim,
    V2EDim,
    Vertex,
)
from .reorder import morton_keys, reorder_for_locality
from .triangular import periodic_equilateral_mesh, periodic_triangular_mesh

__all__ = [
    "C2E",
    "C2EDim",
    "C2V",
    "C2VDim",
    "Cell",
    "E2C",
    "E2CDim",
    "E2V",
    "E2VDim",
    "Edge",
    "Mesh",
    "OFFSETS",
    "SKIP_VALUE",
    "V2C",
    "V2CDim",
    "V2E",
    "V2EDim",
    "Vertex",
    "morton_keys",
    "periodic_equilateral_mesh",
    "periodic_triangular_mesh",
    "reorder_for_locality",
]
