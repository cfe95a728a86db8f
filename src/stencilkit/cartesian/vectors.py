"""Vector and matrix values of fields with data dimensions (gt4py 1.2's unrolled vector
expressions; CARTESIAN.md 2.2, P3): a field with data dimensions read without an element index
(``v``, ``m[1, 0, 0]``) is the nested tuple of its element reads; ``+ - * / ...`` work element
by element (a scalar is broadcast), ``m.T`` transposes a matrix, ``m @ v`` multiplies a matrix
(two data dimensions) by a vector (one) as gt4py does (``m[j][0] * v[0] + m[j][1] * v[1] + ...``,
in that order), and an assignment of such a value to a field with data dimensions writes each
element in turn. Everything here happens while parsing: the engine sees element fields only."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import nodes as cn


@dataclass(frozen=True)
class Vec:
    """A vector or matrix value: nested tuples of element expressions, one level per data
    dimension."""

    items: tuple[Any, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        out: list[int] = []
        x: Any = self.items
        while isinstance(x, tuple):
            out.append(len(x))
            x = x[0]
        return tuple(out)

    def element(self, index: tuple[int, ...]) -> cn.Expr:
        x: Any = self.items
        for i in index:
            x = x[i]
        assert isinstance(x, cn.Expr)
        return x

    def indices(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*(range(n) for n in self.shape)))


def _map(f: Callable[..., cn.Expr], *xs: Any) -> Any:
    if isinstance(xs[0], tuple):
        return tuple(_map(f, *parts) for parts in zip(*xs))
    return f(*xs)


def of_field(read: cn.FieldRead, shape: tuple[int, ...], component: Callable[..., str]) -> Vec:
    """The element reads of ``read`` (a field with data dimensions ``shape``), at its offset."""

    def build(prefix: tuple[int, ...]) -> Any:
        if len(prefix) == len(shape):
            return cn.FieldRead(component(read.name, prefix), read.offset, read.loc, read.k_expr)
        return tuple(build((*prefix, i)) for i in range(shape[len(prefix)]))

    return Vec(build(()))


def broadcast(e: cn.Expr, shape: tuple[int, ...]) -> Vec:
    items: Any = e
    for n in reversed(shape):
        items = tuple(items for _ in range(n))
    return Vec(items)


def unary(op: str, v: Vec) -> Vec:
    return Vec(_map(lambda x: cn.UnaryOp(op, x), v.items))


def elementwise(
    op: str, a: Vec | cn.Expr, b: Vec | cn.Expr, error: Callable[[str], Exception]
) -> Vec:
    if isinstance(a, Vec) and isinstance(b, Vec) and a.shape != b.shape:
        raise error(f"'{op}' of values with data dimensions {a.shape} and {b.shape}")
    shape = a.shape if isinstance(a, Vec) else b.shape  # type: ignore[union-attr]
    va = a if isinstance(a, Vec) else broadcast(a, shape)
    vb = b if isinstance(b, Vec) else broadcast(b, shape)
    return Vec(_map(lambda x, y: cn.BinOp(op, x, y), va.items, vb.items))


def matmul(a: Any, b: Any, error: Callable[[str], Exception]) -> Vec:
    if not (isinstance(a, Vec) and isinstance(b, Vec)):
        raise error("'@' multiplies two values with data dimensions (a matrix by a vector)")
    if len(a.shape) != 2 or len(b.shape) != 1 or a.shape[1] != b.shape[0]:
        raise error(
            f"'@' multiplies a matrix (n, m) by a vector (m,), as gt4py does: got {a.shape} @ {b.shape}"
        )
    rows = []
    for j in range(a.shape[0]):
        acc: cn.Expr = cn.BinOp("*", a.items[j][0], b.items[0])
        for i in range(1, a.shape[1]):
            acc = cn.BinOp("+", acc, cn.BinOp("*", a.items[j][i], b.items[i]))
        rows.append(acc)
    return Vec(tuple(rows))


def transpose(v: Vec, error: Callable[[str], Exception]) -> Vec:
    if len(v.shape) != 2:
        raise error(f".T transposes a matrix (two data dimensions), not a value of shape {v.shape}")
    return Vec(tuple(zip(*v.items)))


def is_matmul(node: ast.BinOp) -> bool:
    return isinstance(node.op, ast.MatMult)
