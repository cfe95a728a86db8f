"""A small builder of program IR, so that pass, verifier and engine tests need no frontend:
IR in, IR out (as xDSL tests its passes).

>>> b = ProgramBuilder("smooth")
>>> a, out = b.field("a", I), b.field("out", I)
>>> n = b.scalar("n", "int32")
>>> b.apply(a.shift(I, 1) + a * 0.5, out, {I: (1, n)})
>>> print(b.build())        # doctest: +SKIP
program smooth(a: Field[[I], float64], out: Field[[I], float64], n: int32) { ... }

Expressions are wrapped in :class:`E`, which knows ``+ - * /``, comparisons, ``shift`` and
``call``; Python numbers become weak literals, as in the gt4py.next frontend.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stencilkit.core.dims import Dimension
from stencilkit.core.types import FieldType, ScalarType, TupleType, TypeSpec
from stencilkit.ir import nodes as ir


@dataclass(frozen=True)
class E:
    """An IR expression with operators."""

    node: ir.Expr

    @property
    def type(self) -> TypeSpec:
        return self.node.type  # type: ignore[no-any-return]

    def _bin(self, op: str, other: object, swap: bool = False) -> E:
        o = lit(other, self.type) if not isinstance(other, E) else other
        left, right = (o, self) if swap else (self, o)
        t = left.type if isinstance(left.type, FieldType) else right.type
        if op in ("<", "<=", ">", ">=", "==", "!="):
            t = FieldType(t.dims, "bool") if isinstance(t, FieldType) else ScalarType("bool")
        return E(ir.BinOp(op, left.node, right.node, t))

    def __add__(self, o: object) -> E:
        return self._bin("+", o)

    def __radd__(self, o: object) -> E:
        return self._bin("+", o, True)

    def __sub__(self, o: object) -> E:
        return self._bin("-", o)

    def __rsub__(self, o: object) -> E:
        return self._bin("-", o, True)

    def __mul__(self, o: object) -> E:
        return self._bin("*", o)

    def __rmul__(self, o: object) -> E:
        return self._bin("*", o, True)

    def __truediv__(self, o: object) -> E:
        return self._bin("/", o)

    def __lt__(self, o: object) -> E:
        return self._bin("<", o)

    def __gt__(self, o: object) -> E:
        return self._bin(">", o)

    def shift(self, dim: Dimension, amount: int) -> E:
        """``a(I + amount)``: read at ``amount`` points along ``dim``."""
        return E(ir.Shift(self.node, ir.CartesianShift(dim, amount), self.type))

    def call(self, fn: str, *args: E) -> E:
        """A builtin applied element-wise (``sqrt``, ``abs``, ``where``...), typed as ``self``."""
        return E(ir.Call(fn, (self.node, *(a.node for a in args)), self.type))


def lit(value: object, like: TypeSpec | None = None) -> E:
    """A weak literal (a Python number), of the dtype of ``like`` where it is a float."""
    if isinstance(value, bool):
        return E(ir.Literal(value, ScalarType("bool"), weak=True))
    if isinstance(value, int):
        return E(ir.Literal(value, ScalarType("int32"), weak=True))
    dtype = getattr(like, "dtype", "float64")
    dtype = dtype if dtype.startswith("float") else "float64"
    return E(ir.Literal(float(value), ScalarType(dtype), weak=True))  # type: ignore[arg-type]


class ProgramBuilder:
    """Parameters, temporaries and statements of one ``ir.Program``, in the order added."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.params: list[ir.Param] = []
        self.temps: list[ir.Param] = []
        self.body: list[ir.Apply | ir.ScanApply] = []

    def _param(self, name: str, t: TypeSpec, temp: bool = False) -> E:
        (self.temps if temp else self.params).append(ir.Param(name, t))
        return E(ir.Ref(name, t))

    def field(self, name: str, *dims: Dimension, dtype: str = "float64", temp: bool = False) -> E:
        """A field parameter (``temp=True``: a temporary the runner allocates)."""
        return self._param(name, FieldType(tuple(dims), dtype), temp)

    def scalar(self, name: str, dtype: str = "float64") -> E:
        return self._param(name, ScalarType(dtype))

    def tuple(self, name: str, *types: TypeSpec) -> E:
        """A tuple parameter (flattened to ``name__0``, ``name__1``... by the engine)."""
        return self._param(name, TupleType(types))

    def apply(
        self,
        value: E,
        out: E | tuple[E, ...],
        domain: Mapping[Dimension, tuple[int | E, int | E]] | None = None,
        label: str = "",
    ) -> None:
        """``out <- value`` over ``domain`` (None: the whole first output)."""
        outs = out if isinstance(out, tuple) else (out,)
        refs = tuple(o.node for o in outs)
        assert all(isinstance(r, ir.Ref) for r in refs), "outputs are parameters"
        self.body.append(
            ir.Apply(value.node, refs, _domain(domain), label or f"s{len(self.body)}")  # type: ignore[arg-type]
        )

    def build(self) -> ir.Program:
        return ir.Program(self.name, tuple(self.params), tuple(self.body), tuple(self.temps))


def _domain(
    domain: Mapping[Dimension, tuple[int | E, int | E]] | None,
) -> tuple[ir.DomainRange, ...]:
    def bound(v: int | E) -> ir.Expr:
        return v.node if isinstance(v, E) else ir.Literal(v, ScalarType("int32"))

    return tuple(ir.DomainRange(d, bound(lo), bound(hi)) for d, (lo, hi) in (domain or {}).items())
