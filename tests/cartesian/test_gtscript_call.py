"""The call: origins, domains, validation before anything runs (nothing written), run(),
freeze(), exec_info, field_info/parameter_info/domain_info, the read-only object."""

from __future__ import annotations

import copy
import enum
import typing

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import AccessKind, GTScriptCallError
from stencilkit.cartesian.gtscript import FORWARD, PARALLEL, Field, computation, interval

F64 = Field[np.float64]


def _stencil(backend: str):
    @gtscript.stencil(backend=backend)
    def smooth(a: F64, out: F64, unused: F64, w: float, *, k0: int = 0):
        with computation(PARALLEL), interval(...):
            out = w * (a[-1, 0, 0] + a[1, 0, 0])

    return smooth


def test_infos(backend) -> None:
    s = _stencil(backend)
    assert s.field_info["a"].access == AccessKind.READ
    assert s.field_info["out"].access == AccessKind.WRITE
    assert s.field_info["unused"].access == AccessKind.NONE
    assert s.field_info["a"].boundary == ((1, 1), (0, 0), (0, 0))
    assert s.field_info["unused"].boundary == ((0, 0), (0, 0), (0, 0))
    assert s.field_info["a"].axes == ("I", "J", "K") and s.field_info["a"].dtype == np.float64
    assert s.parameter_info["w"].access == AccessKind.READ
    assert s.parameter_info["k0"].access == AccessKind.NONE
    assert s.domain_info.parallel_axes == ("I", "J") and s.domain_info.sequential_axis == "K"
    with pytest.raises(AttributeError):
        s.backend = "other"  # type: ignore[misc]
    assert copy.deepcopy(s) is s


def test_run_freeze_and_exec_info(backend, arrays) -> None:
    s = _stencil(backend)
    a, out, unused = arrays.random(6, 3, 2), arrays.random(6, 3, 2), arrays.random(6, 3, 2)
    A, before = arrays.host(a), arrays.host(out)
    ref = before.copy()
    ref[1:5] = 0.5 * (A[0:4] + A[2:6])
    info: dict = {"__aggregate_data": True}
    s(a, out, unused, 0.5, origin={"_all_": (1, 0, 0)}, exec_info=info)
    np.testing.assert_array_equal(arrays.host(out), ref)
    for key in (
        "call_start_time",
        "call_end_time",
        "run_start_time",
        "run_end_time",
        "domain",
        "origin",
    ):
        assert key in info
    assert info["domain"] == (4, 3, 2) and info[type(s).__name__]["ncalls"] == 1
    out2 = arrays.put(before)
    origin = {"a": (1, 0, 0), "out": (1, 0, 0), "unused": (0, 0, 0)}
    s.run(
        a=a,
        out=out2,
        unused=unused,
        w=0.5,
        k0=0,
        _domain_=(4, 3, 2),
        _origin_=origin,
        exec_info=None,
    )
    np.testing.assert_array_equal(arrays.host(out2), ref)
    out3 = arrays.put(before)
    frozen = s.freeze(origin=(1, 0, 0), domain=(4, 3, 2))
    frozen(a=a, out=out3, unused=unused, w=0.5, k0=0)
    np.testing.assert_array_equal(arrays.host(out3), ref)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"origin": (0, 0, 0)}, "read 1 point\\(s\\) before its origin along I"),
        (
            {"origin": (1, 0, 0), "domain": (5, 3, 2)},
            "too small along I: origin 1 \\+ domain 5 \\+ halo 1",
        ),
        ({"origin": (1, 0, 0), "domain": (0, 3, 2)}, "is empty"),
        ({"origin": (-1, 0, 0)}, "negative|before its origin"),
    ],
)
def test_bad_calls_are_refused_before_anything_runs(backend, arrays, kwargs, message) -> None:
    s = _stencil(backend)
    a, out, unused = arrays.random(6, 3, 2), arrays.random(6, 3, 2), arrays.random(6, 3, 2)
    before = arrays.host(out)
    with pytest.raises(GTScriptCallError, match=message):
        s(a, out, unused, 0.5, **kwargs)
    np.testing.assert_array_equal(arrays.host(out), before)


def test_wrong_dtype_rank_and_missing_arguments(backend, arrays) -> None:
    s = _stencil(backend)
    a, out = arrays.random(6, 3, 2), arrays.random(6, 3, 2)
    before = arrays.host(out)
    with pytest.raises(GTScriptCallError, match="dtype float32, the stencil declares float64"):
        s(a, out, arrays.random(6, 3, 2, dtype=np.float32), 0.5, origin=(1, 0, 0))
    with pytest.raises(GTScriptCallError, match="has 2 dimensions but the API signature expects 3"):
        s(a, out, arrays.random(6, 3), 0.5, origin=(1, 0, 0))
    with pytest.raises(GTScriptCallError, match="missing argument"):
        s(a, out, origin=(1, 0, 0))
    np.testing.assert_array_equal(arrays.host(out), before)


