"""What GT4Py's own feature tests found (scripts/gt4py_next_suite.sh): each with NumPy references on
random data, untouched points checked."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float32, float64, neighbor_sum

Vertex = gtx.Dimension("Vertex")
Edge = gtx.Dimension("Edge")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
E2VDim = gtx.Dimension("E2V", kind=gtx.DimensionKind.LOCAL)
E2V = gtx.FieldOffset("E2V", source=Vertex, target=(Edge, E2VDim))
VF = Field[Dims[Vertex], float64]
EF = Field[Dims[Edge], float64]


# -- a field that starts at 2, read through the rows of a table that point at 2 and above --------
@gtx.field_operator
def _first_neighbour(a: VF) -> EF:
    return a(E2V[0])


@gtx.field_operator
def _neighbour_sum(a: VF) -> EF:
    return neighbor_sum(a(E2V), axis=E2VDim)


def test_tables_over_a_field_that_does_not_start_at_zero(case: Any, rng: np.random.Generator):
    nv, ne, origin = 12, 10, 2
    table = rng.integers(0, nv, size=(ne, 2)).astype(np.int32)
    table[3:7] = rng.integers(origin, nv, size=(4, 2))  # edges 3..6 only see vertices >= 2
    table[3, 1] = 0  # edge 3: its second neighbour is below the field
    conn = case.connectivity([Edge, E2VDim], Vertex, table)
    data = rng.random(nv)
    a = case.field([Vertex], data)[origin:]
    assert a.domain.ranges[0].start == origin

    first = case.field([Edge], np.full(ne, -7.0))
    _first_neighbour.with_backend(case.backend)(a, out=first[3:7], offset_provider={"E2V": conn})
    got = np.asarray(first.asnumpy())
    np.testing.assert_allclose(got[3:7], data[table[3:7, 0]])
    assert (got[:3] == -7.0).all() and (got[7:] == -7.0).all()  # untouched

    total = case.field([Edge], np.full(ne, -7.0))
    _neighbour_sum.with_backend(case.backend)(a, out=total[4:7], offset_provider={"E2V": conn})
    got = np.asarray(total.asnumpy())
    np.testing.assert_allclose(got[4:7], data[table[4:7]].sum(axis=1))
    assert (got[:4] == -7.0).all() and (got[7:] == -7.0).all()

    # a read of a row that points below the field is still refused (edge 3's second neighbour)
    with pytest.raises(gtx.StencilValueError, match="neighbour table 'E2V' holds indices 0"):
        _neighbour_sum.with_backend(case.backend)(a, out=total[3:7], offset_provider={"E2V": conn})


# -- a dataclass instance as init= of a scan whose carry is that dataclass -----------------------
@dataclasses.dataclass
class _State:
    value: float32


@gtx.scan_operator(axis=K, forward=True, init=_State(value=0.0))
def _running_sum(state: _State, inp: float32) -> _State:
    return _State(value=inp + state.value)


@gtx.field_operator
def _running_sum_value(inp: Field[Dims[K], float32]) -> Field[Dims[K], float32]:
    return _running_sum(inp).value


def test_a_dataclass_init_of_a_dataclass_carry(case: Any, rng: np.random.Generator):
    data = rng.random(9).astype(np.float32)
    inp = case.field([K], data)
    out = case.field([K], np.full(9, -1.0, dtype=np.float32))
    _running_sum_value.with_backend(case.backend)(inp, out=out, offset_provider={})
    np.testing.assert_allclose(np.asarray(out.asnumpy()), np.cumsum(data), rtol=1e-5)


# -- a user's backend object is called -----------------------------------------------------------
class _RefusingBackend(gtx.Backend):
    def __call__(self, program: Any, *args: Any, **kwargs: Any) -> None:
        raise ValueError("No backend selected!")


class _CountingBackend(gtx.Backend):
    calls = 0

    def __call__(self, program: Any, *args: Any, **kwargs: Any) -> None:
        type(self).calls += 1
        super().__call__(program, *args, **kwargs)


def test_a_backend_object_is_called_not_bypassed(rng: np.random.Generator):
    refusing = _RefusingBackend(name="refusing", executor=None, allocator=None, transforms=())

    @gtx.field_operator(backend=refusing)
    def copy(a: EF) -> EF:
        return a

    a = gtx.as_field([Edge], rng.random(5))
    with pytest.raises(ValueError, match="No backend selected!"):
        copy(a, out=a, offset_provider={})

    counting = _CountingBackend("counting", gtx.DeviceType.CPU)
    data = rng.random(5)
    b = gtx.as_field([Edge], np.zeros(5))
    copy.with_backend(counting)(gtx.as_field([Edge], data), out=b, offset_provider={})
    assert _CountingBackend.calls == 1
    np.testing.assert_array_equal(b.asnumpy(), data)


def test_the_default_backend_is_taken_at_decoration(monkeypatch: pytest.MonkeyPatch, rng):
    from stencilkit.ffront import decorator

    monkeypatch.setattr(
        decorator, "DEFAULT_BACKEND", _RefusingBackend("refusing", gtx.DeviceType.CPU)
    )

    @gtx.program
    def copy_program(a: EF, b: EF):
        _copy_edges(a, out=b)

    a = gtx.as_field([Edge], rng.random(4))
    with pytest.raises(ValueError, match="No backend selected!"):
        copy_program(a, a, offset_provider={})


@gtx.field_operator
def _copy_edges(a: EF) -> EF:
    return a


# -- an array compared with a field: arrays, as NumPy makes of gt4py's fields --------------------
def test_an_array_with_a_field_gives_arrays(rng: np.random.Generator):
    data = rng.random(6)
    f = gtx.as_field([Edge], data)
    same = data == f
    assert isinstance(same, np.ndarray) and same.all()
    np.testing.assert_array_equal(data + f, 2 * data)
    assert isinstance(np.float64(2.0) * f, gtx.Field)  # a scalar with a field: a field


# -- DSL errors at decoration by default, at the cost of a lazy import ---------------------------
_ERRORS = {
    "if on a field": (
        """
        @gtx.field_operator
        def op(a: F, b: F) -> F:
            result = a
            if a == b:
                result = b
            return result
        """,
        "Condition for 'if' must be scalar",
    ),
    "if on a float": (
        """
        @gtx.field_operator
        def op(a: F, b: F, c: float64) -> F:
            if c:
                result = b
            else:
                result = a
            return result
        """,
        "Condition for 'if' must be of boolean type",
    ),
    "branches of two types": (
        """
        @gtx.field_operator
        def op(a: F, c: bool):
            if c:
                result = 1
            else:
                result = 2.0
            return result
        """,
        "Inconsistent types between two branches for variable",
    ),
    "too many values": (
        """
        @gtx.field_operator
        def op(a: F) -> F:
            x, y, z = (1, 2.0, 3, 4)
            return a
        """,
        r"Too many values to unpack \(expected 3\)",
    ),
    "too few values": (
        """
        @gtx.field_operator
        def op(a: F) -> F:
            x, y, z = 1
            return a
        """,
        "Assignment value must be of type tuple, got 'int32'",
    ),
}
_HEADER = """
import stencilkit as gtx
from stencilkit import Dims, Field, float64
I = gtx.Dimension("I")
F = Field[Dims[I], float64]
"""


@pytest.fixture
def default_decoration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The default (``PARSE_AT_DECORATION`` None) with a fresh record directory."""
    from stencilkit.next import decoration
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setattr(gtx.config, "PARSE_AT_DECORATION", None)
    monkeypatch.setenv("STENCILKIT_CACHE_DIR", str(tmp_path / "cache"))
    reset_config()
    decoration.forget()
    yield tmp_path
    decoration.flush()
    decoration.forget()
    monkeypatch.undo()
    reset_config()


