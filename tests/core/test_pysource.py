"""Reading a DSL function's source (core/pysource.py): the block found by indentation is the
block ``inspect.getsourcelines`` finds by tokenizing, or, where indentation alone cannot tell
(a string or bracket the cut would split), ``inspect`` reads it."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from stencilkit.core import pysource
from stencilkit.core.errors import StencilError

# written to a file of its own: the formatter would rewrite the layouts under test
SOURCE = '''
def _tag(f):
    return f


def _with(*_):
    return _tag


def plain(a, b):
    return a + b


@_tag
@_with(
    "over",
    "lines",
)
def decorated(a):
    x = a
# a comment at column 0 inside the body does not end it
    return x


def long_signature(
    a,
    b,
):
    return (
        a
        + b
    )


def dedented_string(a):
    s = """
text at column 0 inside a string
"""
    return a, s


def continued(a):
    x = a + \\
1
    return x


def outer():
    def inner(a):
        return a

    return inner


class Holder:
    def method(self, a):
        return a

    # a comment after the method
'''
#: the functions whose block indentation finds; the others split a string or a continued line
BY_INDENTATION = {"plain", "long_signature", "inner", "method", "decorated"}
NAMES = ["plain", "decorated", "long_signature", "dedented_string", "continued", "inner", "method"]


@pytest.fixture(scope="module")
def functions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = Path(tmp_path_factory.mktemp("pysource")) / "sk_pysource_cases.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    found = {n: getattr(module, n) for n in NAMES if hasattr(module, n)}
    found["inner"] = module.outer()
    found["method"] = module.Holder.method
    return found


def _code(lines: list[str]) -> list[str]:
    return [x for x in lines if x.strip() and not x.strip().startswith("#")]


@pytest.mark.parametrize("name", NAMES)
def test_the_block_is_inspects(functions: dict[str, Any], name: str) -> None:
    fn = functions[name]
    want_lines, want_first = inspect.getsourcelines(fn)
    found = pysource._block_by_indentation(fn)
    if name in BY_INDENTATION:
        assert found is not None
        lines, first, module = found
        assert first == want_first
        assert _code(lines) == _code(want_lines)
        (tree,) = module.body
        assert isinstance(tree, ast.FunctionDef) and tree.name == fn.__name__
    else:
        assert found is None
    src = pysource.read_function(fn, pysource.FunctionSource, StencilError, "functions")
    assert src.first_line == want_first and src.tree.name == fn.__name__
    want_tree = ast.parse(textwrap.dedent("".join(want_lines))).body[0]
    assert ast.dump(src.tree) == ast.dump(want_tree)
    # a node's location points at its line of the file
    ret = next(n for n in ast.walk(src.tree) if isinstance(n, ast.Return))
    loc = src.loc(ret)
    assert loc.line == want_first + ret.lineno - 1
    assert "return" in want_lines[ret.lineno - 1]


def test_source_that_is_no_file_is_refused() -> None:
    namespace: dict[str, Any] = {}
    exec("def made(a):\n    return a\n", namespace)
    assert pysource._block_by_indentation(namespace["made"]) is None
    with pytest.raises(StencilError, match="cannot read the source of 'made'"):
        pysource.read_function(namespace["made"], pysource.FunctionSource, StencilError, "x")
