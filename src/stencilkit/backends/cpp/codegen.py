"""C++17 + OpenMP source for a stencil program: one loop nest per kernel."""

from __future__ import annotations

from ...core.dims import Dimension
from ...ir import nodes as ir
from ...ir.visit import deep, postorder
from ...stages.abi import ArgLayout
from ..cfamily import (
    C_TARGET,
    CTarget,
    ExprEmitter,
    ctype,
    emit_scan_loop,
    emit_stores,
    loop_order,
    unpack_args,
)
from ..cprelude import PRELUDE, index_typedef
from .omp import RUNTIME, parallel_for

#: The most IR nodes a loop body has for its loop to be marked ``omp simd``.
SIMD_MAX_NODES = 2000
CPP_TARGET: CTarget = C_TARGET.in_namespace("std")
#: Columns of a blocked scan (``_blocked_scan``) done together: the carries of one block are
#: ``SCAN_BLOCK`` values each, in L1.
SCAN_BLOCK = 64


def blocked_scan(k: ir.Kernel, layout: ArgLayout, parallel: list[Dimension]) -> bool:
    """Whether scan kernel ``k`` runs as blocks of columns (``_blocked_scan``): its innermost
    parallel dimension is its first output's unit stride (fixed at compile time), and every read
    of an output of ``k`` is in the column being computed (offset 0 along every other dimension),
    so that doing level ``k`` of a block's columns before level ``k + 1`` of any of them gives the
    per-column order's values."""
    if k.scan is None or not parallel:
        return False
    out = layout.field(k.outs[0])
    if out.unit_dim is None or out.dims[out.unit_dim] != parallel[-1]:
        return False
    if len(postorder(*k.values, *k.scan.inits)) > SIMD_MAX_NODES:
        return False
    outs = set(k.outs)
    for n in postorder(*k.values, *k.scan.inits):
        if isinstance(n, ir.Access) and n.field in outs:
            dims = layout.field(n.field).dims
            for d, i in zip(dims, n.index):
                if d == k.scan.axis:
                    continue
                if not (isinstance(i, ir.Pos) and i.dim == d and i.offset == 0):
                    return False
    return True


def _blocked_scan(
    k: ir.Kernel, ki: int, emit: ExprEmitter, layout: ArgLayout, depth: int, inner: str
) -> list[str]:
    """The body of one block of ``SCAN_BLOCK`` columns along the unit-stride dimension ``inner``
    (``i_{inner}`` runs from ``{inner}_b0`` to ``{inner}_b1``): the carries are arrays over the
    block, the scan-axis loop is outside an ``omp simd`` loop over the block's columns. Each
    column computes what the per-column loop (``emit_scan_loop``) computes, in the same order."""
    scan = k.scan
    assert scan is not None
    ax = scan.axis.value
    pad = "  " * depth
    col = f"for (sk_idx i_{inner} = {inner}_b0; i_{inner} < {inner}_b1; ++i_{inner}) {{"
    slot = f"[i_{inner} - {inner}_b0]"
    types = [ctype(layout.field(o).dtype) for o in k.outs]
    lines = [
        f"{pad}const sk_idx {inner}_b0 = {inner}_lo{ki} + b_{inner} * {SCAN_BLOCK};",
        f"{pad}const sk_idx {inner}_b1 = {inner}_b0 + {SCAN_BLOCK} < {inner}_hi{ki} ? {inner}_b0 + {SCAN_BLOCK} : {inner}_hi{ki};",
    ]
    lines += [f"{pad}{t} {c}_a[{SCAN_BLOCK}];" for c, t in zip(scan.carries, types)]
    emit.prepare(k)
    lines += [f"{pad}#pragma omp simd", f"{pad}{col}"]
    with emit.scope():
        for c, init in zip(scan.carries, scan.inits):
            value = emit.emit(init)
            lines += emit.statements(pad + "  ")
            lines.append(f"{pad}  {c}_a{slot} = {value};")
    lines.append(f"{pad}}}")
    if scan.forward:
        lines.append(f"{pad}for (sk_idx i_{ax} = {ax}_lo{ki}; i_{ax} < {ax}_hi{ki}; ++i_{ax}) {{")
    else:
        lines.append(
            f"{pad}for (sk_idx i_{ax} = {ax}_hi{ki} - 1; i_{ax} >= {ax}_lo{ki}; --i_{ax}) {{"
        )
    lines += [f"{pad}  #pragma omp simd", f"{pad}  {col}"]
    lines += [f"{pad}    const {t} {c}_v = {c}_a{slot};" for c, t in zip(scan.carries, types)]
    lines += emit_stores(k, emit, layout, pad + "    ")
    lines += [f"{pad}    {c}_a{slot} = r{j};" for j, c in enumerate(scan.carries)]
    lines += [f"{pad}  }}", f"{pad}}}"]
    return lines


