"""The bad-input catalogue, part 2: misuses of the DSL itself (annotations, shifts, builtins,
scans, program bodies), refused at decoration or at the first call (run by test_bad_inputs.py)."""

from __future__ import annotations

import numpy as np

import stencilkit as gtx
from misuse_kit import Kit, misuse
from stencilkit import Dims, Field, float32, float64, int32

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Cell, Edge = gtx.Dimension("Cell"), gtx.Dimension("Edge")
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
FI = Field[Dims[I], float64]
FIJ = Field[Dims[I, J], float64]
FIK = Field[Dims[I, K], float64]
FIi = Field[Dims[I], int32]
FE = Field[Dims[Edge], float64]
FC = Field[Dims[Cell], float64]
N = 6


def _run(k: Kit, op: object, *args: object) -> None:
    """A direct call of ``op`` on watched fields over [I] (the misuse is refused before it)."""
    op.with_backend(k.backend)(*args, out=k.fld([I], (N,)), offset_provider={})  # type: ignore[attr-defined]


# ------------------------------------------------------------------ annotations
@misuse(TypeError, r"Parameter 'a' is missing type annotations")
def missing_parameter_annotation(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a) -> FI:
        return a


@misuse(TypeError, r"'a'.*list|list")
def annotation_that_is_not_a_type_of_the_dsl(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: list) -> FI:
        return a


@misuse(TypeError, r"str|dtype")
def field_of_an_unknown_dtype(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: Field[Dims[I], str]) -> FI:
        return a


@misuse(TypeError, r"Dimension|3")
def dims_with_a_non_dimension(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: Field[Dims[I, 3], float64]) -> FI:
        return a


@misuse(TypeError, r"Dims\[\.\.\.\] lists I twice")
def dims_with_a_repeated_dimension(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: Field[Dims[I, I], float64]) -> FI:
        return a


