"""icon4py's own model driver (icon4py-driver 0.4.1) run unchanged: a grid from
icon-grid-generator, the Jablonowski-Williamson (global) or Gauss3D (torus) experiment, N time
steps of diffusion + ``solve_nonhydro``; on stencilkit (through the gt4py alias) or on real gt4py.

Each step's prognostic fields (vn, w, rho, exner, theta_v) are saved, so that two runs can be
compared step by step, and each step's wall time is recorded (the first step apart: it builds).

    # a run (either library; real gt4py when --impl gt4py, from a venv that has it)
    python benchmarks/icon4py_driver.py run --impl stencilkit --backend cpu --grid R2B4 \
        --levels 80 --steps 10 --dir /tmp/icon-driver
    # two runs' fields and times side by side
    python benchmarks/icon4py_driver.py compare --dir /tmp/icon-driver stencilkit-cpu gt4py-gtfn_cpu

``--backend`` takes icon4py's own names (``embedded``, ``gtfn_cpu``, ``gtfn_gpu``, ``cpu``,
``gpu``: ``model_backends.BACKENDS``). The grid is ``R<n>B<k>`` (global, JW) or
``torus<nx>x<ny>`` (planar torus, Gauss3D). Needs icon4py-driver 0.4.1 and icon-grid-generator
installed (``scripts/icon4py_env.sh --suite`` then ``pip install devtools typer
icon-grid-generator``); never installs or fetches anything itself.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

PROGNOSTICS = ("vn", "w", "rho", "exner", "theta_v")

_VERTICAL = """\
vertical_grid:
  num_levels: {levels}
  maximal_layer_thickness: 25000.0
  top_height_limit_for_maximal_layer_thickness: 15000.0
  lowest_layer_thickness: 50.0
  model_top_height: {top}
  flat_height: 16000.0
  stretch_factor: 1.0
  rayleigh_damping_height: {damping}
  htop_moist_proc: 22500.0
  file_path:
  SLEVE_decay_scale_1: 4000.0
  SLEVE_decay_scale_2: 2500.0
  SLEVE_decay_exponent: 1.2
  _SLEVE_minimum_layer_thickness_1: 100.0
  _SLEVE_minimum_layer_thickness_2: 500.0
  _SLEVE_minimum_relative_layer_thickness_1: 0.3333333333333333
  _SLEVE_minimum_relative_layer_thickness_2: 0.5
"""

_COMMON = """\
geometry:
  use_analytical_means: true
metrics:
  exner_expol: 0.3333333333333333
  vwind_offctr: 0.15
  thslp_zdiffu: 0.025
  thhgtd_zdiffu: 200.0
  rayleigh_type: klemp
  rayleigh_coeff: 0.05
  divdamp_trans_start: 12500.0
  divdamp_trans_end: 17500.0
  divdamp_type: 3
  igradp_method: 3
interpolation:
  divergence_averaging_central_cell_weight: 0.5
  max_nudging_coefficient: 0.375
  _nudge_max_coeff:
  nudge_efold_width: 2.0
  nudge_zone_width: 10
  rbf_kernel_cell: gaussian
  rbf_kernel_edge: inverse_multiquadratic
  rbf_kernel_vertex: gaussian
  lsq_dim_unk: 2
  lsq_dim_c: 3
  lsq_wgt_exp: 2
  lsq_high_ord: 1
prescribed_tendencies:
  data_path:
driver:
  experiment_name: {name}
  profiling_options:
  dtime: {dtime}
  start_of_simulation: '2020-01-01T00:00:00'
  start_of_timestepping: '2020-01-01T00:00:00'
  end_of_simulation:
    type: numsteps
    value: {steps}
  output_path: {output}
  apply_extra_second_order_divdamp: false
  do_prep_adv: false
  diffuse_before_time_loop: false
  vertical_cfl_threshold: 0.85
  ndyn_substeps: {substeps}
  enable_statistics_logging: false
  enable_output: false
  output_backend: zarr
  output_mode: distributed
"""

#: Jablonowski-Williamson baroclinic wave: its topography and its initial state
_JW = """\
topography:
  config:
    type: jablonowski_williamson
    u0: 35.0
    eta_0: 0.252
initial_condition:
  config:
    type: jablonowski_williamson
    p_sfc: 100000.0
    baroclinic_amplitude: 1.0
    u0: 35.0
    temp0: 288.0
    eta_0: 0.252
    eta_t: 0.2
    gamma: 0.005
    dtemp: 480000.0
    lon_perturbation_center: 0.3490658503988659
    lat_perturbation_center: 0.6981317007977318
    rh_at_1000hpa: 0.7
    qv_max: 0.02
    moisture_init_iterations: 10
    global_moisture_content: 25.006
    normalize_global_moisture: false