def _kernel(k: ir.Kernel, ki: int, layout: ArgLayout) -> list[str]:
    bounds = layout.bounds[ki]
    order = loop_order(k, layout)
    lines = [f"  // {k.name}"]
    for d in k.dims:
        i = k.dims.index(d)
        lines.append(
            f"  const sk_idx {d.value}_lo{ki} = a[{bounds[2 * i]}], {d.value}_hi{ki} = a[{bounds[2 * i + 1]}];"
        )
    index_var = {d.value: f"i_{d.value}" for d in k.dims}
    emit = ExprEmitter(CPP_TARGET, layout, index_var)
    parallel = [d for d in order if k.scan is None or d != k.scan.axis]
    n_par = len(parallel)
    collapse = min(2, n_par - 1) if n_par > 1 else 1
    # A loop body of thousands of values (a deep chain of shifted operators) takes GCC tens of
    # seconds to vectorize with `omp simd`, five times its plain -O3 time: leave it to -O3.
    simd = len(postorder(*k.values)) <= SIMD_MAX_NODES
    simd_alone = (
        n_par == 1 and k.scan is None and simd
    )  # one loop: threads and vector lanes share it
    blocked = blocked_scan(k, layout, parallel)
    if blocked:  # the innermost parallel loop runs over blocks of columns
        inner = parallel[-1].value
        collapse = min(2, n_par)
        lines.append(
            f"  const sk_idx {inner}_nb{ki} = ({inner}_hi{ki} - {inner}_lo{ki} + {SCAN_BLOCK - 1}) / {SCAN_BLOCK};"
        )
    if n_par >= 1:
        lines.append(parallel_for(k, ki, collapse, simd_alone))
    depth = 1
    for j, d in enumerate(parallel):
        pad = "  " * depth
        if j == n_par - 1 and k.scan is None and not simd_alone and simd:
            lines.append(f"{pad}#pragma omp simd")
        if blocked and j == n_par - 1:
            lines.append(
                f"{pad}for (sk_idx b_{d.value} = 0; b_{d.value} < {d.value}_nb{ki}; ++b_{d.value}) {{"
            )
        else:
            lines.append(
                f"{pad}for (sk_idx i_{d.value} = {d.value}_lo{ki}; i_{d.value} < {d.value}_hi{ki}; ++i_{d.value}) {{"
            )
        depth += 1
    pad = "  " * depth
    if blocked:
        lines.extend(_blocked_scan(k, ki, emit, layout, depth, parallel[-1].value))
    elif k.scan is None:
        body_lines = emit_stores(k, emit, layout, pad)
        lines.extend(body_lines)
    else:
        lines.extend(emit_scan_loop(k, ki, emit, layout, pad))
    for _ in parallel:
        depth -= 1
        lines.append("  " * depth + "}")
    return lines


@deep
def generate_cpp(prog: ir.StencilProgram, layout: ArgLayout, entry: str) -> str:
    written = {o for k in prog.kernels for o in k.outs}
    lines = [
        "// generated by stencilkit: C++17 + OpenMP",
        PRELUDE,
        RUNTIME,
        index_typedef(False),
        f'extern "C" int {entry}(const int64_t* __restrict__ a) {{',
    ]
    lines += ["  " + s for s in unpack_args(layout, written)]
    for ki, k in enumerate(prog.kernels):
        lines += _kernel(k, ki, layout)
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)
