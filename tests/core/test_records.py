"""``@record`` (core/records.py): the same behaviour as ``@dataclass(frozen=True, slots=True)``,
checked side by side with a real frozen, slotted dataclass of the same fields."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from stencilkit.core.records import record


@record
class Point:
    x: int
    y: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PointDC:
    x: int
    y: tuple[int, ...] = ()


@record(repr=False)
class Tagged:
    value: float
    note: str = field(default="", compare=False)
    items: list[int] = field(default_factory=list)


@record
class Point3(Point):
    z: str = "k"


@record(eq=False)
class Identity:
    v: int


@record
class WithPost:
    a: int
    b: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "b", self.a * 2)


@record
class OwnEq:
    a: int

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OwnEq)

    def __hash__(self) -> int:
        return 7


@pytest.mark.parametrize("cls", [Point, PointDC])
def test_the_same_behaviour_as_a_frozen_slotted_dataclass(cls: type) -> None:
    a = cls(1, (2, 3))
    assert a == cls(1, (2, 3)) and hash(a) == hash(cls(1, (2, 3)))
    assert a != cls(2, (2, 3)) and cls(1) == cls(1, ())
    assert repr(a) == f"{cls.__qualname__}(x=1, y=(2, 3))"
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del a.x  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):  # the dataclass: TypeError (3.11's super())
        a.other = 1  # type: ignore[attr-defined]
    assert not hasattr(a, "__dict__")
    assert dataclasses.is_dataclass(a) and [f.name for f in dataclasses.fields(a)] == ["x", "y"]
    assert dataclasses.replace(a, x=9) == cls(9, (2, 3)) and dataclasses.asdict(a) == {
        "x": 1,
        "y": (2, 3),
    }
    assert cls.__match_args__ == ("x", "y")  # type: ignore[attr-defined]
    for clone in (copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert clone == a and type(clone) is cls
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        cls()
    with pytest.raises(TypeError):
        cls(1, (), 3)
    nan = float("nan")
    assert cls(nan) == cls(nan)  # the same object: tuples compare items by identity first
    assert cls(1) != PointDC(1) if cls is Point else True  # another class: never equal


def test_fields_options_defaults_factories_and_inheritance() -> None:
    t = Tagged(1.5, "a")
    assert t == Tagged(1.5, "b") and t != Tagged(2.5, "a")  # note: compare=False
    assert t.items == [] and t.items is not Tagged(1.5).items  # a fresh list each time
    assert "Tagged object" in repr(t)  # repr=False: object's
    p = Point3(1)
    assert (p.x, p.y, p.z) == (1, (), "k") and p == Point3(1, (), "k") and p != Point(1)
    assert Point3.__match_args__ == ("x", "y", "z")  # type: ignore[attr-defined]
    match p:
        case Point3(x, y, z):
            assert (x, y, z) == (1, (), "k")
    assert Identity(1) != Identity(1)  # eq=False: identity, as a dataclass's
    assert WithPost(3).b == 6
    assert OwnEq(1) == OwnEq(2) and hash(OwnEq(3)) == 7  # the class's own methods are kept


def test_unsupported_fields_are_refused_at_definition() -> None:
    with pytest.raises(TypeError, match="hash"):

        @record
        class HashField:
            a: int = field(default=0, hash=False)

    with pytest.raises(TypeError, match="init=False and no default"):

        @record
        class NoInit:
            a: int = field(init=False)


def test_fields_named_like_the_templates_own_names_and_keyword_only_fields() -> None:
    @record
    class Odd:
        other: int
        hash: int = 3

    assert Odd(1) == Odd(1, 3) and Odd(1) != Odd(2) and hash(Odd(1)) == hash((1, 3))
    assert Odd(other=5).other == 5

    @record
    class Kw:
        a: int
        b: list[int] = field(default_factory=list, kw_only=True)
        c: str = field(default="c", init=False)

    k = Kw(1, b=[2])
    assert (k.a, k.b, k.c) == (1, [2], "c") and Kw(1).b == [] and Kw(1).b is not Kw(1).b
    with pytest.raises(TypeError):
        Kw(1, [2])  # type: ignore[misc]  # b is keyword-only


def test_equal_records_hash_like_a_dataclass() -> None:
    """``hash`` is the hash of the fields' tuple, as a dataclass's."""
    assert hash(Point(1, (2,))) == hash(PointDC(1, (2,))) == hash((1, (2,)))


def test_a_plain_subclass_sets_its_own_attributes_but_not_the_fields() -> None:
    """A dataclass's rule, which ``@record`` follows: a subclass that is not itself a dataclass
    may set attributes other than the fields; the fields stay frozen. (Python 3.11's frozen,
    slotted dataclass raises TypeError there instead: its ``__setattr__`` calls ``super()`` with
    the class it had before the slots were added.)"""

    class Plain(Point):
        def __init__(self, x: int) -> None:
            super().__init__(x)
            self.note = "set"

    p = Plain(1)
    assert p.note == "set" and p.x == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 2
    del p.note
    assert not hasattr(p, "note")
