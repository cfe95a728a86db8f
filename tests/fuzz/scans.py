"""Random scan operators: plain or tuple carries, forward or backward, bounded bodies.

Each carry component is updated by one of four contracting or saturating forms, with a small
random expression ``E`` of the level arguments and (squashed) other carries:
``coef * c + E`` (|coef| < 1), ``c + E``, ``maximum(c, E)``, ``minimum(c, E)``.
"""

from __future__ import annotations

from .choices import Chooser
from .model import Bin, Lit, Ref, Scan, Un

NK_MAX = 10  # the largest K size programs use


ARG_BOUND = 4.0  # the call clamps field arguments to this magnitude (scalars are smaller)


def _has_carry(e: object) -> bool:
    return (isinstance(e, Un) and isinstance(e.arg, Ref)) or (
        isinstance(e, Bin) and (_has_carry(e.left) or _has_carry(e.right))
    )


def _term(
    ch: Chooser, args: tuple[str, ...], carries: tuple[str, ...], depth: int, carry_left: list[int]
) -> tuple[object, float]:
    """A small expression of the level arguments and at most one squashed carry, never
    multiplied: the update's gain from the carry stays <= 2 per level, so rounding differences
    between backends cannot grow chaotically over the column (``c + sin(c) * x * x`` did)."""
    if depth <= 0 or ch.chance(30):
        kind = ch.choice(("arg", "arg", "lit", "carry"))
        if kind == "carry" and carry_left[0] > 0:
            carry_left[0] -= 1
            return Un(ch.choice(("tanh", "sin")), Ref(ch.choice(carries))), 1.0
        if kind in ("arg", "carry"):
            return Ref(ch.choice(args)), ARG_BOUND
        v = ch.choice((0.5, 1.0, -0.25, 2.0))
        return Lit(v), abs(v)
    a, ba = _term(ch, args, carries, depth - 1, carry_left)
    b, bb = _term(ch, args, carries, depth - 1, carry_left)
    op = ch.choice(("+", "*", "-", "max", "min"))
    if isinstance(a, Lit) and isinstance(b, Lit):
        return (
            a,
            ba,
        )  # literal-only arithmetic would be float64 (literals are weak only beside a typed value)
    if op == "*" and (ba * bb > 16 or _has_carry(a) or _has_carry(b)):
        op = "+"
    bound = ba * bb if op == "*" else (max(ba, bb) if op in ("max", "min") else ba + bb)
    return Bin(op, a, b), bound


def draw_scan(ch: Chooser, name: str, dtype: str) -> tuple[Scan, float]:
    """A scan operator and a bound of its carries' magnitude."""
    ncarry = ch.choice((1, 2, 3))
    args = tuple(f"x{i}" for i in range(ch.integer(1, 3)))
    if ch.chance(30):
        args = (*args, "s0")  # fed a scalar at the call
    carries = ("carry",) if ncarry == 1 else tuple(f"c{i}" for i in range(ncarry))
    init = tuple(ch.choice((0.0, 1.0, -0.5, 2.0)) for _ in range(ncarry))
    body = []
    bound = 0.0
    for c, c0 in zip(carries, init):
        e, be = _term(ch, args, carries, 2, [1])
        form = ch.choice(("damped", "sum", "max", "min"))
        if form == "damped":
            coef = ch.choice((0.5, -0.5, 0.75, 0.25))
            body.append(Bin("+", Bin("*", Lit(coef), Ref(c)), e))
            bound = max(bound, abs(c0) + 4 * be)
        elif form == "sum":
            body.append(Bin("+", Ref(c), e))
            bound = max(bound, abs(c0) + NK_MAX * be)
        else:
            body.append(Bin(form, Ref(c), e))
            bound = max(bound, abs(c0), be)
    return Scan(name, ch.chance(50) is False, init, args, tuple(body)), bound
