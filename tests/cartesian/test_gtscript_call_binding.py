"""The per-call caches of a GTScript stencil (cartesian/arguments.py, backends/embedded/bound.py):
a call never reuses the arguments bound for other arrays, origins, domains or an array changed
in place; validation still refuses what it refuses; writes of one call are seen by the next; two
threads calling one stencil (with temporaries) with their own arrays both get their results;
the embedded backend's generated kernels give the evaluator's results bit for bit."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptCallError
from stencilkit.cartesian.gtscript import (
    BACKWARD,
    FORWARD,
    IJ,
    PARALLEL,
    Field,
    I,
    computation,
    horizontal,
    interval,
    region,
)
from stencilkit.toolchain.same_arrays import change_in_place

F64 = Field[np.float64]
F32 = Field[np.float32]
I64 = Field[np.int64]


def _shift(backend: str) -> Any:
    @gtscript.stencil(backend=backend)
    def shift(a: F64, out: F64, w: float):
        with computation(PARALLEL), interval(...):
            out = w * (a[-1, 0, 0] + a[1, 0, 1])

    return shift


def _ref(a: np.ndarray, out: np.ndarray, w: float, o: tuple[int, ...], d: tuple[int, ...]) -> Any:
    ref = out.copy()
    i, j, k = o
    ni, nj, nk = d
    ref[i : i + ni, j : j + nj, k : k + nk] = w * (
        a[i - 1 : i - 1 + ni, j : j + nj, k : k + nk]
        + a[i + 1 : i + 1 + ni, j : j + nj, k + 1 : k + 1 + nk]
    )
    return ref


def _check(
    s: Any, a: Any, out: Any, arrays: Any, w: float, o: tuple[int, ...], d: Any, how: str
) -> None:
    A, before = arrays.host(a), arrays.host(out)
    if how == "run":
        s.run(a=a, out=out, w=w, _domain_=d, _origin_={"a": o, "out": o})
    elif how == "frozen":
        s.freeze(origin={"_all_": o}, domain=d)(a=a, out=out, w=w)
    else:
        s(a, out, w, origin=o, domain=d, validate_args=how == "validated")
    np.testing.assert_array_equal(arrays.host(out), _ref(A, before, w, o, d))


HOWS = ["run", "frozen", "validated", "unvalidated"]


@pytest.mark.parametrize("how", HOWS)
def test_other_arrays_of_the_same_shape_views_and_bases(backend, arrays, how) -> None:
    s = _shift(backend)
    a1, a2 = arrays.random(7, 4, 4), arrays.random(7, 4, 4)
    o1, o2 = arrays.random(7, 4, 4), arrays.random(7, 4, 4)
    base = arrays.random(9, 4, 4)
    view = base[1:8]  # a view of the same shape as a1: other memory than its base's start
    for a, out in ((a1, o1), (a2, o1), (a1, o2), (view, o1), (base[:7], o1), (a1, o1), (view, o2)):
        _check(s, a, out, arrays, 0.5, (1, 0, 0), (5, 4, 3), how)
    # a view of the output as the input of another call, then the base again
    _check(s, base[2:9], o1, arrays, 0.5, (1, 0, 0), (5, 4, 3), how)


@pytest.mark.parametrize("how", HOWS)
def test_changed_origin_domain_and_scalar_with_the_same_arrays(backend, arrays, how) -> None:
    s = _shift(backend)
    a, out = arrays.random(8, 5, 5), arrays.random(8, 5, 5)
    for o, d, w in (
        ((1, 0, 0), (5, 4, 3), 0.5),
        ((2, 1, 0), (5, 4, 3), 0.5),
        ((2, 1, 1), (5, 4, 3), 0.5),
        ((2, 1, 1), (4, 2, 2), 0.5),
        ((2, 1, 1), (4, 2, 2), -3.0),
        ((1, 0, 0), (5, 4, 3), 0.5),
    ):
        _check(s, a, out, arrays, w, o, d, how)


@pytest.mark.parametrize("how", HOWS)
def test_writes_of_one_call_are_read_by_the_next(backend, arrays, how) -> None:
    s = _shift(backend)
    a, out = arrays.random(7, 4, 4), arrays.random(7, 4, 4)
    for step in range(3):
        _check(s, a, out, arrays, 0.5, (1, 0, 0), (5, 4, 3), how)
        a[...] = arrays.put(np.full((7, 4, 4), float(step)) + arrays.host(out))


def test_an_array_changed_in_place_is_bound_again(backend, arrays) -> None:
    if backend == "gt:gpu":
        pytest.skip("NumPy arrays only: CuPy arrays cannot be reshaped in place")
    s = _shift(backend)
    a, out = arrays.random(6, 4, 6), arrays.random(6, 4, 6)
    _check(s, a, out, arrays, 0.5, (1, 0, 0), (4, 4, 3), "validated")
    change_in_place(a, "shape", (6, 6, 4))  # same memory, other shape and strides
    change_in_place(out, "shape", (6, 6, 4))
    for how in HOWS:
        _check(s, a, out, arrays, 0.5, (1, 1, 0), (4, 4, 3), how)
    change_in_place(
        a, "shape", (8, 6, 3)
    )  # now too small along K for the domain: refused, nothing written
    with pytest.raises(GTScriptCallError, match="too small along K"):
        s(a, out, 0.5, origin=(1, 1, 0), domain=(4, 4, 3))
    change_in_place(a, "shape", (6, 6, 4))
    before = out.copy()
    change_in_place(a, "dtype", np.int64)  # same shape and strides, another dtype: refused
    with pytest.raises(GTScriptCallError, match="dtype int64"):
        s(a, out, 0.5, origin=(1, 1, 0), domain=(4, 4, 3))
    np.testing.assert_array_equal(out, before)


def test_origins_mutated_between_calls(backend, arrays) -> None:
    s = _shift(backend)
    a, out = arrays.random(8, 5, 5), arrays.random(8, 5, 5)
    origin: dict[str, Any] = {"a": (1, 0, 0), "out": (1, 0, 0)}
    for o in ((1, 0, 0), (2, 1, 0), (3, 1, 1)):
        origin["a"] = origin["out"] = o  # the same dict, other entries
        A, before = arrays.host(a), arrays.host(out)
        s.run(a=a, out=out, w=0.5, _domain_=(4, 3, 3), _origin_=origin)
        np.testing.assert_array_equal(arrays.host(out), _ref(A, before, 0.5, o, (4, 3, 3)))
    listed: dict[str, Any] = {"a": [1, 0, 0], "out": [1, 0, 0]}
    for o in ((1, 0, 0), (2, 1, 1)):
        listed["a"][:] = listed["out"][:] = o  # lists changed in place
        A, before = arrays.host(a), arrays.host(out)
        s.run(a=a, out=out, w=0.5, _domain_=[4, 3, 3], _origin_=listed)
        np.testing.assert_array_equal(arrays.host(out), _ref(A, before, 0.5, o, (4, 3, 3)))
        A, before = arrays.host(a), arrays.host(out)
        s(a, out, 0.5, origin=listed, domain=[4, 3, 3])
        np.testing.assert_array_equal(arrays.host(out), _ref(A, before, 0.5, o, (4, 3, 3)))


@pytest.mark.parametrize("how", ["run", "validated"])
def test_a_scalar_in_an_interval_bound_changes_the_kernels(backend, arrays, how) -> None:
    @gtscript.stencil(backend=backend)
    def below(a: F64, out: F64, kbot: int):
        with computation(FORWARD), interval(1, kbot):
            out = out[0, 0, -1] + a
        with computation(PARALLEL), interval(kbot, None):
            out = -a

    a, out = arrays.random(3, 2, 7), arrays.random(3, 2, 7)
    for kbot in (4, 4, 6, 2, 4):
        O0, A = arrays.host(out), arrays.host(a)
        if how == "run":
            below.run(
                a=a,
                out=out,
                kbot=kbot,
                _domain_=(3, 2, 7),
                _origin_={"a": (0, 0, 0), "out": (0, 0, 0)},
            )
        else:
            below(a, out, kbot)
        ref = O0.copy()
        for k in range(1, kbot):
            ref[..., k] = ref[..., k - 1] + A[..., k]
        ref[..., kbot:] = -A[..., kbot:]
        np.testing.assert_allclose(arrays.host(out), ref, rtol=1e-14)


class WithOrigin(np.ndarray):
    """An array carrying its own origin (as gt4py's old storages did)."""

    __gt_origin__: tuple[int, ...] = (0, 0, 0)


def test_an_arrays_own_origin_is_read_again() -> None:
    s = _shift("numpy")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((8, 4, 5)).view(WithOrigin)
    out = rng.standard_normal((8, 4, 5)).view(WithOrigin)
    for o in ((1, 0, 0), (3, 1, 1)):
        a.__gt_origin__ = out.__gt_origin__ = o
        A, before = np.asarray(a).copy(), np.asarray(out).copy()
        s(a, out, 0.5, domain=(4, 3, 3))
        np.testing.assert_array_equal(np.asarray(out), _ref(A, before, 0.5, o, (4, 3, 3)))


def test_validation_is_kept_per_arrays_origin_and_domain(backend, arrays, monkeypatch) -> None:
    import stencilkit.cartesian.stencil_object as so

    seen: list[int] = []
    real = so.validate_fields

    def counted(*args: Any, **kwargs: Any) -> None:
        seen.append(1)
        real(*args, **kwargs)

    monkeypatch.setattr(so, "validate_fields", counted)
    s = _shift(backend)
    a, out = arrays.random(7, 4, 4), arrays.random(7, 4, 4)
    s(a, out, 0.5, origin=(1, 0, 0), domain=(5, 4, 3), validate_args=False)
    assert len(seen) == 0
    for _ in range(3):
        s(a, out, 0.5, origin=(1, 0, 0), domain=(5, 4, 3))
    assert len(seen) == 1  # checked once for these arrays, this origin and domain
    s(a, out, 0.5, origin=(1, 0, 0), domain=(5, 4, 2))
    s(a, out, 0.5, origin=(2, 0, 0), domain=(4, 4, 3))
    s(arrays.random(7, 4, 4), out, 0.5, origin=(1, 0, 0), domain=(5, 4, 3))
    assert len(seen) == 4
    # still refused after good calls: a domain too large, a short array, a wrong scalar
    with pytest.raises(GTScriptCallError, match="too small along I"):
        s(a, out, 0.5, origin=(1, 0, 0), domain=(6, 4, 3))
    with pytest.raises(GTScriptCallError, match="too small along K"):
        s(a[:, :, :3], out, 0.5, origin=(1, 0, 0), domain=(5, 4, 3))
    with pytest.raises(GTScriptCallError, match="dtype float32"):
        s(a.astype(np.float32), out, 0.5, origin=(1, 0, 0), domain=(5, 4, 3))
    with pytest.raises(GTScriptCallError, match="parameter 'w'"):
        s(a, out, "0.5", origin=(1, 0, 0), domain=(5, 4, 3))
    with pytest.raises(GTScriptCallError, match="before its origin"):
        s(a, out, 0.5, origin=(0, 0, 0), domain=(5, 4, 3))


def test_origin_and_domain_keys_tell_types_apart() -> None:
    from stencilkit.cartesian.arguments import spec_key

    assert spec_key(2) != spec_key(2.0)
    assert spec_key(2.0) is NotImplemented and spec_key([1.5, 0, 0]) is NotImplemented
    assert spec_key((1, 2, 3)) == spec_key([1, 2, 3]) != spec_key({"a": (1, 2, 3)})
    assert (
        spec_key({"a": 2.0}) is NotImplemented and spec_key(np.array([1, 2, 3])) is NotImplemented
    )
    assert spec_key(None) != spec_key(0)


def _with_temporaries(backend: str) -> Any:
    @gtscript.stencil(backend=backend)
    def smooth(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            t = 2.0 * a
        with computation(PARALLEL), interval(...):
            out = t[-1, 0, 0] + t[1, 0, 0] + a

    return smooth


def test_two_threads_calling_one_stencil_with_their_own_arrays(backend, arrays) -> None:
    s = _with_temporaries(backend)
    n, calls = (16, 12, 10), 60
    errors: list[BaseException] = []
    results: dict[int, float] = {}
    start = threading.Barrier(2)

    def worker(t: int) -> None:
        try:
            rng = np.random.default_rng(t)
            a = arrays.put(rng.standard_normal(n))
            out = arrays.put(np.zeros(n))
            start.wait()
            worst = 0.0
            for step in range(calls):
                a[...] = arrays.put(rng.standard_normal(n) + step)
                A = arrays.host(a)
                if step % 3 == 0:
                    s(a, out, origin=(1, 0, 0), domain=(n[0] - 2, n[1], n[2]))
                else:
                    s.run(
                        a=a,
                        out=out,
                        _domain_=(n[0] - 2, n[1], n[2]),
                        _origin_={"a": (1, 0, 0), "out": (1, 0, 0)},
                    )
                ref = 2.0 * A[:-2] + 2.0 * A[2:] + A[1:-1]
                worst = max(worst, float(np.max(np.abs(arrays.host(out)[1:-1] - ref))))
            results[t] = worst
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert results == {0: 0.0, 1: 0.0}


# ---------------------------------------------------------------- embedded: generated kernels
def _rich() -> Any:
    from stencilkit.cartesian.gtscript import abs, exp, max, min, sqrt

    def rich(
        a: F64, b: F64, s2: Field[IJ, np.float64], n: I64, f: F32, out: F64, out2: F64, acc: F64,
        w: float, m: int,
    ):  # fmt: skip
        with computation(PARALLEL), interval(...):
            t = sqrt(abs(a)) * w + b[1, 0, 0]
            u = t * t - t
            with horizontal(region[I[0] + 1 : I[0] + 3, :]):
                u = u + 1.0
        with computation(PARALLEL), interval(...):
            out = u[0, 1, 0] - s2 + (n // m) + (n % m) + f
            out2 = max(a, b) if m > 2 else min(a, b)
        with computation(FORWARD):
            with interval(0, 1):
                acc = a
            with interval(1, None):
                acc = acc[0, 0, -1] * 0.5 + b
        with computation(BACKWARD), interval(0, -1):
            out2 = out2[0, 0, 1] + exp(-abs(a))

    return rich


def _rich_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    shape = (7, 6, 5)
    return {
        "a": rng.standard_normal(shape),
        "b": rng.standard_normal(shape),
        "s2": rng.standard_normal(shape[:2]),
        "n": rng.integers(-50, 50, shape),
        "f": rng.standard_normal(shape).astype(np.float32),
        "out": rng.standard_normal(shape),
        "out2": rng.standard_normal(shape),
        "acc": rng.standard_normal(shape),
        "w": 1.25,
        "m": 3,
    }


def test_generated_kernels_give_the_evaluators_results_bit_for_bit() -> None:
    definition = _rich()
    fast = gtscript.stencil(backend="numpy", definition=definition, rebuild=True)
    slow = gtscript.stencil(backend="numpy", definition=definition, rebuild=True)
    assert fast is not slow
    slow._runner.bindable = False  # every call evaluated by the evaluator
    for seed in range(3):
        args_fast, args_slow = _rich_args(seed), _rich_args(seed)
        for call in range(2):  # the second call runs the bound kernels again
            for args, st in ((args_fast, fast), (args_slow, slow)):
                st(**args, origin=(1, 0, 0), domain=(5, 5, 5))
            for name in ("out", "out2", "acc"):
                np.testing.assert_array_equal(
                    args_fast[name], args_slow[name], err_msg=f"{name} {call}"
                )
            args_fast["a"] += 1.0
            args_slow["a"] += 1.0
    from stencilkit.backends.embedded.bound import kernel_code

    plans = fast._runner.plans.values()
    codes = [(k, kernel_code(k)) for p in plans for k, _ in p.kernels]
    assert any(c is not None and k.scan is not None for k, c in codes)  # scans generated
    assert any(c is not None and k.scan is None for k, c in codes)
    assert fast._runner.bound  # the calls were bound


def test_a_kernel_with_a_conditional_stays_on_the_evaluator() -> None:
    from stencilkit.backends.embedded.bound import kernel_code
    from stencilkit.core.types import ScalarType
    from stencilkit.ir import nodes as ir

    x = ir.Literal(1.0, ScalarType("float64"))
    cond = ir.Literal(True, ScalarType("bool"))
    assert kernel_code(ir.Kernel("k", (), ("o",), (ir.IfElse(cond, x, x, x.type),), ())) is None
    assert kernel_code(ir.Kernel("k", (), ("o",), (x,), ())) is not None


def test_clean_call_args_cache_lets_the_arrays_go(backend, arrays) -> None:
    import gc
    import weakref

    if backend == "gt:gpu":
        pytest.skip("NumPy arrays only (weak references)")
    s = _shift(backend)
    a, out = arrays.random(7, 4, 4), arrays.random(7, 4, 4)
    _check(s, a, out, arrays, 0.5, (1, 0, 0), (5, 4, 3), "validated")
    _check(s, a, out, arrays, 0.5, (1, 0, 0), (5, 4, 3), "run")
    gone = weakref.ref(a)
    del a
    gc.collect()
    assert gone() is not None  # kept by the caches for the next call
    s.clean_call_args_cache()
    gc.collect()
    assert gone() is None


def test_a_read_made_as_a_copy_is_not_bound(monkeypatch) -> None:
    """A read the evaluator would make as (a view of) a copy cannot be made once: the kernel
    stays on the evaluator, and a later call sees the new data."""
    from stencilkit.backends.embedded import evaluate

    real = evaluate.KernelEvaluator._Access
    monkeypatch.setattr(
        evaluate.KernelEvaluator, "_Access", lambda self, e: real(self, e).copy()[...]
    )
    s = gtscript.stencil(backend="numpy", definition=_shift("numpy").__wrapped__, rebuild=True)
    rng = np.random.default_rng(9)
    a, out = rng.standard_normal((7, 4, 4)), rng.standard_normal((7, 4, 4))
    for _ in range(2):
        before = out.copy()
        s(a, out, 0.5, origin=(1, 0, 0), domain=(5, 4, 3))
        np.testing.assert_array_equal(out, _ref(a, before, 0.5, (1, 0, 0), (5, 4, 3)))
        a += 1.0
