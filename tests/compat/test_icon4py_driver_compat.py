"""What icon4py's model driver calls outside and around operators, behaving as gt4py.next does:
partial-able constructors, builtins on concrete values, ``common._field`` views, direct operator
calls with a wider dtype than declared, ``as_offset`` reads discarded by a ``where``, and
``with_compilation_options``."""

from __future__ import annotations

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float32, float64, int32, where
from stencilkit.compat.gt4py import common as gtx_common
from stencilkit.compat.gt4py import constructors, utils
from stencilkit.experimental import as_offset

Cell = gtx.Dimension("Cell")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Koff = gtx.FieldOffset("Koff", source=K, target=(K,))
NC, NK = 7, 5


def test_constructors_are_partial_able_as_gt4py_ones(rng) -> None:
    alloc = constructors.zeros.partial(allocator=np)
    f = alloc({Cell: NC, K: NK}, dtype=float32)
    assert f.dtype == np.float32 and f.domain.shape == (NC, NK)
    assert not f.asnumpy().any()
    full = gtx.full.partial(fill_value=2.5).partial(dtype=np.float64)  # narrowed twice
    np.testing.assert_array_equal(full({Cell: 3}).asnumpy(), [2.5, 2.5, 2.5])
    data = rng.standard_normal(NC)
    np.testing.assert_array_equal(gtx.as_field.partial([Cell])(data).asnumpy(), data)
    assert isinstance(alloc, utils.fluid_partial)


def test_builtins_on_scalars_follow_numpy_scalar_types() -> None:
    got = gtx.astype(0.1, float32)
    assert type(got) is np.float32 and got == np.float32(0.1)
    assert gtx.astype((1.7, 2), int32) == (np.int32(1), np.int32(2))
    assert type(gtx.astype(3, float64)) is np.float64
    assert gtx.sqrt(4.0) == 2.0 and gtx.maximum(2.0, 3.0) == 3.0
    assert gtx.broadcast(1.5, (Cell, K)) == 1.5
    with pytest.raises(TypeError, match="astype"):
        gtx.astype("1.0", float64)


def test_builtins_on_fields_outside_operators(rng) -> None:
    a = rng.standard_normal((NC, NK))
    f = gtx.as_field([Cell, K], a)
    g = gtx.astype(f, float32)
    assert g.dtype == np.float32 and g.domain == f.domain
    np.testing.assert_array_equal(g.asnumpy(), a.astype(np.float32))
    np.testing.assert_array_equal(gtx.sqrt(gtx.abs(f)).asnumpy(), np.sqrt(np.abs(a)))
    column = rng.standard_normal(NK)
    m = gtx.maximum(f, gtx.as_field([K], column))  # broadcast by dimension names
    np.testing.assert_array_equal(m.asnumpy(), np.maximum(a, column[None, :]))
    with pytest.raises(TypeError, match="inside a @field_operator"):
        gtx.broadcast(f, (Cell, K))


def test_common_field_is_a_view_of_the_array(rng) -> None:
    two_d = gtx.zeros({Cell: NC, K: (NK - 1, NK)})
    view = gtx_common._field(two_d.ndarray[:, 0], domain={Cell: (0, NC)})
    values = rng.standard_normal(NC)
    view.ndarray[:] = values  # writes land in the 2-d field
    np.testing.assert_array_equal(two_d.asnumpy()[:, 0], values)
    with pytest.raises(ValueError, match="domain"):
        gtx_common._field(np.zeros(3))


@gtx.field_operator
def _scaled(
    orientation: Field[Dims[Cell, K], float64], length: Field[Dims[Cell, K], float64]
) -> Field[Dims[Cell, K], float64]:
    return orientation * length / 3.0


def test_direct_call_with_an_integer_field_where_float_is_declared(case, rng) -> None:
    """icon4py passes the grid file's int32 edge orientation to an operator declaring float64;
    gt4py computes with NumPy's promotion. A narrowing argument stays an error."""
    orientation = rng.choice(np.array([-1, 1], dtype=np.int32), (NC, NK))
    length = rng.standard_normal((NC, NK))
    before = rng.standard_normal((NC, NK))
    out = case.field([Cell, K], before)
    _scaled.with_backend(case.backend)(
        case.field([Cell, K], orientation),
        case.field([Cell, K], length),
        out=out,
        domain={Cell: (1, NC), K: (0, NK)},
        offset_provider={},
    )
    expected = before.copy()
    expected[1:] = (orientation * length / 3.0)[1:]
    np.testing.assert_array_equal(out.asnumpy(), expected)
    with pytest.raises(gtx.StencilTypeError, match="orientation"):  # bool is no number here
        _scaled.with_backend(case.backend)(
            case.field([Cell, K], orientation > 0),
            case.field([Cell, K], length),
            out=out,
            offset_provider={},
        )


