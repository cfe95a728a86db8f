"""icon4py's programs that the hoisting of values read at several neighbours changes
(``ir/neighbour_values.py``): on random inputs, the hoisted program on embedded and cpu gives
bitwise what the inlined program gives on embedded. The list is checked too: a program that
stops being hoisted (or a new one) fails here, so the benchmark's figures stay explained."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest
from icon4py_support import icon4py_skip_reason

import stencilkit as gtx
from stencilkit.ir.neighbour_values import PREFIX

pytestmark = pytest.mark.skipif(
    icon4py_skip_reason() is not None, reason=str(icon4py_skip_reason())
)

#: (module under icon4py.model, program) -> the dimensions of the temporaries it gets
HOISTED = {
    (
        "atmosphere.dycore.stencils.compute_advection_in_horizontal_momentum_equation",
        "compute_advection_in_horizontal_momentum",
    ): ["Cell,K", "Vertex,K"],
    (
        "atmosphere.dycore.stencils.compute_advection_in_vertical_momentum_equation",
        "compute_advection_in_corrector_vertical_momentum",
    ): ["Vertex,K"],
    (
        "atmosphere.dycore.stencils.compute_diagnostics_from_normal_wind",
        "compute_diagnostics_from_normal_wind",
    ): ["Vertex,K"],
    (
        "atmosphere.diffusion.stencils.calculate_enhanced_diffusion_coefficients_for_grid_point_cold_pools",
        "calculate_enhanced_diffusion_coefficients_for_grid_point_cold_pools",
    ): ["Cell,K"],
    ("common.metrics.metric_fields", "compute_ddxt_z_half_e"): ["Vertex,K"],
}
#: not hoisted: upwind choices (a value read at one neighbour of two branches); a value on the
#: output's own location (a Laplacian of a Laplacian through C2E2CO)
NOT_HOISTED = {
    (
        "atmosphere.dycore.stencils.compute_edge_diagnostics_for_dycore_and_update_vn",
        "compute_rho_theta_pgrad_and_update_vn",
    ),
    (
        "atmosphere.diffusion.stencils.apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence",
        "apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence",
    ),
}


def _program(module: str, name: str, hoist: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    from stencilkit.compat import install_gt4py_alias
    from stencilkit.next.program import Program

    install_gt4py_alias()
    obj = getattr(importlib.import_module(f"icon4py.model.{module}"), name)
    monkeypatch.setattr(gtx.config, "NEIGHBOUR_TEMPORARIES", hoist)
    prog = Program(None, None, obj.__wrapped__, obj.grid_type)
    _ = prog.definition  # parsed with this setting
    return prog


def _hoisted_dims(prog: Any) -> list[str]:
    return sorted(
        ",".join(d.value for d in t.type.dims)
        for t in prog.definition.temps
        if t.name.startswith(PREFIX)
    )


@pytest.mark.parametrize("key", sorted(NOT_HOISTED), ids=lambda k: k[1])
def test_upwind_choices_and_same_location_values_are_not_hoisted(
    key: tuple[str, str], monkeypatch
) -> None:
    assert _hoisted_dims(_program(*key, True, monkeypatch)) == []


@pytest.mark.parametrize("key", sorted(HOISTED), ids=lambda k: k[1])
def test_hoisted_program_agrees_bitwise(key: tuple[str, str], monkeypatch) -> None:
    from stencilkit.compat.icon4py.mesh import icon_mesh
    from stencilkit.compat.icon4py.run import _Call

    inlined = _program(*key, False, monkeypatch)
    hoisted = _program(*key, True, monkeypatch)
    assert _hoisted_dims(inlined) == []
    assert _hoisted_dims(hoisted) == sorted(HOISTED[key])
    mesh = icon_mesh(6, 6, nlev=8)
    for attempt in range(3):  # the vertical ranges the acceptance run tries, as it does
        try:
            ref = _Call(inlined, inlined.definition, mesh, 11, attempt).run(None)
            break
        except Exception:
            if attempt == 2:
                raise
    call = _Call(hoisted, hoisted.definition, mesh, 11, attempt)
    for backend in (None, gtx.cpu):
        got = call.run(backend)
        assert len(got) == len(ref)
        for r, g in zip(ref, got):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(r))
