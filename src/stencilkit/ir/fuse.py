"""Kernel fusion: consecutive kernels over the same domain become one loop nest where legal.

Legal when the second kernel reads the first one's outputs only at the current point, writes
nothing the first one reads, and neither is a scan. The fused kernel computes the first
kernel's values, then the second's with those reads replaced by the values themselves (so the
intermediate is never read back from memory), and stores both.
"""

from __future__ import annotations

from dataclasses import replace

from . import nodes as n
from .verify import check_stencil
from .visit import deep, map_children, walk


def _reads(k: n.Kernel) -> set[str]:
    return {x.field for v in k.values for x in walk(v) if isinstance(x, n.Access)}


def _centered(x: n.Access) -> bool:
    return all(isinstance(i, n.Pos) and i.offset == 0 for i in x.index)


def can_fuse(a: n.Kernel, b: n.Kernel) -> bool:
    if a.scan is not None or b.scan is not None:
        return False
    if set(a.dims) != set(b.dims) or not a.domain or a.domain != b.domain:
        return False
    if set(a.outs) & set(b.outs) or set(b.outs) & _reads(a):
        return False
    produced = set(a.outs)
    for v in b.values:
        for x in walk(v):
            if isinstance(x, n.Access) and x.field in produced and not _centered(x):
                return False
    return True


def fuse_pair(a: n.Kernel, b: n.Kernel) -> n.Kernel:
    produced = dict(zip(a.outs, a.values))
    memo: dict[int, n.Node] = {}  # by id: b's values are DAGs, each node is rebuilt once

    def inline(x: n.Node) -> n.Node:
        hit = memo.get(id(x))
        if hit is None:
            if isinstance(x, n.Access) and x.field in produced:
                hit = produced[x.field]
            else:
                hit = map_children(x, inline)
            memo[id(x)] = hit
        return hit

    values = (*a.values, *(n.as_expr(inline(v)) for v in b.values))
    return replace(a, name=f"{a.name}+{b.name}", outs=a.outs + b.outs, values=values)


@deep
def fuse_kernels(prog: n.StencilProgram) -> n.StencilProgram:
    """``prog`` with every legal run of consecutive kernels fused into one."""
    kernels: list[n.Kernel] = []
    for k in prog.kernels:
        if kernels and can_fuse(kernels[-1], k):
            kernels[-1] = fuse_pair(kernels[-1], k)
        else:
            kernels.append(k)
    out = replace(prog, kernels=tuple(kernels))
    check_stencil(out, "fuse_kernels")
    return out
