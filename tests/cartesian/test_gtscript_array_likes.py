"""gt4py's array-like arguments: objects exposing ``__array_interface__`` (or the CUDA one),
with ``__gt_origin__`` (used unless the call gives an origin) and ``__gt_dims__`` (the array's
axes in any order; transposed to the stencil's), viewed without a copy; wrong axes refused
with gt4py's message."""

from __future__ import annotations

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptCallError
from stencilkit.cartesian.gtscript import FORWARD, IJ, PARALLEL, Field, K, computation, interval


class Wrapper:
    def __init__(self, array, origin=None, dims=None) -> None:
        self.array = array
        if origin is not None:
            self.__gt_origin__ = origin
        if dims is not None:
            self.__gt_dims__ = dims

    @property
    def __array_interface__(self):
        return self.array.__array_interface__

    @property
    def __cuda_array_interface__(self):
        return self.array.__cuda_array_interface__


def shift_add(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a[1, 0, 0] + 2.0 * b


def test_array_interface_objects_and_their_origins(backend: str, arrays) -> None:
    st = gtscript.stencil(backend, shift_add)
    rng = np.random.default_rng(11)
    a_h, b_h = rng.standard_normal((6, 5, 3)), rng.standard_normal((6, 5, 3))
    a, b = arrays.put(a_h), arrays.put(b_h)
    # each object's own origin: a at (0, 1, 0), b at (1, 1, 0); domain from the shapes
    st(Wrapper(a, origin=(0, 1, 0)), Wrapper(b, origin=(1, 1, 0)), domain=(4, 4, 3))
    want = b_h.copy()
    want[1:5, 1:5] = a_h[1:5, 1:5] + 2.0 * b_h[1:5, 1:5]
    np.testing.assert_allclose(arrays.host(b), want, rtol=1e-14)
    # an origin for all fields wins over the objects' own
    b2 = arrays.put(b_h)
    st(
        Wrapper(a, origin=(3, 3, 0)),
        Wrapper(b2, origin=(3, 3, 0)),
        origin=(0, 0, 0),
        domain=(2, 2, 3),
    )
    want = b_h.copy()
    want[:2, :2] = a_h[1:3, :2] + 2.0 * b_h[:2, :2]
    np.testing.assert_allclose(arrays.host(b2), want, rtol=1e-14)


def copy_k(out: Field[np.float64], inp: Field[K, np.float64]):
    with computation(FORWARD), interval(...):
        out = inp


def test_gt_dims_transposes(backend: str, arrays) -> None:
    st = gtscript.stencil(backend, copy_k)
    kji = arrays.put(np.zeros((4, 3, 2)))  # axes K, J, I
    inp = arrays.put(np.arange(4.0) + 0.5)
    st(Wrapper(kji, dims="KJI"), inp)
    want = np.broadcast_to((np.arange(4.0) + 0.5)[:, None, None], (4, 3, 2))
    np.testing.assert_array_equal(arrays.host(kji), want)


def test_wrong_gt_dims_refused() -> None:
    def plane(out: Field[IJ, np.float64]):
        with computation(FORWARD), interval(...):
            out = 1.0

    st = gtscript.stencil("numpy", plane)
    with pytest.raises(
        GTScriptCallError,
        match=r"has dimensions '\['I', 'K'\]' but the API signature expects '\[I, J\]'",
    ):
        st(Wrapper(np.zeros((3, 3)), dims=("I", "K")))
    with pytest.raises(
        GTScriptCallError,
        match="Storage for 'out' has 3 dimensions but the API signature expects 2",
    ):
        st(np.zeros((3, 3, 3)))


def test_normalised_origins_and_domains_are_kept_per_shapes_and_origins(backend: str) -> None:
    """gt4py's ``_domain_origin_cache``: array-likes of the same shapes, dtypes and origins are
    normalised and checked once; another origin or shape adds an entry; a dtype that differs is
    still refused; ``clean_call_args_cache()`` forgets them. exec_info's call_run span holds
    the normalising and the run."""
    if backend == "gt:gpu":
        pytest.skip("host arrays")
    st = gtscript.stencil(backend, shift_add, rebuild=True)
    rng = np.random.default_rng(5)
    a_h, b_h = rng.standard_normal((6, 4, 3)), rng.standard_normal((6, 4, 3))
    ref = b_h.copy()
    for _ in range(2):
        a, b = Wrapper(a_h.copy(), (0, 0, 0)), Wrapper(b_h, (0, 0, 0))
        info: dict = {}
        st(a, b, exec_info=info)
        ref[:5] = a_h[1:6] + 2.0 * ref[:5]  # domain (5, 4, 3): I plane 5 untouched
        np.testing.assert_array_equal(b_h, ref)
        assert info["call_run_start_time"] < info["run_start_time"] < info["run_end_time"]
        assert info["run_end_time"] <= info["call_run_end_time"]
    assert len(st._domain_origin_cache) == 1
    st(Wrapper(a_h, (1, 0, 0)), Wrapper(b_h, (1, 0, 0)))
    assert len(st._domain_origin_cache) == 2
    with pytest.raises(GTScriptCallError, match="dtype float32"):
        st(Wrapper(a_h.astype(np.float32), (0, 0, 0)), Wrapper(b_h, (0, 0, 0)))
    st.clean_call_args_cache()
    assert len(st._domain_origin_cache) == 0
