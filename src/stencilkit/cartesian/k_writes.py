"""Writes at a K offset in FORWARD/BACKWARD computations (``f[0, 0, d] = ...``, CARTESIAN.md
2.6), rewritten before lowering into what the engine's scans do: store every written field at
the level being visited.

gt4py writes ``f`` at level ``k + d`` at once while visiting ``k``: later statements and levels
that read that level see the new value. Here the value goes to a temporary ``f__kw`` at level
``k`` instead (the "pending" value: it starts each level as the memory of ``f[0, 0, d]``, so a
masked write keeps the old value), and reads of ``f`` are sent to where the value lives. With
``r = d`` in FORWARD and ``-d`` in BACKWARD (``r > 0``: ahead of the loop, ``r < 0``: behind
it), a read ``f[0, 0, j]`` with ``q = j`` (``-j``):

* ``q == r`` reads ``f__kw`` (this level's pending value);
* ``q < r`` reads ``f__kw[0, 0, j - d]`` (the pending value of the level that wrote there,
  visited earlier) when ``r < 0``, or when ``0 < q`` (ahead: the levels at and behind the
  current one hold their final value in memory already);
* any other read is the memory of ``f``.

Writes ahead (``r > 0``) put each level's final value in memory when the loop reaches it
(``f = f__kw[0, 0, -d]`` first), and a PARALLEL computation after the loop writes the ``r``
levels beyond the interval (which may lie outside the compute domain, as in gt4py). Writes
behind (``r < 0``) are put in memory by a PARALLEL computation after the loop over the
written levels (the interval shifted by ``d``): a level's own writes come before every write
from a later level, so the pending value is the last. A PARALLEL computation before the loop
sets the pending values of the levels behind the first visited one that the loop reads.

A field written at two K offsets in one interval, a write in an interval with run-time or
per-column bounds, and a read at a horizontal or variable K offset of a field written at a K
offset in the same interval are refused with the line.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..core.errors import SourceLocation
from . import nodes as cn
from .definitions import GTScriptDefinitionError, GTScriptNotSupportedError


def kw_name(name: str) -> str:
    """The temporary holding ``name``'s pending value (written at a K offset)."""
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
                iv = block.interval
                if any(b.runtime is not None or b.column is not None for b in (iv.start, iv.end)):
                    raise GTScriptNotSupportedError(
                        f"the write at a K offset {name}[0, 0, {off}] = ... in an interval with"
                        " run-time or per-column bounds",
                        loc,
                    )
                if kw_name(name) not in known:
                    temps.append((kw_name(name), None, loc))
                    known.add(kw_name(name))
            offsets = {name: off for name, (off, _) in targets.items()}
            reads = _ReadCollector(set(offsets))
            for stmt in block.body:
                reads.stmt(stmt)
            if done:
                comps.append(cn.Computation(comp.order, tuple(done), comp.loc))
                done = []
            before = _before(block, offsets, reads.k, step)
            if before is not None:
                comps.append(before)
            comps.append(cn.Computation(comp.order, (_rewritten(block, offsets, step),), comp.loc))
            comps.extend(_after(block, offsets, step))
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
                prev = out.setdefault(name, v)
                if prev[0] != v[0]:
                    raise GTScriptNotSupportedError(
                        f"'{name}' is written at two K offsets ({prev[0]} and {v[0]}) in one"
                        " interval",
                        v[1],
                    )
        elif isinstance(s, cn.While):
            for name, v in _k_targets(s.body).items():
                out.setdefault(name, v)
    return out


def _pending_read(j: int, off: int, step: int) -> int | None:
    """Where a read ``f[0, 0, j]`` finds its value when ``f`` is written at ``off``: the
    K offset to read ``f__kw`` at, or None for the memory of ``f`` (module docstring)."""
    r, q = off * step, j * step
    if q == r:
        return 0
    if q < r and (r < 0 or q > 0):
        return j - off
    return None


def _levels(iv: cn.Interval, step: int, lo: int, hi: int, *, behind: bool) -> cn.Interval:
    """The levels ``lo .. hi - 1`` (counted in the loop's direction, 0 the first level
    outside the interval) behind its first visited level (``behind``) or beyond its last."""
    if (step == 1) == behind:  # below the interval's bottom
        edge, a, b = iv.start, -hi, -lo
    else:  # above its top
        edge, a, b = iv.end, lo, hi
    return cn.Interval(
        cn.LevelBound(edge.from_top, edge.offset + a), cn.LevelBound(edge.from_top, edge.offset + b)
    )


