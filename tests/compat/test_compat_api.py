"""gt4py.next 1.2.3's public surface: modules, names, calling conventions, backends, lazy parsing."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
import stencilkit.config
import stencilkit.ffront.decorator
from stencilkit import Dims, Field, float64

X = gtx.Dimension("X")
Y = gtx.Dimension("Y")
Z = gtx.Dimension("Z", kind=gtx.DimensionKind.VERTICAL)
FX = Field[Dims[X], float64]
FXZ = Field[Dims[X, Z], float64]
FZ = Field[Dims[Z], float64]

BACKENDS = [None, gtx.cpu]


# -- modules and names ----------------------------------------------------------------------

MODULE_NAMES = {
    "stencilkit.common": [
        "Dimension",
        "DimensionKind",
        "Dims",
        "Domain",
        "Field",
        "GridType",
        "UnitRange",
        "NamedRange",
        "NamedIndex",
        "Infinity",
        "Connectivity",
        "CartesianConnectivity",
        "domain",
        "unit_range",
        "named_range",
        "promote_dims",
        "is_staggered",
        "flip_staggered",
        "as_non_staggered",
        "DomainLike",
        "OffsetProvider",
        "NeighborTable",
        "is_neighbor_table",
        "MutableField",
        "NeighborConnectivityType",
        "offset_provider_to_type",
    ],
    "stencilkit.constructors": [
        "empty",
        "zeros",
        "ones",
        "full",
        "as_field",
        "as_connectivity",
        "FieldConstructor",
        "DEFAULT_DEVICE",
    ],
    "stencilkit.errors": [
        "GT4PyError",
        "DSLError",
        "UnsupportedPythonFeatureError",
        "UndefinedSymbolError",
        "MissingAttributeError",
        "MissingArgumentError",
        "DSLTypeError",
        "MissingParameterAnnotationError",
        "InvalidAnnotationError",
        "InvalidParameterAnnotationError",
        "CompilationError",
    ],
    "stencilkit.utils": ["tree_map", "flatten_nested_tuple", "FrozenNamespace"],
    "stencilkit.typing": [
        "Program",
        "FieldOperator",
        "Backend",
        "Allocator",
        "OffsetProvider",
        "Scalar",
    ],
    "stencilkit.experimental": ["concat_where"],
    "stencilkit.ffront.decorator": [
        "field_operator",
        "program",
        "scan_operator",
        "Program",
        "FieldOperator",
        "DEFAULT_BACKEND",
        "ProgramWithBoundArgs",
        "GTCallable",
    ],
    "stencilkit.ffront.fbuiltins": [
        "float64",
        "int32",
        "IndexType",
        "neighbor_sum",
        "max_over",
        "min_over",
        "where",
        "broadcast",
        "astype",
        "sqrt",
        "minimum",
        "FieldOffset",
        "MATH_BUILTIN_NAMES",
        "FUN_BUILTIN_NAMES",
        "TYPE_BUILTIN_NAMES",
    ],
    "stencilkit.ffront.experimental": ["concat_where"],
    "stencilkit.program_processors.runners.gtfn": ["run_gtfn", "run_gtfn_gpu"],
    "stencilkit.backend": ["Backend"],
    "stencilkit.config": ["PARSE_AT_DECORATION"],
    "stencilkit.custom_layout_allocators": ["device_allocators", "is_field_allocation_tool"],
    "stencilkit": [
        "IndexType",
        "GridType",
        "flip_staggered",
        "is_staggered",
        "as_non_staggered",
        "float",
        "int",
        "tuple",
        "unit_range",
        "CartesianConnectivity",
        "FieldConstructor",
        "wait_for_compilation",
        "is_scalar_type",
        "CUPY_DEVICE_TYPE",
        "errors",
        "common",
        "constructors",
        "utils",
        "typing",
        "ffront",
        "program_processors",
    ],
}


@pytest.mark.parametrize("module", sorted(MODULE_NAMES))
def test_module_offers_gt4py_names(module: str) -> None:
    mod = importlib.import_module(module)
    missing = [n for n in MODULE_NAMES[module] if not hasattr(mod, n)]
    assert not missing


def test_top_level_values() -> None:
    assert (
        gtx.IndexType is gtx.int32 and gtx.float is float and gtx.int is int and gtx.tuple is tuple
    )
    assert (
        gtx.GridType.CARTESIAN == "cartesian"
        and gtx.GridType("unstructured") is gtx.GridType.UNSTRUCTURED
    )
    assert gtx.unit_range((1, 4)) == gtx.UnitRange(1, 4)
    assert (
        gtx.is_scalar_type(1.0)
        and gtx.is_scalar_type(np.float32(1))
        and not gtx.is_scalar_type("a")
    )
    assert not gtx.is_scalar_type(np.complex128(1))
    assert gtx.wait_for_compilation() is None
    assert gtx.CUPY_DEVICE_TYPE in (None, gtx.DeviceType.CUDA)
    c = gtx.CartesianConnectivity(X, 1)
    assert c.codomain == X and c.offset == 1
    assert gtx.errors is importlib.import_module("stencilkit.errors")
    assert gtx.program_processors.runners.gtfn.run_gtfn is gtx.gtfn_cpu


def test_fbuiltins_name_lists_name_existing_builtins() -> None:
    fb = gtx.ffront.fbuiltins
    for name in fb.MATH_BUILTIN_NAMES + fb.FUN_BUILTIN_NAMES + fb.TYPE_BUILTIN_NAMES:
        assert hasattr(fb, name), name
    assert (
        "sqrt" in fb.UNARY_MATH_FP_BUILTIN_NAMES
        and "minimum" in fb.BINARY_MATH_NUMBER_BUILTIN_NAMES
    )
    assert fb.is_cartesian_offset(gtx.FieldOffset("Xoff", source=X, target=(X,)))


def test_utils() -> None:
    u = gtx.utils
    assert u.tree_map(lambda a, b: a + b)((1, (2, 3)), (10, (20, 30))) == (11, (22, 33))
    assert u.flatten_nested_tuple(((1, 2), (3, (4,)))) == (1, 2, 3, 4)

    @u.tree_map
    def double(a: int) -> int:
        return 2 * a

    assert double((1, (2,))) == (2, (4,))
    ns = u.FrozenNamespace(G=np.float64(9.81), R=2)
    assert ns.G == 9.81 and list(ns.keys()) == ["G", "R"] and ns.as_dict() == {"G": 9.81, "R": 2}
    assert hash(ns) == hash(u.FrozenNamespace(G=np.float64(9.81), R=2))
    with pytest.raises(TypeError, match=r"Trying to modify immutable .FrozenNamespace. instance\."):
        ns.G = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError, match="immutable"):
        del ns.R


def test_frozen_namespace_constant_in_an_operator() -> None:
    consts = gtx.utils.FrozenNamespace(G=np.float64(9.81))

    @gtx.field_operator
    def scale(a: FX) -> FX:
        return consts.G * a

    out = gtx.zeros({X: 3})
    scale(gtx.ones({X: 3}), out=out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), 9.81)


def test_neighbor_tables_and_offset_provider_types() -> None:
    E, C = gtx.Dimension("E"), gtx.Dimension("C")
    E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
    table = gtx.as_connectivity(
        domain={E: 3, E2CDim: 2}, codomain=C, data=np.array([[0, 1], [1, 2], [2, -1]])
    )
    assert gtx.common.is_neighbor_table(table) and not gtx.common.is_neighbor_table(X)
    t = gtx.common.offset_provider_to_type({"E2C": table, "Xoff": X})["E2C"]
    assert (t.source_dim, t.neighbor_dim, t.codomain, t.max_neighbors, t.has_skip_values) == (
        E,
        E2CDim,
        C,
        2,
        True,
    )
    assert gtx.common.is_offset_provider({"E2C": table, "Xoff": X})


# -- constructors ---------------------------------------------------------------------------


def test_field_constructor_and_module_constructors() -> None:
    fc = gtx.FieldConstructor(allocator=gtx.cpu.allocator)
    f = fc.full({X: 4}, 2.5)
    assert f.asnumpy().tolist() == [2.5] * 4
    assert gtx.constructors.zeros({X: 2}).asnumpy().tolist() == [0.0, 0.0]
    g = gtx.constructors.as_field(domain=gtx.domain({X: (1, 4)}), data=np.arange(3.0))
    assert g.domain == gtx.domain({X: (1, 4)})


def test_allocators() -> None:
    cla = gtx.custom_layout_allocators
    for tool in (gtx.cpu, gtx.cpu.allocator, np, cla.device_allocators[gtx.DeviceType.CPU]):
        assert cla.is_field_allocation_tool(tool)
        assert gtx.zeros({X: 3}, allocator=tool).device == gtx.Device(gtx.DeviceType.CPU, 0)
    assert not cla.is_field_allocation_tool(3)
    assert gtx.cpu.__gt_allocator__ == gtx.cpu.allocator and gtx.cpu.name == "cpu"


# -- Field indexing (relative and NamedIndex) -----------------------------------------------


def test_field_relative_and_named_indexing(rng: np.random.Generator) -> None:
    data = rng.standard_normal((6, 4))
    f = gtx.as_field(gtx.domain({X: (2, 8), Y: (0, 4)}), data)
    assert f[1:].domain == gtx.domain({X: (3, 8), Y: (0, 4)})
    np.testing.assert_array_equal(f[1:-1, 1:].asnumpy(), data[1:-1, 1:])
    assert f[:].domain == f.domain and f[...].domain == f.domain
    row = f[3]
    assert row.domain == gtx.domain({Y: (0, 4)})
    np.testing.assert_array_equal(row.asnumpy(), data[3])
    np.testing.assert_array_equal(f[X(5)].asnumpy(), data[3])  # absolute index 5 = position 3
    assert f[X(5), Y(1)].asnumpy() == data[3, 1]
    assert f[gtx.common.NamedRange(X, gtx.UnitRange(4, 6))].shape == (2, 4)
    with pytest.raises(ValueError, match="out of range"):
        f[6]
    f[1:3, 0] = 7.0  # writes through to the buffer
    assert (f.asnumpy()[1:3, 0] == 7.0).all() and f.asnumpy()[0, 0] == data[0, 0]


# -- calling conventions --------------------------------------------------------------------


@gtx.field_operator
def blend(a: FX, b: FX, w: float64) -> FX:
    return w * a + (1.0 - w) * b


@gtx.scan_operator(axis=Z, forward=True, init=0.0)
def integrate(acc: float, dz: float, rho: float) -> float:
    return acc + dz * rho


@pytest.mark.parametrize("backend", BACKENDS)
def test_keyword_arguments_from_python(backend: Any, rng: np.random.Generator) -> None:
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    out = gtx.zeros({X: 5})
    blend.with_backend(backend)(
        gtx.as_field([X], a), w=0.25, b=gtx.as_field([X], b), out=out, offset_provider={}
    )
    np.testing.assert_allclose(out.asnumpy(), 0.25 * a + 0.75 * b)
    dz, rho = rng.random(4), rng.random(4)
    oz = gtx.zeros({Z: 4})
    integrate.with_backend(backend)(
        rho=gtx.as_field([Z], rho), dz=gtx.as_field([Z], dz), out=oz, offset_provider={}
    )
    np.testing.assert_allclose(oz.asnumpy(), np.cumsum(dz * rho))


def test_keyword_argument_errors_are_type_errors() -> None:
    a = gtx.ones({X: 3})
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        blend(a, a=a, b=a, w=0.5, out=a)
    with pytest.raises(TypeError, match="unexpected keyword argument 'q'"):
        blend(a, b=a, q=1.0, out=a)
    with pytest.raises(TypeError, match="missing 1 required argument"):
        blend(a, b=a, out=a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_default_backend_is_read_at_decoration(
    backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stencilkit.ffront.decorator, "DEFAULT_BACKEND", backend)

    @gtx.field_operator
    def ident(a: FX) -> FX:
        return a

    @gtx.program
    def prog(a: FX, out: FX) -> None:
        ident(a, out=out)

    @gtx.program(backend=None)
    def explicit(a: FX, out: FX) -> None:
        ident(a, out=out)

    assert ident.backend is backend and prog.backend is backend and explicit.backend is None
    out = gtx.zeros({X: 3})
    prog(gtx.full({X: 3}, 4.0), out, offset_provider={})
    assert out.asnumpy().tolist() == [4.0] * 3


def test_grid_type() -> None:
    @gtx.program(grid_type=gtx.GridType.UNSTRUCTURED)
    def prog(a: FX, out: FX) -> None:
        blend(a, a, 0.5, out=out)

    assert prog.grid_type is gtx.GridType.UNSTRUCTURED
    cart = prog.with_grid_type(gtx.GridType.CARTESIAN)
    assert cart.grid_type is gtx.GridType.CARTESIAN and prog.grid_type is gtx.GridType.UNSTRUCTURED
    assert blend.with_grid_type(gtx.GridType.CARTESIAN).grid_type is gtx.GridType.CARTESIAN


@gtx.field_operator
def scaled(a: FX, factor: float64, on: bool) -> FX:
    return factor * a if on else a


@gtx.program
def scale_prog(a: FX, factor: float64, on: bool, out: FX) -> None:
    scaled(a, factor, on, out=out)


@pytest.mark.parametrize("backend", BACKENDS)
def test_with_bound_args(backend: Any, rng: np.random.Generator) -> None:
    data = rng.standard_normal(4)
    a, out = gtx.as_field([X], data), gtx.zeros({X: 4})
    bound = scale_prog.with_backend(backend).with_bound_args(factor=10.0, on=True)
    bound(a, out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), 10.0 * data)
    out2 = gtx.zeros({X: 4})
    bound(a=a, out=out2, offset_provider={})
    np.testing.assert_allclose(out2.asnumpy(), 10.0 * data)
    assert bound.__name__ == "scale_prog" and bound.definition is not None
    assert bound.with_grid_type(gtx.GridType.CARTESIAN).bound_args == {"factor": 10.0, "on": True}


def test_with_bound_args_errors() -> None:
    with pytest.raises(TypeError, match=r"Keyword argument .x. is not a valid program parameter\."):
        scale_prog.with_bound_args(x=1.0)
    bound = scale_prog.with_bound_args(factor=10.0, on=True)
    a = gtx.zeros({X: 2})
    with pytest.raises(TypeError, match=r"with bound arguments ''factor', 'on''\.") as info:
        bound(a, a, on=False, offset_provider={})
    assert isinstance(info.value.__cause__, ValueError)
    assert "Parameter 'on' already set as a bound argument." in str(info.value.__cause__)
    with pytest.raises(TypeError) as info:
        bound(a, offset_provider={})
    assert "Function takes 2 positional arguments, but 1 were given." in str(info.value.__cause__)
    with pytest.raises(NotImplementedError):
        bound.compile()


def test_backend_compile_and_allocator_argument() -> None:
    a = gtx.ones({X: 3}, allocator=gtx.gtfn_cpu.allocator)
    out = gtx.zeros({X: 3}, allocator=gtx.gtfn_cpu)
    prog = gtx.cpu.compile(scale_prog, {"args": (a, 2.0, True, out), "offset_provider": {}})
    assert prog.backend is gtx.cpu
    prog(a, 2.0, True, out, offset_provider={})
    assert out.asnumpy().tolist() == [2.0] * 3


def test_backend_subclass_runner_override_takes_effect() -> None:
    class Refusing(gtx.Backend):
        def runner(self, interface: Any) -> Any:
            raise RuntimeError("this backend refuses to run")

    refusing = Refusing("refusing", gtx.DeviceType.CPU)
    with pytest.raises(RuntimeError, match="refuses"):
        scale_prog.with_backend(refusing)(
            gtx.ones({X: 2}), 1.0, True, gtx.zeros({X: 2}), offset_provider={}
        )


# -- errors at first use (stencilkit's default; gt4py 1.2.3 reports them at decoration) ---


def test_operators_parse_at_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stencilkit.config, "PARSE_AT_DECORATION", False)

    @gtx.field_operator
    def broken(a: FX) -> FX:
        while True:
            pass
        return a

    @gtx.field_operator
    def caller(a: FX) -> FX:
        return broken(a)

    @gtx.program
    def prog(a: FX, out: FX) -> None:
        caller(a, out=out)

    @gtx.field_operator
    def fine(a: FX) -> FX:
        return a + 1.0

    assert "fine" in fine.ir_text() and fine.ir_text == fine.ir_text()  # parses fine alone
    with pytest.raises(gtx.StencilTypeError, match="not part of the DSL") as info:
        broken.ir_text()
    assert info.value.location is not None and info.value.location.line > 0
    with pytest.raises(gtx.errors.DSLError, match="not part of the DSL"):
        caller.compile()
    with pytest.raises(gtx.errors.DSLError, match="not part of the DSL"):
        prog.ir_text()
    with pytest.raises(gtx.errors.DSLError, match="not part of the DSL"):
        prog(gtx.ones({X: 2}), gtx.zeros({X: 2}), offset_provider={})