def _module(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(_HEADER + textwrap.dedent(body))
    return path


def _run(path: Path) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    code = compile(path.read_text(), str(path), "exec")
    exec(code, namespace)
    return namespace


@pytest.mark.parametrize("what", sorted(_ERRORS))
def test_dsl_errors_at_decoration_by_default(what: str, default_decoration: Path):
    body, message = _ERRORS[what]
    path = _module(default_decoration, "bad", body)
    for _ in range(2):  # an error is never put on record: raised at every decoration
        with pytest.raises(gtx.errors.DSLError, match=message):
            _run(path)
        from stencilkit.next import decoration

        decoration.flush()


def test_a_definition_on_record_is_not_parsed_again(default_decoration: Path, rng):
    from stencilkit.next import decoration

    path = _module(
        default_decoration,
        "good",
        """
        @gtx.field_operator
        def twice(a: F) -> F:
            return 2.0 * a
        """,
    )
    first = _run(path)["twice"]
    assert first._parsed is not None  # not on record: parsed at decoration
    decoration.flush()
    decoration.forget()  # a new process: reads the record
    second = _run(path)["twice"]
    assert second._parsed is None  # on record: parsed at first use
    data = rng.random(5)
    dim = _run(path)["I"]
    out = gtx.as_field([dim], np.zeros(5))
    second(gtx.as_field([dim], data), out=out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), 2.0 * data)
    # an edited file is a new file: parsed at decoration again
    path.write_text(path.read_text() + "\n# edited\n")
    decoration.forget()
    assert _run(path)["twice"]._parsed is not None


# -- a scalar as out= of a direct call is refused ------------------------------------------------
@gtx.field_operator
def _doubled(a: EF) -> EF:
    return 2.0 * a


@gtx.field_operator
def _doubled_scalar(x: float64) -> float64:
    return 2.0 * x


