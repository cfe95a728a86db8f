"""The targets of a program statement: ``out=`` and ``domain=``, one (field, domain) per leaf.

``out=`` is a field, a slice of a field (``out[1:-1, :]``: bounds relative to the field's own
domain, known when the program is called) or a nested tuple of those; ``domain=`` is one domain
for every element or a tuple mirroring the nesting of ``out=``. An empty domain stands for the
whole domain of the element's own field.
"""

from __future__ import annotations

import ast

from ..core.dims import Dimension
from ..core.dtypes import is_integral
from ..core.errors import StencilTypeError, StencilValueError
from ..core.records import record
from ..core.types import FieldType, ScalarType, TupleType
from ..ir import nodes as ir
from ..ir.extents import FIELD_START, FIELD_STOP, field_bound
from ..ir.tuples import flat_name
from .expressions import ExprBuilder
from .shifts import int_literal
from .source import SourceFunction

Domain = tuple[ir.DomainRange, ...]

_INT = ScalarType("int64")


@record
class Target:
    """One element of ``out=``: the (flattened) field parameter and the domain its slice gives."""

    ref: ir.Ref
    domain: Domain = ()


Tree = Target | tuple["Tree", ...]


def leaves(tree: Tree) -> list[Target]:
    return [tree] if isinstance(tree, Target) else [x for t in tree for x in leaves(t)]


class ScalarOutputError(StencilTypeError):
    """``out=`` names a scalar parameter. The program is accepted when parsed (as gt4py accepts
    it) and this error is raised when the program is called or compiled: nothing ever runs."""


def _names(dims: tuple[Dimension, ...]) -> str:
    return "[" + ", ".join(d.value for d in dims) + "]"


class DomainOrderError(StencilValueError):
    """``domain=`` lists the output's dimensions in another order than the output field has
    them; raised, as gt4py raises it, when the program is called or compiled."""


def check_domain_order(
    src: SourceFunction, node: ast.AST, outs: list[Target], domains: list[Domain]
) -> None:
    """gt4py's ``ValueError`` where a domain dict orders the output's dimensions otherwise."""
    for t, dom in zip(outs, domains):
        out_dims = tuple(t.ref.type.dims) if isinstance(t.ref.type, FieldType) else ()
        dims = tuple(r.dim for r in dom)
        if dims and set(dims) == set(out_dims) and dims != out_dims:
            raise DomainOrderError(
                "Dimensions in out field and field domain are not equivalent: expected"
                f" '{_names(out_dims)}', got '{_names(dims)}'.",
                src.loc(node),
                hint=f"list the domain's dimensions in the output's order: {_names(out_dims)}",
            )


