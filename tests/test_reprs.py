"""``repr`` of meshes, fields, connectivities and programs: one short line that says what it is
(never the arrays)."""

from __future__ import annotations

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.meshes import periodic_triangular_mesh

I = gtx.Dimension("I")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


def test_mesh_repr_is_one_short_line() -> None:
    mesh = periodic_triangular_mesh(16, 16)
    text = repr(mesh)
    assert text == (
        "Mesh(16x16 periodic, 512 cells, 768 edges, 256 vertices; tables e2c c2e e2v v2e c2v "
        "v2c; geometry: lengths, areas, normals, orientations, coordinates)"
    )
    assert str(mesh) == text and "\n" not in text
    bounded = repr(periodic_triangular_mesh(4, 3, bounded=True))
    assert bounded.startswith("Mesh(4x3 bounded (14 boundary edges), 24 cells, 43 edges")


def test_field_and_connectivity_reprs_are_short(rng: np.random.Generator) -> None:
    f = gtx.as_field([I, K], rng.random((500, 80)))
    assert repr(f) == "Field({I: 0:500, K: 0:80}, float64, CPU:0)"
    mesh = periodic_triangular_mesh(16, 16)
    e2c = mesh.offset_provider()["E2C"]
    assert len(repr(e2c)) < 100 and "Edge: 0:768" in repr(e2c) and "-> Cell" in repr(e2c)


def test_program_repr_names_it_and_its_backend() -> None:
    @gtx.field_operator
    def ident(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
        return a

    @gtx.program(backend=gtx.cpu)
    def copy(a: Field[Dims[I], float64], out: Field[Dims[I], float64]):  # type: ignore[no-untyped-def]
        ident(a, out=out)

    assert "copy" in repr(copy) and "cpu" in repr(copy) and len(repr(copy)) < 80
    assert "embedded" in repr(copy.with_backend(None))
    assert "ident" in repr(ident) and len(repr(ident)) < 80
