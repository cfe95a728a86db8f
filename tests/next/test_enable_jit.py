"""``enable_jit=False`` (gt4py.next's compilation option, set by icon4py's ``setup_program``):
a call on a compiled backend runs only what ``compile(...)`` made; static values not compiled
(or no compile at all) raise gt4py's RuntimeError before anything is written. The embedded
backend compiles nothing and ignores it, as gt4py's does."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, int32

I = gtx.Dimension("I")
N = 12


@gtx.field_operator
def _shifted_scale(a: Field[Dims[I], float64], w: float64) -> Field[Dims[I], float64]:
    return a * w


@gtx.program
def scale(
    a: Field[Dims[I], float64], w: float64, out: Field[Dims[I], float64], start: int32, stop: int32
):
    _shifted_scale(a, w, out=out, domain={I: (start, stop)})


def _fields(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(N), rng.standard_normal(N)


def _expected(a: np.ndarray, before: np.ndarray, w: float, start: int, stop: int) -> np.ndarray:
    out = before.copy()
    out[start:stop] = a[start:stop] * w
    return out


@pytest.mark.parametrize("backend", [gtx.cpu])
def test_static_values_compiled_run_others_raise(backend: object) -> None:
    prog = scale.with_backend(backend).with_compilation_options(enable_jit=False)
    prog.compile(start=[1, 2], stop=[N - 1], offset_provider={})
    a, before = _fields(1)
    for start in (1, 2):
        out = gtx.as_field([I], before.copy())
        prog(gtx.as_field([I], a), 0.5, out, start, N - 1, offset_provider={})
        np.testing.assert_array_equal(out.asnumpy(), _expected(a, before, 0.5, start, N - 1))
    out = gtx.as_field([I], before.copy())
    with pytest.raises(
        RuntimeError, match="No program compiled for this set of static arguments"
    ) as e:
        prog(gtx.as_field([I], a), 0.5, out, 3, N - 1, offset_provider={})
    assert "start=3" in str(e.value) and "start=1" in str(e.value)
    np.testing.assert_array_equal(out.asnumpy(), before)  # nothing written
    # a deep copy (gt4py copies programs) runs what the original compiled, and refuses the rest
    import copy

    twin = copy.deepcopy(prog)
    out2 = gtx.as_field([I], before.copy())
    twin(gtx.as_field([I], a), 0.5, out2, 2, N - 1, offset_provider={})
    np.testing.assert_array_equal(out2.asnumpy(), _expected(a, before, 0.5, 2, N - 1))
    with pytest.raises(RuntimeError, match="No program compiled"):
        twin(gtx.as_field([I], a), 0.5, out2, 3, N - 1, offset_provider={})
    # the same program with jit allowed builds the new values
    jit = prog.with_compilation_options(enable_jit=True)
    jit(gtx.as_field([I], a), 0.5, out, 3, N - 1, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), _expected(a, before, 0.5, 3, N - 1))


def test_never_compiled_raises_and_compiled_runs() -> None:
    a, before = _fields(2)
    prog = scale.with_backend(gtx.cpu).with_compilation_options(enable_jit=False)
    out = gtx.as_field([I], before.copy())
    with pytest.raises(RuntimeError, match="No program compiled"):
        prog(gtx.as_field([I], a), 2.0, out, 0, N, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), before)
    prog.compile(gtx.as_field([I], a), 2.0, out, 0, N, offset_provider={})
    prog(gtx.as_field([I], a), 2.0, out, 0, N, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), _expected(a, before, 2.0, 0, N))
    # compile(offset_provider=...) alone (icon4py's setup_program without variants): one
    # variant for every call
    other = scale.with_backend(gtx.cpu).with_compilation_options(enable_jit=False)
    other.compile()  # parses only: still nothing compiled
    with pytest.raises(RuntimeError, match="No program compiled"):
        other(gtx.as_field([I], a), 2.0, out, 0, N, offset_provider={})
    other.compile(offset_provider={})
    out = gtx.as_field([I], before.copy())
    other(gtx.as_field([I], a), 1.5, out, 2, 5, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), _expected(a, before, 1.5, 2, 5))


def test_the_decorator_option_and_embedded() -> None:
    @gtx.program(backend=gtx.cpu, enable_jit=False)
    def scale_cpu(a: Field[Dims[I], float64], w: float64, out: Field[Dims[I], float64]):
        _shifted_scale(a, w, out=out)

    assert scale_cpu.compilation_options.enable_jit is False
    a, before = _fields(3)
    out = gtx.as_field([I], before.copy())
    with pytest.raises(RuntimeError, match="No program compiled"):
        scale_cpu(gtx.as_field([I], a), 3.0, out, offset_provider={})
    # embedded compiles nothing: enable_jit does not apply (gt4py runs it too)
    emb = scale.with_compilation_options(enable_jit=False)
    emb(gtx.as_field([I], a), 3.0, out, 1, 4, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), _expected(a, before, 3.0, 1, 4))
