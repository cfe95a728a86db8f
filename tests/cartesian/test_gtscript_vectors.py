"""Vector and matrix values of fields with data dimensions and temporaries with data dimensions
(CARTESIAN.md 2.2 and 2.8, P3): ``m @ v``, ``m.T``, element-wise arithmetic with broadcast
scalars, whole-field assignments, and ``tmp: Field[IJK, (dtype, (n,))] = 0.0`` declared at the
top of a definition (gt4py 1.2's forms). Every backend against NumPy on random data (the same
cases were bitwise equal to real gt4py 1.2.1's debug and numpy backends); the refusals name the
line; the generated CUDA compiles."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptDefinitionError, GTScriptSyntaxError
from stencilkit.cartesian.gtscript import FORWARD, IJK, PARALLEL, Field, computation, interval

F64 = Field[np.float64]
I64 = Field[np.int64]
M32 = Field[IJK, (np.float64, (3, 2))]
M22 = Field[IJK, (np.float64, (2, 2))]
V2 = Field[IJK, (np.float64, (2,))]
V3 = Field[IJK, (np.float64, (3,))]


def _check(actual: np.ndarray, ref: np.ndarray, gpu: bool) -> None:
    if gpu:  # nvcc may contract a * b + c into an FMA
        np.testing.assert_allclose(actual, ref, rtol=1e-13, atol=1e-15)
    else:  # the same operations in the same order: bitwise
        np.testing.assert_array_equal(actual, ref)


def _mv(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """gt4py's order: m[j][0] * v[0] + m[j][1] * v[1] + ..."""
    out = m[..., 0] * v[..., 0, None]
    for i in range(1, m.shape[-1]):
        out = out + m[..., i] * v[..., i, None]
    return out


