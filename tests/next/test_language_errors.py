"""Decoration-time and call-time errors of the language features: one test per message."""

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I = gtx.Dimension("I")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
IK = Field[Dims[I, K], float64]


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def cumsum(carry: float, x: float) -> float:
    return carry + x


def test_concat_where_without_branches() -> None:
    with pytest.raises(gtx.StencilTypeError, match="takes a condition on indices and two values"):

        @gtx.field_operator
        def op(a: IK) -> IK:
            return gtx.concat_where(K == 0)


def test_concat_where_pairs_need_a_default() -> None:
    with pytest.raises(
        gtx.StencilTypeError, match=r"\(condition, value\) pairs followed by a default"
    ):

        @gtx.field_operator
        def op(a: IK, b: IK) -> IK:
            return gtx.concat_where((K == 0, a), b, a)


def test_scan_call_with_wrong_argument_count() -> None:
    with pytest.raises(gtx.StencilTypeError, match=r"cumsum\(\) takes 1 arguments, got 2") as err:

        @gtx.field_operator
        def op(a: IK) -> IK:
            return cumsum(a, a)

    assert "test_language_errors.py" in str(err.value)


def test_scan_result_over_dimensions_the_output_lacks() -> None:
    @gtx.field_operator
    def op(a: IK) -> IK:
        return cumsum(a)

    with pytest.raises(gtx.StencilTypeError, match="cannot be written to"):

        @gtx.program
        def run(a: IK, out: Field[Dims[K], float64]):
            op(a, out=out)


def test_scalar_result_without_out() -> None:
    @gtx.field_operator
    def twice(s: float64) -> float64:
        return 2.0 * s

    with pytest.raises(gtx.StencilTypeError, match="call it with out="):
        twice.returning(1.0, offset_provider={})


def test_unreachable_code_after_a_return() -> None:
    with pytest.raises(gtx.StencilTypeError, match="unreachable code after return"):

        @gtx.field_operator
        def op(a: IK, flag: bool) -> IK:
            return a
            a = 2.0 * a


def test_global_tuple_index_out_of_range() -> None:
    sizes = (1, 2)
    with pytest.raises(gtx.StencilTypeError, match="is not a valid index"):

        @gtx.field_operator
        def op(a: IK) -> IK:
            return a * sizes[5]


def test_direct_call_result_on_the_arguments_device() -> None:
    a = gtx.as_field([I, K], np.ones((2, 3)))
    r = cumsum.returning(a, offset_provider={})
    assert isinstance(r, gtx.Field) and r.device == a.device


def test_program_with_temporaries_reports_a_bad_output() -> None:
    @gtx.scan_operator(axis=K, forward=False, init=0.0)
    def down(carry: float, x: float) -> float:
        return carry + x

    @gtx.field_operator
    def both(a: IK) -> IK:
        return down(cumsum(a))

    @gtx.program
    def run(a: IK, out: IK):
        both(a, out=out)

    with pytest.raises(gtx.StencilTypeError, match="argument 'out' must be a field"):
        run(gtx.as_field([I, K], np.ones((2, 3))), "not a field", offset_provider={})
    out = np.zeros((2, 3))  # a raw array for the output: the temporaries take its shape
    run(gtx.as_field([I, K], np.ones((2, 3))), out, offset_provider={})
    np.testing.assert_array_equal(out, [[6.0, 5.0, 3.0]] * 2)