class TargetParser:
    """Reads ``out=`` and ``domain=`` of one statement."""

    def __init__(self, src: SourceFunction, builder: ExprBuilder) -> None:
        self.src = src
        self.builder = builder

    # ------------------------------------------------------------------ out=
    def outputs(self, node: ast.expr) -> Tree:
        if isinstance(node, ast.Tuple):
            return tuple(self.outputs(e) for e in node.elts)
        if isinstance(node, ast.Subscript) and _is_slicing(node.slice):
            return self.sliced(node)
        value = self.builder.build(node)
        tree = _tree_of(value)
        if tree is None:
            raise self.src.type_error(
                node, "out= must name program parameters (a field or a tuple of fields)"
            )
        for t in leaves(tree):
            if not isinstance(t.ref.type, FieldType):
                raise ScalarOutputError(
                    f"out= must be fields, '{t.ref.name}' is a {t.ref.type}",
                    self.src.loc(node),
                    "a program writes fields: pass a field (a 0-d field for one value) as out=",
                )
        return tree

    def sliced(self, node: ast.Subscript) -> Target:
        base = self.builder.build(node.value)
        name = flat_name(base)
        if name is None or not isinstance(base.type, FieldType):
            raise self.src.type_error(node, "only a field parameter can be sliced in out=")
        ref = ir.Ref(name, base.type)
        slices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        dims = base.type.dims
        shown = ast.unparse(node.value)
        if len(slices) != len(dims):
            raise self.src.type_error(
                node,
                f"Too many indices for field '{shown}': field is {len(dims)}-dimensional,"
                f" but {len(slices)} were indexed.",
            )
        ranges = []
        for d, s in zip(dims, slices):
            if not isinstance(s, ast.Slice):
                raise self.src.type_error(
                    s, f"out= can only be sliced ('{shown}[1:-1, :]'), not indexed"
                )
            if s.step is not None and self._int(s.step) != 1:
                raise self.src.type_error(s.step, "the slices of out= must have step 1")
            ranges.append(
                ir.DomainRange(
                    d,
                    self._end(ref, d, s.lower, FIELD_START),
                    self._end(ref, d, s.upper, FIELD_STOP),
                )
            )
        return Target(ref, tuple(ranges))

    def _end(self, ref: ir.Ref, dim: Dimension, node: ast.expr | None, default: str) -> ir.Expr:
        if node is None:
            return field_bound(ref, dim, default, 0)
        value = self._int(node)
        return field_bound(ref, dim, FIELD_START if value >= 0 else FIELD_STOP, value)

    def _int(self, node: ast.expr) -> int:
        v = int_literal(node)  # 1, -1, +1
        if v is None:
            raise self.src.type_error(
                node,
                "the slice bounds of out= must be integer literals",
                hint="use domain= for bounds computed from parameters",
            )
        return v

    # ------------------------------------------------------------------ domain=
    def domains(self, node: ast.expr, tree: Tree) -> list[Domain]:
        """One domain per leaf of ``tree``."""
        n = len(leaves(tree))
        if isinstance(node, ast.Tuple):
            if _mirrors(node, tree):
                return self._mirrored(node, tree)
            if len(node.elts) == n and all(isinstance(e, ast.Dict) for e in node.elts):
                return [self.domain(e) for e in node.elts]  # a flat tuple: one per element
            raise self.src.type_error(
                node,
                f"domain= must be one domain or a tuple mirroring out= ({n} fields)",
                hint="e.g. out=(a, (b, c)), domain=(da, (db, dc))",
            )
        return [self.domain(node)] * n

    def _mirrored(self, node: ast.expr, tree: Tree) -> list[Domain]:
        if isinstance(node, ast.Tuple) and isinstance(tree, tuple):
            return [d for e, t in zip(node.elts, tree) for d in self._mirrored(e, t)]
        return [self.domain(node)] * len(leaves(tree))

    def domain(self, node: ast.expr) -> Domain:
        if not isinstance(node, ast.Dict):
            raise self.src.type_error(node, "domain= must be a dict {Dim: (start, stop)}")
        ranges = []
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise self.src.type_error(node, "domain= cannot use ** unpacking")
            dim = self.builder.resolve(k)
            if not isinstance(dim, Dimension):
                raise self.src.type_error(
                    k, f"domain keys must be dimensions, '{ast.unparse(k)}' is not"
                )
            if not (isinstance(v, ast.Tuple) and len(v.elts) == 2):
                raise self.src.type_error(v, f"the range of {dim} must be a (start, stop) tuple")
            bounds = [self._bound(e) for e in v.elts]
            ranges.append(ir.DomainRange(dim, bounds[0], bounds[1]))
        return tuple(ranges)

    def _bound(self, node: ast.expr) -> ir.Expr:
        e = self.builder.build(node)
        if not (isinstance(e.type, ScalarType) and is_integral(e.type.dtype)):
            raise self.src.type_error(node, f"domain bounds must be integer scalars, got {e.type}")
        if isinstance(e, ir.Literal):
            return ir.Literal(int(e.value), _INT)
        return e


def _is_slicing(node: ast.expr) -> bool:
    return isinstance(node, ast.Slice) or (
        isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts)
    )


def _mirrors(node: ast.expr, tree: Tree) -> bool:
    """Whether the tuple nesting of ``node`` follows ``tree`` (a dict may stand for a subtree)."""
    if not isinstance(node, ast.Tuple):
        return True
    return (
        isinstance(tree, tuple)
        and len(node.elts) == len(tree)
        and all(_mirrors(e, t) for e, t in zip(node.elts, tree))
    )


def _tree_of(e: ir.Expr) -> Tree | None:
    """The (flattened) parameters that ``out=`` names, nested as written, or None."""
    if isinstance(e, ir.MakeTuple):
        subs = [_tree_of(x) for x in e.elems]
        trees = [s for s in subs if s is not None]
        return tuple(trees) if len(trees) == len(subs) else None
    name = flat_name(e)
    if name is None:
        return None
    if isinstance(e.type, TupleType):
        return _tree_of(
            ir.MakeTuple(
                tuple(ir.TupleGet(ir.Ref(name, e.type), i, t) for i, t in enumerate(e.type.types)),
                e.type,
            )
        )
    return Target(ir.Ref(name, e.type))
