"""``Field.to_xarray()`` and ``stencilkit.from_xarray``: dims, index coordinates, origin, kinds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit.core import StencilTypeError, StencilValueError

xr = pytest.importorskip("xarray")

I = gtx.Dimension("I")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Cell = gtx.Dimension("Cell")
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)


@gtx.field_operator
def _twice(a: gtx.Field[gtx.Dims[I, K], gtx.float64]) -> gtx.Field[gtx.Dims[I, K], gtx.float64]:
    return 2.0 * a


def test_to_xarray_dims_coordinates_and_origin(case: Any, rng: np.random.Generator) -> None:
    data = rng.random((6, 4))
    dom = gtx.domain({I: (-2, 4), K: (1, 5)})
    a = gtx.as_field(dom, data, allocator=case.allocator)
    out = gtx.as_field(dom, np.full((6, 4), 3.0), allocator=case.allocator)
    _twice.with_backend(case.backend)(a, out=out, domain={I: (0, 4), K: (1, 5)}, offset_provider={})
    da = out.to_xarray("twice")
    assert da.name == "twice" and da.dims == ("I", "K") and da.shape == (6, 4)
    np.testing.assert_array_equal(da["I"].values, np.arange(-2, 4))
    np.testing.assert_array_equal(da["K"].values, np.arange(1, 5))
    assert da["K"].attrs["stencilkit_kind"] == "vertical"
    host = da.as_numpy().values  # a host copy also for a CuPy-backed DataArray
    expect = np.full((6, 4), 3.0)
    expect[2:] = 2.0 * data[2:]
    np.testing.assert_array_equal(host, expect)
    # selecting by coordinate is selecting by domain index
    np.testing.assert_array_equal(da.sel(I=1).as_numpy().values, out[I(1)].asnumpy())
    if not case.on_gpu:
        assert np.shares_memory(da.values, out.ndarray)  # CPU: no copy


def test_round_trip_keeps_domain_kinds_and_values(case: Any, rng: np.random.Generator) -> None:
    data = rng.random((5, 3))
    f = case.field([Cell, C2EDim], data, origin={Cell: 7})
    back = gtx.from_xarray(f.to_xarray())
    assert back.domain == f.domain and back.domain.origin == (-7, 0)
    assert back.dims[1].kind is gtx.DimensionKind.LOCAL
    assert back.device == f.device
    np.testing.assert_array_equal(back.asnumpy(), data)
    assert gtx.Field.from_xarray(f.to_xarray()).domain == f.domain


def test_from_xarray_with_dims_and_foreign_coordinates(rng: np.random.Generator) -> None:
    data = rng.random((4, 3))
    da = xr.DataArray(data, dims=("lat", "lev"), coords={"lat": [-30.0, -10.0, 10.0, 30.0]})
    f = gtx.from_xarray(da, dims=[I, K], coords="drop")
    assert f.domain == gtx.domain({I: (0, 4), K: (0, 3)})  # latitudes are labels, not indices
    g = gtx.from_xarray(da, dims={"lev": K}, coords="drop")
    assert g.dims == (gtx.Dimension("lat"), K)
    np.testing.assert_array_equal(g.asnumpy(), data)
    shared = gtx.from_xarray(da, dims=[I, K], copy=None, coords="drop")
    assert np.shares_memory(shared.ndarray, data)
    with pytest.raises(StencilValueError, match="one Dimension per DataArray dimension"):
        gtx.from_xarray(da, dims=[I], coords="drop")
    with pytest.raises(StencilTypeError, match=r"takes an xarray\.DataArray"):
        gtx.from_xarray(xr.Dataset({"t": da}))


def test_host_copy_of_a_field(rng: np.random.Generator) -> None:
    f = gtx.as_field([I], rng.random(4))
    da = f.to_xarray(host=True)
    assert isinstance(da.data, np.ndarray)
    np.testing.assert_array_equal(da.values, f.asnumpy())


def test_netcdf_round_trip_keeps_origin(tmp_path: Path, rng: np.random.Generator) -> None:
    pytest.importorskip("netCDF4")
    f = gtx.as_field(gtx.domain({I: (3, 8), K: (0, 2)}), rng.random((5, 2)))
    f.to_xarray("t").to_netcdf(tmp_path / "t.nc")
    with xr.open_dataarray(tmp_path / "t.nc") as da:
        back = gtx.from_xarray(da.load())
    assert back.domain == f.domain and back.dims[1].kind is gtx.DimensionKind.VERTICAL
    np.testing.assert_array_equal(back.asnumpy(), f.asnumpy())


def test_core_import_loads_no_optional_extra() -> None:
    code = (
        "import sys, stencilkit, stencilkit.meshes; "
        "print(sorted(m for m in ('xarray', 'matplotlib', 'netCDF4', 'h5netcdf', 'pandas')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xarray", None)  # as if it were not installed
    with pytest.raises(
        ImportError, match=r"pip install [\s\S]*(?:stencilkit's xarray extra|\.\[xarray\])"
    ):
        gtx.as_field([I], np.ones(2)).to_xarray()


@pytest.mark.gpu
def test_gpu_field_stays_on_the_gpu_cupy_xarray_convention() -> None:
    import cupy

    f = gtx.as_field([I, K], np.arange(6.0).reshape(3, 2), allocator=gtx.gpu)
    da = f.to_xarray()
    assert isinstance(da.data, cupy.ndarray) and da.data.data.ptr == f.ndarray.data.ptr
    total = da.sum(skipna=False).data  # computed on the GPU by CuPy
    assert isinstance(total, cupy.ndarray) and total.item() == 15.0
    assert isinstance(f.to_xarray(host=True).data, np.ndarray)
    back = gtx.from_xarray(da)
    assert back.device == f.device


def test_from_xarray_refuses_to_drop_coordinates_silently(rng: np.random.Generator) -> None:
    data = rng.random((4, 3))
    lat = [-30.0, -10.0, 10.0, 30.0]
    da = xr.DataArray(
        data, dims=("lat", "lev"), coords={"lat": lat, "time": np.datetime64("2026-01-01")}
    )
    with pytest.raises(
        StencilValueError, match=r"would drop the coordinate\(s\) 'lat', 'time'"
    ) as info:
        gtx.from_xarray(da)
    assert "coords='drop'" in str(info.value) and "to_xarray(field, coords=da.coords)" in str(
        info.value
    )
    # dropped knowingly, then put back: the labels survive the round trip
    f = gtx.from_xarray(da, coords="drop")
    back = f.to_xarray("t", coords=da.coords)
    np.testing.assert_array_equal(back["lat"].values, lat)
    assert back["time"].values == np.datetime64("2026-01-01")
    np.testing.assert_array_equal(back.values, data)
    assert back.dims == ("lat", "lev") and list(back["lev"].values) == [0, 1, 2]
    # index coordinates (what to_xarray writes) are kept, never refused
    assert gtx.from_xarray(back.drop_vars(["lat", "time"])).domain == f.domain
    with pytest.raises(StencilValueError, match="coordinate 'lat' has sizes"):
        gtx.as_field([gtx.Dimension("lat")], rng.random(3)).to_xarray(coords=da.coords)
    with pytest.raises(StencilValueError, match="use 'keep' or 'drop'"):
        gtx.from_xarray(da, coords="ignore")
