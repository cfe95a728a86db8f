"""Writes at a K offset in FORWARD/BACKWARD computations (``f[0, 0, 1] = ...``, CARTESIAN.md
2.6), rewritten before lowering into what the engine's scans do: store every written field at
the level being visited.

gt4py writes ``f`` at level ``k + 1`` at once while visiting ``k`` (FORWARD; ``k - 1`` in
BACKWARD): later statements of level ``k`` that read ``f[0, 0, 1]`` see the new value, and so
does level ``k + 1`` when the loop gets there. Here the value goes to a temporary ``f__kw`` at
level ``k`` instead (the "pending" value, which starts each level as the memory of
``f[0, 0, 1]``, so a masked write keeps the old value), and:

* each level first takes ``f = f__kw[0, 0, -1]`` (what the level before wrote ahead);
* a one-level PARALLEL computation before the loop puts ``f`` of the first visited level into
  ``f__kw`` one level behind it, so the first level keeps its old value;
* a one-level PARALLEL computation after the loop writes the pending value of the last visited
  level into the level beyond the interval (which may lie outside the compute domain, as in
  gt4py).

Only writes one level ahead in the loop's direction are supported; the others are refused with
the line.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..core.errors import SourceLocation
from . import nodes as cn
from .definitions import GTScriptDefinitionError, GTScriptNotSupportedError


def kw_name(name: str) -> str:
    """The temporary holding ``name``'s pending value (written one level ahead)."""
    return f"{name}__kw"


def split_k_writes(d: cn.Definition) -> cn.Definition:
    """``d`` with its K-offset writes rewritten (module docstring); ``d`` itself when none."""
    comps: list[cn.Computation] = []
    temps = list(d.temporaries)
    known = {t[0] for t in temps}
    for comp in d.computations:
        done: list[cn.Block] = []
        for block in comp.blocks:
            targets = _k_targets(block.body)
            if not targets:
                done.append(block)
                continue
            step = 1 if comp.order == "FORWARD" else -1
            for name, (off, loc) in targets.items():
                if off != step:
                    raise GTScriptNotSupportedError(
                        f"the write at a K offset {name}[0, 0, {off}] = ... in a {comp.order}"
                        f" computation (stencilkit supports writes one level ahead in the loop's"
                        f" direction: {name}[0, 0, {step}] = ...)",
                        loc,
                    )
                if (
                    block.interval.start.runtime is not None
                    or block.interval.end.runtime is not None
                ):
                    raise GTScriptNotSupportedError(
                        f"the write at a K offset {name}[0, 0, {off}] = ... in an interval with"
                        " run-time bounds",
                        loc,
                    )
                if kw_name(name) not in known:
                    temps.append((kw_name(name), None, loc))
                    known.add(kw_name(name))
            if done:
                comps.append(cn.Computation(comp.order, tuple(done), comp.loc))
                done = []
            comps.append(_one_level(block, targets, step, before=True))
            comps.append(cn.Computation(comp.order, (_rewritten(block, targets, step),), comp.loc))
            comps.append(_one_level(block, targets, step, before=False))
        if done:
            comps.append(cn.Computation(comp.order, tuple(done), comp.loc))
    if len(comps) == len(d.computations):
        return d
    return dataclasses.replace(d, computations=tuple(comps), temporaries=tuple(temps))


def _k_targets(body: tuple[cn.Stmt, ...]) -> dict[str, tuple[int, SourceLocation]]:
    out: dict[str, tuple[int, SourceLocation]] = {}
    for s in body:
        if isinstance(s, cn.Assign) and s.k_offset:
            prev = out.setdefault(s.target, (s.k_offset, s.loc))
            if prev[0] != s.k_offset:
                raise GTScriptNotSupportedError(
                    f"'{s.target}' is written at two K offsets ({prev[0]} and {s.k_offset}) in"
                    " one interval",
                    s.loc,
                )
        elif isinstance(s, cn.If):
            for name, v in {**_k_targets(s.body), **_k_targets(s.orelse)}.items():
                out.setdefault(name, v)
        elif isinstance(s, cn.While):
            for name, v in _k_targets(s.body).items():
                out.setdefault(name, v)
    return out


