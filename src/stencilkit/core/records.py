"""``@record``: frozen, slotted dataclasses that are cheap to define.

``@dataclass(frozen=True, slots=True)`` compiles six small functions per class with ``exec``
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``), about
0.1 ms each on a slow host. The library defines some 130 such classes on the way to
``import stencilkit`` (the IR's nodes, the GTScript frontend's, the stages' records): 160 of the
530 ms of importing ``gt4py.cartesian.gtscript`` through the alias on the 2-core development VM
(2026-12-03). ``@record`` makes the same classes with one compiled function, the ``__init__``
(construction is on the compiler's hot path); the others are shared functions that read the
class's field names (``operator.attrgetter``, C code), with the same behaviour:

* the class is a dataclass: ``dataclasses.fields``, ``replace``, ``is_dataclass``, ``asdict``
  and ``__match_args__`` work as before (its ``__dataclass_params__`` says ``frozen=False``:
  the freezing is this module's);
* instances are immutable (``dataclasses.FrozenInstanceError`` on assignment or deletion),
  slotted, and copy and pickle;
* ``==`` compares the fields with ``compare=True`` as tuples, between instances of the very same
  class (``NotImplemented`` otherwise); ``hash`` is the hash of that tuple;
* ``repr`` is dataclass's ``Name(a=1, b=2)`` (fields with ``repr=True``), unless ``repr=False``;
* a method the class body defines itself (``__eq__``, ``__hash__``, ``__repr__``) is kept;
  ``__post_init__`` runs after ``__init__`` as in a dataclass.

Not supported (a ``TypeError`` at definition): ``InitVar`` and ``ClassVar`` pseudo-fields are
left to dataclass and must not be used here, and ``field(init=False)`` without a default.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

_C = TypeVar("_C", bound=type)
_MISSING: Any = dataclasses.MISSING


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, name) for name in type(self).__sk_names__]


def _setstate(self: Any, state: list[Any]) -> None:
    for name, value in zip(type(self).__sk_names__, state, strict=True):
        object.__setattr__(self, name, value)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = self.__sk_key__
        return key(self) == key(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__sk_key__(self))


def _repr(self: Any) -> str:
    parts = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__sk_repr__)
    return f"{self.__class__.__qualname__}({parts})"


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of the attributes ``names`` of an instance (a tuple for one name too: tuples
    compare their items by identity first, as a dataclass's ``__eq__`` does)."""
    if not names:
        return lambda _self: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda self: (one(self),)
    return operator.attrgetter(*names)  # type: ignore[return-value]


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """The class's ``__init__``: each field set with ``object.__setattr__``, defaults and
    default factories as a dataclass has them, then ``__post_init__`` if the class has one."""
    space: dict[str, Any] = {"__sk_set": object.__setattr__, "__sk_missing": _MISSING}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    defaults: list[Any] = []
    kwdefaults: dict[str, Any] = {}
    for f in fields:
        if f._field_type is not dataclasses._FIELD:  # type: ignore[attr-defined]
            raise TypeError(f"@record {cls.__qualname__}: ClassVar/InitVar field {f.name!r}")
        has_factory = f.default_factory is not _MISSING
        if not f.init:
            if has_factory:
                space[f"__sk_f_{f.name}"] = f.default_factory
                body.append(f"__sk_set(self, {f.name!r}, __sk_f_{f.name}())")
            elif f.default is not _MISSING:
                space[f"__sk_d_{f.name}"] = f.default
                body.append(f"__sk_set(self, {f.name!r}, __sk_d_{f.name})")
            else:
                raise TypeError(
                    f"@record {cls.__qualname__}: field {f.name!r} has init=False and no default"
                )
            continue
        (keyword if f.kw_only else positional).append(f.name)
        if has_factory:
            space[f"__sk_f_{f.name}"] = f.default_factory
            default = _MISSING
            body.append(f"if {f.name} is __sk_missing: {f.name} = __sk_f_{f.name}()")
        else:
            default = f.default
        if f.kw_only:
            if default is not _MISSING or has_factory:
                kwdefaults[f.name] = default
        elif default is not _MISSING or has_factory:
            defaults.append(default)
        elif defaults:
            raise TypeError(
                f"@record {cls.__qualname__}: field {f.name!r} without a default follows one with a default"
            )
        body.append(f"__sk_set(self, {f.name!r}, {f.name})")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    params = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    src = f"def __init__({params}):\n" + "".join(f"    {line}\n" for line in body or ["pass"])
    exec(compile(src, f"<record {cls.__qualname__}>", "exec"), space)
    init = space["__init__"]
    init.__defaults__ = tuple(defaults) or None
    init.__kwdefaults__ = kwdefaults or None
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init  # type: ignore[no-any-return]


def _make(cls: _C, repr: bool, eq: bool) -> _C:
    own = cls.__dict__
    keep = {name for name in ("__eq__", "__repr__", "__init__") if name in own}
    # a body that defines __eq__ alone gets __hash__ = None from Python: not a hash of its own
    if "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own):
        keep.add("__hash__")
    made: Any = dataclasses.dataclass(
        cls, init=False, repr=False, eq=False, frozen=False, slots=True
    )
    fields = dataclasses.fields(made)
    if any(f.hash is not None for f in fields):
        raise TypeError(
            f"@record {cls.__qualname__}: field(hash=...) is not supported (compare= is)"
        )
    made.__sk_names__ = tuple(f.name for f in fields)
    made.__sk_key__ = staticmethod(_key(tuple(f.name for f in fields if f.compare)))
    made.__sk_repr__ = tuple(f.name for f in fields if f.repr)
    if "__init__" not in keep:
        made.__init__ = _init(made, fields)
    made.__setattr__ = _frozen_setattr
    made.__delattr__ = _frozen_delattr
    made.__getstate__ = _getstate
    made.__setstate__ = _setstate
    if eq:
        if "__eq__" not in keep:
            made.__eq__ = _eq
        if "__hash__" not in keep:
            made.__hash__ = _hash
    if repr and "__repr__" not in keep:
        made.__repr__ = _repr
    return made  # type: ignore[no-any-return]


@overload
def record(cls: _C, /) -> _C: ...


@overload
def record(*, repr: bool = True, eq: bool = True) -> Callable[[_C], _C]: ...


@dataclass_transform(frozen_default=True, eq_default=True)
def record(cls: Any = None, /, *, repr: bool = True, eq: bool = True) -> Any:
    """``@record`` / ``@record(repr=False, eq=False)``: the class as a frozen, slotted
    dataclass (see the module's docstring)."""
    if cls is None:
        return lambda c: _make(c, repr, eq)
    return _make(cls, repr, eq)
