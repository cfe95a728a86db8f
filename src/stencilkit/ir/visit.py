"""Generic traversal of IR trees: rebuild a node from its transformed children."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from .nodes import Node, Ref

N = TypeVar("N", bound=Node)


def _map_value(value: Any, fn: Callable[[Node], Node]) -> Any:
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(_map_value(v, fn) for v in value)
    return value


def map_children(node: N, fn: Callable[[Node], Node]) -> N:
    """``node`` with ``fn`` applied to each direct child node (in fields and tuples)."""
    changes = {}
    for f in dataclasses.fields(node):  # type: ignore[arg-type]
        old = getattr(node, f.name)
        new = _map_value(old, fn)
        if new is not old and new != old:
            changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node  # type: ignore[type-var]


def children(node: Node) -> Iterator[Node]:
    for f in dataclasses.fields(node):  # type: ignore[arg-type]
        value = getattr(node, f.name)
        stack = [value]
        while stack:
            v = stack.pop()
            if isinstance(v, Node):
                yield v
            elif isinstance(v, tuple):
                stack.extend(reversed(v))


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree, parents before children."""
    yield node
    for c in children(node):
        yield from walk(c)


def substitute(node: N, mapping: dict[str, Node]) -> N:
    """Replace ``Ref(name)`` by ``mapping[name]`` everywhere."""

    def rec(x: Node) -> Node:
        if isinstance(x, Ref) and x.name in mapping:
            return mapping[x.name]
        return map_children(x, rec)

    return rec(node)  # type: ignore[return-value]
