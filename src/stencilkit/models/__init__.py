"""Small complete models written with the DSL, as a GT4Py user would write them.

They serve as demos (``stencilkit demo``), as end-to-end tests and as examples to copy from.
"""

from .shallow_water import DemoResult, ShallowWater, run_demo

__all__ = ["DemoResult", "ShallowWater", "run_demo"]