def test_k_smaller_than_the_intervals_need() -> None:
    @gtscript.stencil(backend="numpy")
    def needs3(a: F64):
        with computation(FORWARD), interval(2, 3):
            a = a[0, 0, -1]

    assert needs3.domain_info.min_sequential_axis_size == 3
    with pytest.raises(GTScriptCallError, match="smaller than the 3 levels"):
        needs3(np.zeros((2, 2, 2)))


def test_unknown_backend_and_option() -> None:
    def d(a: F64):
        with computation(PARALLEL), interval(...):
            a = 1.0

    with pytest.raises(ValueError, match=r"unknown gt4py.cartesian backend .nope."):
        gtscript.stencil(backend="nope", definition=d)
    with pytest.warns(RuntimeWarning, match="Unknown option '_bad'"):  # gt4py warns too
        gtscript.stencil(backend="numpy", definition=d, _bad=1)
    info: dict = {}
    gtscript.stencil(
        backend="numpy", definition=d, format_source=False, build_info=info, rebuild=True
    )
    assert {"parse_time", "module_time", "codegen_time", "build_time", "load_time"} <= set(info)


def test_repeated_calls_with_other_arrays_and_origins(backend, arrays) -> None:
    s = _stencil(backend)
    a1, a2 = arrays.random(6, 3, 2), arrays.random(6, 3, 2)
    for a in (a1, a2, a1):
        for o in ((1, 0, 0), (2, 0, 0), (1, 0, 0)):
            out, unused = arrays.random(6, 3, 2), arrays.random(6, 3, 2)
            before, A = arrays.host(out), arrays.host(a)
            s(a, out, unused, 0.5, origin=o, domain=(3, 3, 2))
            ref = before.copy()
            ref[o[0] : o[0] + 3] = 0.5 * (A[o[0] - 1 : o[0] + 2] + A[o[0] + 1 : o[0] + 4])
            np.testing.assert_array_equal(arrays.host(out), ref)


def test_a_gpu_array_on_a_cpu_backend_is_refused() -> None:
    class FakeGpuArray:
        shape = (4, 3, 2)
        dtype = np.dtype(np.float64)
        __cuda_array_interface__: typing.ClassVar = {
            "shape": (4, 3, 2), "typestr": "<f8", "data": (0, False), "version": 3,
        }  # fmt: skip

    s = _stencil("gt:cpu_ifirst")
    a = np.zeros((4, 3, 2))
    with pytest.raises(
        GTScriptCallError, match="field 'out' is a GPU array, but the backend runs on the host"
    ):
        s(a, FakeGpuArray(), a, 0.5, origin=(1, 0, 0), domain=(2, 3, 2))


def test_scalar_of_the_wrong_kind_is_refused(backend, arrays) -> None:
    @gtscript.stencil(backend=backend)
    def scaled(a: F64, n: int, flag: bool):
        with computation(PARALLEL), interval(...):
            a = n * 1.0 if flag else 0.0

    class Mode(enum.IntEnum):
        TWO = 2

    a = arrays.random(2, 2, 2)
    before = arrays.host(a)
    with pytest.raises(GTScriptCallError, match=r"parameter 'n' is int64, got 2\.5"):
        scaled(a, 2.5, True)
    with pytest.raises(GTScriptCallError, match="parameter 'flag' is bool"):
        scaled(a, 2, 1.0)
    np.testing.assert_array_equal(arrays.host(a), before)
    scaled(a, Mode.TWO, True)  # an enum member is its integer
    assert (arrays.host(a) == 2.0).all()


def test_enum_annotated_parameter(backend, arrays) -> None:
    """A parameter annotated with a gtscript.enum class is an integer (NDSL's test_enum)."""

    @gtscript.enum
    class Order(enum.IntEnum):
        LOW = 10
        HIGH = 20

    def pick(out: Field[np.int64], order: Order):
        with computation(PARALLEL), interval(...):
            out = Order.HIGH
            if order < Order.HIGH:
                out = Order.LOW + order

    s = gtscript.stencil(backend=backend, definition=pick)
    assert s.parameter_info["order"].dtype == np.dtype("int64")
    out = arrays.put(np.random.default_rng(0).integers(0, 9, (3, 2, 4)))
    s(out, Order.LOW)
    assert (arrays.host(out) == 20).all()
    s(out, Order.HIGH)
    assert (arrays.host(out) == 20).all()
    s(out, 3)
    assert (arrays.host(out) == 13).all()


def test_an_output_that_cannot_be_written_in_place_is_refused() -> None:
    s = _stencil("gt:cpu_ifirst")
    a = np.random.default_rng(0).standard_normal((6, 3, 2))
    base = np.zeros((6, 3, 2))
    reversed_out = base[::-1]  # negative strides: usable only through a copy
    with pytest.raises(Exception, match="strides"):
        s(a, reversed_out, a, 0.5, origin=(1, 0, 0), domain=(4, 3, 2))
    assert (base == 0).all()


