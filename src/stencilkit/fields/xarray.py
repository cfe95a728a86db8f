"""Fields as ``xarray.DataArray`` and back, keeping dimension names, kinds and the domain origin.

A field on ``{I: 3:13, K: 0:5}`` becomes a DataArray with dims ``("I", "K")`` and integer
coordinates ``I = 3..12``, ``K = 0..4`` (the domain's index ranges), so the origin survives the
round trip; each coordinate records its dimension's kind (``attrs["stencilkit_kind"]``).

CPU fields share memory with the DataArray (no copy). GPU fields follow the cupy-xarray
convention: the DataArray wraps the CuPy array on the device (``da.data`` is a
``cupy.ndarray``; ``da.as_numpy()`` copies to the host; xarray operations run on the GPU).
Pass ``host=True`` for a host copy instead, e.g. before writing to netCDF or plotting.

A field holds index ranges, not coordinate labels: :func:`~stencilkit.fields.xarray.from_xarray` refuses a DataArray
whose coordinates it would lose (latitudes, times, non-dimension coordinates) unless told
``coords="drop"``, and :func:`~stencilkit.fields.xarray.to_xarray` puts them back with ``coords=da.coords``.

>>> da = to_xarray(field, "theta")
>>> back = from_xarray(da)          # same dims, kinds, domain and values
>>> f = from_xarray(ds["t"], coords="drop")             # lat/lon/time labels dropped, knowingly
>>> out_da = to_xarray(f, "t", coords=ds["t"].coords)   # ... and put back
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.dims import Dimension, DimensionKind
from ..core.domain import Domain, UnitRange
from ..core.errors import StencilTypeError, StencilValueError
from .constructors import as_field
from .extras import require
from .field import Field

#: The attribute of a coordinate that records its dimension's kind.
KIND_ATTR = "stencilkit_kind"


def to_xarray(
    field: Field, name: str | None = None, *, host: bool | None = None, coords: Any = None
) -> Any:
    """``field`` as an ``xarray.DataArray`` named ``name``.

    Dimensions are named after the field's dimensions; each has an integer coordinate holding
    its index range (so ``da.sel(I=5)`` selects domain index 5, as ``field[I(5)]`` does).
    ``host=True`` copies a GPU field to the host; by default a GPU field stays on the GPU
    (cupy-xarray convention) and a CPU field shares its memory with the DataArray.
    ``coords`` (a DataArray's ``.coords``, or a mapping) replaces the index coordinates with
    those labels: the coordinates :func:`~stencilkit.fields.xarray.from_xarray` dropped come back; each must span
    dimensions of the field with their sizes.

    >>> da = to_xarray(gtx.as_field(gtx.domain({I: (3, 6)}), np.ones(3)))
    >>> da.dims, list(da["I"].values)
    (('I',), [3, 4, 5])
    """
    xr = require("xarray", "xarray", "Field.to_xarray()")
    if not isinstance(field, Field):
        raise StencilTypeError(f"to_xarray() takes a Field, got {type(field).__name__}")
    data = field.asnumpy() if host else field.ndarray
    index = {
        dim.value: xr.Variable(
            dim.value, np.arange(rng.start, rng.stop), {KIND_ATTR: dim.kind.value}
        )
        for dim, rng in zip(field.domain.dims, field.domain.ranges)
    }
    da = xr.DataArray(data, dims=[d.value for d in field.domain.dims], coords=index, name=name)
    if coords is None:
        return da
    labels = {}
    for key, coord in dict(coords).items():
        variable = coord.variable if hasattr(coord, "variable") else xr.Variable(key, coord)
        sizes = dict(zip(variable.dims, variable.shape))
        if any(da.sizes.get(d) != n for d, n in sizes.items()):
            raise StencilValueError(
                f"to_xarray(coords=...): coordinate {key!r} has sizes {sizes}, the field "
                f"{dict(da.sizes)}",
                hint="pass the coordinates of the DataArray this field came from",
            )
        if key in da.dims:  # keep the dimension's kind, for from_xarray
            variable = variable.copy()
            variable.attrs[KIND_ATTR] = da.coords[key].attrs[KIND_ATTR]
        labels[str(key)] = variable
    return da.assign_coords(labels)


def _dimension(da: Any, name: str, dims: Any) -> Dimension:
    if isinstance(dims, Mapping) and name in dims:
        given = dims[name]
        if not isinstance(given, Dimension):
            raise StencilTypeError(f"dims[{name!r}] must be a Dimension, got {given!r}")
        return given
    kind = DimensionKind.HORIZONTAL
    if name in da.coords:
        recorded = da.coords[name].attrs.get(KIND_ATTR)
        if recorded is not None:
            kind = DimensionKind(recorded)
    return Dimension(name, kind=kind)


def _is_index(values: Any) -> bool:
    """Whether coordinate ``values`` are integers counting up by one: an index range."""
    values = np.asarray(values)
    return (
        values.ndim == 1
        and values.dtype.kind in "iu"
        and (
            values.size == 0
            or np.array_equal(values, np.arange(values[0], values[0] + values.size))
        )
    )


def _range(da: Any, name: str, size: int) -> UnitRange:
    """The index range of dimension ``name``: its coordinate if that counts up by one, else 0..size."""
    if name not in da.coords:
        return UnitRange(0, size)
    values = np.asarray(da.coords[name].values)
    if size > 0 and _is_index(values):
        return UnitRange(int(values[0]), int(values[0]) + size)
    return UnitRange(0, size)  # labels such as latitudes: the buffer positions are the indices


def from_xarray(
    da: Any,
    dims: Sequence[Dimension] | Mapping[str, Dimension] | None = None,
    *,
    allocator: Any = None,
    device: Any = None,
    copy: bool | None = True,
    coords: str = "keep",
) -> Field:
    """A field from an ``xarray.DataArray`` (inverse of :func:`~stencilkit.fields.xarray.to_xarray`).

    ``dims`` gives the field's dimensions: a sequence in the order of ``da.dims``, or a mapping
    from DataArray dimension names to :class:`stencilkit.Dimension` objects (names not in it become
    dimensions of that name, with the kind recorded by :func:`~stencilkit.fields.xarray.to_xarray`, else horizontal).
    An integer coordinate counting up by one sets the index range (the domain origin); other
    coordinates (latitudes, times) leave the range at ``0..n``. ``allocator``/``device`` place
    the field (default: where the data is: a CuPy-backed DataArray gives a GPU field); ``copy``
    as in :func:`stencilkit.as_field`.

    A field keeps index ranges only: coordinates that are not an integer range counting up by
    one (latitudes, times), and coordinates not of a dimension, would be lost, so by default
    (``coords="keep"``) such a DataArray is refused with the names of those coordinates;
    ``coords="drop"`` drops them knowingly (``to_xarray(field, coords=da.coords)`` puts them
    back).

    >>> f = from_xarray(da, dims=[I, K])
    >>> f = from_xarray(da, dims={"lev": K})      # rename one dimension
    """
    xr = require("xarray", "xarray", "from_xarray()")
    if not isinstance(da, xr.DataArray):
        raise StencilTypeError(
            f"from_xarray() takes an xarray.DataArray, got {type(da).__name__}",
            hint="select a variable of a Dataset first, e.g. ds['temperature']",
        )
    names = [str(n) for n in da.dims]
    if dims is None or isinstance(dims, Mapping):
        field_dims = [_dimension(da, n, dims) for n in names]
    else:
        field_dims = list(dims)
        if len(field_dims) != len(names) or not all(isinstance(d, Dimension) for d in field_dims):
            raise StencilValueError(
                f"dims={dims!r} does not give one Dimension per DataArray dimension {tuple(names)}",
                hint="pass the dimensions in the order of da.dims, or a mapping {name: Dimension}",
            )
    if coords not in ("keep", "drop"):
        raise StencilValueError(f"from_xarray(coords={coords!r}): use 'keep' or 'drop'")
    ranges = [_range(da, n, s) for n, s in zip(names, da.shape)]
    lost = [str(c) for c in da.coords if c not in names or not _is_index(da.coords[c].values)]
    if lost and coords == "keep":
        raise StencilValueError(
            f"from_xarray() would drop the coordinate(s) {', '.join(map(repr, lost))}: a field "
            "holds index ranges, not coordinate labels",
            hint="pass coords='drop' to drop them, and to_xarray(field, coords=da.coords) to put "
            "them back",
        )
    data = da.data
    if not isinstance(data, np.ndarray) and not hasattr(data, "__cuda_array_interface__"):
        data = np.asarray(data)  # dask or other lazy arrays: computed here
    return as_field(
        Domain(dims=field_dims, ranges=ranges), data, allocator=allocator, device=device, copy=copy
    )
