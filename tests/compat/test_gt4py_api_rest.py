"""The last gt4py.next API items of issue 22 (items 4 and 5), on every backend: DSL errors as
``gt4py.next.errors.DSLError``, ``Field.as_scalar``/``array_ns``, a dataclass scan state with a
tuple ``init``, ``DEFAULT_BACKEND``, a program writing a tuple into slices, the canonical order
of promoted dimensions, ``copy.deepcopy`` of used operators and programs, inverted domains."""

from __future__ import annotations

import copy
import dataclasses
import linecache
import re
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
import stencilkit.config
import stencilkit.ffront.decorator
from stencilkit import Dims, Field, errors, float64, int32, where

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
FI = Field[Dims[I], float64]
FIJ = Field[Dims[I, J], float64]
FIK = Field[Dims[I, K], float64]
FJK = Field[Dims[J, K], float64]
FIJK = Field[Dims[I, J, K], float64]
NI, NJ, NK = 5, 4, 6


def _define(name: str, src: str) -> Any:
    """Decorate the operator ``op`` written in ``src`` (its source readable for the errors)."""
    filename = f"<api-rest-{name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"gtx": gtx, "FIJ": FIJ, "float64": float64, "astype": gtx.astype}
    namespace["float32"] = gtx.float32
    exec(compile(src, filename, "exec"), namespace)
    return namespace["op"]


# gt4py.next 1.2.3 raises each as a DSLError when the operator is decorated (checked in a
# scratch venv; its tests tests/next_tests/.../test_if_stmt.py and test_func_to_foast*.py)
BAD_OPERATORS = {
    "if-field-condition": (
        "@gtx.field_operator\ndef op(a: FIJ, b: FIJ):\n    r = a\n    if a == b:\n"
        "        r = b\n    return r\n",
        4,
        "Condition for 'if' must be scalar, got 'Field[[I, J], bool]' instead.",
    ),
    "if-float-condition": (
        "@gtx.field_operator\ndef op(a: FIJ, c: float64):\n    if c:\n        r = a\n"
        "    else:\n        r = a + 1.0\n    return r\n",
        3,
        "Condition for 'if' must be of boolean type, got 'float64' instead.",
    ),
    "if-int-or-float": (
        "@gtx.field_operator\ndef op(a: FIJ, c: bool):\n    if c:\n        r = 1\n"
        "    else:\n        r = 2.0\n    return r\n",
        3,
        "Inconsistent types between two branches for variable 'r': got types 'int32' and 'float64.",
    ),
    "if-two-dtypes": (
        "@gtx.field_operator\ndef op(a: FIJ, c: bool):\n    if c:\n        r = a\n"
        "    else:\n        r = astype(a, float32)\n    return a + r\n",
        3,
        "Inconsistent types between two branches for variable 'r'",
    ),
    "if-returns-two-types": (
        "@gtx.field_operator\ndef op(a: FIJ, c: bool):\n    if c:\n        return a\n"
        "    return 1.0\n",
        3,
        "the branches return different types",
    ),
    "unpack-too-many-names": (
        "@gtx.field_operator\ndef op(a: FIJ):\n    x, y, z = (a, a)\n    return x\n",
        3,
        "Not enough values to unpack (expected 3, got 2).",
    ),
    "unpack-too-few-names": (
        "@gtx.field_operator\ndef op(a: FIJ):\n    x, y = (a, a, a)\n    return x\n",
        3,
        "Too many values to unpack (expected 2).",
    ),
    "import": (
        "@gtx.field_operator\ndef op(a: FIJ):\n    import math\n    return a\n",
        3,
        "Unsupported Python syntax: 'import' statement.",
    ),
    "import-from": (
        "@gtx.field_operator\ndef op(a: FIJ):\n    from math import pi\n    return a * pi\n",
        3,
        "Unsupported Python syntax: 'import' statement.",
    ),
}


@pytest.mark.parametrize("name", list(BAD_OPERATORS))
def test_dsl_errors_are_gt4py_dsl_errors_at_decoration(name: str) -> None:
    src, line, message = BAD_OPERATORS[name]
    with pytest.raises(errors.DSLError) as err:
        _define(name, src)
    assert err.value.message.startswith(message)
    assert err.value.location.line == line and err.value.location.filename.endswith(f"{name}>")
    assert isinstance(err.value, TypeError)  # stencilkit's errors keep the built-in class
    text = str(err.value)
    assert f"{name}>:{line}:" in text and "hint:" in text  # where, and how to fix it


