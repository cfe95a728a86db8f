"""An uncaught DSL error prints the user's frames and the message, not stencilkit's internal
frames; STENCILKIT_TRACEBACK=full or STENCILKIT_LOG=debug print everything; other exceptions
and hooks set by others are left alone. Checked on scripts run in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).parents[1] / "src")
PACKAGE = str(Path(SRC) / "stencilkit")

SCRIPT = """\
import numpy as np
import stencilkit as gtx
from stencilkit import Dims, Field, float64

I = gtx.Dimension("I")


@gtx.field_operator
def bad(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
    return a + undefined_name


@gtx.program
def run(a: Field[Dims[I], float64], out: Field[Dims[I], float64]):
    bad(a, out=out)


def main():
    run(gtx.as_field([I], np.ones(4)), gtx.zeros({I: 4}), offset_provider={})


main()
"""


def _run(tmp_path: Path, source: str, **env: str) -> str:
    script = tmp_path / "model.py"
    script.write_text(source)
    full_env = {
        k: v for k, v in os.environ.items() if k not in ("STENCILKIT_LOG", "STENCILKIT_TRACEBACK")
    }
    full_env.update(PYTHONPATH=SRC, STENCILKIT_CACHE_DIR=str(tmp_path / "cache"), **env)
    r = subprocess.run(
        [sys.executable, str(script)], env=full_env, capture_output=True, text=True, check=False
    )
    assert r.returncode == 1, r.stderr
    return r.stderr


def test_a_dsl_error_shows_the_users_frames_only(tmp_path: Path) -> None:
    err = _run(tmp_path, SCRIPT)
    lines = err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert f'File "{tmp_path / "model.py"}", line 22, in <module>' in err
    assert f'File "{tmp_path / "model.py"}", line 19, in main' in err
    assert PACKAGE not in err  # no frame of stencilkit's own files
    assert "frames inside stencilkit hidden: STENCILKIT_TRACEBACK=full shows them" in err
    assert (
        "UndefinedNameError" in err and "model.py:10:16: Undeclared symbol 'undefined_name'." in err
    )
    assert "return a + undefined_name" in err
    assert len(lines) <= 12, err


@pytest.mark.parametrize("env", [{"STENCILKIT_TRACEBACK": "full"}, {"STENCILKIT_LOG": "debug"}])
def test_the_full_traceback_on_request(tmp_path: Path, env: dict[str, str]) -> None:
    err = _run(tmp_path, SCRIPT, **env)
    assert PACKAGE in err and "hidden" not in err
    assert "Undeclared symbol 'undefined_name'" in err


def test_a_bad_traceback_mode_is_named(tmp_path: Path) -> None:
    err = _run(tmp_path, SCRIPT, STENCILKIT_TRACEBACK="tiny")
    assert "STENCILKIT_TRACEBACK='tiny' is not valid: use one of short, full" in err
    assert PACKAGE not in err


def test_other_exceptions_print_in_full(tmp_path: Path) -> None:
    source = "import stencilkit\nimport json\njson.loads('{')\n"
    err = _run(tmp_path, source)
    assert "json/decoder.py" in err and "hidden" not in err  # library frames, as Python prints them


def test_a_hook_set_by_the_user_is_left_alone(tmp_path: Path) -> None:
    source = (
        "import sys\n"
        "sys.excepthook = lambda kind, err, tb: print('my hook:', kind.__name__, file=sys.stderr)\n"
        + SCRIPT
    )
    err = _run(tmp_path, source)
    assert err.strip() == "my hook: UndefinedNameError"


def test_under_ipython_the_custom_exception_handler_is_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """IPython ignores sys.excepthook: install() registers a custom handler for DSLError there
    (a stand-in shell here; IPython itself is not installed in the test environment)."""
    import types

    from stencilkit.core import tracebacks
    from stencilkit.core.errors import DSLError, StencilValueError

    class Shell:
        registered: tuple[object, ...] = ()

        def set_custom_exc(self, exc_tuple: tuple[type, ...], handler: object) -> None:
            self.registered = (exc_tuple, handler)

        def showtraceback(self, exc_tuple: object, tb_offset: object = None) -> None:
            print("full traceback", file=sys.stderr)

    shell = Shell()
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    monkeypatch.delenv("STENCILKIT_TRACEBACK", raising=False)
    monkeypatch.delenv("STENCILKIT_LOG", raising=False)
    tracebacks.install()
    exc_tuple, handler = shell.registered
    assert exc_tuple == (DSLError,)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # uninstall() below: restored after
    monkeypatch.setattr(tracebacks, "_previous", tracebacks._previous)
    try:
        raise StencilValueError("bad domain", hint="fix it")
    except StencilValueError as caught:
        err = caught
    handler(shell, type(err), err, err.__traceback__)  # type: ignore[operator]
    err_text = capsys.readouterr().err
    assert "StencilValueError: bad domain" in err_text and "hint: fix it" in err_text
    monkeypatch.setenv("STENCILKIT_TRACEBACK", "full")
    handler(shell, type(err), err, err.__traceback__)  # type: ignore[operator]
    assert capsys.readouterr().err.strip() == "full traceback"
    tracebacks.uninstall()
    assert shell.registered[0] == ()
