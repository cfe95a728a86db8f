"""The last call's binding, tried before the caches of earlier calls (cartesian/arguments.py),
and the comparison of a call's arrays with it (toolchain/same_arrays.py, in C and in Python):
every in-place change of an array (shape, strides, dtype, writeability) and every other array
is seen; a read-only array is refused as on its first call; two threads calling one stencil
with their own arrays (taking turns on the one last-call entry) both get their results."""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, interval
from stencilkit.core.errors import StencilValueError
from stencilkit.toolchain import same_arrays
from stencilkit.toolchain.same_arrays import Snapshot, change_in_place

F64 = Field[np.float64]


@pytest.fixture(params=["c", "python"])
def comparison(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Snapshots compared by the C function, or (as where no compiler is) in Python."""
    if request.param == "c":
        if same_arrays._function() is None:
            pytest.skip("no C comparison here (no C++ compiler)")
    else:
        monkeypatch.setattr(same_arrays, "_function", lambda: None)
        monkeypatch.setattr(same_arrays, "_cupy_function", lambda: None)
    return str(request.param)


def _set_strides(a: np.ndarray, strides: tuple[int, ...]) -> None:
    with warnings.catch_warnings():  # deprecated in NumPy 2.4, still possible
        warnings.simplefilter("ignore", DeprecationWarning)
        a.strides = strides


CHANGES: dict[str, Callable[[np.ndarray], None]] = {
    "shape": lambda a: change_in_place(a, "shape", (4, 6, 5)),
    "strides": lambda a: _set_strides(a, (8, 48, 0)),
    "dtype": lambda a: change_in_place(a, "dtype", np.int64),
    "read-only": lambda a: setattr(a.flags, "writeable", False),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_snapshot_sees_each_in_place_change(comparison: str, change: str) -> None:
    arrays = (np.zeros((6, 4, 5)), np.zeros((6, 4, 5)), np.zeros((3, 2)))
    snap = Snapshot(arrays)
    assert (snap.fn is not None) == (comparison == "c")
    assert snap.same(arrays)
    assert snap.same(tuple(arrays))  # another tuple of the same arrays
    CHANGES[change](arrays[1])
    assert not snap.same(arrays)


def test_a_snapshot_sees_other_arrays(comparison: str) -> None:
    a, b = np.zeros((6, 4, 5)), np.zeros((6, 4, 5))
    snap = Snapshot((a, b))
    assert snap.same((a, b))
    assert not snap.same((b, a))
    assert not snap.same((a, b.copy()))
    assert not snap.same((a, b[:]))  # a view: the same memory, another object
    assert not snap.same((a,))
    assert not snap.same((a, b, a))
    assert not snap.same((a, 1.0))
    assert snap.same([a, b])  # not a tuple: compared in Python


def test_the_c_comparison_reads_numpys_structs() -> None:
    fn = same_arrays._function()
    if fn is None:
        pytest.skip("no C comparison here (no C++ compiler)")
    assert same_arrays._works(fn)
    # only exact NumPy arrays are compared in C
    assert Snapshot((np.zeros(3), np.ma.zeros(3))).fn is None


def _plus(backend: str) -> Any:
    @gtscript.stencil(backend=backend)
    def plus(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            out = a[1, 0, 0] + 1.0

    return plus


def _call(s: Any, a: Any, out: Any, how: str) -> None:
    o, d = (0, 0, 0), (out.shape[0] - 1, *out.shape[1:])
    if how == "run":
        s.run(a=a, out=out, _domain_=d, _origin_={"a": o, "out": o})
    elif how == "frozen":
        s.freeze(origin={"_all_": o}, domain=d)(a=a, out=out)
    else:
        s(a, out, origin=o, domain=d, validate_args=how == "validated")


HOWS = ["run", "frozen", "validated", "unvalidated"]


@pytest.mark.parametrize("how", HOWS)
def test_an_output_made_read_only_after_its_calls_is_refused(
    backend: str, comparison: str, how: str
) -> None:
    if backend == "gt:gpu":
        pytest.skip("NumPy arrays only: CuPy arrays have no writeable flag")
    s = _plus(backend)
    a, out = np.random.default_rng(1).standard_normal((2, 6, 4, 5))
    for _ in range(3):
        _call(s, a, out, how)
    np.testing.assert_array_equal(out[:-1], a[1:] + 1.0)
    fresh = np.zeros_like(out)
    fresh.flags.writeable = False
    with pytest.raises(StencilValueError, match="read-only") as first:
        _call(s, a, fresh, how)
    out[...] = 7.0
    out.flags.writeable = False
    with pytest.raises(StencilValueError, match="read-only") as later:
        _call(s, a, out, how)
    assert str(later.value) == str(first.value)  # the error of a first call
    assert (out == 7.0).all()
    out.flags.writeable = True
    _call(s, a, out, how)
    np.testing.assert_array_equal(out[:-1], a[1:] + 1.0)


@pytest.mark.parametrize("how", HOWS)
def test_arrays_taking_turns_and_changed_in_place(backend: str, arrays: Any, how: str) -> None:
    s = _plus(backend)
    sets = [(arrays.random(6, 4, 5), arrays.random(6, 4, 5)) for _ in range(2)]
    for step in range(6):
        a, out = sets[step % 2]
        a[...] = arrays.put(arrays.host(a) + step)
        _call(s, a, out, how)
        np.testing.assert_array_equal(arrays.host(out)[:-1], arrays.host(a)[1:] + 1.0)
    if backend == "gt:gpu":
        return
    a, out = sets[0]
    for x in (a, out):  # the last call's arrays, other shape and strides
        change_in_place(x, "shape", (6, 5, 4))
    _call(s, a, out, how)
    np.testing.assert_array_equal(out[:-1], a[1:] + 1.0)


@pytest.mark.parametrize("how", HOWS)
def test_two_threads_calling_one_stencil_with_their_own_arrays(
    backend: str, arrays: Any, comparison: str, how: str
) -> None:
    """No temporaries and no scalars: each call is the last-call check and the bound launch."""
    s = _plus(backend)
    n, calls = (12, 5, 6), 200
    errors: list[BaseException] = []
    worst: dict[int, float] = {}
    start = threading.Barrier(2)

    def worker(t: int) -> None:
        try:
            rng = np.random.default_rng(t)
            own = [(arrays.put(rng.standard_normal(n)), arrays.put(np.zeros(n))) for _ in range(2)]
            start.wait()
            err = 0.0
            for step in range(calls):
                a, out = own[step // 7 % 2]  # a few calls with one set, then the other
                a[...] = arrays.put(rng.standard_normal(n) + step)
                _call(s, a, out, how)
                ref = arrays.host(a)[1:] + 1.0
                err = max(err, float(np.max(np.abs(arrays.host(out)[:-1] - ref))))
            worst[t] = err
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert worst == {0: 0.0, 1: 0.0}


def test_cupy_arrays_are_compared_by_identity_and_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """CuPy's strides, dtype and data cannot be set (CuPy 14): a snapshot of CuPy arrays reads
    only their shapes, and still sees a shape set in place."""
    import types

    class FakeCupyArray:  # stands for cupy.ndarray where CuPy is not installed
        def __init__(self, shape: tuple[int, ...]) -> None:
            self.shape = shape

        @property
        def strides(self) -> tuple[int, ...]:
            raise AssertionError("a CuPy array's strides are not read")

        dtype = strides

    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(ndarray=FakeCupyArray))
    monkeypatch.setattr(same_arrays, "_cupy_function", lambda: None)  # the Python comparison
    arrays = (FakeCupyArray((3, 4)), FakeCupyArray((2, 2)))
    snap = Snapshot(arrays)
    assert snap.fn is None and snap.same(arrays)
    assert not snap.same((arrays[0], FakeCupyArray((2, 2))))  # another object
    arrays[1].shape = (4, 1)
    assert not snap.same(arrays)
    assert snap.key is same_arrays.CUPY_GEOMETRY
    # a NumPy array beside them: every array compared in full
    assert Snapshot((np.zeros(3), np.zeros(2))).key is same_arrays.GEOMETRY


@pytest.mark.gpu
def test_the_c_comparison_reads_cupys_arrays() -> None:
    """A tuple of CuPy arrays is compared in C (CuPy's ``shape`` property costs about 0.3 µs an
    array): equal to its snapshot, unequal with another array, another order, another length,
    or a shape set in place; a mix with NumPy arrays is compared in Python."""
    import cupy as cp

    found = same_arrays._cupy_function()
    assert found is not None, "CuPy's ndarray layout was not recognised (or no C++ compiler)"
    arrays = (cp.zeros((6, 4, 5)), cp.zeros((6, 4, 5))[:, ::2], cp.zeros(3, cp.int32))
    snap = Snapshot(arrays)
    assert snap.fn is found[0]
    assert snap.same(arrays) and snap.same(tuple(arrays))
    assert not snap.same((arrays[1], arrays[0], arrays[2]))
    assert not snap.same((arrays[0], arrays[1], cp.zeros(3, cp.int32)))
    assert not snap.same(arrays[:2])
    assert not snap.same((*arrays, arrays[0]))
    arrays[0].shape = (24, 5)
    assert not snap.same(arrays)
    arrays[0].shape = (6, 4, 5)  # back: the same geometry again
    assert snap.same(arrays)
    mixed = (cp.zeros(3), np.zeros(3))
    assert Snapshot(mixed).fn is None and Snapshot(mixed).same(mixed)


def test_a_cupy_probe_that_fails_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the probe arrays cannot be made (a CUDA graph capture, no free memory), the CuPy
    comparison is in Python for that snapshot and probed again for the next; only a definite
    answer (a layout, or none) is kept."""
    import types

    if same_arrays._entry(same_arrays._CUPY_ENTRY) is None:
        pytest.skip("no C comparison here (no C++ compiler)")
    tried: list[int] = []

    def empty(*_: Any, **__: Any) -> Any:
        tried.append(1)
        raise RuntimeError("allocation refused")

    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(ndarray=object, empty=empty))
    monkeypatch.setattr(same_arrays, "_loaded_cupy", [])
    assert same_arrays._cupy_function() is None
    assert same_arrays._cupy_function() is None
    assert len(tried) == 2 and same_arrays._loaded_cupy == []
