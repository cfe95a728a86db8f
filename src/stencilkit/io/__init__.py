"""Data exchange with the tools of the field: xarray, and ICON grid files.

Each needs an optional extra and imports it only when called, so ``import stencilkit`` never
loads xarray or netCDF:

- ``pip install 'stencilkit[xarray]'``: :func:`~stencilkit.fields.xarray.to_xarray` / :func:`~stencilkit.fields.xarray.from_xarray`
  (also ``Field.to_xarray()`` and ``stencilkit.from_xarray``);
- ``pip install 'stencilkit[icon-grid]'``: :func:`~stencilkit.io.icon_grid.read_icon_grid` / :func:`~stencilkit.io.icon_grid.write_icon_grid`.

>>> da = stencilkit.io.to_xarray(field)            # dims and index coordinates from the domain
>>> mesh = stencilkit.io.read_icon_grid("icon_grid_0013_R02B04_G.nc")
"""

from ..fields.xarray import from_xarray, to_xarray
from .icon_grid import icon_grid_tables, read_icon_grid, write_icon_grid

__all__ = ["from_xarray", "icon_grid_tables", "read_icon_grid", "to_xarray", "write_icon_grid"]