@pytest.mark.parametrize("out", [1.0, np.float64(1.0), np.zeros(3)], ids=["float", "np", "array"])
def test_a_scalar_out_is_refused(case: Any, out: Any, rng: np.random.Generator):
    a = case.field([Edge], rng.random(3))
    with pytest.raises(gtx.StencilTypeError, match=r"out=\.\.\.\) must be a field"):
        _doubled.with_backend(case.backend)(a, out=out, offset_provider={})
    with pytest.raises(gtx.StencilTypeError, match=r"out=\.\.\.\) must be a field"):
        _doubled_scalar.with_backend(case.backend)(3.0, out=out, offset_provider={})
    good = case.field([Edge], np.zeros(3))
    with pytest.raises(gtx.StencilTypeError, match="got a float"):
        _doubled.with_backend(case.backend)(a, out=(good, 1.0), offset_provider={})


def test_a_field_with_an_array_gives_arrays(rng: np.random.Generator):
    data = rng.random(6)
    f = gtx.as_field([Edge], data)
    same = f == data
    assert isinstance(same, np.ndarray) and same.all()
    np.testing.assert_array_equal(f - data, np.zeros(6))


# -- a domain dict in another order than the output's dimensions: ValueError when called ---------
IDim, JDim = gtx.Dimension("IDim"), gtx.Dimension("JDim")
IJF = Field[Dims[IDim, JDim], float64]


@gtx.field_operator
def _copy_ij(a: IJF) -> IJF:
    return a


@gtx.program
def _swapped_domain(a: IJF, out: IJF):
    _copy_ij(a, out=out, domain={JDim: (0, 2), IDim: (0, 3)})


@gtx.program
def _ordered_domain(a: IJF, out: IJF):
    _copy_ij(a, out=out, domain={IDim: (1, 3), JDim: (0, 2)})


def test_a_domain_in_another_order_is_refused_when_called(case: Any, rng: np.random.Generator):
    data = rng.random((4, 3))
    a = case.field([IDim, JDim], data)
    out = case.field([IDim, JDim], np.full((4, 3), -1.0))
    with pytest.raises(ValueError, match="Dimensions in out field and field domain are not equiv"):
        _swapped_domain.with_backend(case.backend)(a, out, offset_provider={})
    assert (np.asarray(out.asnumpy()) == -1.0).all()  # nothing ran
    _ordered_domain.with_backend(case.backend)(a, out, offset_provider={})
    got = np.asarray(out.asnumpy())
    np.testing.assert_array_equal(got[1:3, 0:2], data[1:3, 0:2])
    assert (got[0] == -1.0).all() and (got[3] == -1.0).all() and (got[:, 2] == -1.0).all()


# -- metrics levels: MINIMAL collects total, PERFORMANCE also compute (gt4py's rule) ------------
@pytest.mark.parametrize(
    "level, names", [("MINIMAL", {"total"}), ("PERFORMANCE", {"total", "compute"})]
)
def test_metrics_levels(level: str, names: set[str], monkeypatch, rng):
    import collections

    from stencilkit.instrumentation import metrics

    monkeypatch.setattr(gtx.config, "COLLECT_METRICS_LEVEL", getattr(metrics, level))
    monkeypatch.setattr(metrics, "sources", collections.defaultdict(metrics.Source))
    data = rng.random((4, 3))
    out = gtx.as_field([IDim, JDim], np.zeros((4, 3)))
    _ordered_domain.with_backend(gtx.cpu)(gtx.as_field([IDim, JDim], data), out, offset_provider={})
    (source,) = metrics.sources.values()
    assert set(source.metrics) == names
    np.testing.assert_array_equal(out.asnumpy()[1:3, 0:2], data[1:3, 0:2])


# -- compile(name=[values]): a variant per value, with the value in its code ---------------------
@gtx.field_operator
def _scaled_by(a: IJF, n: gtx.int32) -> IJF:
    return a * gtx.astype(n, float64)


@gtx.program
def _scale_rows(a: IJF, n: gtx.int32, out: IJF):
    _scaled_by(a, n, out=out, domain={IDim: (0, n), JDim: (0, 3)})


def test_static_arguments_specialise_the_build(case: Any, rng: np.random.Generator):
    prog = _scale_rows.with_backend(case.backend)
    prog.compile(offset_provider={}, n=[2, 3])
    assert set(prog._variants) == {(2,), (3,)}
    texts = {k: v.ir_text() for k, v in prog._variants.items()}
    assert texts[(2,)] != texts[(3,)]  # the value is in the code, so in the build cache's key
    from stencilkit.ir import nodes as ir
    from stencilkit.ir.visit import walk

    for variant in prog._variants.values():  # the body no longer reads the parameter
        refs = {x.name for s in variant.definition.body for x in walk(s) if isinstance(x, ir.Ref)}
        assert "n" not in refs
    data = rng.random((5, 3))
    for n in (2, 3, 4):  # 4 was not listed: its variant is made at the call
        out = case.field([IDim, JDim], np.full((5, 3), -1.0))
        prog(case.field([IDim, JDim], data), np.int32(n), out, offset_provider={})
        got = np.asarray(out.asnumpy())
        np.testing.assert_allclose(got[:n], data[:n] * n)
        assert (got[n:] == -1.0).all()
    assert set(prog._variants) == {(2,), (3,), (4,)}
