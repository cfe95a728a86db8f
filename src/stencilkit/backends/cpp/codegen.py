"""C++17 + OpenMP source for a stencil program: one loop nest per kernel."""

from __future__ import annotations

from ...core.dims import Dimension
from ...ir import nodes as ir
from ...ir.visit import deep, postorder
from ..abi import ArgLayout
from ..cfamily import PRELUDE, CTarget, ExprEmitter, ctype, index_typedef, unpack_args
from .omp import RUNTIME, parallel_for

_STD = ("sqrt", "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "floor", "ceil", "trunc",
        "cbrt", "isfinite", "isnan", "isinf", "fmod")
#: The most IR nodes a loop body has for its loop to be marked ``omp simd``.
SIMD_MAX_NODES = 2000
CPP_TARGET = CTarget()
CPP_TARGET.calls.update({f: f"std::{CTarget().calls[f]}" for f in _STD})
CPP_TARGET.calls.update({"arcsin": "std::asin({0})", "arccos": "std::acos({0})", "arctan": "std::atan({0})",
                        "gamma": "std::tgamma({0})", "arcsinh": "std::asinh({0})", "arccosh": "std::acosh({0})",
                        "arctanh": "std::atanh({0})"})


def loop_order(k: ir.Kernel, layout: ArgLayout) -> list[Dimension]:
    """Outer to inner; the unit-stride dimension of the first output innermost, scan axis inside
    the parallel loops."""
    out = layout.field(k.outs[0])
    dims = [out.dims[j] for j in out.order]
    if k.scan is not None:
        dims.remove(k.scan.axis)
        dims.append(k.scan.axis)
    return dims


def _kernel(k: ir.Kernel, ki: int, layout: ArgLayout) -> list[str]:
    bounds = layout.bounds[ki]
    order = loop_order(k, layout)
    lines = [f"  // {k.name}"]
    for d in k.dims:
        i = k.dims.index(d)
        lines.append(f"  const sk_idx {d.value}_lo{ki} = a[{bounds[2 * i]}], {d.value}_hi{ki} = a[{bounds[2 * i + 1]}];")
    index_var = {d.value: f"i_{d.value}" for d in k.dims}
    emit = ExprEmitter(CPP_TARGET, layout, index_var)
    parallel = [d for d in order if k.scan is None or d != k.scan.axis]
    n_par = len(parallel)
    collapse = min(2, n_par - 1) if n_par > 1 else 1
    # A loop body of thousands of values (a deep chain of shifted operators) takes GCC tens of
    # seconds to vectorize with `omp simd`, five times its plain -O3 time: leave it to -O3.
    simd = len(postorder(*k.values)) <= SIMD_MAX_NODES
    simd_alone = n_par == 1 and k.scan is None and simd  # one loop: threads and vector lanes share it
    if n_par >= 1:
        lines.append(parallel_for(k, ki, collapse, simd_alone))
    depth = 1
    for j, d in enumerate(parallel):
        pad = "  " * depth
        if j == n_par - 1 and k.scan is None and not simd_alone and simd:
            lines.append(f"{pad}#pragma omp simd")
        lines.append(f"{pad}for (sk_idx i_{d.value} = {d.value}_lo{ki}; i_{d.value} < {d.value}_hi{ki}; ++i_{d.value}) {{")
        depth += 1
    pad = "  " * depth
    if k.scan is None:
        body_lines = _stores(k, emit, layout, pad)
        lines.extend(body_lines)
    else:
        lines.extend(_scan_body(k, ki, emit, layout, pad))
    for _ in parallel:
        depth -= 1
        lines.append("  " * depth + "}")
    return lines


def _stores(k: ir.Kernel, emit: ExprEmitter, layout: ArgLayout, pad: str,
            store: str = "{ref} = {val};") -> list[str]:
    """Compute every output value of ``k`` at the current point, then store them (``store``
    formats one store; the CUDA backend may use cache-streaming stores)."""
    lines = []
    out_index = tuple(ir.Pos(d) for d in k.dims)
    values = []
    emit.prepare(k)
    with emit.scope():  # the locals of one point (the caller's loop body)
        for j, (o, v) in enumerate(zip(k.outs, k.values)):
            t = ctype(layout.field(o).dtype)
            value = emit.emit(v)
            lines += emit.statements(pad)
            lines.append(f"{pad}const {t} r{j} = {value};")
            values.append(f"r{j}")
    for o, val in zip(k.outs, values):
        f = layout.field(o)
        idx = tuple(out_index[k.dims.index(d)] for d in f.dims)
        fmt = store if f.dtype != "bool" else "{ref} = {val};"
        lines.append(pad + fmt.format(ref=emit.element(f, idx), val=val))
    return lines


def _scan_body(k: ir.Kernel, ki: int, emit: ExprEmitter, layout: ArgLayout, pad: str,
               unroll: int = 1) -> list[str]:
    """The loop over the scan axis; ``unroll`` > 1 asks the compiler to unroll it (the loads of
    later levels do not depend on the carry, so an unrolled loop issues them early)."""
    scan = k.scan
    assert scan is not None
    ax = scan.axis.value
    lines = []
    emit.prepare(k)
    for c, init, o in zip(scan.carries, scan.inits, k.outs):
        value = emit.emit(init)
        lines += emit.statements(pad)
        lines.append(f"{pad}{ctype(layout.field(o).dtype)} {c}_v = {value};")
    if unroll > 1:
        lines.append(f"{pad}#pragma unroll {unroll}")
    if scan.forward:
        lines.append(f"{pad}for (sk_idx i_{ax} = {ax}_lo{ki}; i_{ax} < {ax}_hi{ki}; ++i_{ax}) {{")
    else:
        lines.append(f"{pad}for (sk_idx i_{ax} = {ax}_hi{ki} - 1; i_{ax} >= {ax}_lo{ki}; --i_{ax}) {{")
    inner = _stores(k, emit, layout, pad + "  ")
    lines.extend(inner)
    for j, c in enumerate(scan.carries):
        lines.append(f"{pad}  {c}_v = r{j};")
    lines.append(f"{pad}}}")
    return lines


@deep
def generate_cpp(prog: ir.StencilProgram, layout: ArgLayout, entry: str) -> str:
    written = {o for k in prog.kernels for o in k.outs}
    lines = ["// generated by stencilkit: C++17 + OpenMP", PRELUDE, RUNTIME, index_typedef(False),
             f'extern "C" int {entry}(const int64_t* __restrict__ a) {{']
    lines += ["  " + s for s in unpack_args(layout, written)]
    for ki, k in enumerate(prog.kernels):
        lines += _kernel(k, ki, layout)
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)
