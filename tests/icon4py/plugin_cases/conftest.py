"""The fixtures icon4py's component conftest files bring in (icon4py.model.testing.fixtures)."""

from icon4py.model.testing.fixtures.datatest import backend, backend_like  # noqa: F401
from icon4py.model.testing.fixtures.stencil_tests import data_alloc, grid, grid_manager  # noqa: F401