@pytest.mark.parametrize("name", ["if-int-or-float", "unpack-too-few-names", "import"])
def test_dsl_errors_at_first_call_when_parsing_lazily(
    name: str, monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator
) -> None:
    monkeypatch.setattr(stencilkit.config, "PARSE_AT_DECORATION", False)
    src, _, message = BAD_OPERATORS[name]
    op = _define(name + "-lazy", src)
    a = gtx.as_field([I, J], rng.random((NI, NJ)))
    before = rng.random((NI, NJ))
    out = gtx.as_field([I, J], before.copy())
    with pytest.raises(errors.DSLError, match=re.escape(message[:30])):
        if name == "if-int-or-float":
            op(a, True, out=out, offset_provider={})
        else:
            op(a, out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), before)


def test_a_literal_against_a_typed_value_in_the_branches_still_takes_its_dtype(case, rng) -> None:
    @gtx.field_operator(backend=case.backend)
    def op(a: FIJ, c: bool) -> FIJ:
        if c:
            s = 2
        else:
            s = int32(3)
        return a * gtx.astype(s, float64)

    a = rng.random((NI, NJ))
    for c, factor in ((True, 2.0), (False, 3.0)):
        out = case.field([I, J], rng.random((NI, NJ)))
        op(case.field([I, J], a), c, out=out, offset_provider={})
        np.testing.assert_allclose(out.asnumpy(), factor * a, rtol=1e-15)


# -- Field.as_scalar, Field.array_ns --------------------------------------------------------
def test_as_scalar_and_array_ns(case, rng) -> None:
    value = rng.random()
    f0 = case.field([], np.array(value))
    s = f0.as_scalar()
    assert isinstance(s, np.float64) and s == value
    i0 = case.field([], np.array(7, dtype=np.int32)).as_scalar()
    assert isinstance(i0, np.int32) and i0 == 7
    f = case.field([I, J], rng.random((NI, NJ)))
    point = f[I(2), J(1)].as_scalar()
    assert point == f.asnumpy()[2, 1]
    with pytest.raises(ValueError, match="only valid on 0-dimensional 'Field's, got a 2-dim"):
        f.as_scalar()
    xp = f.array_ns
    assert xp is f.xp and xp.__name__ == ("cupy" if case.on_gpu else "numpy")
    assert float(xp.sum(f.ndarray)) == pytest.approx(f.asnumpy().sum())


# -- a dataclass as scan state, with a tuple init -------------------------------------------
@dataclasses.dataclass
class Carry:
    total: float64
    product: float64


def test_dataclass_scan_state_with_tuple_init(case, rng) -> None:
    @gtx.scan_operator(axis=K, forward=True, init=(0.5, 1.0), backend=case.backend)
    def accumulate(state: Carry, a: float64) -> Carry:
        return Carry(total=state.total + a, product=state.product * a)

    @gtx.program(backend=case.backend)
    def run(a: FIK, total: FIK, product: FIK):
        accumulate(a, out=(total, product), domain={I: (1, NI), K: (0, NK)})

    a = rng.random((NI, NK)) + 0.5
    t0, p0 = rng.random((NI, NK)), rng.random((NI, NK))
    total, product = case.field([I, K], t0), case.field([I, K], p0)
    run(case.field([I, K], a), total, product, offset_provider={})
    np.testing.assert_allclose(total.asnumpy()[1:], 0.5 + np.cumsum(a[1:], axis=1), rtol=1e-14)
    np.testing.assert_allclose(product.asnumpy()[1:], np.cumprod(a[1:], axis=1), rtol=1e-14)
    np.testing.assert_array_equal(total.asnumpy()[0], t0[0])  # outside the domain: untouched
    np.testing.assert_array_equal(product.asnumpy()[0], p0[0])
    # called directly, out= a Carry of fields
    accumulate.with_backend(case.backend)(
        case.field([I, K], a), out=Carry(total=total, product=product), offset_provider={}
    )
    np.testing.assert_allclose(total.asnumpy(), 0.5 + np.cumsum(a, axis=1), rtol=1e-14)
    np.testing.assert_allclose(product.asnumpy(), np.cumprod(a, axis=1), rtol=1e-14)