@gtx.field_operator
def _masked_vertical(
    coef: Field[Dims[Cell, K], float64],
    offset: Field[Dims[Cell, K], int32],
    g: Field[Dims[Cell, K], float64],
) -> Field[Dims[Cell, K], float64]:
    return where(coef != 0.0, coef * g(as_offset(Koff, offset + 1)), g)


def _masked_program(backend):
    @gtx.program(backend=backend)
    def run(
        coef: Field[Dims[Cell, K], float64],
        offset: Field[Dims[Cell, K], int32],
        g: Field[Dims[Cell, K], float64],
        out: Field[Dims[Cell, K], float64],
    ):
        _masked_vertical(coef, offset, g, out=out)

    return run


def test_as_offset_reads_outside_the_field_where_a_where_discards_them(case, rng) -> None:
    """icon4py's truly horizontal diffusion: ``where(zd_diffcoef != 0, ... theta(as_offset(Koff,
    vertoffset + 1)) ..., z)`` reads past the top level only where ``zd_diffcoef`` is 0. The
    read counts only where its value is selected; a selected read outside stays an error."""
    g = rng.standard_normal((NC, NK))
    coef = rng.standard_normal((NC, NK))
    coef[:, NK - 1] = 0.0  # the top level: k + 0 + 1 is outside, and not selected
    coef[2, 1] = 0.0
    offset = np.zeros((NC, NK), dtype=np.int32)
    before = rng.standard_normal((NC, NK))
    out = case.field([Cell, K], before)
    run = _masked_program(case.backend)
    run(
        case.field([Cell, K], coef),
        case.field([Cell, K], offset),
        case.field([Cell, K], g),
        out,
        offset_provider={"Koff": K},
    )
    shifted = np.concatenate([g[:, 1:], np.zeros((NC, 1))], axis=1)
    np.testing.assert_array_equal(out.asnumpy(), np.where(coef != 0.0, coef * shifted, g))
    coef[3, NK - 1] = 0.5  # now a selected read leaves the field
    out = case.field([Cell, K], before)
    with pytest.raises(gtx.StencilValueError, match="as_offset read"):
        _masked_program(case.backend)(
            case.field([Cell, K], coef),
            case.field([Cell, K], offset),
            case.field([Cell, K], g),
            out,
            offset_provider={"Koff": K},
        )
    np.testing.assert_array_equal(out.asnumpy(), before)


def test_with_compilation_options() -> None:
    @gtx.program
    def copy(a: Field[Dims[Cell], float64], out: Field[Dims[Cell], float64]):
        _identity(a, out=out)

    p = copy.with_compilation_options(enable_jit=False)
    assert p.compilation_options.enable_jit is False and copy.compilation_options.enable_jit
    assert p.with_backend(gtx.cpu).compilation_options.enable_jit is False
    bound = copy.with_bound_args().with_compilation_options(static_domains=True)
    assert bound.compilation_options.static_domains
    with pytest.raises(TypeError):
        copy.with_compilation_options(no_such_option=1)


@gtx.field_operator
def _identity(a: Field[Dims[Cell], float64]) -> Field[Dims[Cell], float64]:
    return a


def test_allocation_tools_by_device_as_icon4py_asks() -> None:
    """icon4py's ``device_utils.is_cupy_device`` (on a machine with CuPy) asks
    ``is_field_allocation_tool_for(allocator, gtx.CUPY_DEVICE_TYPE)``."""
    import stencilkit.compat

    stencilkit.compat.install_gt4py_alias()
    import gt4py.next as gtx_alias
    import gt4py.next.custom_layout_allocators as allocators

    cpu, cuda = gtx_alias.DeviceType.CPU, gtx_alias.DeviceType.CUDA
    assert allocators.is_field_allocation_tool_for(np, cpu)
    assert not allocators.is_field_allocation_tool_for(np, cuda)
    assert allocators.is_field_allocation_tool_for(gtx.cpu, cpu)
    assert allocators.is_field_allocation_tool_for(gtx.gpu, cuda)
    assert not allocators.is_field_allocation_tool_for(gtx.gpu, cpu)
    gpu_allocator = allocators.device_allocators[cuda]
    assert allocators.is_field_allocator_for(gpu_allocator, cuda)
    assert not allocators.is_field_allocator_for(gtx.gpu, cuda)  # a backend is a factory
    assert allocators.is_field_allocator_factory_for(gtx.gpu, cuda)
    assert not allocators.is_field_allocator_factory_for(gtx.cpu, cuda)
    assert not allocators.is_field_allocation_tool_for(object(), cpu)
