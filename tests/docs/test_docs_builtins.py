"""Every builtin has a real signature and a docstring with an example, for ``help()`` and IDEs."""

from __future__ import annotations

import inspect
import pydoc

import pytest

import stencilkit as gtx
from stencilkit.experimental import as_offset
from stencilkit.ffront import fbuiltins
from stencilkit.ir.ops import MATH_BUILTINS
from stencilkit.next.builtins import BUILTINS

NAMES = sorted(BUILTINS)


def test_every_builtin_is_listed() -> None:
    listed = {*fbuiltins.MATH_BUILTIN_NAMES, *fbuiltins.FUN_BUILTIN_NAMES, "concat_where"}
    assert listed <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_builtin_has_signature_and_example(name: str) -> None:
    fn = BUILTINS[name]
    sig = inspect.signature(fn)
    kinds = {p.kind for p in sig.parameters.values()}
    assert (
        inspect.Parameter.VAR_POSITIONAL not in kinds and inspect.Parameter.VAR_KEYWORD not in kinds
    )
    if name in MATH_BUILTINS:
        assert len(sig.parameters) == MATH_BUILTINS[name].arity
    doc = inspect.getdoc(fn)
    assert doc and "Example" in doc and f"{name}(" in doc
    assert fn.__name__ == name and fn.__module__ == "stencilkit"
    text = pydoc.render_doc(fn, renderer=pydoc.plaintext)
    assert f"{name}(" in text and "*args" not in text and doc.splitlines()[0] in text


@pytest.mark.parametrize("fn", [gtx.neighbor_sum, gtx.where, gtx.concat_where, gtx.sqrt, as_offset])
def test_help_shows_the_function_not_the_class(
    fn: object, capsys: pytest.CaptureFixture[str]
) -> None:
    help(fn)
    out = capsys.readouterr().out
    assert "(*args, **kwargs)" not in out and "class Builtin" not in out
    assert "Example" in out


def test_gt4py_signatures() -> None:
    assert (
        str(inspect.signature(gtx.neighbor_sum))
        == "(field: 'Field', /, axis: 'Dimension') -> 'Field'"
    )
    assert list(inspect.signature(gtx.broadcast).parameters) == ["field", "dims"]
    assert list(inspect.signature(gtx.astype).parameters) == ["value", "type_"]
    assert list(inspect.signature(gtx.minimum).parameters) == ["x", "y"]


def test_a_builtin_stays_itself_as_a_class_attribute() -> None:
    class Holder:
        op = gtx.sqrt

    assert Holder().op is gtx.sqrt and Holder.op is gtx.sqrt