# -- DEFAULT_BACKEND --------------------------------------------------------------------------
@pytest.fixture
def restore_default_backend() -> Any:
    saved = stencilkit.config.DEFAULT_BACKEND
    yield
    stencilkit.config.DEFAULT_BACKEND = saved


def test_default_backend_set_through_ffront_decorator(case, rng, restore_default_backend) -> None:
    stencilkit.ffront.decorator.DEFAULT_BACKEND = case.backend  # gt4py's spelling
    assert stencilkit.config.DEFAULT_BACKEND is case.backend

    @gtx.field_operator
    def twice(a: FI) -> FI:
        return 2.0 * a

    @gtx.program
    def run(a: FI, out: FI):
        twice(a, out=out, domain={I: (1, NI - 1)})

    stencilkit.ffront.decorator.DEFAULT_BACKEND = None  # read at decoration: no effect now
    assert twice.backend is case.backend and run.backend is case.backend
    a, before = rng.random(NI), rng.random(NI)
    out = case.field([I], before.copy())
    run(case.field([I], a), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy()[1:-1], 2.0 * a[1:-1], rtol=1e-15)
    np.testing.assert_array_equal(out.asnumpy()[[0, -1]], before[[0, -1]])


def test_default_backend_in_config_is_read_by_ffront_decorator(restore_default_backend) -> None:
    from stencilkit.compat import install_gt4py_alias

    stencilkit.config.DEFAULT_BACKEND = gtx.cpu
    assert stencilkit.ffront.decorator.DEFAULT_BACKEND is gtx.cpu
    from stencilkit.ffront.decorator import DEFAULT_BACKEND

    assert DEFAULT_BACKEND is gtx.cpu
    install_gt4py_alias()
    import gt4py.next.ffront.decorator as gt4py_decorator

    gt4py_decorator.DEFAULT_BACKEND = None
    assert stencilkit.config.DEFAULT_BACKEND is None

    @gtx.field_operator
    def ident(a: FI) -> FI:
        return a

    assert ident.backend is None


# -- a program writing a tuple into slices ----------------------------------------------------
@gtx.field_operator
def pack_tuple(a: FI, b: FI) -> tuple[FI, FI]:
    return (a, b)


