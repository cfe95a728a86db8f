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
        k: v
        for k, v in os.environ.items()
        if k not in ("STENCILKIT_LOG", "STENCILKIT_TRACEBACK", "STENCILKIT_PARSE_AT_DECORATION")
    }
    full_env.update(PYTHONPATH=SRC, STENCILKIT_CACHE_DIR=str(tmp_path / "cache"), **env)
    r = subprocess.run(
        [sys.executable, str(script)], env=full_env, capture_output=True, text=True, check=False
    )
    assert r.returncode == 1, r.stderr
    return r.stderr


@pytest.mark.parametrize("at_decoration", [True, False])
def test_a_dsl_error_shows_the_users_frames_only(tmp_path: Path, at_decoration: bool) -> None:
    err = _run(tmp_path, SCRIPT, STENCILKIT_PARSE_AT_DECORATION=str(int(at_decoration)))
    lines = err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    if at_decoration:  # the default: the decorator's line
        assert f'File "{tmp_path / "model.py"}", line 8, in <module>' in err
        assert "@gtx.field_operator" in err
    else:  # parsed at the first call: the user's call chain
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


IMPORT_CHANGES_NOTHING = """\
import logging, sys, types, warnings

calls = []


class Shell:  # a stand-in IPython shell (IPython is not installed in the test environment)
    def set_custom_exc(self, exc_tuple, handler):
        calls.append(exc_tuple)


shell = Shell()
sys.modules["IPython"] = types.SimpleNamespace(get_ipython=lambda: shell)
import numpy  # its own import adds warning filters (numpy's, not stencilkit's)

filters, root = list(warnings.filters), list(logging.getLogger().handlers)
import stencilkit

assert sys.excepthook is sys.__excepthook__, sys.excepthook
assert calls == [], calls  # IPython's custom exception handler (the user's) left alone
assert warnings.filters == filters and logging.getLogger().handlers == root
# the library's own logger holds only the NullHandler the logging HOWTO asks libraries for
assert [type(h).__name__ for h in logging.getLogger("stencilkit").handlers] == ["NullHandler"]
print("unchanged")
"""


def test_importing_stencilkit_changes_no_global_state(tmp_path: Path) -> None:
    """No sys.excepthook, no IPython handler, no warning filter, no root logging handler."""
    env = {k: v for k, v in os.environ.items() if k not in ("STENCILKIT_LOG",)}
    env.update(PYTHONPATH=SRC)
    r = subprocess.run(
        [sys.executable, "-c", IMPORT_CHANGES_NOTHING],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0 and r.stdout.strip() == "unchanged", r.stderr
    r = subprocess.run(
        [sys.executable, "-c", "import sys, stencilkit; assert sys.excepthook is sys.__excepthook__"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr


def test_the_traceback_is_short_for_every_handler() -> None:
    """The exception itself carries the short traceback (cut where it leaves stencilkit), so
    whatever prints it (IPython, pytest, a user's handler) shows the user's frames and the note."""
    import traceback

    import numpy as np

    import stencilkit as gtx

    I = gtx.Dimension("I")

    def user_code() -> None:
        gtx.as_field([I, I], np.ones(4))  # a user error raised deep inside the constructor

    try:
        user_code()
    except gtx.errors.DSLError as caught:
        err = caught
    frames = traceback.extract_tb(err.__traceback__)
    assert [f.name for f in frames] == [
        "test_the_traceback_is_short_for_every_handler",
        "user_code",
    ]
    assert any("inside stencilkit hidden" in n for n in err.__notes__)
    text = "".join(traceback.format_exception(err))
    assert PACKAGE not in text


GTSCRIPT = """\
import numpy as np
from stencilkit.cartesian import gtscript
from stencilkit.cartesian.gtscript import PARALLEL, Field, computation, interval


def main():
    @gtscript.stencil(backend="numpy")
    def bad(a: Field[float], b: Field[float]):
        with computation(PARALLEL), interval(...):
            b = a + undefined_name


main()
"""


def test_a_gtscript_error_at_decoration_is_short(tmp_path: Path) -> None:
    err = _run(tmp_path, GTSCRIPT)
    assert f'File "{tmp_path / "model.py"}", line 7, in main' in err
    assert PACKAGE not in err and "frames inside stencilkit hidden" in err
    assert "undefined_name" in err
