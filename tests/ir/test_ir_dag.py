"""Shared values in the IR: IR in -> IR out for the DAG-aware passes.

A value named once in the source is one node however often it is used; every pass visits it
once (per shift), the printer binds it with ``let``, and the C/CUDA code computes it once."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.backends.cpp.codegen import generate_cpp
from stencilkit.core.types import FieldType, ScalarType
from stencilkit.ir import nodes as ir
from stencilkit.ir.fuse import fuse_kernels
from stencilkit.ir.lower import lower_program
from stencilkit.ir.visit import deep, postorder, substitute, use_counts, walk
from stencilkit.stages.abi import arg_layout
from stencilkit_benchmarks.frontend import chain_source, ifs_source

I, K = gtx.Dimension("I"), gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
F = Field[Dims[I], float64]
FT = FieldType((I,), "float64")
X = ir.Ref("x", FT)


def _nested(n: int) -> ir.Expr:
    """``g(x) = x * x + x`` applied ``n`` times, built as a DAG: 2n + 1 distinct nodes."""
    e: ir.Expr = X
    for _ in range(n):
        e = ir.BinOp("+", ir.BinOp("*", e, e, FT), e, FT)
    return e


def _import(tmp_path, name: str, source: str):
    import importlib.util
    import sys

    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


# ------------------------------------------------------------------ generic traversal
def test_walk_and_postorder_visit_each_node_once() -> None:
    e = _nested(200)  # as a tree: 3^200 nodes
    assert len(list(walk(e))) == 401
    order = postorder(e)
    assert len(order) == 401 and order[0] is X and order[-1] is e
    assert use_counts(e)[id(X)] == 3  # both operands of the innermost product, and its sum


def test_use_counts_count_each_edge() -> None:
    sq = ir.BinOp("*", X, X, FT)
    e = ir.BinOp("+", sq, sq, FT)
    counts = use_counts(e)
    assert counts[id(X)] == 2 and counts[id(sq)] == 2 and counts[id(e)] == 1


def test_substitute_keeps_sharing() -> None:
    e = _nested(100)
    y = ir.Ref("y", FT)
    out = substitute(e, {"x": y})
    assert len(list(walk(out))) == 201
    assert {x.name for x in walk(out) if isinstance(x, ir.Ref)} == {"y"}
    # an unchanged subtree comes back as the same object
    z = ir.Ref("z", FT)
    assert substitute(e, {"z": z}) is e


def test_deep_reruns_a_pass_that_runs_out_of_stack() -> None:
    e: ir.Expr = X
    for _ in range(5000):  # a chain as deep as it is long
        e = ir.UnaryOp("-", e, FT)

    def depth(x: ir.Node) -> int:
        # Python frames only: from Python 3.12 a recursion through C calls (max over a
        # generator) has a fixed limit of its own that no recursion limit raises
        return 1 + depth(x.operand) if isinstance(x, ir.UnaryOp) else 1

    assert deep(depth)(e) == 5001


# ------------------------------------------------------------------ printer
def test_printer_binds_shared_values_with_let() -> None:
    assert str(_nested(2)) == ("let t0 = ((x * x) + x)\n((t0 * t0) + t0)")
    assert str(ir.BinOp("+", X, X, FT)) == "(x + x)"  # leaves are never bound


@gtx.field_operator
def g_shift(x: F) -> F:
    return x(I + 1) * 0.5 + x


@gtx.field_operator
def chain3(x: F) -> F:
    return g_shift(g_shift(g_shift(x)))


@gtx.program
def run_chain3(x: F, out: F):
    chain3(x, out=out, domain={I: (0, 7)})


def test_operator_ir_prints_each_inlined_call_once() -> None:
    assert str(chain3.definition) == (
        "field_operator chain3(x: Field[[I], float64]) {\n"
        "  let t0 = ((x(I+1) * float64(0.5)) + x)\n"
        "  let t1 = ((t0(I+1) * float64(0.5)) + t0)\n"
        "  return ((t1(I+1) * float64(0.5)) + t1)\n"
        "}"
    )
    assert (
        "out @ {I: int64(0):int64(7)} <- {\n    let t0 = ((x(I+1) * float64(0.5)) + x)\n"
        in run_chain3.ir_text
    )


def test_lowering_memoizes_per_shift() -> None:
    (k,) = lower_program(run_chain3.definition, {}).kernels
    # t0 is needed at I+1 (inside t1(I+1)) twice over: once as one node
    assert str(k) == (
        "kernel chain3 over [I] @ {I: int64(0):int64(7)} {\n"
        "    let t0 = ((x[I+2] * float64(0.5)) + x[I+1])\n"
        "    out = ((((((x[I+3] * float64(0.5)) + x[I+2]) * float64(0.5)) + t0) * float64(0.5))"
        " + ((t0 * float64(0.5)) + ((x[I+1] * float64(0.5)) + x[I])))\n"
        "  }"
    )


def test_a_100_deep_chain_stays_linear(tmp_path) -> None:
    mod = _import(tmp_path, "sk_dag_chain100", chain_source(100, shifted=False))
    assert len(list(walk(mod.chain.definition.body))) == 201
    (k,) = lower_program(mod.run.definition, {}).kernels
    assert len([x for x in walk(k.values[0]) if isinstance(x, ir.BinOp)]) == 200
    assert str(mod.run.definition).count("let ") == 99


def test_a_100_deep_shifted_chain_lowers_each_value_once_per_shift(tmp_path) -> None:
    mod = _import(tmp_path, "sk_dag_shifted100", chain_source(100, shifted=True))
    (k,) = lower_program(mod.run.definition, {}).kernels
    # g^j(x) is needed at shifts 0..100-j: sum_j (101 - j) sums, one product each
    sums = [x for x in walk(k.values[0]) if isinstance(x, ir.BinOp) and x.op == "+"]
    assert len(sums) == sum(101 - j for j in range(1, 101))


# ------------------------------------------------------------------ if statements
def test_if_without_return_is_merged_through_one_tuple() -> None:
    @gtx.field_operator
    def op(a: F, s: float64) -> F:
        x = a
        y = a * 2.0
        if s > 0.0:
            x = a + 1.0
            y = x * y
        return x + y

    body = op.definition.body
    (merged,) = [e for e in walk(body) if isinstance(e, ir.IfElse)]
    assert isinstance(merged.true, ir.MakeTuple) and len(merged.true.elems) == 2
    assert str(op.definition).count(" if (s > float64(0.0)) else ") == 1


def test_forty_ifs_build_the_rest_of_the_body_once(tmp_path) -> None:
    mod = _import(tmp_path, "sk_dag_ifs40", ifs_source(40))
    body = mod.body.definition.body
    ifs = [e for e in walk(body) if isinstance(e, ir.IfElse)]
    assert len(ifs) == 40  # one per if statement, each choosing a tuple (or one name)
    assert len(list(walk(body))) < 40 * 30
    (k,) = lower_program(mod.run.definition, {}).kernels
    assert len([e for e in walk(k) if isinstance(e, ir.IfElse)]) == 40


def test_only_names_read_later_are_merged() -> None:
    @gtx.field_operator
    def op(a: F, s: float64) -> F:
        if s > 0.0:
            tmp = a * 3.0
            x = tmp + 1.0
        else:
            tmp = a
            x = a - 1.0
        return x

    (merged,) = [e for e in walk(op.definition.body) if isinstance(e, ir.IfElse)]
    assert merged.type == FT  # x alone: no tuple


# ------------------------------------------------------------------ code generation
def _cpp(
    prog: gtx.Program, shape: tuple[int, ...], dims: list[gtx.Dimension], n_in: int, n_out: int
) -> str:
    cpu = prog.with_backend(gtx.cpu)
    fields = [gtx.as_field(dims, np.ones(shape)) for _ in range(n_in + n_out)]
    planned = cpu._runner.stages(cpu._flat(fields, {}), {}, until="plan").planned
    sprog, layout = planned.sprog, planned.layout
    assert planned.spec is not None and arg_layout(sprog, planned.spec, ()) == layout
    return generate_cpp(sprog, layout, "entry")


def test_cpp_computes_each_shared_value_once() -> None:
    source = _cpp(run_chain3, (10,), [I], 1, 1)
    assert source.count("const auto") == 1
    assert source.count("((x_b[(i_I + 2)] * 0.5) + x_b[(i_I + 1)])") == 1


def test_cpp_if_chooses_the_tuple_once(tmp_path) -> None:
    mod = _import(tmp_path, "sk_dag_ifs3", ifs_source(3))
    source = _cpp(mod.run, (4, 5), [mod.I, mod.K], 2, 3)
    body = source[source.index('extern "C" int ') :]  # the program, not the runtime
    assert body.count("if (") == 3  # one if/else per if statement, not one per name


def test_fused_kernel_shares_the_first_value() -> None:
    @gtx.field_operator
    def first(a: F) -> F:
        return a(I + 1) - a

    @gtx.field_operator
    def second(t: F) -> F:
        return t * t

    @gtx.program
    def prog(a: F, tmp: F, out: F):
        first(a, out=tmp, domain={I: (0, 5)})
        second(tmp, out=out, domain={I: (0, 5)})

    (k,) = fuse_kernels(lower_program(prog.definition, {})).kernels
    assert k.values[1].left is k.values[0] and k.values[1].right is k.values[0]  # type: ignore[union-attr]
    assert str(k).count("let t0 = (a[I+1] - a[I])") == 1


def test_scalar_ifelse_prints_and_lowers() -> None:
    c = ir.BinOp(
        ">",
        ir.Ref("s", ScalarType("float64")),
        ir.Literal(0.0, ScalarType("float64")),
        ScalarType("bool"),
    )
    e = ir.IfElse(c, X, ir.UnaryOp("-", X, FT), FT)
    assert str(e) == "(x if (s > float64(0.0)) else (-x))"


Cell, Edge = gtx.Dimension("Cell"), gtx.Dimension("Edge")
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
EK, CK = Field[Dims[Edge, K], float64], Field[Dims[Cell, K], float64]


@gtx.field_operator
def reduce_shared(e: EK) -> CK:
    p = e(C2E) * e(C2E) + e(C2E)
    return gtx.neighbor_sum(p * p, axis=C2EDim) + gtx.max_over(p, axis=C2EDim)


@gtx.program
def run_reduce_shared(e: EK, out: CK):
    reduce_shared(e, out=out)


@pytest.mark.nvrtc
def test_cuda_sources_with_shared_values_compile(tmp_path) -> None:
    """Locals, if/else blocks choosing tuples, and reductions as loops, in every CUDA variant."""
    from stencilkit.backends.compiled import CompiledRunner
    from stencilkit.backends.cuda import CudaTarget
    from stencilkit.stages.interface import interface_of

    ifs = _import(tmp_path, "sk_dag_cuda_ifs", ifs_source(12))
    chain = _import(tmp_path, "sk_dag_cuda_chain", chain_source(12, shifted=True))
    cases = [(ifs.run, (6, 5), [ifs.I, ifs.K], 5), (chain.run, (76, 8), [chain.I, chain.K], 2)]
    for prog, shape, dims, n in cases:
        runner = CompiledRunner(interface_of(prog.definition), CudaTarget(arch="90"))
        args = [gtx.as_field(dims, np.asfortranarray(np.ones(shape))) for _ in range(n)]
        planned = runner.stages(args, {}, check_device=False, until="plan").planned
        source = runner.target.build(runner.target.generate(planned)).source.text
        assert "const auto t" in source or "if (" in source
    # a reduction whose body and mask share values with the rest: a loop of statements
    runner = CompiledRunner(
        interface_of(run_reduce_shared.definition),
        CudaTarget(arch="90"),
    )
    table = gtx.as_connectivity(
        [Cell, C2EDim], Edge, np.array([[0, 1, -1], [2, -1, 1]], dtype=np.int32), skip_value=-1
    )
    args = [gtx.as_field([Edge, K], np.ones((3, 4))), gtx.as_field([Cell, K], np.ones((2, 4)))]
    planned = runner.stages(args, {"C2E": table}, check_device=False, until="plan").planned
    source = runner.target.build(runner.target.generate(planned)).source.text
    assert source.count("for (int n_C2E = 0; n_C2E < 3; ++n_C2E)") >= 2


def test_deep_thread_runs_on_the_callers_cupy_device_and_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CuPy keeps the current device and stream per thread: a pass moved to the deep thread
    (the embedded backend's evaluation) must still run on the caller's."""
    import contextlib
    import threading
    import types

    entered: list[tuple[str, str]] = []

    class Ctx(contextlib.AbstractContextManager):  # type: ignore[type-arg]
        def __init__(self, name: str) -> None:
            self.name = name

        def __enter__(self) -> None:
            entered.append((self.name, threading.current_thread().name))

        def __exit__(self, *exc: object) -> None:
            return None

    cuda = types.SimpleNamespace(
        Device=lambda: Ctx("device"), get_current_stream=lambda: Ctx("stream")
    )
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))
    e: ir.Expr = X
    for _ in range(5000):
        e = ir.UnaryOp("-", e, FT)

    def depth(x: ir.Node) -> int:
        return 1 + depth(x.operand) if isinstance(x, ir.UnaryOp) else 1

    assert deep(depth)(e) == 5001
    assert entered == [("device", "stencilkit-deep-pass"), ("stream", "stencilkit-deep-pass")]