def _before(
    block: cn.Block, offsets: dict[str, int], reads: dict[str, set[int]], step: int
) -> cn.Computation | None:
    """A PARALLEL computation setting ``f__kw = f[0, 0, d]`` on the levels behind the loop's
    first that the loop reads ``f__kw`` at; None when it reads none."""
    blocks = []
    for name, off in offsets.items():
        r = off * step
        if r > 0:
            depth = r  # the prefix ``f = f__kw[0, 0, -d]``
        else:
            back = [-(k * step) for j in reads.get(name, ()) if (k := _pending_read(j, off, step))]
            depth = max(back, default=0)
        if depth:
            body = (cn.Assign(kw_name(name), cn.FieldRead(name, (0, 0, off)), block.loc),)
            iv = _levels(block.interval, step, 0, depth, behind=True)
            blocks.append(cn.Block(iv, body, block.loc))
    if not blocks:
        return None
    return cn.Computation("PARALLEL", tuple(blocks), block.loc)


def _after(block: cn.Block, offsets: dict[str, int], step: int) -> list[cn.Computation]:
    """PARALLEL computations writing the pending values into memory after the loop: the ``r``
    levels beyond it (writes ahead), or every written level (writes behind)."""
    out = []
    for name, off in offsets.items():
        r = off * step
        if r > 0:
            iv = _levels(block.interval, step, 0, r, behind=False)
        else:
            s, e = block.interval.start, block.interval.end
            iv = cn.Interval(
                cn.LevelBound(s.from_top, s.offset + off), cn.LevelBound(e.from_top, e.offset + off)
            )
        body = (cn.Assign(name, cn.FieldRead(kw_name(name), (0, 0, -off)), block.loc),)
        out.append(cn.Computation("PARALLEL", (cn.Block(iv, body, block.loc),), block.loc))
    return out


def _rewritten(block: cn.Block, offsets: dict[str, int], step: int) -> cn.Block:
    prefix: list[cn.Stmt] = []
    for name, off in offsets.items():
        if off * step > 0:  # this level's final value, written from ``r`` levels behind
            prefix.append(cn.Assign(name, cn.FieldRead(kw_name(name), (0, 0, -off)), block.loc))
        prefix.append(cn.Assign(kw_name(name), cn.FieldRead(name, (0, 0, off)), block.loc))
    rw = _Rewriter(offsets, step)
    return cn.Block(block.interval, (*prefix, *(rw.stmt(s) for s in block.body)), block.loc)


class _Walker:
    """Visits every expression of statements, rebuilding those ``_expr`` changes."""

    def __init__(self) -> None:
        self.memo: dict[int, tuple[Any, Any]] = {}

    def stmt(self, s: cn.Stmt) -> cn.Stmt:
        if isinstance(s, cn.Assign):
            return self.assign(s, self.expr(s.value))
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

    def assign(self, s: cn.Assign, value: Any) -> cn.Stmt:
        return dataclasses.replace(s, value=value) if value is not s.value else s

    def expr(self, e: Any) -> Any:
        hit = self.memo.get(id(e))
        if hit is not None:
            return hit[1]
        out = self._expr(e)
        self.memo[id(e)] = (e, out)  # e kept alive: its id is not reused during the walk
        return out

    def _expr(self, e: Any) -> Any:
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


class _ReadCollector(_Walker):
    """The K offsets at which the fields ``names`` are read (``k``); a read at a horizontal or
    variable K offset is refused."""

    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self.names = names
        self.k: dict[str, set[int]] = {}

    def _expr(self, e: Any) -> Any:
        if isinstance(e, cn.FieldRead) and e.name in self.names:
            if e.k_expr is not None:
                raise GTScriptDefinitionError(
                    f"'{e.name}' is written at a K offset and read at a variable K offset (or"
                    " through .at) in the same interval",
                    e.loc,
                    hint="read a copy made in a computation before this one",
                )
            if e.offset[:2] != (0, 0):
                raise GTScriptNotSupportedError(
                    f"'{e.name}' is written at a K offset and read at the horizontal offset"
                    f" {list(e.offset)} in the same interval",
                    e.loc,
                    hint="read a copy made in a computation before this one",
                )
            self.k.setdefault(e.name, set()).add(e.offset[2])
            return e
        return super()._expr(e)


class _Rewriter(_Walker):
    """``f[0, 0, d] = v`` -> ``f__kw = v``; each read of ``f`` -> where its value lives."""

    def __init__(self, offsets: dict[str, int], step: int) -> None:
        super().__init__()
        self.offsets, self.step = offsets, step

    def assign(self, s: cn.Assign, value: Any) -> cn.Stmt:
        if s.k_offset:
            return cn.Assign(kw_name(s.target), value, s.loc, s.dtype)
        return super().assign(s, value)

    def _expr(self, e: Any) -> Any:
        if isinstance(e, cn.FieldRead) and e.name in self.offsets:
            at = _pending_read(e.offset[2], self.offsets[e.name], self.step)
            if at is None:
                return e
            return cn.FieldRead(kw_name(e.name), (0, 0, at), e.loc)
        return super()._expr(e)
