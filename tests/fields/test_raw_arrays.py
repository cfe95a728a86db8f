"""Programs take raw arrays for field parameters (NumPy, CuPy, PyTorch): wrapped without a copy."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I, J = gtx.Dimension("I"), gtx.Dimension("J")


@gtx.field_operator
def shift_add(
    a: Field[Dims[I, J], float64], b: Field[Dims[I, J], float64]
) -> Field[Dims[I, J], float64]:
    return a(I + 1) + 2.0 * b


def _program(backend: object) -> gtx.Program:
    @gtx.program(backend=backend)
    def run(
        a: Field[Dims[I, J], float64],
        b: Field[Dims[I, J], float64],
        out: Field[Dims[I, J], float64],
    ):
        shift_add(a, b, out=out, domain={I: (0, 7), J: (0, 5)})

    return run


def _expected(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    exp = out.copy()
    exp[:7] = a[1:8] + 2.0 * b[:7]
    return exp


@pytest.mark.parametrize("backend", [None, gtx.cpu], ids=["embedded", "cpu"])
def test_numpy_arrays_are_written_in_place(backend, rng) -> None:
    a, b, out = (rng.standard_normal((8, 5)) for _ in range(3))
    expected = _expected(a, b, out)
    prog = _program(backend)
    for _ in range(2):  # the second call goes through the cached plan
        out_copy = out.copy()
        prog(a, b, out_copy, offset_provider={})
        np.testing.assert_allclose(out_copy, expected, rtol=1e-14)


def test_torch_cpu_tensors(rng) -> None:
    torch = pytest.importorskip("torch")
    a, b, out = (torch.from_numpy(rng.standard_normal((8, 5))) for _ in range(3))
    expected = _expected(a.numpy(), b.numpy(), out.numpy())
    _program(gtx.cpu)(a, b, out, offset_provider={})
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-14)


def test_wrong_rank_is_refused(rng) -> None:
    with pytest.raises(
        TypeError,
        match=r"argument 'a' is an array of shape \(8,\), but the parameter is a field over \[I, J\]",
    ):
        _program(gtx.cpu)(
            rng.standard_normal(8),
            rng.standard_normal((8, 5)),
            rng.standard_normal((8, 5)),
            offset_provider={},
        )


@pytest.mark.gpu
@pytest.mark.parametrize("backend", [None, gtx.gpu], ids=["embedded-cupy", "gpu"])
def test_cupy_arrays_in_place(backend, rng) -> None:
    import cupy as cp

    a, b, out = (rng.standard_normal((8, 5)) for _ in range(3))
    expected = _expected(a, b, out)
    ca, cb, cout = cp.asarray(a), cp.asarray(b), cp.asarray(out)
    ptr = cout.data.ptr
    _program(backend)(ca, cb, cout, offset_provider={})
    assert cout.data.ptr == ptr
    np.testing.assert_allclose(cp.asnumpy(cout), expected, rtol=1e-14)


@pytest.mark.gpu
def test_torch_cuda_tensors_on_gpu(rng) -> None:
    torch = pytest.importorskip("torch")
    a, b, out = (rng.standard_normal((8, 5)) for _ in range(3))
    expected = _expected(a, b, out)
    ta, tb, tout = (torch.from_numpy(x).cuda() for x in (a, b, out))
    _program(gtx.gpu)(ta, tb, tout, offset_provider={})
    torch.cuda.synchronize()
    np.testing.assert_allclose(tout.cpu().numpy(), expected, rtol=1e-14)


@pytest.mark.parametrize("backend", [None, gtx.cpu], ids=["embedded", "cpu"])
@pytest.mark.parametrize("kind", ["negative strides", "read-only"])
def test_outputs_that_cannot_be_written_in_place_are_refused(backend, kind, rng) -> None:
    """Regression: such an output was copied, the program wrote the copy and the caller's array
    kept its old values, without a word."""
    a, b = rng.standard_normal((8, 5)), rng.standard_normal((8, 5))
    base = rng.standard_normal((8, 5))
    before = base.copy()
    if kind == "negative strides":
        out = base[::-1]
        why = r"its strides \(-40, 8\) are not positive"
    else:
        out = base
        out.flags.writeable = False
        why = "it is read-only"
    with pytest.raises(
        ValueError,
        match=rf"argument 'out' is written by the program, but the array given for it cannot be written in place: {why}",
    ):
        _program(backend)(a, b, out, offset_provider={})
    np.testing.assert_array_equal(base, before)


@pytest.mark.parametrize("backend", [None, gtx.cpu], ids=["embedded", "cpu"])
def test_read_only_inputs_are_read_in_place(backend, rng) -> None:
    from stencilkit.stages.binding import wrap_arrays

    a, b, out = (rng.standard_normal((8, 5)) for _ in range(3))
    expected = _expected(a, b, out)
    a.flags.writeable = False
    prog = _program(backend)
    prog(a, b, out, offset_provider={})
    np.testing.assert_allclose(out, expected, rtol=1e-14)
    (wrapped,) = wrap_arrays((prog._runner.flat[0],), [a])
    assert np.shares_memory(wrapped.ndarray, a)  # no copy of the input


X = gtx.Dimension("X")


def test_tuple_outputs_are_named_as_written() -> None:
    @gtx.field_operator
    def pair(a: Field[Dims[X], float64]) -> tuple[Field[Dims[X], float64], Field[Dims[X], float64]]:
        return a, 2.0 * a

    @gtx.program(backend=gtx.cpu)
    def run(
        a: Field[Dims[X], float64], out: tuple[Field[Dims[X], float64], Field[Dims[X], float64]]
    ):
        pair(a, out=out)

    frozen = np.zeros(5)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 'out\[1\]' is written by the program"):
        run(np.ones(5), (np.zeros(5), frozen), offset_provider={})


def test_jax_cpu_arrays_are_read_in_place(rng) -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from stencilkit.stages.binding import wrap_arrays

    jax.config.update("jax_enable_x64", True)
    a, b = jnp.asarray(rng.standard_normal((8, 5))), jnp.asarray(rng.standard_normal((8, 5)))
    out = rng.standard_normal((8, 5))
    expected = _expected(np.asarray(a), np.asarray(b), out)
    prog = _program(gtx.cpu)
    (wrapped,) = wrap_arrays((prog._runner.flat[0],), [a])
    assert wrapped.ndarray.ctypes.data == a.unsafe_buffer_pointer()  # JAX's own buffer, not a copy
    prog(a, b, out, offset_provider={})
    np.testing.assert_allclose(out, expected, rtol=1e-14)
    with pytest.raises(ValueError, match=r"argument 'out' is written by the program.*read-only"):
        prog(a, b, jnp.asarray(out), offset_provider={})  # JAX arrays are immutable


@pytest.mark.gpu
def test_cupy_output_with_negative_strides_is_refused(rng) -> None:
    import cupy as cp

    a, b = cp.asarray(rng.standard_normal((8, 5))), cp.asarray(rng.standard_normal((8, 5)))
    base = cp.asarray(rng.standard_normal((8, 5)))
    before = base.copy()
    with pytest.raises(ValueError, match=r"argument 'out' is written by the program.*strides"):
        _program(gtx.gpu)(a, b, base[::-1], offset_provider={})
    assert bool((base == before).all())
