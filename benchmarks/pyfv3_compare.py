"""pyFV3's dycore stencils on a baroclinic initial state, run on one implementation of
``gt4py.cartesian`` (stencilkit through its gt4py alias, or a real gt4py in a scratch venv),
saved, and compared run against run.

Three steps, each its own process (a real gt4py and stencilkit's alias cannot share one)::

    PYFV3_SOURCE=/path/to/pyFV3 PYTHONPATH=src python benchmarks/pyfv3_compare.py \\
        run --impl stencilkit --backend numpy --out /tmp/pyfv3-runs/sk-numpy
    PYFV3_SOURCE=... /tmp/pyfv3-gt4py-venv/bin/python benchmarks/pyfv3_compare.py \\
        run --impl gt4py --backend numpy --out /tmp/pyfv3-runs/gt-numpy
    python benchmarks/pyfv3_compare.py compare /tmp/pyfv3-runs/gt-numpy /tmp/pyfv3-runs/sk-numpy

``PYFV3_SOURCE`` is a pyFV3 checkout (the folder holding ``pyFV3/``); ``PYFV3_NDSL`` a folder
holding ``ndsl/`` when NDSL is not installed (a reduced stand-in will do: the stencil modules
need ``ndsl.dsl.typing``, ``ndsl.constants`` and ``ndsl.stencils.basic_operations`` and only
the names of NDSL's driver classes). ``CASES`` below lists each stencil definition with the
origin, domain and externals pyFV3's driver classes give it (one rank per tile, so every tile
edge is on the rank); ``--only`` picks cases by substring.

The state (``initial_state``) is analytic, written once to ``<out>/../state.npz`` by the first
run and read by the others, so every implementation sees the same bits whatever its NumPy: a
Jablonowski-Williamson (2006) baroclinic-wave atmosphere (zonal jet u0 = 35 m/s, eta0 = 0.252,
T0 = 288 K, lapse rate 0.005 K/m, stratospheric Delta T = 4.8e5 K, surface geopotential
balancing the jet) on a gnomonic-like tile (equatorial panel, 48 x 48 cells of ~208 km,
3 halo points, 79 levels from ptop = 300 Pa to ps = 1000 hPa with a surface-pressure bump),
with JW's moisture profile (q0 = 0.021), small condensate mixing ratios, nonhydrostatic w of a
few cm/s, and grid metrics of a mildly non-orthogonal tile (cos(alpha) up to 0.3). Each field
of each case is that state times ``1 + 1e-3 * noise`` (noise: a stored N(0, 1) array rolled by a
hash of the case and argument, so exact in IEEE arithmetic); tracers and winds get an
additive perturbation too (some tracer values negative, which fillz exists for). No field is
zero. Output-only arguments get state values as well, so points a stencil does not write are
checked to stay untouched.

``run`` writes ``<case>.npz`` (every field argument after the call: values where changed
and a mask of the changed points) and ``results.json`` (build/run status, error text, times,
input digests). ``compare A B`` prints per case and output: bitwise / max abs / max rel
difference and whether the changed points are the same, and a summary.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import inspect
import json
import os
import sys
import time
import traceback
import zlib
from pathlib import Path
from typing import Any

import numpy as np

NX = NY = 48
NZ = 79
H = 3
SHAPE3 = (NX + 2 * H + 1, NY + 2 * H + 1, NZ + 1)  # NDSL's storage: one spare point per axis
PTOP = 300.0
DT = 225.0


@dataclasses.dataclass(frozen=True)
class Case:
    """One stencil definition run once: ``origin_add``/``domain_add`` are relative to the
    compute domain (NDSL's ``origin_compute(add=)``/``domain_compute(add=)``)."""

    module: str
    func: str
    tag: str = ""
    origin_add: tuple[int, int, int] = (0, 0, 0)
    domain_add: tuple[int, int, int] = (0, 0, 0)
    externals: tuple[tuple[str, Any], ...] = ()
    scalars: tuple[tuple[str, Any], ...] = ()
    fields: tuple[tuple[str, str], ...] = ()  # argument -> state key, where the name misleads

    @property
    def name(self) -> str:
        return f"{self.module}.{self.func}{'[' + self.tag + ']' if self.tag else ''}"


FULL = dict(origin_add=(-H, -H, 0), domain_add=(2 * H, 2 * H, 0))
NORD = 2  # DelnFlux with nord in {0, 2}: the largest order whose halo fits 3 points


def _delnflux() -> list[Case]:
    m = "delnflux"
    d2 = dict(origin_add=(-1 - NORD,) * 2 + (0,), domain_add=(2 + 2 * NORD,) * 2 + (0,))
    out = [
        Case(m, "d2_damp_interval", **d2),
        Case(m, "copy_stencil_interval", **d2),
        Case(
            m,
            "fx_calc_stencil_nord",
            origin_add=(-NORD, -NORD, 0),
            domain_add=(1 + 2 * NORD, 2 * NORD, 0),
        ),
        Case(
            m,
            "fy_calc_stencil_nord",
            origin_add=(-NORD, -NORD, 0),
            domain_add=(2 * NORD, 1 + 2 * NORD, 0),
        ),
        Case(m, "copy_corners_x_nord", **FULL, scalars=(("current_nord", 0),)),
        Case(m, "copy_corners_y_nord", **FULL, scalars=(("current_nord", 0),)),
        Case(m, "add_diffusive_component", domain_add=(1, 1, 0)),
        Case(m, "diffusive_damp", domain_add=(1, 1, 0), fields=(("damp", "damp_c"),)),
    ]
    for n in range(NORD):
        nt = NORD - 1 - n
        o = (-nt - 1, -nt - 1, 0)
        out.append(
            Case(
                m,
                "d2_highorder_stencil",
                f"n={n}",
                o,
                (2 + 2 * nt, 2 + 2 * nt, 0),
                scalars=(("current_nord", n),),
            )
        )
        o = (-nt, -nt, 0)
        out.append(
            Case(
                m,
                "fx_calc_stencil_column",
                f"n={n}",
                o,
                (1 + 2 * nt, 2 * nt, 0),
                scalars=(("current_nord", n),),
            )
        )
        out.append(
            Case(
                m,
                "fy_calc_stencil_column",
                f"n={n}",
                o,
                (2 * nt, 1 + 2 * nt, 0),
                scalars=(("current_nord", n),),
            )
        )
    return out


def _ppm() -> list[Case]:
    out = []
    for order in (5, 6, 8):
        ext = (("iord", order), ("mord", order), ("xt_minmax", True), ("grid_type", 0))
        out.append(
            Case(
                "xppm",
                "compute_x_flux",
                f"iord={order}",
                (0, -H, 0),
                (1, 2 * H, 0),
                ext,
                fields=(("courant", "crx"), ("q", "pt")),
            )
        )
        ext = (("jord", order), ("mord", order), ("yt_minmax", True), ("grid_type", 0))
        out.append(
            Case(
                "yppm",
                "compute_y_flux",
                f"jord={order}",
                (-H, 0, 0),
                (2 * H, 1, 0),
                ext,
                fields=(("courant", "cry"), ("q", "pt")),
            )
        )
    return out


def _fxadv() -> list[Case]:
    m = "fxadv"
    corners = dict(origin_add=(1 - H, 1 - H, 0), domain_add=(2 * H - 1, 2 * H - 1, 0))
    return [
        Case(m, "main_uc_vc_contra", **FULL, externals=(("grid_type", 0),)),
        Case(m, "uc_contra_y_edge", **FULL),
        Case(m, "vc_contra_y_edge", **FULL),
        Case(m, "vc_contra_x_edge", **FULL),
        Case(m, "uc_contra_x_edge", **FULL),
        Case(m, "uc_contra_corners", **corners),
        Case(m, "vc_contra_corners", **corners),
        Case(m, "fxadv_fluxes_stencil", **FULL),
    ]


def _c_sw() -> list[Case]:
    m, g = "c_sw", (("grid_type", 0),)
    return [
        Case(m, "zero_delpc_ptc"),
        Case(m, "divergence_corner", domain_add=(1, 1, 0), externals=g),
        Case(m, "geoadjust_ut", origin_add=(-1, -1, 0), domain_add=(3, 2, 0)),
        Case(m, "geoadjust_vt", origin_add=(-1, -1, 0), domain_add=(2, 3, 0)),
        Case(m, "compute_nonhydrostatic_fluxes_x", origin_add=(-1, -1, 0), domain_add=(3, 2, 0)),
        Case(
            m,
            "transportdelp_update_vorticity_and_kineticenergy",
            origin_add=(-1, -1, 0),
            domain_add=(2, 2, 0),
            externals=g,
        ),
        Case(m, "circulation_cgrid", domain_add=(1, 1, 0)),
        Case(m, "absolute_vorticity", domain_add=(1, 1, 0), fields=(("vort", "vort"),)),
        Case(m, "update_x_velocity", domain_add=(1, 0, 0), externals=g),
        Case(m, "update_y_velocity", domain_add=(0, 1, 0), externals=g),
    ]


def _divergence_damping() -> list[Case]:
    m, divg = "divergence_damping", (("delpc", "divg"), ("divg_d", "divg"), ("vort", "divg"))
    out = [
        Case(m, "compute_u_contra_dyc", origin_add=(-1, 0, 0), domain_add=(2, 1, 0)),
        Case(m, "compute_v_contra_dxc", origin_add=(0, -1, 0), domain_add=(1, 2, 0)),
        Case(m, "delpc_computation", domain_add=(1, 1, 0)),
        Case(m, "damping", domain_add=(1, 1, 0), fields=divg),
        Case(m, "damping_nord_highorder_stencil", domain_add=(1, 1, 0), fields=divg),
        Case(m, "smagorinsky_diffusion_approx", domain_add=(1, 1, 0), fields=divg),
    ]
    for n in range(1, NORD + 1):
        nt = NORD - n
        w = 2 * nt + 1
        out.append(Case(m, "vc_from_divg", f"n={n}", (-nt - 1, -nt, 0), (w + 1, w, 0), fields=divg))
        out.append(Case(m, "uc_from_divg", f"n={n}", (-nt, -nt - 1, 0), (w, w + 1, 0), fields=divg))
        out.append(
            Case(
                m,
                "redo_divg_d",
                f"n={n}",
                (-nt, -nt, 0),
                (w, w, 0),
                (("do_adjustment", True),),
                fields=(("uc", "u_dy"), ("vc", "u_dy")),
            )
        )
    return out


def _d_sw() -> list[Case]:
    m, corners = "d_sw", dict(domain_add=(1, 1, 0))
    halo3 = dict(origin_add=(-H, -H, 0), domain_add=(2 * H, 2 * H, 0))
    out = [
        Case(m, "flux_capacitor", **halo3, fields=(("cx", "crx"), ("cy", "cry"))),
        Case(m, "heat_diss"),
        Case(m, "apply_fluxes", fields=(("q", "w"), ("gx", "flux"), ("gy", "flux"))),
        Case(m, "apply_pt_delp_fluxes_stencil_defn", **corners, externals=(("inline_q", 0),)),
        Case(m, "compute_vorticity", **halo3),
        Case(m, "adjust_w_and_qcon"),
        Case(m, "vort_differencing", **corners),
        Case(m, "rel_vorticity_to_abs", **halo3),
        Case(m, "u_and_v_from_ke", **corners),
        Case(
            m,
            "heat_source_from_vorticity_damping",
            **corners,
            externals=(("do_stochastic_ke_backscatter", False), ("d_con", 1.0)),
        ),
        Case(m, "accumulate_heat_source_and_dissipation_estimate"),
        Case(m, "update_u_and_v", **corners),
    ]
    for hord in (6, 8):
        ext = (("iord", hord), ("jord", hord), ("mord", hord), ("xt_minmax", False))
        ext += (("yt_minmax", False), ("grid_type", 0))
        out.append(Case(m, "compute_kinetic_energy", f"hord_mt={hord}", **corners, externals=ext))
    return out


RF_CUTOFF = 750.0
CASES: list[Case] = [
    *_delnflux(),
    Case(
        "ray_fast",
        "ray_fast_wind_compute",
        domain_add=(1, 1, 0),
        externals=(("hydrostatic", False), ("rf_cutoff", RF_CUTOFF), ("tau", 10.0)),
        scalars=(("rf_cutoff_nudge", RF_CUTOFF + min(100.0, 10.0 * PTOP)),),
    ),
    Case(
        "pk3_halo",
        "edge_pe_update",
        **{**FULL, "domain_add": (2 * H, 2 * H, 1)},
        fields=(("pe", "pe_ij"),),
    ),
    Case("temperature_adjust", "apply_diffusive_heating"),
    Case("moist_cv", "moist_pt_last_step"),
    Case("moist_cv", "moist_pkz"),
    Case("moist_cv", "moist_te", domain_add=(0, 0, 1)),
    Case("moist_cv", "te_zsum"),
    Case("moist_cv", "cond_output"),
    Case("moist_cv", "fv_setup", "moist_phys", externals=(("moist_phys", True),)),
    Case("moist_cv", "fv_setup", "dry", externals=(("moist_phys", False),)),
    Case("fillz", "fix_tracer", fields=(("q", "q_fill"),)),
    Case(
        "sim1_solver",
        "sim1_solver",
        origin_add=(-1, -1, 0),
        domain_add=(2, 2, 1),
        fields=(("pe", "pe_pert"),),
    ),
    Case("riem_solver_c", "precompute", origin_add=(-1, -1, 0), domain_add=(2, 2, 1)),
    Case(
        "riem_solver_c",
        "finalize",
        origin_add=(-1, -1, 0),
        domain_add=(2, 2, 1),
        fields=(("pe2", "pe_pert"), ("gz", "zh")),
    ),
    Case("riem_solver3", "precompute", domain_add=(0, 0, 1)),
    Case(
        "riem_solver3",
        "finalize",
        domain_add=(0, 0, 1),
        externals=(("use_logp", False), ("beta", 0.0)),
        scalars=(("last_call", True),),
    ),
    Case(
        "riem_solver3",
        "finalize",
        "not_last",
        domain_add=(0, 0, 1),
        externals=(("use_logp", True), ("beta", -0.2)),
        scalars=(("last_call", False),),
    ),
    Case("nh_p_grad", "set_k0_and_calc_wk", domain_add=(1, 1, 0)),
    Case("nh_p_grad", "calc_u", domain_add=(0, 1, 0)),
    Case("nh_p_grad", "calc_v", domain_add=(1, 0, 0)),
    *_ppm(),
    *_fxadv(),
    *_c_sw(),
    *_divergence_damping(),
    *_d_sw(),
]


# --- the baroclinic state ------------------------------------------------------------------


def initial_state(path: Path) -> dict[str, np.ndarray]:
    """The analytic state (see the module docstring), written to ``path`` on first use."""
    if path.exists():
        with np.load(path) as f:
            return {k: f[k] for k in f.files}
    rd, cp, g, a, omega = 287.05, 1004.6, 9.80665, 6.3712e6, 7.2921e-5
    kappa = rd / cp
    u0, eta0, t0, gamma_t, dT, eta_t, p0 = 35.0, 0.252, 288.0, 0.005, 4.8e5, 0.2, 1.0e5
    rng = np.random.default_rng(20261202)
    ni, nj, nk = SHAPE3
    # an equatorial gnomonic panel: alpha, beta in [-pi/4, pi/4] at cell centres
    ab = (np.arange(ni) - H + 0.5) / NX * (np.pi / 2) - np.pi / 4
    al, be = np.meshgrid(ab, ab, indexing="ij")
    lon = al
    lat = np.arctan(np.tan(be) * np.cos(al))
    # vertical: interfaces from ptop to ps, denser at the top and bottom
    s = np.linspace(0.0, 1.0, nk)
    eta_i = PTOP / p0 + (1 - PTOP / p0) * (0.5 - 0.5 * np.cos(np.pi * s)) ** 1.2
    ps = p0 * (1.0 + 0.02 * np.exp(-((lon - 0.3) ** 2 + (lat - 0.5) ** 2) / 0.05))
    pe = eta_i[None, None, :] * ps[:, :, None]
    pe[:, :, 0] = PTOP
    delp = np.empty(SHAPE3)
    delp[:, :, :-1] = np.diff(pe, axis=2)
    delp[:, :, -1] = delp[:, :, -2]
    pmid = np.empty(SHAPE3)
    pmid[:, :, :-1] = (pe[:, :, 1:] - pe[:, :, :-1]) / np.log(pe[:, :, 1:] / pe[:, :, :-1])
    pmid[:, :, -1] = pe[:, :, -1]
    eta = pmid / ps[:, :, None]
    eta_v = (eta - eta0) * np.pi / 2
    slat, clat = np.sin(lat)[:, :, None], np.cos(lat)[:, :, None]
    u = u0 * np.cos(eta_v) ** 1.5 * np.sin(2 * lat)[:, :, None] ** 2
    tmean = t0 * eta ** (rd * gamma_t / g) + np.where(eta < eta_t, dT * (eta_t - eta) ** 5, 0.0)
    t = tmean + 0.75 * eta * np.pi * u0 / rd * np.sin(eta_v) * np.sqrt(np.cos(eta_v)) * (
        (-2 * slat**6 * (clat**2 + 1 / 3) + 10 / 63) * 2 * u0 * np.cos(eta_v) ** 1.5
        + (1.6 * clat**3 * (slat**2 + 2 / 3) - np.pi / 4) * a * omega
    )
    t *= 1.0 + 1e-3 * rng.standard_normal(SHAPE3)  # the wave's trigger, everywhere
    ev0 = (1.0 - eta0) * np.pi / 2
    phis = (
        u0
        * np.cos(ev0) ** 1.5
        * (
            (-2 * np.sin(lat) ** 6 * (np.cos(lat) ** 2 + 1 / 3) + 10 / 63) * u0 * np.cos(ev0) ** 1.5
            + (1.6 * np.cos(lat) ** 3 * (np.sin(lat) ** 2 + 2 / 3) - np.pi / 4) * a * omega
        )
    )
    qv = (
        0.021
        * np.exp(-((lat / (2 * np.pi / 9)) ** 4))[:, :, None]
        * np.exp(-(((eta - 1) * p0 / 34000.0) ** 2))
    )
    qv = np.maximum(qv, 1e-8)
    delz = np.empty(SHAPE3)
    delz[:, :, :-1] = (
        -rd * t[:, :, :-1] * (1 + 0.608 * qv[:, :, :-1]) / g * np.log(pe[:, :, 1:] / pe[:, :, :-1])
    )
    delz[:, :, -1] = delz[:, :, -2]
    zh = np.empty(SHAPE3)  # interface heights, surface at phis / g
    zh[:, :, -1] = phis / g
    for k in range(nk - 2, -1, -1):
        zh[:, :, k] = zh[:, :, k + 1] - delz[:, :, k]
    cappa = rd / cp * (1.0 - 0.1 * qv)
    layer = lambda x: np.broadcast_to(x, SHAPE3).copy()  # noqa: E731
    cond = lambda scale: scale * (0.1 + rng.random(SHAPE3)) * np.exp(-(((eta - 0.6) / 0.2) ** 2))  # noqa: E731
    dx = 2.0 * np.pi * a / 4 / NX * (0.8 + 0.2 * np.cos(al) * np.cos(be))
    dy = dx.T.copy()
    cosa = 0.3 * np.sin(2 * al) * np.sin(2 * be) + 0.01
    st: dict[str, np.ndarray] = {
        "u": u + rng.standard_normal(SHAPE3),
        "v": 2.0 * np.sin(lon)[:, :, None] * np.cos(eta_v) + rng.standard_normal(SHAPE3),
        "w": 0.05 * rng.standard_normal(SHAPE3),
        "delp": delp,
        "pt": t,
        "delz": delz,
        "pe": pe,
        "pk": pe**kappa,
        "peln": np.log(pe),
        "pkz": layer(pmid**kappa),
        "zh": zh,
        "phis": zh * g,
        "pmid": pmid,
        "cappa": cappa,
        "gamma": 1.0 / (1.0 - cappa),
        "cvm": layer(cp - rd + 0 * delp),
        "qvapor": qv,
        "qliquid": cond(2e-4),
        "qrain": cond(5e-5),
        "qsnow": cond(3e-5),
        "qice": cond(1e-4),
        "qgraupel": cond(1e-5),
        "pe_pert": 50.0 * rng.standard_normal(SHAPE3),
        "q_fill": qv * (1.0 + 0.5 * rng.standard_normal(SHAPE3))
        - 2e-4 * (rng.random(SHAPE3) < 0.05),
        "crx": 0.3 * rng.standard_normal(SHAPE3),
        "cry": 0.3 * rng.standard_normal(SHAPE3),
        "area_flux": dx[:, :, None] * DT * (u + rng.standard_normal(SHAPE3)),
        "flux": 1e3 * rng.standard_normal(SHAPE3),
        "heat": 1e4 * rng.standard_normal(SHAPE3),
        "vort": 1e-4 * rng.standard_normal(SHAPE3),
        "divg": 1e-5 * rng.standard_normal(SHAPE3),
        "u_dy": u * dy[:, :, None],
        "ke": 0.5 * u**2 + 1.0,
        "coriolis": 2 * omega * np.sin(lat) + 1e-6,
        "wk": np.diff(pe**kappa, axis=2, append=(pe**kappa)[:, :, -1:] + 1.0),
        "noise": rng.standard_normal(SHAPE3),
        # 2-D metrics and surface fields
        "dx": dx,
        "dy": dy,
        "dxa": dx * 1.01,
        "dya": dy * 1.01,
        "rdx": 1 / dx,
        "rdy": 1 / dy,
        "rdxa": 1 / (dx * 1.01),
        "rdya": 1 / (dy * 1.01),
        "area": dx * dy,
        "rarea": 1 / (dx * dy),
        "cosa": cosa,
        "rsin": 1.0 / (1.0 - cosa**2),
        "sin_sg": np.sqrt(1 - cosa**2) * (1 - 0.01 * np.cos(lat)),
        "del6": 0.2 * dy / dx,
        "hs": phis / g,
        "ws": 0.01 * np.sin(2 * lon) * np.cos(lat),
        "pe_ij": np.full((ni, nj), PTOP) + rng.random((ni, nj)),
        "te": 1e9 * (1 + 0.1 * rng.random((ni, nj))),
        # K profiles
        "nord": np.where(np.arange(nk) < 3, 0.0, float(NORD)),
        "damp_c": 0.06 + 0.1 * s,
        "delta_p_ref": delp[H, H, :] * 0.999,
        "pfull": pmid[H, H, :] * 0.999,
    }
    qsum = sum(st[k] for k in ("qliquid", "qrain", "qsnow", "qice", "qgraupel"))
    st["q_con"] = qsum
    for k in ("hs", "ws"):
        st[k] = np.ascontiguousarray(st[k])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **st)
    return st


