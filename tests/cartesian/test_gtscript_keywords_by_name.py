"""GTScript's keywords used without importing them (gt4py knows them by name): computation,
interval, the iteration orders, horizontal/region, I/J, __INLINED and the math builtins; a
name the module binds still wins."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from stencilkit.cartesian import gtscript
from stencilkit.cartesian.definitions import GTScriptSymbolError, GTScriptSyntaxError

# a module that imports nothing from gtscript but Field and stencil
SOURCE = """
import numpy as np
from stencilkit.cartesian.gtscript import Field, stencil


def scan(a: Field[np.float64], b: Field[np.float64]):
    from __externals__ import DOUBLE
    from __gtscript__ import __INLINED

    with computation(FORWARD):
        with interval(0, 1):
            b = a
        with interval(1, None):
            if __INLINED(DOUBLE):
                b = b[0, 0, -1] + 2.0 * a
            else:
                b = b[0, 0, -1] + a
    with computation(PARALLEL), interval(...):
        with horizontal(region[I[0], :]):
            b = sqrt(abs(b))

"""

SHADOWED = """
import numpy as np
from stencilkit.cartesian.gtscript import Field

PARALLEL = 3.0  # the module's own name: it wins over the keyword


def shadowed(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a
"""


def _load(tmp_path: Path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def module(tmp_path: Path):
    yield _load(tmp_path, "unimported_keywords", SOURCE)
    del sys.modules["unimported_keywords"]


@pytest.mark.parametrize("double", [False, True])
def test_keywords_resolve_by_name(module, backend: str, arrays, double: bool) -> None:
    st = gtscript.stencil(backend, module.scan, externals={"DOUBLE": double})
    a_host = np.random.default_rng(1).uniform(0.1, 1.0, (5, 4, 6))
    a, b = arrays.put(a_host), arrays.put(np.full((5, 4, 6), -7.0))
    st(a, b, origin=(1, 0, 0), domain=(3, 4, 6))
    want = np.full((5, 4, 6), -7.0)
    col = a_host[1:4].copy()
    col[:, :, 1:] *= 2.0 if double else 1.0
    want[1:4] = np.cumsum(col, axis=2)
    want[1] = np.sqrt(np.abs(want[1]))  # region I[0]: the first point of the domain
    np.testing.assert_allclose(arrays.host(b), want, rtol=1e-12)


def test_a_module_name_wins_over_the_keyword(tmp_path: Path) -> None:
    """``PARALLEL`` bound by the module is the module's value (3.0), not the keyword."""
    mod = _load(tmp_path, "shadowed_keywords", SHADOWED)
    try:
        with pytest.raises(GTScriptSyntaxError, match=r"3\.0 is not PARALLEL, FORWARD or BACKWARD"):
            gtscript.stencil("numpy", mod.shadowed)
    finally:
        del sys.modules["shadowed_keywords"]


def test_an_unknown_name_is_still_refused(backend: str) -> None:
    def bad(a: gtscript.Field[np.float64]):
        with computation(PARALLEL), interval(...):
            a = undefined_thing

    with pytest.raises(GTScriptSymbolError, match="'undefined_thing' is not defined"):
        gtscript.stencil(backend, bad)