def _one_level(
    block: cn.Block, targets: dict[str, Any], step: int, *, before: bool
) -> cn.Computation:
    """The level just behind the loop's first level (``before``: ``f__kw = f[0, 0, step]``),
    or just beyond its last (``f = f__kw[0, 0, -step]``)."""
    s, e = block.interval.start, block.interval.end
    # FORWARD visits start .. end - 1; BACKWARD end - 1 .. start
    edge = s if (step == 1) == before else e
    shift = -1 if (step == 1) == before else 0  # the level below `start`, or `end` itself
    lo = cn.LevelBound(edge.from_top, edge.offset + shift)
    hi = cn.LevelBound(edge.from_top, edge.offset + shift + 1)
    body: list[cn.Stmt] = []
    for name in targets:
        if before:
            body.append(cn.Assign(kw_name(name), cn.FieldRead(name, (0, 0, step)), block.loc))
        else:
            body.append(cn.Assign(name, cn.FieldRead(kw_name(name), (0, 0, -step)), block.loc))
    one = cn.Block(cn.Interval(lo, hi), tuple(body), block.loc)
    return cn.Computation("PARALLEL", (one,), block.loc)


def _rewritten(block: cn.Block, targets: dict[str, Any], step: int) -> cn.Block:
    prefix: list[cn.Stmt] = []
    for name in targets:
        prefix.append(cn.Assign(kw_name(name), cn.FieldRead(name, (0, 0, step)), block.loc))
        prefix.append(cn.Assign(name, cn.FieldRead(kw_name(name), (0, 0, -step)), block.loc))
    rw = _Rewriter(set(targets), step)
    return cn.Block(block.interval, (*prefix, *(rw.stmt(s) for s in block.body)), block.loc)


class _Rewriter:
    """``f[0, 0, step] = v`` -> ``f__kw = v``; a read ``f[0, 0, step]`` -> ``f__kw``."""

    def __init__(self, names: set[str], step: int) -> None:
        self.names, self.step = names, step
        self.memo: dict[int, tuple[Any, Any]] = {}

    def stmt(self, s: cn.Stmt) -> cn.Stmt:
        if isinstance(s, cn.Assign):
            value = self.expr(s.value)
            if s.k_offset:
                return cn.Assign(kw_name(s.target), value, s.loc, s.dtype)
            return dataclasses.replace(s, value=value)
        if isinstance(s, cn.If):
            return cn.If(
                self.expr(s.cond),
                tuple(self.stmt(x) for x in s.body),
                tuple(self.stmt(x) for x in s.orelse),
                s.loc,
            )
        if isinstance(s, cn.While):
            return cn.While(self.expr(s.cond), tuple(self.stmt(x) for x in s.body), s.loc)
        return s

    def expr(self, e: Any) -> Any:
        hit = self.memo.get(id(e))
        if hit is not None:
            return hit[1]
        out = self._expr(e)
        self.memo[id(e)] = (e, out)  # e kept alive: its id is not reused during the rewrite
        return out

    def _expr(self, e: Any) -> Any:
        if isinstance(e, cn.FieldRead) and e.name in self.names:
            if e.k_expr is not None:
                raise GTScriptDefinitionError(
                    f"'{e.name}' is written at a K offset and read at a variable K offset (or"
                    " through .at) in the same interval",
                    e.loc,
                    hint="read a copy made in a computation before this one",
                )
            if e.offset == (0, 0, self.step):
                return cn.FieldRead(kw_name(e.name), (0, 0, 0), e.loc)
            return e
        if isinstance(e, cn.Expr) and dataclasses.is_dataclass(e):
            changes = {}
            for f in dataclasses.fields(e):
                v = getattr(e, f.name)
                if isinstance(v, cn.Expr):
                    nv = self.expr(v)
                elif isinstance(v, tuple) and v and all(isinstance(x, cn.Expr) for x in v):
                    nv = tuple(self.expr(x) for x in v)
                else:
                    continue
                if nv is not v:
                    changes[f.name] = nv
            return dataclasses.replace(e, **changes) if changes else e
        return e