# argument name -> state key (for names several stencils share); anything else is generic
ALIASES = {
    **{
        k: k
        for k in (
            "u",
            "v",
            "w",
            "delp",
            "pt",
            "delz",
            "pe",
            "pk",
            "peln",
            "pkz",
            "cappa",
            "gamma",
            "cvm",
            "qvapor",
            "qliquid",
            "qrain",
            "qsnow",
            "qice",
            "qgraupel",
            "q_con",
            "crx",
            "cry",
            "dx",
            "dy",
            "dxa",
            "dya",
            "rdx",
            "rdy",
            "rdxa",
            "rdya",
            "area",
            "rarea",
            "hs",
            "ws",
            "te",
            "nord",
            "damp_c",
            "delta_p_ref",
            "pfull",
            "zh",
            "phis",
        )
    },
    "uc": "u",
    "vc": "v",
    "ut": "u",
    "uc_contra": "u",
    "vc_contra": "v",
    "uc_contra_copy": "u",
    "vc_contra_copy": "v",
    "w3": "w",
    "w1": "w",
    "delpc": "delp",
    "dp": "delp",
    "dp2": "delp",
    "mass": "delp",
    "dm": "delp",
    "dp1": "delp",
    "ptc": "pt",
    "potential_temperature": "pt",
    "dz": "delz",
    "pem": "pe",
    "pef": "pe",
    "p": "pe",
    "p_interface": "pe",
    "pe_init": "pe",
    "pk3": "pk",
    "log_p_interface": "peln",
    "log_p_interface_internal": "peln",
    "log_p_interface_out": "peln",
    "gz": "zh",
    "gm": "gamma",
    "cp3": "cappa",
    "pm": "pmid",
    "p_gas": "pmid",
    "ppe": "pe_pert",
    "pp": "pe_pert",
    "q": "qvapor",
    "q_in": "pt",
    "q_out": "pt",
    "d2": "pt",
    "fx": "flux",
    "fy": "flux",
    "fx2": "flux",
    "fy2": "flux",
    "xflux": "flux",
    "yflux": "flux",
    "x_area_flux": "area_flux",
    "y_area_flux": "area_flux",
    "heat_source": "heat",
    "wk": "wk",
    "wk1": "wk",
    "cosa_u": "cosa",
    "cosa_v": "cosa",
    "cosa_s": "cosa",
    "rsin_u": "rsin",
    "rsin_v": "rsin",
    "rsin2": "rsin",
    "sin_sg1": "sin_sg",
    "sin_sg2": "sin_sg",
    "sin_sg3": "sin_sg",
    "sin_sg4": "sin_sg",
    "del6_u": "del6",
    "del6_v": "del6",
    "zs": "hs",
    "damp": "damp_c",
    "te_2d": "te",
    "te0_2d": "te",
    "zsum1": "te",
    "sum0": "te",
    "sum1": "te",
    "delta_mass": "delta_mass",
    "courant": "crx",
    "dxc": "dx",
    "dyc": "dy",
    "rdxc": "rdx",
    "rdyc": "rdy",
    "rarea_c": "rarea",
    "cos_sg1": "cosa",
    "cos_sg2": "cosa",
    "cos_sg3": "cosa",
    "cos_sg4": "cosa",
    "cosa": "cosa",
    "sina": "sin_sg",
    "sina_u": "sin_sg",
    "sina_v": "sin_sg",
    "fC": "coriolis",
    "utc": "area_flux",
    "vtc": "area_flux",
    "ua": "u",
    "va": "v",
    "wc": "w",
    "ke": "ke",
    "vort": "vort",
    "vort_c": "vort",
    "vorticity": "vort",
    "velocity": "u",
    "velocity_c": "u",
    "u_contra_dyc": "u_dy",
    "v_contra_dxc": "u_dy",
    "u_contra_dxc": "u_dy",
    "v_contra_dyc": "u_dy",
    "divg_u": "del6",
    "divg_v": "del6",
    "adjustment_factor": "del6",
    "d2_bg": "damp_c",
    "vt": "v",
    "cx": "crx",
    "cy": "cry",
    "crx_adv": "crx",
    "cry_adv": "cry",
    "diss_est": "heat",
    "dw": "w",
    "damp_w": "damp_c",
    "ke_bg": "damp_c",
    "damp_vt": "damp_c",
    "dcon": "damp_c",
    "kinetic_energy_fraction_to_damp": "damp_c",
    "gx": "flux",
    "gy": "flux",
    "rsina": "rsin",
    "dt_kinetic_energy_on_cell_corners": "ke",
    "f0": "coriolis",
    "relative_vorticity": "vort",
    "absolute_vorticity": "vort",
    "vorticity_agrid": "vort",
    "vort_x_delta": "vort",
    "vort_y_delta": "vort",
    "heat_source_total": "heat",
    "diss_est_total": "heat",
    "dissipation_estimate": "heat",
}
SCALARS: dict[str, Any] = {
    "dt": DT,
    "ptop": PTOP,
    "akap": 287.05 / 1004.6,
    "r_vir": 461.5 / 287.05 - 1,
    "dtmp": 0.37,
    "grav": 9.80665,
    "top_value": PTOP ** (287.05 / 1004.6),
    "t1g": 2.0 * DT * DT,
    "rdt": 1.0 / DT,
    "p_fac": 0.05,
    "peln1": float(np.log(PTOP)),
    "ptk": float(np.exp(287.05 / 1004.6 * np.log(PTOP))),
    "delt_time_factor": abs(DT * 0.002),
    "last_call": True,
    "dt2": DT / 2,
    "da_min_c": 4.0e10,
    "dddmp": 0.2,
    "dd8": 1.0e14,
    "absdt": DT,
}


