# ruff: noqa: F841  (GTScript definitions assign fields by name)
"""GTScript's P3 constructs of milestone 2 (writes at K offsets in FORWARD/BACKWARD, the `@`
matmul over data dimensions, whole-field vector assignments, temporaries with data dimensions)
on a real gt4py and on stencilkit (through its gt4py alias): the same source and the same random
inputs, outputs saved to one .npz per implementation and backend, then compared.

    /tmp/gt4py-venv/bin/python scripts/cartesian_p3_oracle.py gt4py debug      # and numpy
    PYTHONPATH=src python scripts/cartesian_p3_oracle.py stencilkit numpy      # or gt:cpu_ifirst, gt:gpu
    python scripts/cartesian_p3_oracle.py compare gt4py_debug gt4py_numpy stencilkit_numpy ...

The scratch venv (Python 3.12) is scripts/pyfv3_compare.sh's: gt4py 1.2.1 --no-deps and its
pure-Python dependencies, no dace. Outputs go to $OUT (default /tmp/cartesian-p3-oracle). Real
gt4py is an oracle only, never a stencilkit dependency.
"""

import os
import sys

import numpy as np

OUT = os.environ.get("OUT", "/tmp/cartesian-p3-oracle")
os.makedirs(OUT, exist_ok=True)

impl = sys.argv[1]
if impl == "compare":
    ref = np.load(f"{OUT}/out_{sys.argv[2]}.npz")
    for other in sys.argv[3:]:
        got = np.load(f"{OUT}/out_{other}.npz")
        for k in sorted(set(ref) | set(got)):
            if k not in got or k not in ref:
                print(f"{other:28s} {k:24s} only in {'the reference' if k in ref else other}")
                continue
            same = np.array_equal(ref[k], got[k])
            err = 0.0 if same else float(np.max(np.abs(ref[k] - got[k])))
            print(f"{other:28s} {k:24s} {'bitwise equal' if same else f'max abs diff {err:.2e}'}")
    raise SystemExit

backend = sys.argv[2]
if impl == "stencilkit":
    from stencilkit.compat import install_gt4py_alias

    install_gt4py_alias()
import gt4py.cartesian.gtscript as gtscript  # noqa: E402
from gt4py.cartesian.gtscript import (  # noqa: E402
    BACKWARD,
    FORWARD,
    IJK,
    PARALLEL,
    Field,
    computation,
    interval,
)

F = Field[np.float64]
M32 = Field[IJK, (np.float64, (3, 2))]
M22 = Field[IJK, (np.float64, (2, 2))]
V2 = Field[IJK, (np.float64, (2,))]
V3 = Field[IJK, (np.float64, (3,))]


def kw_forward(a: F, f: F, g: F):
    with computation(FORWARD), interval(0, -1):
        g = f + a
        f[0, 0, 1] = f + 2.0 * a
        g = g + f[0, 0, 1]


def kw_masked(a: F, f: F, g: F):
    with computation(FORWARD):
        with interval(0, 1):
            g = a
        with interval(1, -1):
            if a > 0.0:
                f[0, 0, 1] = f + a * g[0, 0, -1]
            g = f[0, 0, 1] - f + g[0, 0, -1]


def kw_temp(a: F, out: F):
    with computation(PARALLEL), interval(...):
        t = a * 2.0
    with computation(FORWARD), interval(0, -1):
        t[0, 0, 1] = t[0, 0, 1] + t * 0.5
        out = t
    with computation(PARALLEL), interval(-1, None):
        out = t


def kw_backward(a: F, f: F, h: F):
    with computation(BACKWARD), interval(2, None):
        f[0, 0, -1] = a * f + f[0, 0, -2]
        h[0, 0, -1] = f[0, 0, -1] * 3.0 - h


def kw_ahead2_masked(a: F, f: F, g: F):
    with computation(FORWARD), interval(1, -3):
        if a > 0.5:
            f[0, 0, 2] = a + f[0, 0, 1] - f[0, 0, -1]
        f = f * 0.5 + f[0, 0, 2]
        g = f[0, 0, 1] + f[0, 0, 3] * a


def kw_ahead3(a: F, f: F):
    with computation(FORWARD), interval(0, -3):
        f[0, 0, 3] = a * 0.5 + f


