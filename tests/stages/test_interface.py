"""What the engine reads of a program (stages/interface.py), on IR built without a frontend, and
the engine running such a program on every CPU backend against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from helpers.irbuild import ProgramBuilder
from stencilkit.backends import runner_for
from stencilkit.core.types import FieldType
from stencilkit.stages.interface import interface_of, written_params

I = gtx.Dimension("I")
FI = FieldType((I,), "float64")


def _smooth() -> object:
    b = ProgramBuilder("smooth")
    a = b.field("a", I)
    n = b.scalar("n", "int32")
    w = b.scalar("w")
    pair = b.tuple("pair", FI, FI)
    tmp = b.field("tmp", I, temp=True)
    b.apply(a.shift(I, 1) * w + a, tmp, {I: (0, n)})
    b.apply(tmp * 2.0, _items(pair, 0), {I: (0, n)})
    return b.build()


def _items(pair: object, i: int) -> object:
    from helpers.irbuild import E
    from stencilkit.ir import nodes as ir

    # a statement writes a tuple parameter's element through its flat name
    return E(ir.Ref(f"pair__{i}", FI))


def test_the_interface_lists_flat_params_tables_writes_and_domain_scalars() -> None:
    prog = _smooth()
    face = interface_of(prog)
    assert [p.name for p in face.flat] == ["a", "n", "w", "pair__0", "pair__1", "tmp"]
    assert face.tables == ()
    assert face.written == {"tmp", "pair__0"}
    assert face.domain_scalars == {"n"}
    assert face.field_idx == (0, 3, 4, 5) and face.scalar_idx == (1, 2)
    assert face.domain_scalar_idx == (1,)
    assert interface_of(prog) is face  # computed once per program


def test_a_statement_writing_a_tuple_parameter_writes_every_element() -> None:
    b = ProgramBuilder("split")
    a = b.field("a", I)
    pair = b.tuple("pair", FI, FI)
    b.apply(a, pair)
    assert written_params(b.build()) == {"pair__0", "pair__1"}


def test_the_plan_key_separates_domain_scalar_values_and_types() -> None:
    face = interface_of(_smooth())
    fields = [gtx.zeros({I: 8}) for _ in range(4)]
    args = [fields[0], 5, 1.0, fields[1], fields[2], fields[3]]
    key = face.key(args, {})
    assert face.key([fields[0], 5, 2.0, *fields[1:]], {}) == key  # w decides nothing
    assert face.key([fields[0], 6, 1.0, *fields[1:]], {}) != key
    assert face.key([fields[0], 5.0, 1.0, *fields[1:]], {}) != key
    with pytest.raises(AttributeError):
        face.key([np.zeros(8), 5, 1.0, *fields[1:]], {})  # a raw array has no signature yet


@pytest.mark.parametrize("backend", [None, gtx.cpu], ids=["embedded", "cpu"])
def test_a_program_built_as_ir_runs_on_the_engine(backend: object) -> None:
    b = ProgramBuilder("axpy")
    a, out = b.field("a", I), b.field("out", I)
    n, w = b.scalar("n", "int32"), b.scalar("w")
    b.apply(a.shift(I, 1) * w + a, out, {I: (1, n)})
    face = interface_of(b.build())
    run = runner_for(backend, face)  # type: ignore[arg-type]
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(10), rng.standard_normal(10)
    fa = gtx.as_field([I], x, allocator=backend)
    fo = gtx.as_field([I], y.copy(), allocator=backend)
    run([fa, fo, 7, 0.5], {})
    want = y.copy()
    want[1:7] = x[2:8] * 0.5 + x[1:7]
    np.testing.assert_allclose(fo.asnumpy(), want, rtol=1e-14)
    assert len(run.plans) == 1
