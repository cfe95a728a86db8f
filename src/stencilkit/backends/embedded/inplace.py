"""Which operations of a bound kernel can compute into memory the call already has.

The generated code of a kernel (``bound.py``) makes a new array for each operation, then copies
the value into the output's window (``put``). On small fields (8^3: 4 KiB) those allocations and
that last copy cost about as much as the arithmetic: a 24-term sum of 8^3 fields took 17 us as
``w[...] = a0 + a1 + ...``, 13 us computed into one array of its own. Once a binding's reads are
made, the shape and dtype of each operation are known, and :func:`choose` picks:

- *into an operand*: an operation whose operand is an array made by an earlier operation of the
  same call, of the same shape and dtype, used by nothing else, computes into it
  (``add(t, b, out=t)``): each call still makes its own first array, so two threads calling one
  binding never share one;
- *into the window*: the value of a kernel's only output, computed by such an operation in the
  output's dtype and shape (or broadcast to it), is computed into the output's window
  (``add(a, b, out=W[0])``), with no copy;
- *stored*: any other output whose value's shape and dtype are known and fit its window is
  stored with ``W[j][...] = v``, without ``put``'s checks and casts.

Only ``+ - * /`` and negation, of operands of one dtype (integers or floats; ``/`` floats only):
results exactly rounded in that dtype, so the values are those of ``a + b``, bit for bit. NumPy
gives a ufunc whose output overlaps an input the values it gives without the overlap, so a
window that overlaps a read (``out = out[1, 0, 0] + a``) gets what ``put`` would write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ir import nodes as ir

#: the operations computed with ``out=``: exactly rounded in their operands' dtype
UFUNCS: dict[str, np.ufunc] = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
}
#: dtype kinds each operation is computed into memory for
_KINDS = {"+": "iuf", "-": "iuf", "*": "iuf", "/": "f", "neg": "iuf"}

#: an operation's shape and dtype
Info = tuple[tuple[int, ...], np.dtype[Any]]
#: what :func:`choose` picked, by position in the kernel's node order: the operations computed
#: into an operand (position, which operand), the outputs computed into their window (position,
#: output), the outputs stored directly: hashable, it keys the generated code
Choice = tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...], tuple[int, ...]]


def ufunc_of(e: ir.Expr) -> np.ufunc | None:
    """The ufunc an operation computed into memory is called with."""
    if isinstance(e, ir.BinOp):
        return UFUNCS.get(e.op)
    if isinstance(e, ir.UnaryOp) and e.op == "-":
        return np.negative
    return None


def operands(e: ir.Expr) -> tuple[ir.Expr, ...]:
    """The operands of an operation :func:`ufunc_of` names, in its ufunc's order."""
    if isinstance(e, ir.BinOp):
        return (e.left, e.right)
    if isinstance(e, ir.UnaryOp):
        return (e.operand,)
    return ()


def _dtype(t: Any) -> np.dtype[Any] | None:
    d = getattr(t, "dtype", None)
    return np.dtype(d) if isinstance(d, str) else None


def infos(
    order: Sequence[ir.Expr], leaves: Sequence[ir.Expr], reads: Sequence[Any],
    carries: tuple[str, ...],
) -> dict[int, Info]:  # fmt: skip
    """The shape and dtype of each node (by ``id``) that can be told from the reads: the reads,
    literals, scalar parameters (checked into their dtype on each call) and the operations of
    :data:`UFUNCS` on operands of one dtype."""
    out: dict[int, Info] = {}
    for leaf, r in zip(leaves, reads):
        if isinstance(r, np.ndarray):
            out[id(leaf)] = (r.shape, r.dtype)
    for e in order:
        if id(e) in out:
            continue
        if isinstance(e, ir.Literal) or (isinstance(e, ir.Ref) and e.name not in carries):
            dt = _dtype(e.type)
            if dt is not None:
                out[id(e)] = ((), dt)
            continue
        if ufunc_of(e) is None:
            continue
        kids, kinds = operands(e), _KINDS[e.op if isinstance(e, ir.BinOp) else "neg"]
        known = [out.get(id(c)) for c in kids]
        if any(x is None for x in known):
            continue
        dts = {x[1] for x in known if x is not None}
        dt = dts.pop()
        if dts or dt.kind not in kinds or _dtype(e.type) != dt:
            continue
        try:
            shape = np.broadcast_shapes(*(x[0] for x in known if x is not None))
        except ValueError:
            continue
        out[id(e)] = (shape, dt)
    return out


def choose(
    order: Sequence[ir.Expr], counts: dict[int, int], roots: Sequence[ir.Expr],
    info: dict[int, Info], windows: Sequence[Any],
) -> Choice:  # fmt: skip
    """The operations of ``order`` computed into an operand or an output's window (see the
    module docstring); ``windows`` the outputs' windows, ``info`` from :func:`infos`."""
    into_operand: list[tuple[int, int]] = []
    into_window: list[tuple[int, int]] = []
    windowed: set[int] = set()
    fresh: set[int] = set()  # arrays this call made, not yet computed into
    root_of = {id(r): j for j, r in enumerate(roots)} if len(roots) == 1 else {}
    for pos, e in enumerate(order):
        x = info.get(id(e))
        if x is None or ufunc_of(e) is None:
            continue
        j = root_of.get(id(e))
        if j is not None and counts.get(id(e)) == 1 and _fits(x, windows[j]):
            into_window.append((pos, j))
            windowed.add(j)
            continue
        for side, c in enumerate(operands(e)):
            if id(c) in fresh and counts.get(id(c)) == 1 and info.get(id(c)) == x:
                fresh.discard(id(c))
                into_operand.append((pos, side))
                break
        if x[0]:  # an array (operations on scalars alone give NumPy scalars)
            fresh.add(id(e))
    stored = tuple(
        j
        for j, r in enumerate(roots)
        if j not in windowed and (x := info.get(id(r))) is not None and _fits(x, windows[j])
    )
    return tuple(into_operand), tuple(into_window), stored


def _fits(x: Info, w: Any) -> bool:
    """Whether a value of shape and dtype ``x`` is written into window ``w`` as ``put`` writes
    it: the same dtype (no cast), and as many axes or none (NumPy's broadcasting then is
    ``put``'s); not a window whose points share memory (a 2-D field seen as 3-D, K stride 0:
    there the last level written wins, as ``put`` writes it)."""
    shape, dtype = x
    if not isinstance(w, np.ndarray) or dtype != w.dtype or len(shape) not in (0, w.ndim):
        return False
    if any(st == 0 and n > 1 for st, n in zip(w.strides, w.shape)):
        return False
    try:
        return bool(np.broadcast_shapes(shape, w.shape) == w.shape)
    except ValueError:
        return False


def same_infos(reads: Sequence[Any], others: Sequence[Any]) -> bool:
    """Whether two lists of reads (or windows) have the same shapes and dtypes, one by one."""
    return len(reads) == len(others) and all(
        getattr(a, "shape", None) == getattr(b, "shape", None)
        and getattr(a, "dtype", type(a)) == getattr(b, "dtype", type(b))
        for a, b in zip(reads, others)
    )