"""

#: Gauss3D on a torus: a Gaussian hill, an isothermal atmosphere at rest plus a uniform wind
_GAUSS3D = """\
topography:
  config:
    type: gaussian_hill
initial_condition:
  config:
    type: gauss_3d
"""


def experiment_yaml(
    grid: str, *, levels: int, steps: int, dtime: float, substeps: int, output: Path
) -> str:
    """The experiment's configuration, in the driver's own YAML form."""
    torus = grid.startswith("torus")
    text = _COMMON.format(
        name=f"stencilkit-{grid}", dtime=dtime, steps=steps, output=output, substeps=substeps
    )
    text += _VERTICAL.format(levels=levels, top=23500.0, damping=45000.0 if not torus else 12500.0)
    return text + (_GAUSS3D if torus else _JW)


def make_grid(grid: str, directory: Path) -> Path:
    """The grid file, from icon-grid-generator (kept in ``directory`` for later runs)."""
    path = directory / f"{grid}.nc"
    if path.exists():
        return path
    import grid_generator

    if grid.startswith("torus"):
        nx, ny = (int(n) for n in grid[len("torus") :].split("x"))
        spec: Any = grid_generator.TorusGridSpec(nx=nx, ny=ny, edge_length=2000.0, name=grid)
    else:
        spec = grid
    directory.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    grid_generator.generate_grid(spec).to_netcdf(tmp)
    os.replace(tmp, path)
    return path


def _asnumpy(field: Any) -> np.ndarray:
    data = field.ndarray
    get = getattr(data, "get", None)  # CuPy
    # a copy: the driver swaps two time levels, so a view would change under a snapshot
    return np.array(get() if get is not None else data, copy=True)


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.impl == "stencilkit":
        import stencilkit.compat

        stencilkit.compat.install_gt4py_alias()
    directory = Path(args.dir)
    grid_file = make_grid(args.grid, directory / "grids")
    label = f"{args.impl}-{args.backend}{args.label}"
    out_dir = directory / label
    out_dir.mkdir(parents=True, exist_ok=True)

    t_import = time.perf_counter()
    from icon4py.model.common import model_backends, model_options
    from icon4py.model.common.config import config_io
    from icon4py.model.common.decomposition import definitions as decomposition_defs
    from icon4py.model.driver import config as driver_config
    from icon4py.model.driver import driver, driver_utils

    import_s = time.perf_counter() - t_import
    text = experiment_yaml(
        args.grid,
        levels=args.levels,
        steps=args.steps,
        dtime=args.dtime,
        substeps=args.substeps,
        output=out_dir / "output",
    )
    config = config_io.read_yaml_str(text, driver_config.ExperimentConfig)
    # dynamics and diffusion with the granules' defaults (the YAML form of `{}` is left to them)
    from icon4py.model.atmosphere.diffusion import diffusion
    from icon4py.model.atmosphere.dycore import solve_nonhydro

    config = type(config)(
        **{
            **{f: getattr(config, f) for f in config.__dataclass_fields__},
            "nonhydrostatic": solve_nonhydro.NonHydrostaticConfig(),
            "diffusion": diffusion.DiffusionConfig(),
        }
    )
    backend = model_options.customize_backend(
        program=None, backend=driver_utils.get_backend_from_name(args.backend)
    )
    allocator = model_backends.get_allocator(backend)
    process_props = decomposition_defs.get_process_properties(
        decomposition_defs.get_runtype(with_mpi=False)
    )

    snapshots: list[dict[str, np.ndarray]] = []
    step_seconds: list[float] = []
    original = driver.Icon4pyDriver._integrate_one_time_step

    masses: list[float] = []

    def total_mass(self: Any, state: Any) -> float:
        """Air mass of the whole atmosphere: sum of rho * cell area * layer thickness."""
        from icon4py.model.common.grid import geometry_attributes as geom_attr
        from icon4py.model.common.metrics import metrics_attributes as metrics_attr

        area = _asnumpy(self.static_field_factories.geometry.get(geom_attr.CELL_AREA))
        dz = _asnumpy(self.static_field_factories.metrics.get(metrics_attr.DDQZ_Z_FULL))
        return float(np.sum(_asnumpy(state.rho) * area[:, np.newaxis] * dz))

    profiler = cProfile.Profile() if args.profile else None

    def timed_step(self: Any, **kwargs: Any) -> None:
        if not masses:
            masses.append(total_mass(self, kwargs["prognostic_states"].current))
        start = time.perf_counter()
        if profiler is not None and step_seconds:  # the steps after the first (builds) only
            profiler.runcall(original, self, **kwargs)
        else:
            original(self, **kwargs)
        from icon4py.model.common.utils import device_utils

        device_utils.sync(self.backend)
        step_seconds.append(time.perf_counter() - start)
        current = kwargs["prognostic_states"].current
        snapshots.append({name: _asnumpy(getattr(current, name)) for name in PROGNOSTICS})
        masses.append(total_mass(self, current))

    driver.Icon4pyDriver._integrate_one_time_step = timed_step  # observe each step, change nothing
    t0 = time.perf_counter()
    grid_manager = driver_utils.create_grid_manager(
        grid_file_path=grid_file,
        vertical_grid_config=config.vertical_grid,
        allocator=allocator,
        process_props=process_props,
    )
    t_grid = time.perf_counter()
    _states, icon_driver = driver.run_driver(
        config=config, grid_manager=grid_manager, process_props=process_props, backend=backend
    )
    total = time.perf_counter() - t0
    np.savez(
        out_dir / "fields.npz",
        **{f"{name}_{i}": a for i, snap in enumerate(snapshots) for name, a in snap.items()},
    )
    result = {
        "impl": args.impl,
        "backend": args.backend,
        "grid": args.grid,
        "levels": args.levels,
        "steps": len(step_seconds),
        "step_seconds": step_seconds,
        "import_s": import_s,
        "grid_manager_s": t_grid - t0,
        "total_s": total,
        "setup_s": total - (t_grid - t0) - sum(step_seconds),
        "cells": int(icon_driver.grid.num_cells),
        "mass": masses,
        "finite": bool(all(np.isfinite(a).all() for snap in snapshots for a in snap.values())),
    }
    (out_dir / "result.json").write_text(json.dumps(result, indent=1))
    if profiler is not None:
        profiler.dump_stats(args.profile)
        pstats.Stats(args.profile).sort_stats("cumulative").print_stats(40)
    print(json.dumps({k: v for k, v in result.items() if k != "step_seconds"}))
    print("step seconds:", " ".join(f"{s:.3f}" for s in step_seconds))
    drift = max(abs(m - masses[0]) for m in masses) / masses[0] if masses else float("nan")
    print(f"total mass {masses[0]:.15e} kg, largest relative change over the run {drift:.2e}")
    return result


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
    ia = a.astype(np.float64).view(np.int64)
    ib = b.astype(np.float64).view(np.int64)
    return int(np.max(np.abs(ia - ib))) if a.size else 0


def compare(args: argparse.Namespace) -> None:
    directory = Path(args.dir)
    a_name, b_name = args.runs
    fa, fb = (np.load(directory / name / "fields.npz") for name in (a_name, b_name))
    ra, rb = (
        json.loads((directory / name / "result.json").read_text()) for name in (a_name, b_name)
    )
    steps = min(ra["steps"], rb["steps"])
    print(
        f"{a_name} vs {b_name}: {ra['grid']}, {ra['cells']} cells, {ra['levels']} levels, {steps} steps"
    )
    print(f"{'step':>4} " + " ".join(f"{n:>22}" for n in PROGNOSTICS))
    for i in range(steps):
        cells = []
        for name in PROGNOSTICS:
            x, y = fa[f"{name}_{i}"], fb[f"{name}_{i}"]
            if np.array_equal(x, y):
                cells.append("bitwise")
            else:
                scale = max(float(np.max(np.abs(y))), 1e-300)
                cells.append(f"{float(np.max(np.abs(x - y))) / scale:.1e} ({_ulps(x, y)} ulp)")
        print(f"{i:>4} " + " ".join(f"{c:>22}" for c in cells))
    for r, name in ((ra, a_name), (rb, b_name)):
        later = r["step_seconds"][1:]
        print(
            f"{name}: first step {r['step_seconds'][0]:.3f} s, later steps median "
            f"{float(np.median(later)) if later else float('nan'):.4f} s, setup {r['setup_s']:.1f} s"
        )
    la, lb = ra["step_seconds"][1:], rb["step_seconds"][1:]
    if la and lb:
        print(
            f"per step: {a_name} {float(np.median(la)) / float(np.median(lb)):.2f} of {b_name}'s time"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--impl", choices=("stencilkit", "gt4py"), default="stencilkit")
    r.add_argument("--backend", default="embedded")
    r.add_argument("--grid", default="R2B4")
    r.add_argument("--levels", type=int, default=30)
    r.add_argument("--steps", type=int, default=10)
    r.add_argument("--dtime", type=float, default=300.0)
    r.add_argument("--substeps", type=int, default=5)
    r.add_argument("--dir", default="/tmp/icon-driver")
    r.add_argument("--label", default="", help="appended to the run's folder name")
    r.add_argument(
        "--profile", default="", help="cProfile the steps after the first into this file"
    )
    c = sub.add_parser("compare")
    c.add_argument("--dir", default="/tmp/icon-driver")
    c.add_argument("runs", nargs=2)
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args)
    else:
        compare(args)


if __name__ == "__main__":
    sys.exit(main())