@misuse(
    TypeError, r"annotated to return Field\[\[I\], float32\] but returns Field\[\[I\], float64\]"
)
def return_annotation_of_another_dtype(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> Field[Dims[I], float32]:
        return a


@misuse(TypeError, r"annotated to return .*\[I, J\].*but returns .*\[I\]")
def return_annotation_of_other_dimensions(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FIJ:
        return a


@misuse(TypeError, r"annotated to return .*tuple|tuple")
def tuple_returned_for_a_field_annotation(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return a, a


# ------------------------------------------------------------------ shifts
@misuse(TypeError, r"cannot shift along J: the field has dimensions \[I\]")
def shift_along_a_missing_dimension(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return a(J + 1)


@misuse(TypeError, r"offset|literal|constant|'n'")
def shift_by_a_runtime_value(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI, n: int32) -> FI:
        return a(I + n)


@misuse(TypeError, r"offset|integer|1.5")
def shift_by_a_float(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return a(I + 1.5)


@misuse(TypeError, r"scalar|cannot shift|'s'")
def shifting_a_scalar(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI, s: float64) -> FI:
        return a + s(I + 1)


@misuse(TypeError, r"C2E.*Edge|Edge.*Cell|cannot shift|C2E")
def neighbour_shift_of_a_field_on_the_wrong_location(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(c: FC) -> FC:
        return gtx.neighbor_sum(c(C2E), axis=C2EDim)


@misuse(TypeError, r"'Q'|not defined|Q")
def shift_by_an_undefined_offset(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return a(Q + 1)  # noqa: F821


# ------------------------------------------------------------------ names, statements, types
@misuse(TypeError, r"Undeclared symbol 'undefined_thing'")
def undefined_name(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return a + undefined_thing  # noqa: F821


@misuse(TypeError, r"'for x in range\(3\):': this statement is not part of the DSL")
def loop_in_a_field_operator(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        for x in range(3):  # noqa: B007
            a = a + 1.0
        return a


@misuse(TypeError, r"operands have different dtypes, float64 and float32")
def mixing_float32_and_float64(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI, b: Field[Dims[I], float32]) -> FI:
        return a + b


@misuse(TypeError, r"true division '/' of integers \(int32\)")
def integer_true_division(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FIi, b: FIi) -> FIi:
        return a / b


@misuse(TypeError, r"operator & needs integers or booleans, got float64")
def bitwise_and_of_floats(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI, b: FI) -> FI:
        return a & b


@misuse(TypeError, r"~ needs integers or booleans, got float64")
def invert_of_a_float(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return ~a


@misuse(TypeError, r"unary - cannot be applied to booleans")
def minus_of_a_boolean(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI, b: FI) -> FI:
        return gtx.where(-(a < b), a, b)


@misuse(TypeError, r"'not' works on scalar booleans only")
def not_of_a_field(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI, b: FI) -> FI:
        return gtx.where(not (a < b), a, b)


@misuse(TypeError, r"'and' works on scalar booleans only|and")
def and_of_fields(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI, b: FI) -> FI:
        return gtx.where((a < b) and (b < a), a, b)


@misuse(TypeError, r"arithmetic operator \+ cannot be applied to booleans")
def arithmetic_on_booleans(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI, b: FI) -> FI:
        return gtx.where((a < b) + (b < a), a, b)


@misuse(TypeError, r"the mask of where\(\) must be boolean, got")
def where_with_a_float_mask(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI, b: FI) -> FI:
        return gtx.where(a, a, b)


@misuse(TypeError, r"the condition of concat_where\(\) must compare dimensions with integers")
def concat_where_on_a_field_condition(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI, b: FI) -> FI:
        return gtx.concat_where(a > b, a, b)


@misuse(TypeError, r"concat_where\(\) takes a condition on indices and two values")
def concat_where_without_branches(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return gtx.concat_where(I == 0)


@misuse(TypeError, r"operator \+ cannot be applied to tuples; index the tuple first")
def arithmetic_on_a_tuple(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        t = (a, a)
        return t + a


@misuse(TypeError, r"index|2|range")
def tuple_index_out_of_range(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        t = (a, a)
        return t[2]


@misuse(TypeError, r"'weights' is a list, a mutable object")
def mutable_closure_variable(k: Kit) -> None:
    weights = [1.0, 2.0]

    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return a * weights[0]

    _run(k, op, k.fld([I], (N,)))


@misuse(TypeError, r"np\.sin|numpy|not (a|part of the) DSL|sin")
def numpy_function_in_a_field_operator(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return np.sin(a)


@misuse(TypeError, r"ndarray|attribute")
def attribute_access_in_a_field_operator(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return a.ndarray


# ------------------------------------------------------------------ builtins
@misuse(TypeError, r"sin\(\).*1|takes 1|arguments")
def math_builtin_with_two_arguments(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return gtx.sin(a, a)


@misuse(TypeError, r"sqrt\(\) needs a floating-point argument, got int32")
def sqrt_of_integers(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FIi) -> FI:
        return gtx.sqrt(a)


@misuse(TypeError, r"'str' is not a dtype|not a dtype")
def astype_to_something_that_is_not_a_dtype(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return gtx.astype(a, str)


@misuse(TypeError, r"broadcast\(\) target lacks the argument's dimensions J")
def broadcast_dropping_a_dimension(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FIJ) -> FI:
        return gtx.broadcast(a, (I,))


@misuse(TypeError, r"axis|neighbor_sum")
def neighbor_sum_without_axis(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(e: FE) -> FC:
        return gtx.neighbor_sum(e(C2E))


@misuse(TypeError, r"axis|local|I")
def neighbor_sum_over_a_horizontal_axis(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(a: FIJ) -> FI:
        return gtx.neighbor_sum(a, axis=J)


@misuse(TypeError, r"C2E|axis|local|dimension")
def neighbor_sum_of_a_field_without_the_axis(k: Kit) -> None:
    @gtx.field_operator(backend=k.backend)
    def op(c: FC) -> FC:
        return gtx.neighbor_sum(c, axis=C2EDim)


@misuse(TypeError, r"takes 2 arguments|argument|inner\(\)")
def field_operator_called_with_too_few_arguments(k: Kit) -> None:
    @gtx.field_operator
    def inner(a: FI, b: FI) -> FI:
        return a + b

    @gtx.field_operator(backend=k.backend)
    def op(a: FI) -> FI:
        return inner(a)


# ------------------------------------------------------------------ scans
@misuse(
    TypeError,
    r"Argument 'init' to scan operator 'scan' must have same type as 'carry' argument: expected 'float64', got 'tuple\[float64, float64\]'",
)
def scan_init_not_matching_the_carry(k: Kit) -> None:
    @gtx.scan_operator(axis=K, forward=True, init=(0.0, 1.0))
    def scan(carry: float64, x: float64) -> float64:
        return carry + x


@misuse(
    TypeError,
    r"Argument 'init' to scan operator 'scan' must have same type as 'carry' argument: expected 'float64', got 'str'",
)
def scan_init_of_wrong_type(k: Kit) -> None:
    @gtx.scan_operator(axis=K, forward=True, init="zero")
    def scan(carry: float64, x: float64) -> float64:
        return carry + x


@misuse(TypeError, r"scan_operator\(axis=\.\.\.\) must be a Dimension, got 'K'")
def scan_axis_that_is_not_a_dimension(k: Kit) -> None:
    @gtx.scan_operator(axis="K", forward=True, init=0.0)
    def scan(carry: float64, x: float64) -> float64:
        return carry + x


@misuse(TypeError, r"scan_operator\(forward=\.\.\.\) must be True or False, got 'yes'")
def scan_forward_that_is_not_a_bool(k: Kit) -> None:
    @gtx.scan_operator(axis=K, forward="yes", init=0.0)
    def scan(carry: float64, x: float64) -> float64:
        return carry + x


@misuse(TypeError, r"annotated to return|return|carry")
def scan_returning_another_type_than_its_carry(k: Kit) -> None:
    @gtx.scan_operator(axis=K, forward=True, init=0.0)
    def scan(carry: float64, x: float64) -> float64:
        return carry + x, x


@misuse(TypeError, r"cumsum\(\) takes 1 arguments, got 2")
def scan_called_with_too_many_arguments(k: Kit) -> None:
    @gtx.scan_operator(axis=K, forward=True, init=0.0)
    def cumsum(carry: float64, x: float64) -> float64:
        return carry + x

    @gtx.field_operator(backend=k.backend)
    def op(a: FIK) -> FIK:
        return cumsum(a, a)


@misuse(TypeError, r"K|axis")
def scan_over_a_field_without_its_axis(k: Kit) -> None:
    @gtx.scan_operator(axis=K, forward=True, init=0.0)
    def cumsum(carry: float64, x: float64) -> float64:
        return carry + x

    @gtx.field_operator(backend=k.backend)
    def op(a: FIJ) -> FIJ:
        return cumsum(a)


# ------------------------------------------------------------------ program bodies
@misuse(TypeError, r"the call of ident needs out=")
def program_calling_an_operator_without_out(k: Kit) -> None:
    @gtx.field_operator
    def ident(a: FI) -> FI:
        return a

    @gtx.program(backend=k.backend)
    def prog(a: FI, out: FI):
        ident(a)


@misuse(TypeError, r"statement|not part|assign|call")
def program_with_an_assignment(k: Kit) -> None:
    @gtx.program(backend=k.backend)
    def prog(a: FI, out: FI):
        b = a + 1.0  # noqa: F841


@misuse(TypeError, r"return")
def program_returning_a_value(k: Kit) -> None:
    @gtx.field_operator
    def ident(a: FI) -> FI:
        return a

    @gtx.program(backend=k.backend)
    def prog(a: FI, out: FI):
        ident(a, out=out)
        return out


@misuse(TypeError, r"cannot be written to|\[I\].*\[I, J\]|dimensions")
def program_writing_into_an_output_of_other_dimensions(k: Kit) -> None:
    @gtx.field_operator
    def ident(a: FIJ) -> FIJ:
        return a

    @gtx.program(backend=k.backend)
    def prog(a: FIJ, out: FI):
        ident(a, out=out)


@misuse(TypeError, r"result of dtype float64 cannot be written to 'out' of dtype float32")
def program_writing_into_an_output_of_another_dtype(k: Kit) -> None:
    @gtx.field_operator
    def ident(a: FI) -> FI:
        return a

    @gtx.program(backend=k.backend)
    def prog(a: FI, out: Field[Dims[I], float32]):
        ident(a, out=out)


@misuse(TypeError, r"'c'|not defined|unknown")
def program_domain_over_an_unknown_name(k: Kit) -> None:
    @gtx.field_operator
    def ident(a: FI) -> FI:
        return a

    @gtx.program(backend=k.backend)
    def prog(a: FI, out: FI):
        ident(a, out=out, domain={I: (0, c)})  # noqa: F821


@misuse(TypeError, r"unexpected|keyword|'scale'|scale")
def operator_called_with_an_unknown_keyword(k: Kit) -> None:
    @gtx.field_operator
    def ident(a: FI) -> FI:
        return a

    @gtx.program(backend=k.backend)
    def prog(a: FI, out: FI):
        ident(a, scale=2.0, out=out)
