"""Generic traversal of IR DAGs: rebuild a node from its transformed children.

Expressions are DAGs: a value named once in the source (``y = f(x)``, an operator's parameter used
twice) is one node object however often it is used. Every traversal here therefore works by
identity: ``walk`` yields each distinct node once, ``substitute`` rebuilds each node once, and
changes are detected with ``is``, never with ``==`` (structural equality and hashing of a deep
DAG visit it as a tree, which is exponential in its depth).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

from .nodes import Node, Ref

N = TypeVar("N", bound=Node)
P = ParamSpec("P")
R = TypeVar("R")


def _map_value(value: Any, fn: Callable[[Node], Node]) -> Any:
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, tuple):
        new = tuple(_map_value(v, fn) for v in value)
        return value if all(a is b for a, b in zip(new, value)) else new
    return value


_FIELDS: dict[type, tuple[str, ...]] = {}
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
#: Field annotations that never hold a node: skipped when looking for children.
_LEAF_ANNOTATIONS = frozenset(
    {
        "str",
        "int",
        "bool",
        "float",
        "bool | int | float",
        "int | None",
        "str | None",
        "Dimension",
        "TypeSpec",
        "ScalarType",
        "TupleType",
        "FieldType",
        "tuple[Dimension, ...]",
        "tuple[str, ...]",
    }
)


def _fields(cls: type) -> tuple[str, ...]:
    """The field names of a node class (``dataclasses.fields`` is slow to ask every time)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _child_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node class that can hold nodes."""
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = _CHILD_FIELDS[cls] = tuple(
            f.name for f in dataclasses.fields(cls) if str(f.type) not in _LEAF_ANNOTATIONS
        )
    return names


def map_children(node: N, fn: Callable[[Node], Node]) -> N:
    """``node`` with ``fn`` applied to each direct child node (in fields and tuples); ``node``
    itself when every child comes back as the same object."""
    changes = {}
    for name in _fields(type(node)):
        old = getattr(node, name)
        new = _map_value(old, fn)
        if new is not old:
            changes[name] = new
    return dataclasses.replace(node, **changes) if changes else node  # type: ignore[type-var]  # every Node class is a dataclass; the bound of N cannot say so


def children(node: Node) -> list[Node]:
    """The direct child nodes of ``node``, in field order (through nested tuples)."""
    out: list[Node] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, Node):
            out.append(value)
        elif isinstance(value, tuple):
            _flatten_into(value, out)
    return out


def _flatten_into(values: tuple[Any, ...], out: list[Node]) -> None:
    for v in values:
        if isinstance(v, Node):
            out.append(v)
        elif isinstance(v, tuple):
            _flatten_into(v, out)


def walk(node: Node) -> Iterator[Node]:
    """Every distinct node of the DAG once, parents before children (depth first)."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        yield x
        stack.extend(reversed(children(x)))


def postorder(*roots: Node) -> list[Node]:
    """Every distinct node reachable from ``roots`` once, each after all of its children."""
    seen: set[int] = set()
    order: list[Node] = []
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack: list[tuple[Node, Iterator[Node]]] = [(root, iter(children(root)))]
        while stack:
            x, it = stack[-1]
            for c in it:
                if id(c) not in seen:
                    seen.add(id(c))
                    stack.append((c, iter(children(c))))
                    break
            else:
                stack.pop()
                order.append(x)
    return order


def use_counts(*roots: Node) -> dict[int, int]:
    """How many parents use each node (by ``id``), counting a child used twice by one parent
    twice; a root counts one use."""
    counts: dict[int, int] = {}
    for x in postorder(*roots):
        for c in children(x):
            counts[id(c)] = counts.get(id(c), 0) + 1
    for r in roots:
        counts[id(r)] = counts.get(id(r), 0) + 1
    return counts


def substitute(node: N, mapping: dict[str, Node]) -> N:
    """Replace ``Ref(name)`` by ``mapping[name]`` everywhere; shared nodes stay shared."""
    memo: dict[int, Node] = {}

    def rec(x: Node) -> Node:
        hit = memo.get(id(x))
        if hit is None:
            hit = (
                mapping[x.name]
                if isinstance(x, Ref) and x.name in mapping
                else map_children(x, rec)
            )
            memo[id(x)] = hit
        return hit

    return deep(rec)(node)  # type: ignore[return-value]  # a root Ref is replaced by its mapping, of another class; callers take the result as an Expr


# ---------------------------------------------------------------- deep recursion
#: Stack and recursion limit of the thread a pass moves to when its IR is too deep for the
#: caller's stack (a long chain of dependent statements is as deep as it is long).
DEEP_STACK_BYTES = 512 * 1024 * 1024
DEEP_RECURSION_LIMIT = 200_000


def deep(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn``, rerun in a thread with a large stack if it runs out of recursion depth.

    Passes recurse along the IR, so their depth is the IR's. A pure pass is simply run again
    there; its result (or its error) is returned as if the first run had finished."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except RecursionError:
            if getattr(_DEEP, "active", False):
                raise
        return _in_deep_thread(fn, *args, **kwargs)

    return wrapper


_DEEP = threading.local()
_DEEP_LOCK = threading.Lock()


def _in_deep_thread(fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    value: list[R] = []
    error: list[BaseException] = []
    enter = _cupy_context()

    def target() -> None:
        _DEEP.active = True
        try:
            with enter():
                value.append(fn(*args, **kwargs))
        except BaseException as err:  # handed to the caller below
            error.append(err)

    with _DEEP_LOCK:  # the stack size and the recursion limit are process-wide settings
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
        try:
            old_stack = threading.stack_size(DEEP_STACK_BYTES)
            try:
                t = threading.Thread(target=target, name="stencilkit-deep-pass")
                t.start()
            finally:
                threading.stack_size(old_stack)
            t.join()
        finally:
            sys.setrecursionlimit(old_limit)
    if error:
        raise error[0]
    return value[0]


def _cupy_context() -> Callable[[], Any]:
    """A context manager factory that makes the caller's CuPy device and stream current in
    another thread (CuPy keeps both per thread); a no-op where CuPy is not in use."""
    cp = sys.modules.get("cupy")
    if cp is None:
        return contextlib.nullcontext
    try:
        device, stream = cp.cuda.Device(), cp.cuda.get_current_stream()
    except Exception:  # no usable GPU: nothing to carry over
        return contextlib.nullcontext

    @contextlib.contextmanager
    def enter() -> Iterator[None]:
        with device, stream:
            yield

    return enter
