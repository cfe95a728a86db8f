"""``@record``: frozen, slotted dataclasses that are cheap to define.

``@dataclass(frozen=True, slots=True)`` compiles six small functions per class with ``exec``
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``), about
0.1 ms each on a slow host. The library defines some 125 such classes on the way to
``import stencilkit`` (the IR's nodes, the GTScript frontend's, the stages' records): 160 of the
530 ms of importing ``gt4py.cartesian.gtscript`` through the alias on the 2-core development VM
(2026-12-03). ``@record`` makes the same classes without compiling per class:

* ``__init__``, ``__eq__`` and ``__hash__`` are on the compiler's hot path (IR nodes are built,
  compared and hashed all the time), so they stay the code a dataclass generates: compiled once
  per *number* of fields from a template with placeholder names, then copied for each class
  with its field names put in (``CodeType.replace``). Their speed is a dataclass's;
* the freezing (``__setattr__``/``__delattr__``), ``__repr__`` and the copy/pickle state are
  shared functions that read the class's field names.

The behaviour is a frozen, slotted dataclass's:

* the class is a dataclass: ``dataclasses.fields``, ``replace``, ``is_dataclass``, ``asdict``
  and ``__match_args__`` work as before (its ``__dataclass_params__`` says ``frozen=False``:
  the freezing is this module's, and a record may subclass a record);
* instances are immutable (``dataclasses.FrozenInstanceError`` on assignment or deletion),
  slotted, and copy and pickle; a plain subclass (not itself a record) may set attributes other
  than the fields, as a dataclass's may;
* ``==`` compares the fields with ``compare=True`` as tuples, between instances of the very same
  class (``NotImplemented`` otherwise); ``hash`` is the hash of that tuple;
* ``repr`` is dataclass's ``Name(a=1, b=2)`` (fields with ``repr=True``), unless ``repr=False``;
* a method the class body defines itself (``__init__``, ``__eq__``, ``__hash__``, ``__repr__``)
  is kept; ``__post_init__`` runs after ``__init__`` as in a dataclass.

Fields with ``kw_only``, ``default_factory`` or ``init=False`` get an ``__init__`` compiled for
the class (still one function, not six). Refused with a ``TypeError`` at definition:
``field(hash=...)``, and ``field(init=False)`` without a default.
"""

from __future__ import annotations

import builtins
import dataclasses
import types
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

_C = TypeVar("_C", bound=type)
_MISSING: Any = dataclasses.MISSING
_GLOBALS: dict[str, Any] = {"__builtins__": builtins, "__sk_set": object.__setattr__}
#: names a template uses itself: a field with one of these names gets its functions compiled
_RESERVED = frozenset({"self", "other", "hash", "NotImplemented", "__sk_set", "__post_init__"})


def _frozen(self: Any, name: str) -> bool:
    """A dataclass's rule: a record's own instances are frozen; a plain subclass (not a record)
    may set and delete attributes other than the fields (in its __dict__, if it has one)."""
    cls = type(self)
    return "__sk_names__" in cls.__dict__ or name in cls.__sk_names__


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    if _frozen(self, name):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self: Any, name: str) -> None:
    if _frozen(self, name):
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, name) for name in type(self).__sk_names__]


def _setstate(self: Any, state: list[Any]) -> None:
    for name, value in zip(type(self).__sk_names__, state, strict=True):
        object.__setattr__(self, name, value)


def _repr(self: Any) -> str:
    parts = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__sk_repr__)
    return f"{self.__class__.__qualname__}({parts})"


# ---------------------------------------------------------------- the compiled functions
def _source(kind: str, names: list[str], post: bool) -> str:
    """Source of ``__init__`` (every name a parameter, set with ``object.__setattr__``),
    ``__eq__`` or ``__hash__`` (over the tuple of the names), as a dataclass writes them."""
    if kind == "__init__":
        body = [f"__sk_set(self, {n!r}, {n})" for n in names]
        if post:
            body.append("self.__post_init__()")
        params = "".join(f", {n}" for n in names)
        return f"def __init__(self{params}):\n" + "".join(f"    {b}\n" for b in body or ["pass"])
    mine = "(" + "".join(f"self.{n}, " for n in names) + ")"
    if kind == "__hash__":
        return f"def __hash__(self):\n    return hash({mine})\n"
    theirs = "(" + "".join(f"other.{n}, " for n in names) + ")"
    return (
        "def __eq__(self, other):\n    if other.__class__ is self.__class__:\n"
        f"        return {mine} == {theirs}\n    return NotImplemented\n"
    )


def _compiled(src: str, name: str, where: str) -> types.CodeType:
    space: dict[str, Any] = {}
    exec(compile(src, where, "exec"), _GLOBALS, space)
    return space[name].__code__  # type: ignore[no-any-return]


_TEMPLATES: dict[tuple[str, int, bool], types.CodeType] = {}


