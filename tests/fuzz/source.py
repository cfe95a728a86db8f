"""The model printed as the Python source of a stencilkit module, and that module imported.

stencilkit parses decorated functions from their source (``inspect``), so a generated program
must live in a real file: ``load`` writes it to a temporary directory and imports it.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from .model import (
    Bin,
    Cmp,
    ConcatWhere,
    CondOp,
    IdxCond,
    Lit,
    Nb,
    Program,
    Reduce,
    Ref,
    Scan,
    Shift,
    Statement,
    TupleGet,
    Un,
    Where,
)

OPERATORS = {"+", "-", "*", "/", "//", "%", "&", "|", "^"}
CALLS = {"min": "gtx.minimum", "max": "gtx.maximum"}
UNARY = {
    "abs": "gtx.abs",
    "sin": "gtx.sin",
    "cos": "gtx.cos",
    "tanh": "gtx.tanh",
    "sqrt": "gtx.sqrt",
    "floor": "gtx.floor",
}
REDUCTIONS = {"sum": "gtx.neighbor_sum", "max": "gtx.max_over", "min": "gtx.min_over"}

HEADER = """\
import stencilkit as gtx
from stencilkit import Dims, Field, float32, float64, int32, int64

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
"""


def expr(e: object) -> str:
    match e:
        case Ref(name):
            return name
        case Shift(name, dim, off):
            return f"{name}({dim} {'+' if off > 0 else '-'} {abs(off)})"
        case Nb(name, offset, None):
            return f"{name}({offset})"
        case Nb(name, offset, index):
            return f"{name}({offset}[{index}])"
        case Lit(value):
            return f"({value!r})" if value < 0 else repr(value)
        case Bin(op, left, right) if op in CALLS:
            return f"{CALLS[op]}({expr(left)}, {expr(right)})"
        case Bin(op, left, right):
            return f"({expr(left)} {op} {expr(right)})"
        case Un("neg", arg):
            return f"(-{expr(arg)})"
        case Un(fn, arg):
            return f"{UNARY[fn]}({expr(arg)})"
        case Cmp(op, left, right):
            return f"({expr(left)} {op} {expr(right)})"
        case Where(cond, a, b):
            return f"gtx.where({expr(cond)}, {expr(a)}, {expr(b)})"
        case IdxCond(dim, op, value):
            return f"({dim} {op} {value})"
        case CondOp("~", (arg,)):
            return f"~{expr(arg)}"
        case CondOp(op, (a, b)):
            return f"({expr(a)} {op} {expr(b)})"
        case ConcatWhere(cond, a, b):
            return f"gtx.concat_where({expr(cond)}, {expr(a)}, {expr(b)})"
        case Reduce(fn, arg, offset):
            return f"{REDUCTIONS[fn]}({expr(arg)}, axis={offset}Dim)"
        case TupleGet(name, index):
            return f"{name}[{index}]"
    raise TypeError(f"not an expression: {e!r}")


def _ftype(dims: tuple[str, ...], dtype: str) -> str:
    return f"Field[Dims[{', '.join(dims)}], {dtype}]"


def _scan(s: Scan, dtype: str) -> list[str]:
    n = len(s.init)
    # gt4py checks init against the carry's type: a Python float is float64, int is int32
    typed = [repr(v) if dtype in ("float64", "int32") else f"{dtype}({v!r})" for v in s.init]
    init = typed[0] if n == 1 else "(" + ", ".join(typed) + ")"
    carry = dtype if n == 1 else f"tuple[{', '.join([dtype] * n)}]"
    args = "".join(f", {a}: {dtype}" for a in s.args)
    lines = [
        f"@gtx.scan_operator(axis=K, forward={s.forward}, init={init})",
        f"def {s.name}(carry: {carry}{args}) -> {carry}:",
    ]
    if n > 1:
        lines.append(f"    {', '.join(f'c{i}' for i in range(n))} = carry")
    body = expr(s.body[0]) if n == 1 else "(" + ", ".join(expr(b) for b in s.body) + ")"
    return [*lines, f"    return {body}", "", ""]


def _operator(p: Program, st: Statement) -> list[str]:
    def ptype(arg: str) -> str:
        return p.dtype if p.is_scalar(arg) else _ftype(p.field(arg).dims, p.dtype)

    rtype = _ftype(_out_dims(p, st), p.dtype)
    if len(st.results) > 1:
        rtype = f"tuple[{', '.join([rtype] * len(st.results))}]"
    params = ", ".join(f"{n}: {ptype(a)}" for n, a in zip(st.params, st.args))
    lines = ["@gtx.field_operator", f"def {st.op}({params}) -> {rtype}:"]
    for loc in st.locals:
        if loc.scan is not None:
            lines.append(
                f"    {', '.join(loc.names)} = {loc.scan}({', '.join(expr(e) for e in loc.exprs)})"
            )
        elif loc.is_tuple:
            lines.append(f"    {loc.names[0]} = ({', '.join(expr(e) for e in loc.exprs)})")
        else:
            lines.append(f"    {loc.names[0]} = {expr(loc.exprs[0])}")
    lines.append(f"    return {', '.join(expr(r) for r in st.results)}")
    return [*lines, "", ""]


def _out_dims(p: Program, st: Statement) -> tuple[str, ...]:
    return p.field(st.outs[0]).dims


def _call(p: Program, st: Statement) -> str:
    out = st.outs[0] if len(st.outs) == 1 else "(" + ", ".join(st.outs) + ")"
    text = f"        {st.op}({', '.join(st.args)}, out={out}"
    sizes = dict(p.sizes)

    def upper(d: str, hi: int) -> str:
        if d not in st.from_sizes:
            return str(hi)
        return f"n_{d}" if hi == sizes[d] else f"n_{d} - {sizes[d] - hi}"

    if st.domain is not None:
        text += (
            ", domain={"
            + ", ".join(f"{d}: ({lo}, {upper(d, hi)})" for d, lo, hi in st.domain)
            + "}"
        )
    return text + ")"


def render(p: Program) -> str:
    """The whole module: dimensions, scans, field operators and ``build(backend) -> program``."""
    lines = [HEADER, ""]
    for s in p.scans:
        lines += _scan(s, p.dtype)
    for st in p.statements:
        lines += _operator(p, st)

    def ptype(name: str) -> str:
        if p.is_scalar(name):
            return next(s.dtype or p.dtype for s in p.scalars if s.name == name)
        return _ftype(p.field(name).dims, p.dtype)

    lines += [
        "def build(backend):",
        "    @gtx.program(backend=backend)",
        f"    def prog({', '.join(f'{n}: {ptype(n)}' for n in p.order)}):",
    ]
    lines += [_call(p, st) for st in p.statements]
    lines += ["", "    return prog", ""]
    return "\n".join(lines)


_counter = itertools.count()
_tmp = Path(tempfile.mkdtemp(prefix="stencilkit-fuzz-"))


def load(source: str) -> ModuleType:
    """Import ``source`` as a fresh module from a real file (stencilkit reads the source back)."""
    name = f"fuzz_program_{next(_counter)}"
    path = _tmp / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def forget(module: ModuleType) -> None:
    sys.modules.pop(module.__name__, None)
