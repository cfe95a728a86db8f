# ruff: noqa: F841, RUF059  (GTScript definitions assign fields by name)
"""GTScript's milestone-2 constructs (while loops, .at(K=..., ddim=[...]), K as a value,
run-time data indices and element writes, GlobalTable, log10/erf/erfc, interval bounds from 2-D
fields) on a real gt4py and on stencilkit (through its gt4py alias): the same source and the
same random inputs, outputs saved to one .npz per implementation and backend, then compared.

    /tmp/m2-gt4py-venv/bin/python scripts/cartesian_m2_oracle.py gt4py debug
    /tmp/m2-gt4py-venv/bin/python scripts/cartesian_m2_oracle.py gt4py numpy
    PYTHONPATH=src python scripts/cartesian_m2_oracle.py stencilkit numpy   # or gt:cpu_ifirst
    python scripts/cartesian_m2_oracle.py compare gt4py_debug stencilkit_numpy stencilkit_gt_cpu_ifirst

The scratch venv (Python 3.12): ``pip install --no-deps gt4py==1.2.1`` and its pure-Python
dependencies by hand (benchmarks/README.md lists them; no dace). gt4py's ``numpy`` backend
implements neither ``.at`` nor run-time data indices nor run-time interval bounds (it says so);
its ``debug`` backend (plain loops) runs them all. Outputs go to $OUT (default
/tmp/cartesian-m2-oracle). Real gt4py is an oracle only, never a stencilkit dependency.
"""

import os
import sys

import numpy as np

OUT = os.environ.get("OUT", "/tmp/cartesian-m2-oracle")
os.makedirs(OUT, exist_ok=True)

impl = sys.argv[1]
if impl == "compare":
    ref = np.load(f"{OUT}/out_{sys.argv[2]}.npz")
    for other in sys.argv[3:]:
        got = np.load(f"{OUT}/out_{other}.npz")
        for k in sorted(set(ref) | set(got)):
            if k not in got or k not in ref:
                print(f"{other:28s} {k:28s} only in {'gt4py' if k in ref else other}")
                continue
            a, b = ref[k], got[k]
            if a.dtype.kind in "US":
                print(f"{other:28s} {k:28s} gt4py: {a}  /  {b}")
                continue
            same = np.array_equal(a, b, equal_nan=True)
            err = 0.0 if same else float(np.nanmax(np.abs(a - b) / np.maximum(np.abs(a), 1e-300)))
            print(f"{other:28s} {k:28s} {'bitwise equal' if same else f'max rel diff {err:.2e}'}")
    raise SystemExit

backend = sys.argv[2]
if impl == "stencilkit":
    from stencilkit.compat import install_gt4py_alias

    install_gt4py_alias()
import gt4py.cartesian.gtscript as gtscript  # noqa: E402
from gt4py.cartesian.gtscript import (  # noqa: E402
    BACKWARD,
    FORWARD,
    IJ,
    IJK,
    PARALLEL,
    Field,
    GlobalTable,
    computation,
    erf,
    erfc,
    interval,
    log10,
)

F64 = Field[np.float64]
F64IJ = Field[IJ, np.float64]
DDIM = Field[IJK, (np.float64, (3,))]


@gtscript.function
def column_max(field, start_index, end_index):
    max_index = start_index
    level = start_index
    while level <= end_index:
        new = field.at(K=level)
        old = field.at(K=max_index)
        if new > old:
            max_index = level
        level += 1
    return field.at(K=max_index), max_index


@gtscript.function
def column_min_ddim(field, ddim, start_index, end_index):
    min_index = start_index
    level = start_index
    while level <= end_index:
        new = field.at(K=level, ddim=[ddim])
        old = field.at(K=min_index, ddim=[ddim])
        if new < old:
            min_index = level
        level += 1
    return field.at(K=min_index, ddim=[ddim]), min_index


def cmax(data: F64, mv: F64IJ, mi: F64IJ):
    from __externals__ import k_end

    with computation(FORWARD), interval(0, 1):
        mv, mi = column_max(data, 0, k_end)


def cmin_ddim(data: DDIM, mv: F64IJ, mi: F64IJ):
    from __externals__ import k_end

    with computation(FORWARD), interval(0, 1):
        mv, mi = column_min_ddim(data, 2, 3, k_end)


def grow(a: F64, out: F64, steps: F64, limit: float):
    with computation(PARALLEL), interval(1, None):
        x = abs(a) + 0.01
        n = 0.0
        while x < limit:
            x = x * 2.0
            n += 1.0
        out = x
        steps = n


def power_sum(a: F64, out: F64, count: int):
    with computation(PARALLEL), interval(...):
        acc = 0.0
        k = 0
        while k < count:
            t = a * acc + 1.0
            acc = t
            k = k + 1
        out = acc


