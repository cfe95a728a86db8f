"""The alias serves the gt4py modules GT4Py's own tests import beside gtscript:
``gt4py.cartesian.utils`` (Registry, slugify), ``gt4py.cartesian.frontend.exceptions`` /
``gtscript_frontend`` (the error classes), ``gt4py.storage.cartesian.utils`` (cpu_copy) and
``gt4py.cartesian.testing``."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from stencilkit.cartesian import definitions
from stencilkit.compat import install_gt4py_alias, uninstall_gt4py_alias


@pytest.fixture
def alias() -> Iterator[None]:
    install_gt4py_alias()
    yield
    uninstall_gt4py_alias()


def test_utils_registry_and_slugify(alias: None) -> None:
    from gt4py.cartesian import utils as gt_utils

    r = gt_utils.Registry()
    r.register("copy", print)
    assert list(r) == ["copy"] and r["copy"] is print
    with pytest.raises(ValueError, match="already registered"):
        r.register("copy", len)
    assert gt_utils.slugify("gt:cpu_ifirst", valid_symbols="") == "gtcpuifirst"
    assert gt_utils.shashed_id("a", 1) == gt_utils.shashed_id("a", 1) != gt_utils.shashed_id("b")


def test_frontend_error_classes(alias: None) -> None:
    from gt4py.cartesian.frontend import gtscript_frontend
    from gt4py.cartesian.frontend.exceptions import GTScriptSyntaxError

    assert GTScriptSyntaxError is gtscript_frontend.GTScriptSyntaxError
    assert GTScriptSyntaxError is definitions.GTScriptSyntaxError


def test_storage_utils_cpu_copy(alias: None) -> None:
    from gt4py.storage.cartesian import utils as storage_utils

    a = np.random.default_rng(0).standard_normal((3, 4))
    c = storage_utils.cpu_copy(a[:, 1:])
    assert c.base is None or c.base is not a
    np.testing.assert_array_equal(c, a[:, 1:])
    c[0, 0] = 99.0
    assert a[0, 1] != 99.0


def test_testing_module(alias: None) -> None:
    from gt4py.cartesian import testing as gt_testing

    assert {"StencilTestSuite", "field", "parameter", "global_name", "none"} <= set(dir(gt_testing))


def test_core_definitions_cupy_device_type(alias: None) -> None:
    """``gt4py._core.definitions.CUPY_DEVICE_TYPE`` and ``cp``, as GT4Py's layout tests read
    them: None without CuPy, else the kind of GPU CuPy runs on."""
    import importlib.util

    from gt4py._core import definitions as core_defs

    if importlib.util.find_spec("cupy") is None:
        assert core_defs.cp is None and core_defs.CUPY_DEVICE_TYPE is None
    else:
        assert core_defs.CUPY_DEVICE_TYPE in (core_defs.DeviceType.CUDA, core_defs.DeviceType.ROCM)
    with pytest.raises(AttributeError, match="no attribute 'NO_SUCH_NAME'"):
        core_defs.NO_SUCH_NAME  # noqa: B018