def kw_backward_ahead2(a: F, f: F):
    with computation(BACKWARD):
        with interval(-1, None):
            f = a
        with interval(2, -1):
            f[0, 0, -2] = f[0, 0, 1] + a * f[0, 0, -1]
            a = f[0, 0, -2] + f


def kw_forward_behind2(a: F, f: F, g: F):
    with computation(FORWARD), interval(3, None):
        f = f + a
        f[0, 0, -2] = f * 2.0 + f[0, 0, -3] + f[0, 0, -2] + f[0, 0, -1]
        g = f[0, 0, -3] - f[0, 0, -2]


def kw_backward_behind2(a: F, f: F, g: F):
    with computation(BACKWARD), interval(0, -4):
        if a < 0.7:
            f[0, 0, 2] = a + f[0, 0, 3] * f[0, 0, 4] + f[0, 0, 1]
        g = f + f[0, 0, 2] + f[0, 0, 3]


def mv(m: M32, v: V2, w: V3, out: V3):
    with computation(PARALLEL), interval(...):
        out = m @ v + w * 2.0 - 1.0


def mtv(m: M32, w: V3, s: F, out: V2):
    with computation(PARALLEL), interval(...):
        out = m.T @ w
        out = out * s


def inplace(m: M22, v: V2):
    with computation(PARALLEL), interval(...):
        v = m @ v


def temp_vec(m: M32, v: V2, a: F, out: F):
    tmp: Field[IJK, (np.float64, (3,))] = 0.0
    with computation(PARALLEL), interval(...):
        tmp = m @ v
    with computation(PARALLEL), interval(1, None):
        out = tmp[0, 0, -1][0] + tmp[0, 0, 0][2] * a


def temp_fwd(a: F, out: F):
    acc: Field[IJK, (np.float64, (2,))] = 1.0
    with computation(FORWARD):
        with interval(0, 1):
            acc[0, 0, 0][0] = a
        with interval(1, None):
            acc[0, 0, 0][0] = acc[0, 0, -1][0] + a
            acc[0, 0, 0][1] = acc[0, 0, -1][1] * 0.5 + acc[0, 0, 0][0]
    with computation(PARALLEL), interval(...):
        out = acc[0, 0, 0][0] - acc[0, 0, 0][1]


CASES = {
    "kw_forward": (kw_forward, {"a": (), "f": (), "g": ()}),
    "kw_masked": (kw_masked, {"a": (), "f": (), "g": ()}),
    "kw_temp": (kw_temp, {"a": (), "out": ()}),
    "kw_backward": (kw_backward, {"a": (), "f": (), "h": ()}),
    "kw_ahead2_masked": (kw_ahead2_masked, {"a": (), "f": (), "g": ()}),
    "kw_ahead3": (kw_ahead3, {"a": (), "f": ()}),
    "kw_backward_ahead2": (kw_backward_ahead2, {"a": (), "f": ()}),
    "kw_forward_behind2": (kw_forward_behind2, {"a": (), "f": (), "g": ()}),
    "kw_backward_behind2": (kw_backward_behind2, {"a": (), "f": (), "g": ()}),
    "mv": (mv, {"m": (3, 2), "v": (2,), "w": (3,), "out": (3,)}),
    "mtv": (mtv, {"m": (3, 2), "w": (3,), "s": (), "out": (2,)}),
    "inplace": (inplace, {"m": (2, 2), "v": (2,)}),
    "temp_vec": (temp_vec, {"m": (3, 2), "v": (2,), "a": (), "out": ()}),
    "temp_fwd": (temp_fwd, {"a": (), "out": ()}),
}

results = {}
for name, (fn, args) in CASES.items():
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal((5, 4, 9, *dd)) for dd in args.values()]
    if "gpu" in backend:  # the same values in GPU memory, and back for the comparison
        import cupy

        arrays = [cupy.asarray(x) for x in arrays]
    try:
        gtscript.stencil(backend=backend, definition=fn)(*arrays)
    except Exception as err:  # reported, and the case is missing from the comparison
        print(name, "ERROR", type(err).__name__, str(err)[:300])
        continue
    for n, x in zip(args, arrays):
        results[f"{name}.{n}"] = x.get() if hasattr(x, "get") else x

tag = f"{impl}_{backend.replace(':', '_')}"
np.savez(f"{OUT}/out_{tag}.npz", **results)
print(tag, len(results), "outputs")
