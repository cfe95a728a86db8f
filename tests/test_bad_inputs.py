"""The bad-input catalogue: misuses users make, each refused on every backend with the right
exception, a message naming the problem, and the user's data left exactly as it was.

Each entry does one thing wrong; ``test_misuse_is_refused`` runs it on embedded, cpu and gpu.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import bad_inputs_dsl  # noqa: F401  (registers the DSL misuses)
import stencilkit as gtx
from misuse_kit import Kit, Misuse, misuse
from stencilkit import Dims, Field, float64, int32
from stencilkit.core.errors import InternalError

I, J = gtx.Dimension("I"), gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Cell, Edge = gtx.Dimension("Cell"), gtx.Dimension("Edge")
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
FIJ = Field[Dims[I, J], float64]
FI = Field[Dims[I], float64]
FIi = Field[Dims[I], int32]
FIK = Field[Dims[I, K], float64]
N, M, NC, NE = 6, 5, 8, 12


# ------------------------------------------------------------------ shared operators and programs
@gtx.field_operator
def shift_add(a: FIJ, b: FIJ) -> FIJ:
    return a(I + 1) + b


@gtx.program
def p_shift(a: FIJ, b: FIJ, out: FIJ):
    shift_add(a, b, out=out, domain={I: (0, N - 1), J: (0, M)})


@gtx.field_operator
def scale(a: FIJ, s: float64) -> FIJ:
    return a * s


@gtx.program
def p_scale(a: FIJ, s: float64, out: FIJ):
    scale(a, s, out=out)


@gtx.field_operator
def iscale(a: FIi, n: int32) -> FIi:
    return a * n


@gtx.program
def p_iscale(a: FIi, n: int32, out: FIi):
    iscale(a, n, out=out)


@gtx.field_operator
def pair(a: FIJ) -> tuple[FIJ, FIJ]:
    return a + 1.0, a - 1.0


@gtx.program
def p_pair(a: FIJ, x: FIJ, y: FIJ):
    pair(a, out=(x, y))


@gtx.field_operator
def from_cells(c: Field[Dims[Cell], float64]) -> Field[Dims[Edge], float64]:
    return c(E2C[0]) + c(E2C[1])


@gtx.program
def p_cells(c: Field[Dims[Cell], float64], out: Field[Dims[Edge], float64]):
    from_cells(c, out=out)


@gtx.field_operator
def edge_sum(e: Field[Dims[Edge], float64]) -> Field[Dims[Cell], float64]:
    return gtx.neighbor_sum(e(C2E), axis=C2EDim)


@gtx.program
def p_edge_sum(e: Field[Dims[Edge], float64], out: Field[Dims[Cell], float64]):
    edge_sum(e, out=out)


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def cumsum(carry: float64, x: float64) -> float64:
    return carry + x


@gtx.program
def p_cumsum(a: FIK, out: FIK):
    cumsum(a, out=out)


def _shift_args(k: Kit) -> tuple:
    return k.arr((N, M)), k.arr((N, M)), k.arr((N, M))


def _e2c(k: Kit, data: np.ndarray | None = None, **kw) -> object:
    table = data if data is not None else k.rng.integers(0, NC, (NE, 2)).astype(np.int32)
    return k.table([Edge, E2CDim], Cell, table, **kw)


def _c2e(k: Kit, **kw) -> object:
    table = k.rng.integers(0, NE, (NC, 3)).astype(np.int32)
    table[2, 1] = -1
    return k.table([Cell, C2EDim], Edge, table, **kw)


# ------------------------------------------------------------------ program arguments
@misuse(
    TypeError,
    r"argument 'a' is an array of shape \(6,\), but the parameter is a field over \[I, J\]",
)
def array_of_wrong_rank(k: Kit) -> None:
    k.prog(p_shift)(k.arr((N,)), k.arr((N, M)), k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"argument 'b' has dtype float32, expected float64")
def array_of_wrong_dtype(k: Kit) -> None:
    k.prog(p_shift)(k.arr((N, M)), k.arr((N, M), np.float32), k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"argument 'a' has dtype int64, expected float64")
def integer_array_for_a_float_field(k: Kit) -> None:
    k.prog(p_shift)(k.arr((N, M), np.int64), k.arr((N, M)), k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"argument 'out' has dtype bool, expected float64")
def boolean_array_for_a_float_output(k: Kit) -> None:
    k.prog(p_shift)(k.arr((N, M)), k.arr((N, M)), k.arr((N, M), np.bool_), offset_provider={})


@misuse(TypeError, r"argument 'a'.*\[I, K\].*\[I, J\]|argument 'a'.*dimensions")
def field_over_other_dimensions(k: Kit) -> None:
    k.prog(p_shift)(k.fld([I, K], (N, M)), k.arr((N, M)), k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"argument 'a' has dtype float32, expected float64")
def field_of_wrong_dtype(k: Kit) -> None:
    k.prog(p_shift)(
        k.fld([I, J], (N, M), np.float32), k.arr((N, M)), k.arr((N, M)), offset_provider={}
    )


@misuse(TypeError, r"p_shift\(\) is missing the argument 'out'")
def too_few_arguments(k: Kit) -> None:
    k.prog(p_shift)(k.arr((N, M)), k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"p_shift\(\) takes 3 arguments, got 4")
def too_many_arguments(k: Kit) -> None:
    k.prog(p_shift)(*_shift_args(k), k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"unexpected argument.*\bc\b")
def unknown_keyword_argument(k: Kit) -> None:
    a, b, out = _shift_args(k)
    k.prog(p_shift)(a, b, out, c=k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"offset_provider must be a dict")
def offset_provider_not_a_dict(k: Kit) -> None:
    k.prog(p_shift)(*_shift_args(k), offset_provider=[("E2C", None)])


@misuse(TypeError, r"argument 's' must be a scalar float64, got an array or field")
def array_for_a_scalar(k: Kit) -> None:
    k.prog(p_scale)(k.arr((N, M)), k.arr((N,)), k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"argument 's' must be float64, got str")
def string_for_a_scalar(k: Kit) -> None:
    k.prog(p_scale)(k.arr((N, M)), "2.0", k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"argument 'n' must be an integer \(int32\), got 3.5")
def float_for_an_integer_scalar(k: Kit) -> None:
    k.prog(p_iscale)(k.arr((N,), np.int32), 3.5, k.arr((N,), np.int32), offset_provider={})


@misuse(ValueError, r"argument 'n' = 1099511627776 does not fit in int32")
def integer_scalar_overflowing_its_dtype(k: Kit) -> None:
    k.prog(p_iscale)(k.arr((N,), np.int32), 2**40, k.arr((N,), np.int32), offset_provider={})


@misuse(TypeError, r"argument 'n' must be int32, got float64")
def numpy_scalar_of_wrong_dtype(k: Kit) -> None:
    k.prog(p_iscale)(
        k.arr((N,), np.int32), np.float64(2.0), k.arr((N,), np.int32), offset_provider={}
    )


@misuse(TypeError, r"argument 'a' must be a field .*got list")
def python_list_for_a_field(k: Kit) -> None:
    k.prog(p_shift)([[1.0] * M] * N, k.arr((N, M)), k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"argument 'b' must be a field .*got NoneType")
def none_for_a_field(k: Kit) -> None:
    k.prog(p_shift)(k.arr((N, M)), None, k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"argument 'a' must be a field .*got float")
def scalar_for_a_field(k: Kit) -> None:
    k.prog(p_scale)(1.5, 2.0, k.arr((N, M)), offset_provider={})


@misuse(
    TypeError, r"argument 'a' is an array of shape \(\), but the parameter is a field over \[I, J\]"
)
def zero_dimensional_array_for_a_field(k: Kit) -> None:
    k.prog(p_scale)(k.arr(()), 2.0, k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"p_pair\(\): argument.*tuple|'x'")
def tuple_for_a_field_parameter(k: Kit) -> None:
    k.prog(p_pair)(k.arr((N, M)), (k.arr((N, M)), k.arr((N, M))), k.arr((N, M)), offset_provider={})


@misuse(
    ValueError,
    r"argument 'out' is written by the program, but the array given for it cannot be written in place",
)
def negative_strided_output(k: Kit) -> None:
    a, b, out = _shift_args(k)
    k.prog(p_shift)(a, b, out[::-1], offset_provider={})


@misuse(ValueError, r"argument 'out' .*(read-only|not writeable|writable)")
def read_only_output(k: Kit) -> None:
    if k.case.on_gpu:
        pytest.skip("CuPy arrays have no read-only flag")
    a, b, out = _shift_args(k)
    out.flags.writeable = False
    k.prog(p_shift)(a, b, out, offset_provider={})


# ------------------------------------------------------------------ shapes and domains
@misuse(
    ValueError, r"reads field 'a' along I over 1:6 .*but 'a' is defined only on 0:5\nhint: .*halo"
)
def input_without_the_halo_a_shift_needs(k: Kit) -> None:
    k.prog(p_shift)(k.arr((N - 1, M)), k.arr((N, M)), k.arr((N, M)), offset_provider={})


@misuse(ValueError, r"'b'.*J")
def input_smaller_than_the_domain(k: Kit) -> None:
    k.prog(p_shift)(k.arr((N, M)), k.arr((N, M - 1)), k.arr((N, M)), offset_provider={})


@misuse(ValueError, r"'out'.*I")
def output_smaller_than_the_domain(k: Kit) -> None:
    k.prog(p_shift)(k.arr((N, M)), k.arr((N, M)), k.arr((N - 3, M)), offset_provider={})


@misuse(ValueError, r"domain.*I.*0:7|outside|out of")
def domain_beyond_the_output(k: Kit) -> None:
    a, b = k.fld([I, J], (N + 2, M)), k.fld([I, J], (N + 2, M))
    shift_add.with_backend(k.backend)(
        a, b, out=k.fld([I, J], (N, M)), domain={I: (0, N + 1), J: (0, M)}, offset_provider={}
    )


@misuse(ValueError, r"domain.*K")
def domain_over_a_dimension_the_output_lacks(k: Kit) -> None:
    a = k.fld([I, J], (N, M))
    scale.with_backend(k.backend)(
        a,
        2.0,
        out=k.fld([I, J], (N, M)),
        domain={I: (0, N), J: (0, M), K: (0, 2)},
        offset_provider={},
    )


@misuse(TypeError, r"domain=: cannot make a Domain of 0; use a \{Dimension: range\} dict")
def domain_that_is_not_a_dict(k: Kit) -> None:
    a = k.fld([I, J], (N, M))
    scale.with_backend(k.backend)(
        a, 2.0, out=k.fld([I, J], (N, M)), domain=[(0, N), (0, M)], offset_provider={}
    )


@misuse(ValueError, r"input|'a'.*I|outside")
def direct_call_domain_past_the_input(k: Kit) -> None:
    a = k.fld([I, J], (N, M))
    shift_add.with_backend(k.backend)(
        a,
        k.fld([I, J], (N, M)),
        out=k.fld([I, J], (N, M)),
        domain={I: (0, N), J: (0, M)},
        offset_provider={},
    )


@misuse(ValueError, r"I|domain")
def input_with_a_domain_not_covering_the_reads(k: Kit) -> None:
    a = k.watch(
        gtx.as_field(
            gtx.domain({I: (2, N + 2), J: (0, M)}), k.data((N, M)), allocator=k.case.allocator
        )
    )
    k.prog(p_shift)(a, k.arr((N, M)), k.arr((N, M)), offset_provider={})


@misuse(ValueError, r"shares memory")
def output_aliasing_another_parameter(k: Kit) -> None:
    if k.backend is None:
        pytest.skip("embedded evaluates a statement before writing: overlap is allowed there")
    buf = k.arr((N + 1, M))
    k.prog(p_shift)(buf[1:], k.arr((N, M)), buf[:-1], offset_provider={})


@misuse(TypeError, r"p_pair\(\) got unexpected argument\(s\) out")
def out_given_to_a_program(k: Kit) -> None:
    k.prog(p_pair)(
        k.arr((N, M)), k.arr((N, M)), k.arr((N, M)), out=k.arr((N, M)), offset_provider={}
    )


# ------------------------------------------------------------------ outputs of direct calls
@misuse(TypeError, r"result of dtype float64 cannot be written to 'out' of dtype float32|float32")
def output_field_of_wrong_dtype(k: Kit) -> None:
    scale.with_backend(k.backend)(
        k.fld([I, J], (N, M)), 2.0, out=k.fld([I, J], (N, M), np.float32), offset_provider={}
    )


@misuse(TypeError, r"\[I\].*\[I, J\]|\[I, J\].*\[I\]|dimensions")
def output_field_of_wrong_dimensions(k: Kit) -> None:
    scale.with_backend(k.backend)(
        k.fld([I, J], (N, M)), 2.0, out=k.fld([I], (N,)), offset_provider={}
    )


@misuse(TypeError, r"cannot pass a ndarray to a field operator|ndarray")
def raw_array_as_out_of_a_direct_call(k: Kit) -> None:
    scale.with_backend(k.backend)(k.fld([I, J], (N, M)), 2.0, out=k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"returns 2 value\(s\) but out= names 3 field")
def tuple_out_of_wrong_length(k: Kit) -> None:
    pair.with_backend(k.backend)(
        k.fld([I, J], (N, M)),
        out=(k.fld([I, J], (N, M)), k.fld([I, J], (N, M)), k.fld([I, J], (N, M))),
        offset_provider={},
    )


@misuse(TypeError, r"tuple")
def single_out_for_a_tuple_result(k: Kit) -> None:
    pair.with_backend(k.backend)(
        k.fld([I, J], (N, M)), out=k.fld([I, J], (N, M)), offset_provider={}
    )


@misuse(TypeError, r"scale\(\).*(3|argument)|takes 2")
def direct_call_with_too_many_arguments(k: Kit) -> None:
    scale.with_backend(k.backend)(
        k.fld([I, J], (N, M)), 2.0, 3.0, out=k.fld([I, J], (N, M)), offset_provider={}
    )


@misuse(TypeError, r"argument 's'|scalar|float64")
def direct_call_with_a_field_for_a_scalar(k: Kit) -> None:
    scale.with_backend(k.backend)(
        k.fld([I, J], (N, M)), k.fld([I, J], (N, M)), out=k.fld([I, J], (N, M)), offset_provider={}
    )


@misuse(TypeError, r"Expected keyword-argument 'out'")  # gt4py checks out= before the arguments
def misspelt_out_keyword(k: Kit) -> None:
    scale.with_backend(k.backend)(
        k.fld([I, J], (N, M)), 2.0, outt=k.fld([I, J], (N, M)), offset_provider={}
    )


# ------------------------------------------------------------------ neighbour tables
@misuse(ValueError, r"offset_provider has no entry for 'E2C'")
def missing_offset_provider(k: Kit) -> None:
    k.prog(p_cells)(k.arr((NC,)), k.arr((NE,)), offset_provider={})


@misuse(ValueError, r"offset_provider has no entry for 'E2C'")
def offset_provider_under_another_name(k: Kit) -> None:
    k.prog(p_cells)(k.arr((NC,)), k.arr((NE,)), offset_provider={"e2c": _e2c(k)})


@misuse(TypeError, r"offset_provider\['E2C'\] is a raw .*array")
def raw_array_as_a_table(k: Kit) -> None:
    k.prog(p_cells)(k.arr((NC,)), k.arr((NE,)), offset_provider={"E2C": k.arr((NE, 2), np.int32)})


@misuse(ValueError, r"neighbour table 'E2C' holds indices .*but 'c' is defined on Cell: 0:8")
def table_pointing_past_the_field(k: Kit) -> None:
    table = k.rng.integers(0, NC, (NE, 2)).astype(np.int32)
    table[5, 1] = NC + 3
    k.prog(p_cells)(k.arr((NC,)), k.arr((NE,)), offset_provider={"E2C": _e2c(k, table)})


@misuse(
    ValueError, r"neighbour table 'E2C' holds (negative indices but no skip_value|indices -1\.\.)"
)
def negative_indices_without_skip_value(k: Kit) -> None:
    table = k.rng.integers(0, NC, (NE, 2)).astype(np.int32)
    table[3, 0] = -1
    k.prog(p_cells)(
        k.arr((NC,)), k.arr((NE,)), offset_provider={"E2C": _e2c(k, table, skip_value=None)}
    )


@misuse(ValueError, r"reads through E2C\[0\], but the table has no neighbour there")
def reading_a_missing_neighbour_without_a_reduction(k: Kit) -> None:
    table = k.rng.integers(0, NC, (NE, 2)).astype(np.int32)
    table[4, 0] = -1
    k.prog(p_cells)(
        k.arr((NC,)), k.arr((NE,)), offset_provider={"E2C": _e2c(k, table, skip_value=-1)}
    )


@misuse(ValueError, r"E2C.*(rows|12|8)")
def table_with_too_few_rows(k: Kit) -> None:
    table = k.rng.integers(0, NC, (NE - 4, 2)).astype(np.int32)
    k.prog(p_cells)(k.arr((NC,)), k.arr((NE,)), offset_provider={"E2C": _e2c(k, table)})


@misuse(
    ValueError, r"offset_provider\['E2C'\] maps to Edge, but the offset E2C reads fields over Cell"
)
def table_with_the_wrong_codomain(k: Kit) -> None:
    table = k.rng.integers(0, NC, (NE, 2)).astype(np.int32)
    k.prog(p_cells)(
        k.arr((NC,)), k.arr((NE,)), offset_provider={"E2C": k.table([Edge, E2CDim], Edge, table)}
    )


@misuse(
    ValueError,
    r"offset_provider\['E2C'\] has the local dimension C2E, but the offset E2C declares E2C",
)
def table_over_the_wrong_local_dimension(k: Kit) -> None:
    table = k.rng.integers(0, NC, (NE, 2)).astype(np.int32)
    k.prog(p_cells)(
        k.arr((NC,)), k.arr((NE,)), offset_provider={"E2C": k.table([Edge, C2EDim], Cell, table)}
    )


@misuse(TypeError, r"integer|int|dtype")
def table_of_floats(k: Kit) -> None:
    k.prog(p_cells)(
        k.arr((NC,)),
        k.arr((NE,)),
        offset_provider={"E2C": k.table([Edge, E2CDim], Cell, k.data((NE, 2)) + 2.0)},
    )


@misuse(ValueError, r"2|dimensions|shape")
def one_dimensional_table(k: Kit) -> None:
    k.prog(p_cells)(
        k.arr((NC,)),
        k.arr((NE,)),
        offset_provider={"E2C": k.table([Edge, E2CDim], Cell, np.arange(NE, dtype=np.int32) % NC)},
    )


@misuse(ValueError, r"'e'|Edge|C2E")
def reduction_table_pointing_past_the_field(k: Kit) -> None:
    table = k.rng.integers(0, NE, (NC, 3)).astype(np.int32)
    table[1, 2] = NE + 7
    k.prog(p_edge_sum)(
        k.arr((NE,)), k.arr((NC,)), offset_provider={"C2E": k.table([Cell, C2EDim], Edge, table)}
    )


@misuse(TypeError, r"argument 'c'.*Edge|\[Edge\].*\[Cell\]|Cell")
def cell_field_passed_for_an_edge_parameter(k: Kit) -> None:
    k.prog(p_cells)(k.fld([Edge], (NE,)), k.arr((NE,)), offset_provider={"E2C": _e2c(k)})


# ------------------------------------------------------------------ scans at call time
@misuse(TypeError, r"argument 'a'.*\[I, K\]")
def scan_fed_a_field_without_k(k: Kit) -> None:
    k.prog(p_cumsum)(k.fld([I], (N,)), k.arr((N, M)), offset_provider={})


@misuse(TypeError, r"argument 'out' has dtype float32, expected float64")
def scan_output_of_wrong_dtype(k: Kit) -> None:
    k.prog(p_cumsum)(k.arr((N, M)), k.arr((N, M), np.float32), offset_provider={})


# ------------------------------------------------------------------ the catalogue, run
@pytest.mark.parametrize("entry", misuse.params())
def test_misuse_is_refused(case, entry: Misuse) -> None:
    kit = Kit(case)
    with pytest.raises(entry.exc) as info:
        entry.fn(kit)
    assert not isinstance(info.value, InternalError | AssertionError)
    # the message must name the problem: matched without the "file.py:line:col:" locations,
    # whose digits (and the checkout's path) would otherwise satisfy a pattern by accident
    text = re.sub(r"\S+\.py:\d+(:\d+)?:?", "", str(info.value))
    assert re.search(entry.pattern, text), f"{entry.pattern!r} not in {text!r}"
    kit.assert_unchanged()
