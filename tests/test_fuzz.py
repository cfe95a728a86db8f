"""Differential fuzzing: random programs over the whole language, every backend against NumPy.

The programs (tests/fuzz/) cover Cartesian shifts with domains and halos, tuples, ``where``,
``concat_where``, neighbour reductions with skip values, scans with tuple carries, several
statements reading earlier outputs, in-place updates, and strided / Fortran / negative-stride
inputs; outputs start as sentinels, so a write outside a statement's domain is a failure too.

Here a fixed-seed budget runs (Hypothesis, derandomized; a failure shrinks to a minimal program
whose source and decision list are printed: save the list as tests/fuzz/regressions/NAME.json).
``STENCILKIT_FUZZ_EXAMPLES=N`` scales the budget; long runs: ``scripts/fuzz.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import stencilkit as gtx
from fuzz import model
from fuzz.choices import HypothesisChooser, RandomChooser, Replay
from fuzz.execute import check, compare, make_data
from fuzz.programs import draw_program
from fuzz.reference import evaluate
from fuzz.shrink import fails_like, shrink
from fuzz.source import render
from stencilkit import Dims, Field, float64

SCALE = float(os.environ.get("STENCILKIT_FUZZ_EXAMPLES", "1"))
REGRESSIONS = sorted((Path(__file__).parent / "fuzz" / "regressions").glob("*.json"))


def _settings(examples: int) -> settings:
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )


def _fuzz(data: st.DataObject, backends: list[str]) -> None:
    ch = HypothesisChooser(data)
    p = draw_program(ch, max_statements=3)
    outcome = check(p, backends, rounds=1)
    if not outcome.ok:
        note(
            f"decisions (save as tests/fuzz/regressions/NAME.json): {json.dumps({'choices': ch.record})}"
        )
        note(render(p))
    assert outcome.ok, f"{outcome.status} on {outcome.backend}: {outcome.message}"


@_settings(150)
@given(st.data())
def test_random_programs_embedded(data: st.DataObject) -> None:
    _fuzz(data, ["embedded"])


@pytest.mark.slow
@_settings(40)
@given(st.data())
def test_random_programs_cpu(data: st.DataObject) -> None:
    _fuzz(data, ["embedded", "cpu"])


@pytest.mark.slow
@pytest.mark.parametrize("block", range(4))
def test_seeded_programs_cpu(block: int) -> None:
    """Plain seeded draws (more varied than Hypothesis's, which starts from the simplest
    programs); a failure is shrunk with the decision-list shrinker and printed."""
    failures = []
    for seed in range(block * 1000, block * 1000 + int(12 * SCALE)):
        ch = RandomChooser(seed)
        p = draw_program(ch, max_statements=3)
        outcome = check(p, ["embedded", "cpu"], rounds=1)
        if not outcome.ok:
            small = shrink(ch.record, fails_like(outcome, [outcome.backend], 1), budget=60)
            failures.append(
                f"seed {seed}: {outcome.status} on {outcome.backend}: {outcome.message}\n"
                f"decisions: {json.dumps(small)}\n{render(draw_program(Replay(small)))}"
            )
    assert not failures, "\n\n".join(failures)


@pytest.mark.gpu
@_settings(60)
@given(st.data())
def test_random_programs_gpu(data: st.DataObject) -> None:
    _fuzz(data, ["gpu", "embedded-cupy"])


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
@pytest.mark.parametrize(
    "backend",
    [
        "embedded",
        "cpu",
        pytest.param("gpu", marks=pytest.mark.gpu),
        pytest.param("embedded-cupy", marks=pytest.mark.gpu),
    ],
)
def test_saved_failures_stay_fixed(path: Path, backend: str) -> None:
    """A saved failure: its program (the model's repr, which outlives generator changes), or
    else the decisions that drew it."""
    saved = json.loads(path.read_text())
    p = (
        eval(saved["program"], vars(model))
        if "program" in saved
        else draw_program(Replay(saved["choices"]))
    )
    outcome = check(p, [backend])
    assert outcome.ok, f"{outcome.status} on {outcome.backend}: {outcome.message}\n{render(p)}"


# ------------------------------------------------------------------ the fuzzer itself
def test_a_program_is_its_decisions() -> None:
    ch = RandomChooser(12345)
    p = draw_program(ch)
    assert draw_program(Replay(ch.record)) == p
    assert render(draw_program(Replay([]))) == render(draw_program(Replay([0] * 5)))  # the simplest


def test_the_comparison_sees_a_write_outside_the_domain() -> None:
    for seed in range(50):
        p = draw_program(RandomChooser(seed))
        if p.statements[0].domain and p.dtype == "float64":
            break
    arrays, tables = make_data(p, 0)
    ref = evaluate(p, arrays, tables)
    out = p.statements[-1].outs[0]
    assert compare(p, ref, ref) == []
    got = {k: v.copy() for k, v in ref.items()}
    got[out].flat[-1] += 1.0  # one point changed
    got[out].flat[0] += 1e-3
    problems = compare(p, ref, got)
    assert len(problems) == 1 and out in problems[0] and "2 of" in problems[0], problems


def test_the_shrinker_finds_a_minimal_list() -> None:
    # fails whenever some value is at least 3: the minimal failing list is [3]
    assert shrink([5, 0, 7, 1, 9, 2], lambda v: any(x >= 3 for x in v)) == [3]


def test_generated_programs_cover_the_language() -> None:
    sources = [render(draw_program(RandomChooser(s))) for s in range(200)]
    text = "\n".join(sources)
    for construct in (
        "@gtx.scan_operator",
        "forward=False",
        "init=(",
        "gtx.concat_where",
        "gtx.where",
        "gtx.neighbor_sum",
        "gtx.max_over",
        "gtx.min_over",
        "(E2C[",
        "(C2E)",
        "out=(",
        "domain={",
        "(I + 1)",
        "(K - 1)",
        "[0]",
        "float32",
        "int32",
    ):
        assert construct in text, construct
    programs = [draw_program(RandomChooser(s)) for s in range(200)]
    layouts = {f.layout for p in programs for f in p.fields}
    assert layouts == {"C", "F", "strided", "reversed", "field", "halo"}
    assert any(o in st.args for p in programs for st in p.statements for o in st.outs)  # in place
    assert any(p.skip_rows for p in programs)


# ------------------------------------------------------------------ regressions found by fuzzing
I, J = gtx.Dimension("I"), gtx.Dimension("J")
IJ = Field[Dims[I, J], float64]


@gtx.field_operator
def _conditions_on_j_and_i(a: IJ, b: IJ, c: Field[Dims[J], float64]) -> tuple[IJ, IJ, IJ]:
    return (
        a - gtx.concat_where(J > 2, b, 0.125),
        a + gtx.concat_where((J <= 1) & (I > 2), b, a),
        gtx.minimum(c, a) + a,
    )


@pytest.mark.parametrize(
    "backend",
    [None, gtx.cpu, pytest.param(gtx.gpu, marks=pytest.mark.gpu)],
    ids=["embedded", "cpu", "gpu"],
)
def test_a_condition_on_one_dimension_keeps_the_values_dimension_order(backend, rng) -> None:
    """concat_where(J > 2, a_ij, ...) was typed [J, I] and refused next to [I, J] fields."""
    a, b, c = rng.standard_normal((5, 6)), rng.standard_normal((5, 6)), rng.standard_normal(6)
    outs = tuple(
        gtx.as_field(
            [I, J], np.full((5, 6), 7.0), allocator=gtx.gpu if backend is gtx.gpu else None
        )
        for _ in range(3)
    )
    alloc = gtx.gpu if backend is gtx.gpu else None
    _conditions_on_j_and_i.with_backend(backend)(
        gtx.as_field([I, J], a, allocator=alloc),
        gtx.as_field([I, J], b, allocator=alloc),
        gtx.as_field([J], c, allocator=alloc),
        out=outs,
        offset_provider={},
    )
    i, j = np.arange(5)[:, None], np.arange(6)[None, :]
    np.testing.assert_allclose(outs[0].asnumpy(), a - np.where(j > 2, b, 0.125), rtol=1e-15)
    np.testing.assert_allclose(
        outs[1].asnumpy(), a + np.where((j <= 1) & (i > 2), b, a), rtol=1e-15
    )
    np.testing.assert_allclose(outs[2].asnumpy(), np.minimum(c, a) + a, rtol=1e-15)


@gtx.field_operator
def _where_of_a_condition_on_j(a: IJ, s: float64) -> IJ:
    return gtx.where(a >= 0.5, gtx.concat_where(J <= 2, s, 2.0), s * -3.0) + a


@pytest.mark.parametrize(
    "backend",
    [None, gtx.cpu, pytest.param(gtx.gpu, marks=pytest.mark.gpu)],
    ids=["embedded", "cpu", "gpu"],
)
def test_where_keeps_its_masks_dimension_order(backend, rng) -> None:
    """where(mask_ij, concat_where(J <= 2, s, 2.0), ...) was typed [J, I] (fuzzing seed 100232)."""
    a = rng.uniform(0.0, 1.0, (5, 6))
    alloc = gtx.gpu if backend is gtx.gpu else None
    out = gtx.as_field([I, J], np.full((5, 6), 7.0), allocator=alloc)
    _where_of_a_condition_on_j.with_backend(backend)(
        gtx.as_field([I, J], a, allocator=alloc), 1.5, out=out, offset_provider={}
    )
    j = np.arange(6)[None, :]
    np.testing.assert_allclose(
        out.asnumpy(), np.where(a >= 0.5, np.where(j <= 2, 1.5, 2.0), -4.5) + a, rtol=1e-15
    )


@gtx.field_operator
def _axpy(a: Field[Dims[I], float64], b: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
    return a * 2.0 + b


@pytest.mark.parametrize(
    "backend",
    [None, gtx.cpu, pytest.param(gtx.gpu, marks=pytest.mark.gpu)],
    ids=["embedded", "cpu", "gpu"],
)
def test_a_direct_call_may_update_an_argument_in_place(backend, rng) -> None:
    a0, b0 = rng.standard_normal(8), rng.standard_normal(8)
    alloc = gtx.gpu if backend is gtx.gpu else None
    a, b = (
        gtx.as_field([I], a0.copy(), allocator=alloc),
        gtx.as_field([I], b0.copy(), allocator=alloc),
    )
    _axpy.with_backend(backend)(a, b, out=a, offset_provider={})
    np.testing.assert_allclose(a.asnumpy(), 2.0 * a0 + b0, rtol=1e-15)