def axis_offsets(origin: tuple[int, ...], domain: tuple[int, ...], gtscript: Any) -> dict[str, Any]:
    """NDSL's ``GridIndexing.axis_offsets`` for a rank holding the whole tile."""
    I, J = gtscript.I, gtscript.J
    i_s, j_s = H - origin[0], H - origin[1]
    i_e = H + NX - 1 - (origin[0] + domain[0] - 1)
    j_e = H + NY - 1 - (origin[1] + domain[1] - 1)
    return {
        "i_start": I[0] + i_s,
        "local_is": I[0] + i_s,
        "i_end": I[-1] + i_e,
        "local_ie": I[-1] + i_e,
        "j_start": J[0] + j_s,
        "local_js": J[0] + j_s,
        "j_end": J[-1] + j_e,
        "local_je": J[-1] + j_e,
    }


def case_inputs(
    case: Case, params: list[tuple[str, Any]], typing_mod: Any, st: dict[str, np.ndarray]
):
    """(fields, scalars) for a call: fields by argument name as fresh arrays."""
    kinds = {
        id(typing_mod.FloatField): ("IJK", np.float64),
        id(typing_mod.FloatFieldIJ): ("IJ", np.float64),
        id(typing_mod.FloatFieldK): ("K", np.float64),
        id(typing_mod.IntFieldIJ): ("IJ", np.int64),
        id(typing_mod.IntField): ("IJK", np.int64),
    }
    overrides = dict(case.fields)
    fields: dict[str, np.ndarray] = {}
    scalars: dict[str, Any] = {}
    for name, ann in params:
        if id(ann) not in kinds:
            scalars[name] = dict(case.scalars).get(name, SCALARS.get(name))
            if scalars[name] is None:
                raise KeyError(f"no value for scalar argument {name!r} of {case.name}")
            continue
        axes, dtype = kinds[id(ann)]
        key = overrides.get(name, ALIASES.get(name, "generic"))
        if key == "delta_mass":
            base = st["delp"] / 9.80665
        elif key == "generic":
            base = 1.5 + 0.5 * st["noise"]
        else:
            base = st[key]
        shift = zlib.crc32(f"{case.name}:{name}".encode()) % st["noise"].size
        noise = np.roll(st["noise"].ravel(), shift).reshape(SHAPE3)
        if base.ndim == 3:
            base3 = base
        elif base.ndim == 2:
            base3 = base[:, :, None] * np.ones(SHAPE3[2])
        else:
            base3 = np.ones(SHAPE3[:2])[:, :, None] * base[None, None, :]
        arr = base3 if key == "nord" else base3 * (1.0 + 1e-3 * noise)
        if axes == "IJ":
            arr = arr[:, :, 0]
        elif axes == "K":
            arr = arr[0, 0, :]
        arr = np.ascontiguousarray(arr, dtype=np.float64)
        if dtype == np.int64:
            arr = np.round(np.abs(arr) % 3).astype(np.int64)
        fields[name] = arr
    return fields, scalars