def monotone(a: F64, b: F64):
    with computation(FORWARD):
        with interval(0, 1):
            b = a
        with interval(1, None):
            x = a
            while x < b[0, 0, -1]:
                x = x + 0.5
            b = x


def nested(a: F64, out: F64):
    with computation(BACKWARD), interval(...):
        total = 0.0
        if a > 0.0:
            i = 0
            while i < 3:
                j = 0
                while j < i:
                    total += a
                    j += 1
                i += 1
        out = total


def special(a: F64, o1: F64, o2: F64, o3: F64):
    with computation(PARALLEL), interval(...):
        o1 = log10(abs(a) + 1e-3)
        o2 = erf(a)
        o3 = erfc(a * 3.0)


def elements(q: DDIM, idx: Field[np.int64], out: F64, w: DDIM):
    with computation(PARALLEL), interval(...):
        out = q[0, 0, 0][idx] * 2.0
        w[0, 0, 0][1] = q[0, 0, 0][0] + 1.0


def runtime_write(q: DDIM, idx: Field[np.int64], w: DDIM):
    with computation(PARALLEL), interval(...):
        w[0, 0, 0][idx] = q[0, 0, 0][2] + 10.0


def table(a: F64, idx: Field[np.int64], t: GlobalTable[np.float64, (5, 3)], out: F64):
    with computation(PARALLEL), interval(...):
        out = t.A[idx, 2] + a * t.A[1, idx % 3]


def at_level(q: DDIM, lev: Field[np.int64], out: F64):
    with computation(PARALLEL), interval(...):
        out = q.at(K=lev, ddim=[2]) - q.at(K=0, ddim=[1])


def level_value(a: F64, out: F64):
    with computation(PARALLEL), interval(...):
        out = a * K + K


def column_bounds(a: F64, kb: Field[IJ, np.int64], out: F64):
    with computation(PARALLEL), interval(1, kb):
        out = a * 2.0


K = gtscript.K
rng = np.random.default_rng(2026)
N = (5, 4, 7)
inputs = {
    "data": rng.standard_normal(N),
    "ddata": rng.standard_normal((*N, 3)),
    "a": rng.standard_normal(N) * 2.0,
    "idx": rng.integers(0, 3, N),
    "idx5": rng.integers(0, 5, N),
    "lev": rng.integers(0, N[2], N),
    "t": rng.standard_normal((5, 3)),
    "kb": rng.integers(1, N[2] + 1, N[:2]),
}


def arr(shape):
    return rng.standard_normal(shape)


results = {}


def run(name, fn, args, externals=None, **kw):
    try:
        s = gtscript.stencil(backend=backend, definition=fn, externals=externals or {})
        s(*args, **kw)
    except Exception as err:  # record what an implementation refuses
        results[f"{name}__error"] = np.array(f"{type(err).__name__}: {str(err)[:120]}")
        return False
    return True


outs = [arr(N[:2]), arr(N[:2])]
if run("cmax", cmax, [inputs["data"], *outs], {"k_end": N[2] - 1}):
    results["cmax_v"], results["cmax_i"] = outs
outs = [arr(N[:2]), arr(N[:2])]
if run("cmin_ddim", cmin_ddim, [inputs["ddata"], *outs], {"k_end": N[2] - 1}):
    results["cmin_ddim_v"], results["cmin_ddim_i"] = outs
outs = [arr(N), arr(N)]
if run("grow", grow, [inputs["a"], *outs, 3.0]):
    results["grow_out"], results["grow_steps"] = outs
o = arr(N)
if run("power_sum", power_sum, [inputs["a"], o, 4]):
    results["power_sum"] = o
o = arr(N)
if run("monotone", monotone, [inputs["a"], o]):
    results["monotone"] = o
o = arr(N)
if run("nested", nested, [inputs["a"], o]):
    results["nested"] = o
outs = [arr(N), arr(N), arr(N)]
if run("special", special, [inputs["a"], *outs]):
    results["log10"], results["erf"], results["erfc"] = outs
o, w = arr(N), arr((*N, 3))
if run("elements", elements, [inputs["ddata"], inputs["idx"], o, w]):
    results["elements_out"], results["elements_w"] = o, w
w = arr((*N, 3))
if run("runtime_write", runtime_write, [inputs["ddata"], inputs["idx"], w]):
    results["runtime_write"] = w
o = arr(N)
if run("table", table, [inputs["a"], inputs["idx5"], inputs["t"], o]):
    results["table"] = o
o = arr(N)
if run("at_level", at_level, [inputs["ddata"], inputs["lev"], o]):
    results["at_level"] = o
o = arr(N)
if run("level_value", level_value, [inputs["a"], o]):
    results["level_value"] = o
o = arr(N)
if run("column_bounds", column_bounds, [inputs["a"], inputs["kb"], o]):
    results["column_bounds"] = o

tag = f"{impl}_{backend.replace(':', '_')}"
np.savez(f"{OUT}/out_{tag}.npz", **results)
print(tag, sorted(results))
