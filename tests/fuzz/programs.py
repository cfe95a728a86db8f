"""Drawing a whole random program: its fields, layouts, scalars and statements.

Cartesian programs have fields over one set of I/J/K dimensions (inputs may carry a halo: a
domain starting below 0); mesh programs have Cell and Edge fields (with or without K), weights
over a local dimension, and the E2C (2 neighbours, no skip) and C2E (4, with skip values) tables.
"""

from __future__ import annotations

import dataclasses

from .choices import Chooser
from .model import FieldParam, Program, ScalarParam, Scan, Statement
from .reads import allowed_range, writable_in_place
from .statements import SENTINEL, StatementGen

CART_DIMS = (("I", "J"), ("I", "K"), ("I", "J", "K"), ("K",), ("I",), ("J", "K"))
WRITABLE = ("C", "F", "strided", "field")


class ProgramGen:
    def __init__(self, ch: Chooser, max_statements: int = 4) -> None:
        self.ch = ch
        self.max_statements = max_statements
        self.dtype = ch.choice(("float64", "float64", "float64", "float32", "int32"))
        self.kind = ch.choice(("cart", "cart", "mesh"))
        self.sizes: dict[str, int] = {}
        self.fields: list[FieldParam] = []
        self.scalars: list[ScalarParam] = []
        self.scans: list[Scan] = []
        self.bounds: dict[str, float] = {}
        self.peaks: dict[str, float] = {}
        self.skip_rows: tuple[int, ...] = ()
        self.size_params: set[str] = set()
        self.direct = False

    # ------------------------------------------------------------------ the program's shape
    def size(self, dim: str) -> int:
        return self.sizes[dim]

    def loc_dims(self, loc: str) -> tuple[str, ...]:
        if self.kind == "cart":
            return self.cart_dims
        return (loc, "K") if "K" in self.sizes else (loc,)

    def loc_of(self, f: FieldParam) -> str:
        return "cart" if self.kind == "cart" else f.dims[0]

    def reductions_at(self, loc: str) -> tuple[str, ...]:
        return {"Cell": ("C2E",), "Edge": ("E2C",)}.get(loc, ())

    def _layout(self, dims: tuple[str, ...], role: str) -> str:
        options = ["C", "F", "strided", "field"]
        if role != "out":
            options += ["reversed"]
            if self.kind == "cart":
                options += ["halo"]
        return self.ch.choice(options)

    def _field(self, name: str, dims: tuple[str, ...], role: str) -> None:
        layout = self._layout(dims, role) if len(dims) > 0 else "C"
        shape = tuple(
            self.sizes[d] if not d.endswith("Dim") else (2 if d == "E2CDim" else 4) for d in dims
        )
        origin = tuple(0 for _ in dims)
        if layout == "halo":
            lo = tuple(self.ch.integer(0, 2) for _ in dims)
            hi = tuple(self.ch.integer(0, 2) for _ in dims)
            origin = tuple(-v for v in lo)
            shape = tuple(s + a + b for s, a, b in zip(shape, lo, hi))
        self.fields.append(FieldParam(name, dims, role, origin, shape, layout))
        bound = 2.0 if role != "out" else float(SENTINEL[self.dtype]) + 10
        self.bounds[name] = bound
        self.peaks[name] = bound

    def draw_fields(self) -> None:
        ch = self.ch
        if self.kind == "cart":
            self.cart_dims = ch.choice(CART_DIMS)
            for d in self.cart_dims:
                self.sizes[d] = ch.integer(5, 9)
            locs = [((self.cart_dims), "")]
        else:
            self.sizes["Cell"] = ch.integer(6, 14)
            self.sizes["Edge"] = ch.integer(6, 20)
            if ch.chance(70):
                self.sizes["K"] = ch.integer(3, 7)
            locs = [(self.loc_dims("Cell"), "c"), (self.loc_dims("Edge"), "e")]
            if ch.chance(50):
                self.skip_rows = (0,) if ch.chance(50) else (0, self.sizes["Cell"] - 1)
        n = 0
        for dims, tag in locs:
            for _ in range(ch.integer(1, 3)):
                self._field(f"inp{tag}{n}", dims, "in")
                n += 1
            for _ in range(ch.integer(1, 3)):
                self._field(f"out{tag}{n}", dims, "out")
                n += 1
        if self.kind == "mesh":
            if ch.chance(50):
                self._field("wc", ("Cell", "C2EDim"), "weight")
            if ch.chance(50):
                self._field("we", ("Edge", "E2CDim"), "weight")
        self.direct = ch.chance(20)
        for i in range(ch.integer(0, 2)):
            if self.dtype == "int32":
                v: float | int = ch.choice((3, -2, 5, 1))
            else:
                v = ch.choice((0.75, -1.5, 2.0, 0.5))
            self.scalars.append(ScalarParam(f"s{i}", v))

    # ------------------------------------------------------------------ statements
    def statement(self, index: int) -> Statement | None:
        ch = self.ch
        loc = "cart" if self.kind == "cart" else ch.choice(("Cell", "Edge"))
        sg = StatementGen(self, loc)
        depth = ch.integer(1, 4)
        for _ in range(ch.integer(0, 2)):
            sg.add_local(depth - 1)
        results = [sg.full_result(depth) for _ in range(ch.choice((1, 1, 2, 3)))]
        used = _used_names(self, sg, results)
        params = tuple(f"p{i}" for i in range(len(used)))
        rename = dict(zip(used, params))
        st = Statement(
            f"op{index}",
            params,
            tuple(used),
            tuple(_rename(loc_, rename) for loc_ in sg.locals),
            tuple(_rename(r.expr, rename) for r in results),
            (),
            loc,
            None,
        )
        candidates = [
            f
            for f in self.fields
            if self.loc_of(f) == loc
            and f.role != "weight"
            and f.layout in WRITABLE
            and writable_in_place(self, st, f.name)
            and not (self.direct and f.name in st.args)
        ]  # see test_fuzz.py: direct in-place
        outs: list[str] = []
        for _ in results:
            pool = [f.name for f in candidates if f.name not in outs]
            if not pool:
                return None
            preferred = [n for n in pool if n.startswith("out")]
            outs.append(ch.choice(preferred if preferred and ch.chance(80) else pool))
        st = dataclasses.replace(st, outs=tuple(outs))
        domain = []
        from_sizes = []
        for d, n in zip(self.loc_dims(loc), self.field(outs[0]).shape):
            lo, hi = allowed_range(self, st, d, n)
            if lo >= hi:
                return None
            a = ch.integer(lo, hi - 1)
            b = ch.integer(a + 1, hi)
            if (a, b) == (0, n) and ch.chance(50):
                continue  # leave the dimension out of domain=: the output's whole range
            domain.append((d, a, b))
            if ch.chance(20):
                from_sizes.append(d)  # written n_D - c, with n_D a program argument
                self.size_params.add(d)
        st = dataclasses.replace(
            st,
            domain=tuple(domain) if domain or ch.chance(50) else None,
            from_sizes=tuple(from_sizes),
        )
        if st.domain == ():
            st = dataclasses.replace(st, domain=None)
        peak = max([sg.peak, *(self.peaks[a] for a in used if not self.is_scalar(a))])
        for o, r in zip(outs, results):
            self.bounds[o] = max(self.bounds[o], r.bound)
            self.peaks[o] = max(self.peaks[o], peak)
        return st

    def field(self, name: str) -> FieldParam:
        return next(f for f in self.fields if f.name == name)

    def is_scalar(self, name: str) -> bool:
        return any(s.name == name for s in self.scalars)