def digest(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for k in sorted(arrays):
        h.update(k.encode())
        h.update(np.ascontiguousarray(arrays[k]).tobytes())
    return h.hexdigest()[:16]


# --- run ----------------------------------------------------------------------------------------


def _import_gt4py(impl: str):
    os.environ.setdefault("GT_CACHE_ROOT", f"/tmp/pyfv3-compare-gtcache-{os.getuid()}")
    if impl == "stencilkit":
        from stencilkit.compat import install_gt4py_alias

        install_gt4py_alias()
    import gt4py
    from gt4py.cartesian import gtscript

    aliased = bool(getattr(gt4py, "__stencilkit_alias__", False))
    if aliased != (impl == "stencilkit"):
        raise SystemExit(f"--impl {impl}, but gt4py here is {getattr(gt4py, '__file__', None)}")
    return gt4py, gtscript


def run(opts: argparse.Namespace) -> None:
    source = os.environ.get("PYFV3_SOURCE")
    if not source:
        raise SystemExit("set PYFV3_SOURCE to a pyFV3 checkout (the folder holding pyFV3/)")
    gt4py, gtscript = _import_gt4py(opts.impl)
    sys.path[:0] = [p for p in (source, os.environ.get("PYFV3_NDSL")) if p]
    typing_mod = importlib.import_module("ndsl.dsl.typing")
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    st = initial_state(Path(opts.state) if opts.state else out.parent / "state.npz")
    results: dict[str, Any] = {
        "impl": opts.impl,
        "backend": opts.backend,
        "python": sys.version.split()[0],
        "gt4py": f"{getattr(gt4py, '__version__', '?')}",
        "numpy": np.__version__,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "cases": {},
    }
    for case in CASES:
        if opts.only and not any(s in case.name for s in opts.only):
            continue
        res: dict[str, Any] = {"status": "?"}
        results["cases"][case.name] = res
        try:
            mod = importlib.import_module(f"pyFV3.stencils.{case.module}")
        except Exception as exc:
            res.update(status="import_error", error=_err(exc))
            continue
        fn = getattr(mod, case.func)
        origin = (H + case.origin_add[0], H + case.origin_add[1], case.origin_add[2])
        domain = (NX + case.domain_add[0], NY + case.domain_add[1], NZ + case.domain_add[2])
        externals = {**axis_offsets(origin, domain, gtscript), **dict(case.externals)}
        t0 = time.perf_counter()
        try:
            stencil = gtscript.stencil(backend=opts.backend, definition=fn, externals=externals)
        except Exception as exc:
            res.update(status="build_error", error=_err(exc))
            print(f"{case.name}: BUILD ERROR {res['error'].splitlines()[0][:200]}", flush=True)
            continue
        res["build_s"] = round(time.perf_counter() - t0, 3)
        params = [(p.name, p.annotation) for p in inspect.signature(fn).parameters.values()]
        fields, scalars = case_inputs(case, params, typing_mod, st)
        before = {k: v.copy() for k, v in fields.items()}
        res["inputs"] = digest(before)
        try:
            t0 = time.perf_counter()
            stencil(**fields, **scalars, origin=origin, domain=domain)
            res["run_s"] = round(time.perf_counter() - t0, 4)
        except Exception as exc:
            res.update(status="run_error", error=_err(exc))
            print(f"{case.name}: RUN ERROR {res['error'].splitlines()[0][:200]}", flush=True)
            continue
        saved: dict[str, np.ndarray] = {}
        for k, arr in fields.items():
            changed = ~((arr == before[k]) | (np.isnan(arr) & np.isnan(before[k])))
            saved[f"mask:{k}"] = np.packbits(changed)
            if changed.any():
                saved[f"out:{k}"] = arr
                saved[f"shape:{k}"] = np.array(arr.shape)
        np.savez(out / f"{_fname(case.name)}.npz", **saved)
        res.update(status="ok", outputs=sorted(k[4:] for k in saved if k.startswith("out:")))
        print(f"{case.name}: ok ({res['build_s']} s build) writes {res['outputs']}", flush=True)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    n = sum(r["status"] == "ok" for r in results["cases"].values())
    print(f"{n}/{len(results['cases'])} cases ran; results in {out}")


def _err(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}\n" + "".join(traceback.format_exception(exc)[-3:])


def _fname(name: str) -> str:
    return name.replace("[", "_").replace("]", "").replace("=", "")


# --- compare ------------------------------------------------------------------------------------


def compare(opts: argparse.Namespace) -> int:
    a_dir, b_dir = Path(opts.a), Path(opts.b)
    ra = json.loads((a_dir / "results.json").read_text())
    rb = json.loads((b_dir / "results.json").read_text())
    print(
        f"A = {ra['impl']} {ra['backend']} (gt4py {ra['gt4py']}, py {ra['python']}, numpy {ra['numpy']})"
    )
    print(
        f"B = {rb['impl']} {rb['backend']} (gt4py {rb['gt4py']}, py {rb['python']}, numpy {rb['numpy']})"
    )
    tally: dict[str, int] = {}
    for name in ra["cases"]:
        ca, cb = ra["cases"][name], rb["cases"].get(name)
        if cb is None:
            continue
        if ca["status"] != "ok" or cb["status"] != "ok":
            verdict = f"not compared (A {ca['status']}, B {cb['status']})"
            tally["not compared"] = tally.get("not compared", 0) + 1
            print(f"{name}: {verdict}")
            for tag, c in (("A", ca), ("B", cb)):
                if c["status"] != "ok":
                    print(f"    {tag}: {c['error'].splitlines()[0][:300]}")
            continue
        if ca["inputs"] != cb["inputs"]:
            print(f"{name}: inputs differ ({ca['inputs']} vs {cb['inputs']}): not compared")
            tally["inputs differ"] = tally.get("inputs differ", 0) + 1
            continue
        with (
            np.load(a_dir / f"{_fname(name)}.npz") as fa,
            np.load(b_dir / f"{_fname(name)}.npz") as fb,
        ):
            lines, worst = _compare_case(fa, fb)
        tally[worst] = tally.get(worst, 0) + 1
        print(f"{name}: {worst}")
        for line in lines:
            print(f"    {line}")
    print("summary:", ", ".join(f"{v} {k}" for k, v in sorted(tally.items())))
    return 0


RANK = {"bitwise": 0, "within 1e-12 rel": 1, "differs": 2}


def _compare_case(fa: Any, fb: Any) -> tuple[list[str], str]:
    lines, worst = [], "bitwise"
    names = sorted({k[5:] for k in fa.files if k.startswith("mask:")})
    for n in names:
        ma, mb = fa[f"mask:{n}"], fb[f"mask:{n}"]
        if not (ma.any() or mb.any()):
            continue  # read only on both
        if not np.array_equal(ma, mb):
            shape = tuple(fa[f"shape:{n}"]) if f"shape:{n}" in fa.files else tuple(fb[f"shape:{n}"])
            size = int(np.prod(shape))
            ua = np.unpackbits(ma)[:size].reshape(shape)
            ub = np.unpackbits(mb)[:size].reshape(shape)
            only_a, only_b = np.argwhere(ua & ~ub), np.argwhere(ub & ~ua)
            lines.append(
                f"{n}: changed points differ: {len(only_a)} only in A (first {only_a[:3].tolist()}),"
                f" {len(only_b)} only in B (first {only_b[:3].tolist()})"
            )
            worst = "differs"
            if f"out:{n}" not in fa.files or f"out:{n}" not in fb.files:
                continue
        a, b = fa[f"out:{n}"], fb[f"out:{n}"]
        if np.array_equal(a, b, equal_nan=True):
            lines.append(f"{n}: bitwise equal ({int(np.unpackbits(ma).sum())} points written)")
            continue
        d = np.abs(a - b)
        scale = np.maximum(np.maximum(np.abs(a), np.abs(b)), np.finfo(np.float64).tiny)
        rel = np.where(np.isnan(d), np.inf, d / scale)
        nan_mismatch = int((np.isnan(a) != np.isnan(b)).sum())
        kind = (
            "within 1e-12 rel" if float(np.nanmax(rel)) <= 1e-12 and not nan_mismatch else "differs"
        )
        where = np.unravel_index(int(np.nanargmax(rel)), a.shape)
        lines.append(
            f"{n}: {kind}: max abs {float(np.nanmax(d)):.3e}, max rel {float(np.nanmax(rel)):.3e} at"
            f" {tuple(int(x) for x in where)}, {int((d != 0).sum())} points differ"
            + (f", NaN in one only at {nan_mismatch}" if nan_mismatch else "")
        )
        if RANK[kind] > RANK[worst]:
            worst = kind
    return lines, worst


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="build and run every case on one implementation and backend")
    r.add_argument("--impl", choices=("stencilkit", "gt4py"), required=True)
    r.add_argument("--backend", default="numpy")
    r.add_argument("--out", required=True)
    r.add_argument("--state", help="the state file (default: <out>/../state.npz)")
    r.add_argument("--only", nargs="*", help="substrings of case names to run")
    c = sub.add_parser("compare", help="compare two runs")
    c.add_argument("a")
    c.add_argument("b")
    opts = p.parse_args(argv)
    if opts.cmd == "run":
        run(opts)
        return 0
    return compare(opts)


if __name__ == "__main__":
    sys.exit(main())
