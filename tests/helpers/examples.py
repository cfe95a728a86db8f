"""Loading the scripts in examples/ as modules, for the tests that run them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).parents[2] / "examples"


def load_example(name: str) -> ModuleType:
    """``examples/<name>.py`` as a module, loaded once (``stencilkit_examples_<name>``)."""
    key = f"stencilkit_examples_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module  # the DSL frontend reads the source through the module
        spec.loader.exec_module(module)
    return sys.modules[key]