def test_program_tuple_out_with_slicing(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def prog(a: FI, b: FI, out_a: FI, out_b: FI):
        pack_tuple(a, b, out=(out_a[1:], out_b[1:]))

    a, b, oa0, ob0 = (rng.random(NI) for _ in range(4))
    out_a, out_b = case.field([I], oa0.copy()), case.field([I], ob0.copy())
    prog(case.field([I], a), case.field([I], b), out_a, out_b, offset_provider={})
    np.testing.assert_array_equal(out_a.asnumpy()[1:], a[1:])
    np.testing.assert_array_equal(out_b.asnumpy()[1:], b[1:])
    assert out_a.asnumpy()[0] == oa0[0] and out_b.asnumpy()[0] == ob0[0]


# -- promoted dimensions in gt4py's canonical order -------------------------------------------
@gtx.field_operator
def jk_plus_ik(a: FJK, b: FIK, c: FIJK) -> FIJK:
    return c + (a + b)


@gtx.field_operator
def where_jk_plus_ik(m: Field[Dims[I, J, K], bool], a: FJK, b: FIK, c: FIJK) -> FIJK:
    return where(m, a + b, c)


@gtx.field_operator
def jk_plus_ik_only(a: FJK, b: FIK) -> FIJK:
    return a + b


def test_promoted_dimensions_follow_gt4py_canonical_order(case, rng) -> None:
    @gtx.program(backend=case.backend)
    def run(m: Field[Dims[I, J, K], bool], a: FJK, b: FIK, c: FIJK, o1: FIJK, o2: FIJK, o3: FIJK):
        jk_plus_ik(a, b, c, out=o1, domain={I: (1, NI), J: (0, NJ), K: (0, NK)})
        where_jk_plus_ik(m, a, b, c, out=o2, domain={I: (1, NI), J: (0, NJ), K: (0, NK)})
        jk_plus_ik_only(a, b, out=o3, domain={I: (1, NI), J: (0, NJ), K: (0, NK)})

    m = rng.random((NI, NJ, NK)) < 0.5
    a, b, c = rng.random((NJ, NK)), rng.random((NI, NK)), rng.random((NI, NJ, NK))
    before = [rng.random((NI, NJ, NK)) for _ in range(3)]
    outs = [case.field([I, J, K], x.copy()) for x in before]
    args = (case.field([I, J, K], m), case.field([J, K], a), case.field([I, K], b))
    run(*args, case.field([I, J, K], c), *outs, offset_provider={})
    ab = a[None, :, :] + b[:, None, :]
    for out, ref, old in zip(outs, (c + ab, np.where(m, ab, c), ab), before, strict=True):
        np.testing.assert_allclose(out.asnumpy()[1:], ref[1:], rtol=1e-15)
        np.testing.assert_array_equal(out.asnumpy()[0], old[0])


def test_promote_dims_canonical_order() -> None:
    from stencilkit.core.types import promote_dims

    assert promote_dims((J, K), (I, K)) == (I, J, K)
    assert promote_dims((J, K), (I, K), within_kinds=True) == (I, J, K)
    assert promote_dims((J, I), (I,)) == (J, I)  # an order one input gives is kept
    with pytest.raises(ValueError, match="dimension orders differ"):
        promote_dims((I, J), (J, I))


def test_concrete_fields_promote_to_the_canonical_order(rng) -> None:
    a, b = rng.random((NJ, NK)), rng.random((NI, NK))
    c = gtx.as_field([J, K], a) + gtx.as_field([I, K], b)
    assert c.domain.dims == (I, J, K)
    np.testing.assert_allclose(c.asnumpy(), a[None, :, :] + b[:, None, :], rtol=1e-15)


# -- copy.deepcopy after the first call -------------------------------------------------------
def test_deepcopy_of_used_operator_and_program(case, rng) -> None:
    @gtx.field_operator(backend=case.backend)
    def scale(a: FI, s: float64) -> FI:
        return s * a

    @gtx.program(backend=case.backend)
    def run(a: FI, s: float64, out: FI):
        scale(a, s, out=out, domain={I: (1, NI)})

    a = rng.random(NI)
    out = case.field([I], rng.random(NI))
    scale(case.field([I], a), 3.0, out=out, offset_provider={})
    run(case.field([I], a), 3.0, out, offset_provider={})
    op2, run2 = copy.deepcopy(scale), copy.deepcopy(run)
    assert op2 is not scale and run2 is not run and run2.backend is run.backend
    before = rng.random(NI)
    out = case.field([I], before.copy())
    run2(case.field([I], a), 5.0, out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy()[1:], 5.0 * a[1:], rtol=1e-15)
    assert out.asnumpy()[0] == before[0]
    op2(case.field([I], a), 7.0, out=out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), 7.0 * a, rtol=1e-15)
    run(case.field([I], a), 2.0, out, offset_provider={})  # the original still runs
    np.testing.assert_allclose(out.asnumpy()[1:], 2.0 * a[1:], rtol=1e-15)
    bound = copy.deepcopy(run.with_bound_args(s=4.0))
    bound(case.field([I], a), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy()[1:], 4.0 * a[1:], rtol=1e-15)


# -- an inverted domain from int32 arguments --------------------------------------------------
def test_inverted_domain_is_empty_as_in_gt4py(case, rng) -> None:
    """gt4py 1.2.3 runs ``domain={I: (lo, hi)}`` with lo > hi as an empty domain, on embedded
    and gtfn_cpu alike (``UnitRange(4, 1)`` is ``(0:0)``): nothing is written, nothing raised."""

    @gtx.field_operator
    def twice(a: FI) -> FI:
        return 2.0 * a

    @gtx.program(backend=case.backend)
    def run(a: FI, out: FI, lo: int32, hi: int32):
        twice(a, out=out, domain={I: (lo, hi)})

    a, before = rng.random(NI), rng.random(NI)
    out = case.field([I], before.copy())
    run(case.field([I], a), out, int32(4), int32(1), offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), before)
    run(case.field([I], a), out, int32(1), int32(4), offset_provider={})
    np.testing.assert_allclose(out.asnumpy()[1:4], 2.0 * a[1:4], rtol=1e-15)
    np.testing.assert_array_equal(out.asnumpy()[[0, 4]], before[[0, 4]])
