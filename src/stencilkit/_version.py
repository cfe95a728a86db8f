"""The stencilkit version: its one home. ``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``),
and so do ``stencilkit.__version__``, ``stencilkit --version`` and the build cache's keys.
Change it here, with a CHANGELOG.md section of the same number."""

__version__ = "0.1.0"
