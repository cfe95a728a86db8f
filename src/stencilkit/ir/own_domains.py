"""Tuple outputs written without ``domain=``, each element over its own field's domain: gt4py's
rule where the elements' extents differ (the program a call switches to, ``next/program.py``)."""

from __future__ import annotations

from . import nodes as ir
from .extents import FIELD_START, FIELD_STOP, field_bound
from .statements import read_names, with_outs
from .tuples import flatten_value


def shared_domain_groups(prog: ir.Program) -> list[tuple[str, ...]]:
    """For each statement writing several fields over one domain without ``domain=`` (the
    first output's whole domain), the fields it writes: if their extents differ when the program
    is called, :func:`own_domains` gives the program to run instead."""
    temps = {t.name for t in prog.temps}
    groups = []
    for s in prog.body:
        names = tuple(dict.fromkeys(o.name for o in s.outs if o.name not in temps))
        if not s.domain and len(names) > 1:
            groups.append(names)
    return groups


def own_domains(prog: ir.Program) -> ir.Program:
    """``prog`` with every element of a tuple output written without ``domain=`` computed over
    its own field's domain (gt4py's rule when the extents differ): one statement per element,
    elements read by another element and the columns of a scan through temporaries."""
    temps = list(prog.temps)
    temp_names = {t.name for t in temps}
    body: list[ir.Apply | ir.ScanApply] = []
    for n, s in enumerate(prog.body):
        names = {o.name for o in s.outs if o.name not in temp_names}
        if s.domain or len(names) < 2:
            body.append(s)
            continue
        prefix = f"__own{n}_"
        if (
            isinstance(s, ir.ScanApply)
            and len(names) == len(s.outs)
            and not names & read_names(s.step)
        ):
            # one scan per output over that output's domain, the other columns into temporaries
            for i, o in enumerate(s.outs):
                outs = tuple(
                    o if j == i else ir.Ref(f"{prefix}{i}_{j}", x.type)
                    for j, x in enumerate(s.outs)
                )
                temps += [ir.Param(r.name, r.type) for r in outs if r is not o]
                dom = tuple(
                    ir.DomainRange(
                        d, field_bound(o, d, FIELD_START, 0), field_bound(o, d, FIELD_STOP, 0)
                    )
                    for d in ir.field_dims(o.type)
                )
                body.append(
                    ir.ScanApply(
                        s.axis, s.forward, s.carry_name, s.init, s.step, outs, dom, s.label, s.where
                    )
                )
            continue
        if isinstance(s, ir.ScanApply):
            refs = tuple(ir.Ref(f"{prefix}{i}", o.type) for i, o in enumerate(s.outs))
            temps += [ir.Param(r.name, r.type) for r in refs]
            body.append(with_outs(s, refs))
            body += [ir.Apply(r, (o,), (), s.label, s.where) for r, o in zip(refs, s.outs)]
            continue
        values = flatten_value(s.expr)
        reads = [read_names(v) for v in values]
        copies: list[ir.Apply | ir.ScanApply] = []
        for i, (v, o) in enumerate(zip(values, s.outs)):
            if any(o.name in r for j, r in enumerate(reads) if j > i):
                t = ir.Ref(f"{prefix}{i}", o.type)
                temps.append(ir.Param(t.name, t.type))
                body.append(ir.Apply(v, (t,), (), s.label, s.where))
                copies.append(ir.Apply(t, (o,), (), s.label, s.where))
            else:
                body.append(ir.Apply(v, (o,), (), s.label, s.where))
        body += copies
    return ir.Program(prog.name, prog.params, tuple(body), tuple(temps))