def _function(cls: type, kind: str, names: list[str], post: bool = False) -> Any:
    """``kind`` (``__init__``/``__eq__``/``__hash__``) of ``cls`` over the fields ``names``."""
    qualname = f"{cls.__qualname__}.{kind}"
    if _RESERVED.isdisjoint(names):
        key = (kind, len(names), post)
        template = _TEMPLATES.get(key)
        if template is None:  # once per kind and number of fields, process-wide
            holders = [f"_sk_f{i}" for i in range(len(names))]
            template = _TEMPLATES[key] = _compiled(
                _source(kind, holders, post), kind, "<record template>"
            )
        put = {f"_sk_f{i}": n for i, n in enumerate(names)}
        code = template.replace(
            co_names=tuple(put.get(x, x) for x in template.co_names),
            co_varnames=tuple(put.get(x, x) for x in template.co_varnames),
            co_consts=tuple(put.get(x, x) if type(x) is str else x for x in template.co_consts),
            co_qualname=qualname,
        )
    else:
        code = _compiled(_source(kind, names, post), kind, f"<record {cls.__qualname__}>")
    fn = types.FunctionType(code, _GLOBALS, kind)
    fn.__qualname__ = qualname
    fn.__module__ = cls.__module__
    return fn


def _init_compiled(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Any:
    """The ``__init__`` of a class whose fields need more than positional parameters with
    plain defaults: ``kw_only``, ``default_factory``, ``init=False`` (one compile)."""
    space: dict[str, Any] = {"__sk_set": object.__setattr__, "__sk_missing": _MISSING}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for f in fields:
        factory = f.default_factory is not _MISSING
        if factory:
            space[f"__sk_f_{f.name}"] = f.default_factory
        elif f.default is not _MISSING:
            space[f"__sk_d_{f.name}"] = f.default
        if not f.init:
            if not factory and f.default is _MISSING:
                raise TypeError(
                    f"@record {cls.__qualname__}: field {f.name!r} has init=False and no default"
                )
            value = f"__sk_f_{f.name}()" if factory else f"__sk_d_{f.name}"
            body.append(f"__sk_set(self, {f.name!r}, {value})")
            continue
        default = (
            "=__sk_missing" if factory else f"=__sk_d_{f.name}" if f.default is not _MISSING else ""
        )
        (keyword if f.kw_only else positional).append(f"{f.name}{default}")
        if factory:
            body.append(f"if {f.name} is __sk_missing: {f.name} = __sk_f_{f.name}()")
        body.append(f"__sk_set(self, {f.name!r}, {f.name})")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    params = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    src = f"def __init__({params}):\n" + "".join(f"    {b}\n" for b in body or ["pass"])
    exec(compile(src, f"<record {cls.__qualname__}>", "exec"), space)
    init = space["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Any:
    plain = all(f.init and not f.kw_only and f.default_factory is _MISSING for f in fields)
    if not plain:
        return _init_compiled(cls, fields)
    defaults = [f.default for f in fields if f.default is not _MISSING]
    tail = fields[len(fields) - len(defaults) :]  # where the defaults must all be
    bad = next((f.name for f in tail if f.default is _MISSING), None)
    if bad is not None:
        raise TypeError(
            f"@record {cls.__qualname__}: field {bad!r} without a default follows one with a default"
        )
    fn = _function(cls, "__init__", [f.name for f in fields], post=hasattr(cls, "__post_init__"))
    fn.__defaults__ = tuple(defaults) or None
    return fn


# ---------------------------------------------------------------- the decorator
def _make(cls: _C, repr: bool, eq: bool, weakref: bool = False) -> _C:
    own = cls.__dict__
    keep = {name for name in ("__eq__", "__repr__", "__init__") if name in own}
    # a body that defines __eq__ alone gets __hash__ = None from Python: not a hash of its own
    if "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own):
        keep.add("__hash__")
    made: Any = dataclasses.dataclass(
        cls, init=False, repr=False, eq=False, frozen=False, slots=True, weakref_slot=weakref
    )
    fields = dataclasses.fields(made)
    if any(f.hash is not None for f in fields):
        raise TypeError(
            f"@record {cls.__qualname__}: field(hash=...) is not supported (compare= is)"
        )
    made.__sk_names__ = tuple(f.name for f in fields)
    made.__sk_repr__ = tuple(f.name for f in fields if f.repr)
    if "__init__" not in keep:
        made.__init__ = _init(made, fields)
    made.__setattr__ = _frozen_setattr
    made.__delattr__ = _frozen_delattr
    made.__getstate__ = _getstate
    made.__setstate__ = _setstate
    if eq:
        compared = [f.name for f in fields if f.compare]
        if "__eq__" not in keep:
            made.__eq__ = _function(made, "__eq__", compared)
        if "__hash__" not in keep:
            made.__hash__ = _function(made, "__hash__", compared)
    if repr and "__repr__" not in keep:
        made.__repr__ = _repr
    return made  # type: ignore[no-any-return]


@overload
def record(cls: _C, /) -> _C: ...


@overload
def record(*, repr: bool = True, eq: bool = True, weakref: bool = False) -> Callable[[_C], _C]: ...


@dataclass_transform(frozen_default=True, eq_default=True)
def record(cls: Any = None, /, *, repr: bool = True, eq: bool = True, weakref: bool = False) -> Any:
    """``@record`` / ``@record(repr=False, eq=False)``: the class as a frozen, slotted
    dataclass (see the module's docstring). ``weakref=True`` gives it a ``__weakref__`` slot
    (dataclass's ``weakref_slot``), for the objects that caches hold by identity
    (:mod:`stencilkit.core.identity`)."""
    if cls is None:
        return lambda c: _make(c, repr, eq, weakref)
    return _make(cls, repr, eq, weakref)
