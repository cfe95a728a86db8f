"""StencilTest suites written the way icon4py 0.4.1 writes its own (icon4py.model.testing's
``StencilTest``, ``static_reference``, ``input_data_fixture``, ``STATIC_PARAMS``), for one of
its stencils: run by test_icon4py_testing_plugin.py with icon4py's pytest plugin, so that CI
exercises that machinery on every backend even where icon4py's own test tree is not at hand.
Not collected by stencilkit's suite (no ``test_`` prefix): the inner pytest is given the file."""

from __future__ import annotations

from typing import Any, ClassVar

import gt4py.next as gtx
import numpy as np
from icon4py.model.atmosphere.dycore.stencils.add_analysis_increments_to_vn import (
    add_analysis_increments_to_vn,
)
from icon4py.model.common import dimension as dims
from icon4py.model.common.grid import base
from icon4py.model.common.type_alias import vpfloat, wpfloat
from icon4py.model.testing import stencil_tests

_DOMAIN = ("horizontal_start", "horizontal_end", "vertical_start", "vertical_end")


class TestAddAnalysisIncrementsToVn(stencil_tests.StencilTest):
    PROGRAM = add_analysis_increments_to_vn
    OUTPUTS = ("vn",)
    STATIC_PARAMS: ClassVar = {
        stencil_tests.StandardStaticVariants.NONE: (),
        stencil_tests.StandardStaticVariants.COMPILE_TIME_DOMAIN: _DOMAIN,
        stencil_tests.StandardStaticVariants.COMPILE_TIME_VERTICAL: _DOMAIN[2:],
    }

    @stencil_tests.static_reference
    def reference(
        grid: base.Grid,
        *,
        vn_incr: np.ndarray,
        vn: np.ndarray,
        iau_wgt_dyn: float,
        horizontal_start: int,
        horizontal_end: int,
        vertical_start: int,
        vertical_end: int,
        **kwargs: Any,
    ) -> dict:
        out = vn.copy()
        inside = (slice(horizontal_start, horizontal_end), slice(vertical_start, vertical_end))
        out[inside] = vn[inside] + iau_wgt_dyn * vn_incr[inside]
        return dict(vn=out)

    @stencil_tests.input_data_fixture
    def input_data(data_alloc: stencil_tests.DataAllocationWrapper, grid: base.Grid) -> dict:
        return dict(
            vn_incr=data_alloc.random_field(dims.EdgeDim, dims.KDim, dtype=vpfloat),
            vn=data_alloc.random_field(dims.EdgeDim, dims.KDim, dtype=wpfloat),
            iau_wgt_dyn=wpfloat(0.375),
            horizontal_start=gtx.int32(2),
            horizontal_end=gtx.int32(grid.num_edges - 1),
            vertical_start=1,
            vertical_end=gtx.int32(grid.num_levels - 2),
        )