def test_a_negative_origin_reads_shifted_into_the_array(backend, arrays) -> None:
    """gt4py's origin (-1, 0, 0) for a field read at [1, 0, 0] (and (0, 0, -1) read at
    [0, 0, 1]): every read lies in the array, so the call runs; reading it unshifted or writing
    at a negative origin is refused before anything runs."""

    @gtscript.stencil(backend=backend)
    def shifted(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            out = a[1, 0, 0] + 2.0 * a[2, 0, 1]

    @gtscript.stencil(backend=backend)
    def plain(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            out = a

    a, out = arrays.random(5, 3, 4), arrays.random(6, 3, 3)
    ah, before = arrays.host(a), arrays.host(out)
    shifted(a, out, origin={"a": (-1, 0, 0), "out": (1, 0, 0)})  # domain (5, 3, 3)
    # the domain along I: a gives 5 - (-1) - 2 = 4, out 6 - 1 = 5; out[5] stays untouched
    ref = before.copy()
    ref[1:5] = ah[0:4, :, 0:3] + 2.0 * ah[1:5, :, 1:4]
    np.testing.assert_array_equal(arrays.host(out), ref)
    with pytest.raises(ValueError, match="reads field 'a' along I over 0:4"):
        plain(a, out, origin={"a": (-1, 0, 0), "out": (0, 0, 0)}, domain=(4, 3, 3))
    with pytest.raises(ValueError, match="lies outside the output 'out'"):
        plain(a, out, origin={"a": (0, 0, 0), "out": (-1, 0, 0)}, domain=(4, 3, 3))
    np.testing.assert_array_equal(arrays.host(out), ref)


def test_exec_info_keys_as_gt4py(backend, arrays) -> None:
    """gt4py's exec_info: the origin's ``_all_`` entry beside the fields', ``__aggregate_data``
    set to False when absent, per stencil class the last call's start and end times, and on a
    C++ backend the generated code's own times inside the run's."""
    s = _stencil(backend)
    a, out, unused = arrays.random(6, 3, 2), arrays.random(6, 3, 2), arrays.random(6, 3, 2)
    info: dict = {}
    s(a, out, unused, 0.5, origin=(1, 0, 0), domain=(4, 3, 2), exec_info=info)
    assert info["origin"] == {
        "_all_": (1, 0, 0),
        "a": (1, 0, 0),
        "out": (1, 0, 0),
        "unused": (1, 0, 0),
    }
    assert info["__aggregate_data"] is False and type(s).__name__ not in info
    s(a, out, unused, 0.5, origin=(1, 0, 0), domain=(4, 3, 2), exec_info=info)  # cached binding
    assert info["origin"]["_all_"] == (1, 0, 0)
    info = {"__aggregate_data": True}
    for _ in range(2):
        s(a, out, unused, 0.5, origin={"_all_": (1, 0, 0)}, exec_info=info)
    agg = info[type(s).__name__]
    assert agg["ncalls"] == 2 and agg["total_call_time"] > agg["call_time"]
    assert (agg["call_start_time"], agg["call_end_time"]) == (
        info["call_start_time"],
        info["call_end_time"],
    )
    if backend.startswith("gt:cpu"):
        assert info["run_start_time"] < info["run_cpp_start_time"] < info["run_cpp_end_time"]
        assert info["run_cpp_end_time"] < info["run_end_time"]
        assert agg["run_time"] > agg["run_cpp_time"] and agg["total_run_cpp_time"] > 0
    else:
        assert "run_cpp_start_time" not in info


def test_a_scalar_left_none_is_a_type_error(backend, arrays) -> None:
    """gt4py raises TypeError for a scalar of the wrong type, a default None included (test
    _call_interface's test_default_arguments); stencilkit's call error is both."""

    @gtscript.stencil(backend=backend)
    def scaled(a: F64, out: F64, *, w: float = None):  # type: ignore[assignment]  # noqa: RUF013
        with computation(PARALLEL), interval(...):
            out = a * w

    a, out = arrays.random(3, 3, 2), arrays.random(3, 3, 2)
    before = arrays.host(out)
    with pytest.raises(TypeError, match="parameter 'w' must be a float64 scalar, got NoneType"):
        scaled(a, out)
    with pytest.raises(GTScriptCallError):
        scaled(a, out, w="2")
    np.testing.assert_array_equal(arrays.host(out), before)
    scaled(a, out, w=2.0)
    np.testing.assert_array_equal(arrays.host(out), 2.0 * arrays.host(a))


def test_an_array_in_another_order_than_the_backends_warns_as_gt4py() -> None:
    """gt4py warns (once per call signature: its checks are cached) when an accessed field's
    strides are not in the backend's order; the run is right all the same."""

    @gtscript.stencil(backend="numpy")
    def copy(a: F64, out: F64):
        with computation(PARALLEL), interval(...):
            out = a

    rng = np.random.default_rng(8)
    a_h = rng.standard_normal((4, 3, 5))
    a_f, out = np.asfortranarray(a_h), np.zeros((4, 3, 5))
    with pytest.warns(UserWarning, match="The layout of the field 'a' is not recommended") as w:
        copy(a_f, out)
    assert len(w) == 1  # out is in the numpy backend's order
    np.testing.assert_array_equal(out, a_h)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copy(a_h, out)  # C order: no warning