def _used_names(pg: ProgramGen, sg: StatementGen, results: list) -> list[str]:
    """Program parameters read by the statement, in first-use order."""
    probe = Statement(
        "probe", (), (), tuple(sg.locals), tuple(r.expr for r in results), (), "", None
    )
    names: list[str] = []
    program_names = {f.name for f in pg.fields} | {s.name for s in pg.scalars}

    def visit(e: object) -> None:
        if isinstance(e, str):
            if e in program_names and e not in names:
                names.append(e)
            return
        if isinstance(e, tuple):
            for x in e:
                visit(x)
            return
        if dataclasses.is_dataclass(e):
            for f in dataclasses.fields(e):
                visit(getattr(e, f.name))

    visit(probe.locals)
    visit(probe.results)
    return names


def _rename(e: object, mapping: dict[str, str]) -> object:
    if isinstance(e, str):
        return mapping.get(e, e)
    if isinstance(e, tuple):
        return tuple(_rename(x, mapping) for x in e)
    if dataclasses.is_dataclass(e) and not isinstance(e, type):
        return dataclasses.replace(
            e,
            **{
                f.name: _rename(getattr(e, f.name), mapping)
                for f in dataclasses.fields(e)
                if f.name != "op" and f.name != "fn"
            },
        )
    return e


def draw_program(ch: Chooser, max_statements: int = 4) -> Program:
    """A random valid program; every decision comes from ``ch``."""
    pg = ProgramGen(ch, max_statements)
    pg.draw_fields()
    statements: list[Statement] = []
    for _ in range(ch.integer(1, max_statements)):
        for _ in range(4 if statements else 40):  # an empty legal domain or no writable output
            st = pg.statement(len(statements))
            if st is not None:
                statements.append(st)
                break
    if not statements:
        raise RuntimeError("no valid statement drawn")  # not seen: the first one has 40 tries
    pg.scalars += [ScalarParam(f"n_{d}", pg.sizes[d], "int32") for d in sorted(pg.size_params)]
    names = [f.name for f in pg.fields] + [s.name for s in pg.scalars]
    order: list[str] = []
    while names:
        order.append(names.pop(ch.integer(0, len(names) - 1) if ch.chance(50) else 0))
    return Program(
        pg.dtype,
        pg.kind,
        tuple(pg.sizes.items()),
        tuple(pg.fields),
        tuple(pg.scalars),
        tuple(pg.scans),
        tuple(statements),
        tuple(order),
        ch.integer(0, 2**31 - 1),
        pg.skip_rows,
        pg.direct,
        tuple(pg.peaks.items()),
    )