def test_matrix_vector_product_and_elementwise(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def mv(m: M32, v: V2, w: V3, out: V3):
        with computation(PARALLEL), interval(...):
            out = m @ v + w * 2.0 - 1.0

    m, v, w = arrays.random(5, 4, 6, 3, 2), arrays.random(5, 4, 6, 2), arrays.random(5, 4, 6, 3)
    out = arrays.random(6, 4, 6, 3)
    before = arrays.host(out)
    mv(m, v, w, out, domain=(5, 4, 6))
    ref = before.copy()
    ref[:5] = _mv(arrays.host(m), arrays.host(v)) + arrays.host(w) * 2.0 - 1.0
    _check(arrays.host(out), ref, arrays.gpu)  # row 5 untouched


def test_transpose_scalar_field_and_in_place_product(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def mtv(m: M32, w: V3, s: F64, out: V2):
        with computation(PARALLEL), interval(...):
            out = m.T @ w
            out = out * s

    @gtscript.stencil(backend=backend)
    def inplace(m: M22, v: V2):
        with computation(PARALLEL), interval(...):
            v = m @ v  # unrolled in order: v[1] sees the new v[0] (as gt4py does)

    m, w, s = arrays.random(4, 3, 5, 3, 2), arrays.random(4, 3, 5, 3), arrays.random(4, 3, 5)
    out = arrays.random(4, 3, 5, 2)
    mtv(m, w, s, out)
    ref = _mv(np.swapaxes(arrays.host(m), -1, -2), arrays.host(w)) * arrays.host(s)[..., None]
    _check(arrays.host(out), ref, arrays.gpu)

    m2, v = arrays.random(4, 3, 5, 2, 2), arrays.random(4, 3, 5, 2)
    mh, vr = arrays.host(m2), arrays.host(v)
    inplace(m2, v)
    v0 = mh[..., 0, 0] * vr[..., 0] + mh[..., 0, 1] * vr[..., 1]
    v1 = mh[..., 1, 0] * v0 + mh[..., 1, 1] * vr[..., 1]
    _check(arrays.host(v), np.stack([v0, v1], axis=-1), arrays.gpu)


def test_declared_temporary_with_data_dimensions(backend, arrays) -> None:
    """Read at K and I offsets in a later computation (its extent grows), with a run-time
    element index, initialised by its declaration."""

    @gtscript.stencil(backend=backend)
    def tv(m: M32, v: V2, a: F64, idx: I64, out: F64):
        tmp: Field[IJK, (np.float64, (3,))] = 0.0
        with computation(PARALLEL), interval(...):
            tmp = m @ v
        with computation(PARALLEL), interval(1, None):
            out = tmp[0, 0, -1][0] + tmp[1, 0, 0][2] * a + tmp[0, 0, 0][idx]

    m, v = arrays.random(6, 4, 5, 3, 2), arrays.random(6, 4, 5, 2)
    a, out = arrays.random(6, 4, 5), arrays.random(6, 4, 5)
    idx = np.random.default_rng(2).integers(0, 3, (6, 4, 5))
    before = arrays.host(out)
    tv(m, v, a, arrays.put(idx), out, domain=(5, 4, 5))
    t = _mv(arrays.host(m), arrays.host(v))
    ref = before.copy()
    pick = np.take_along_axis(t[:5, :, 1:], idx[:5, :, 1:, None], axis=-1)[..., 0]
    ref[:5, :, 1:] = t[:5, :, :-1, 0] + t[1:6, :, 1:, 2] * arrays.host(a)[:5, :, 1:] + pick
    _check(arrays.host(out), ref, arrays.gpu)


def test_declared_temporary_carried_in_a_forward_loop(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def carry(a: F64, out: F64):
        acc: Field[IJK, (np.float64, (2,))] = 1.0
        with computation(FORWARD):
            with interval(0, 1):
                acc[0, 0, 0][0] = a
            with interval(1, None):
                acc[0, 0, 0][0] = acc[0, 0, -1][0] + a
                acc[0, 0, 0][1] = acc[0, 0, -1][1] * 0.5 + acc[0, 0, 0][0]
        with computation(PARALLEL), interval(...):
            out = acc[0, 0, 0][0] - acc[0, 0, 0][1]

    a, out = arrays.random(3, 4, 6), arrays.random(3, 4, 6)
    ah = arrays.host(a)
    carry(a, out)
    c0, c1 = np.empty_like(ah), np.empty_like(ah)
    c0[..., 0], c1[..., 0] = ah[..., 0], 1.0
    for k in range(1, 6):
        c0[..., k] = c0[..., k - 1] + ah[..., k]
        c1[..., k] = c1[..., k - 1] * 0.5 + c0[..., k]
    _check(arrays.host(out), c0 - c1, arrays.gpu)


def _definition(tmp_path: Any, top: str, body: str) -> Any:
    path = tmp_path / f"vec_{abs(hash((top, body)))}.py"
    path.write_text(
        "import numpy as np\n"
        "from stencilkit.cartesian.gtscript import *\n"
        "M = Field[IJK, (np.float64, (3, 2))]\n"
        "def d(m: M, v: Field[IJK, (np.float64, (2,))], out: Field[np.float64]):\n"
        f"    {top}\n"
        "    with computation(PARALLEL), interval(...):\n"
        f"        {body}\n"
    )
    scope: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    return scope["d"]


@pytest.mark.parametrize(
    "top, body, error, match, line",
    [
        ("pass", "out = m @ m", GTScriptSyntaxError, r"got \(3, 2\) @ \(3, 2\)", 7),
        ("pass", "out = v @ out", GTScriptSyntaxError, "two values with data dimensions", 7),
        ("pass", "v = m + v", GTScriptSyntaxError, r"data dimensions \(3, 2\) and \(2,\)", 7),
        ("pass", "out = sqrt(m @ v)", GTScriptSyntaxError, r"data dimensions \(3,\) where one value", 7),
        ("pass", "v = m @ v", GTScriptDefinitionError, r"'v' has data dimensions \(2,\); the value assigned has \(3,\)", 7),
        ("t: Field[IJ, (np.float64, (2,))] = 0.0", "out = v", GTScriptSyntaxError, "only IJK", 5),
        ("t: Field[IJK, (np.float64, (2,))] = out", "out = v", GTScriptSyntaxError, "compile-time value", 5),
    ],
)  # fmt: skip
def test_refused_vector_forms_name_the_line(tmp_path, top, body, error, match, line) -> None:
    with pytest.raises(error, match=match) as info:
        gtscript.stencil(backend="numpy", definition=_definition(tmp_path, top, body))
    assert info.value.location.line == line


def test_generated_cuda_of_vectors_and_vector_temporaries_compiles(generated_cuda) -> None:
    @gtscript.stencil(backend="gt:gpu")
    def tv(m: M32, v: V2, out: F64):
        tmp: Field[IJK, (np.float64, (3,))] = 0.0
        with computation(PARALLEL), interval(...):
            tmp = m @ v
        with computation(PARALLEL), interval(...):
            out = tmp[1, 0, 0][2] - tmp[0, 0, 0][0]

    rng = np.random.default_rng(0)
    arrs = {
        "m": rng.standard_normal((5, 3, 4, 3, 2)),
        "v": rng.standard_normal((5, 3, 4, 2)),
        "out": np.zeros((4, 3, 4)),
    }
    origin = {"m": (0, 0, 0, 0, 0), "v": (0, 0, 0, 0), "out": (0, 0, 0)}
    assert "tmp__ddim_2" in generated_cuda(tv, (4, 3, 4), origin, arrs)
