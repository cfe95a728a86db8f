"""The opt-in ``gt4py`` alias: ``import gt4py.next`` served from stencilkit, never over a real gt4py."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import stencilkit
from stencilkit.compat import (
    GT4PyAliasError,
    gt4py_alias_installed,
    install_gt4py_alias,
    uninstall_gt4py_alias,
)

SRC = Path(__file__).parents[2] / "src"


@pytest.fixture
def alias() -> Iterator[None]:
    install_gt4py_alias()
    yield
    uninstall_gt4py_alias()


def test_gt4py_next_is_stencilkit(alias: None) -> None:
    import gt4py.next as gtx
    from gt4py import next as gtx2
    from gt4py.next import field_operator, neighbor_sum

    assert gtx is stencilkit and gtx2 is stencilkit
    assert field_operator is stencilkit.field_operator and neighbor_sum is stencilkit.neighbor_sum
    assert gt4py_alias_installed()


def test_submodules_are_the_stencilkit_modules(alias: None) -> None:
    import gt4py.next.experimental as exp
    from gt4py.next.experimental import concat_where

    import stencilkit.compat.gt4py.experimental

    assert exp is stencilkit.compat.gt4py.experimental is stencilkit.experimental
    assert concat_where is stencilkit.experimental.concat_where
    # the modules keep their own identity: __name__ and __spec__ are stencilkit's
    name = "stencilkit.compat.gt4py.experimental"
    assert exp.__name__ == name and exp.__spec__.name == name
    assert stencilkit.__spec__ is not None and stencilkit.__spec__.name == "stencilkit"


def test_core_definitions_names(alias: None) -> None:
    import gt4py._core.definitions as defs

    assert defs.ScalarT.__bound__ is not None


def test_missing_modules_are_not_found(alias: None) -> None:
    import importlib.util

    with pytest.raises(ModuleNotFoundError, match=r"gt4py\.next\.no_such_thing"):
        import gt4py.next.no_such_thing
    with pytest.raises(ModuleNotFoundError, match=r"gt4py\.cartesian\.no_such_thing"):
        import gt4py.cartesian.no_such_thing
    with pytest.raises(ModuleNotFoundError, match=r"gt4py\.no_such_package"):
        import gt4py.no_such_package  # noqa: F401
    assert importlib.util.find_spec("gt4py.next.no_such_thing") is None
    assert importlib.util.find_spec("gt4py.next.experimental") is not None


def test_uninstall_forgets_the_alias() -> None:
    install_gt4py_alias()
    import gt4py.next

    uninstall_gt4py_alias()
    assert not gt4py_alias_installed()
    assert not any(m == "gt4py" or m.startswith("gt4py.") for m in sys.modules)
    with pytest.raises(ModuleNotFoundError):
        import gt4py.next  # noqa: F401


def test_install_twice_is_harmless(alias: None) -> None:
    install_gt4py_alias()
    assert sum(type(f).__name__ == "_AliasFinder" for f in sys.meta_path) == 1


@pytest.fixture
def real_gt4py(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in 'real' gt4py on sys.path."""
    pkg = tmp_path / "gt4py"
    (pkg / "next").mkdir(parents=True)
    (pkg / "__init__.py").write_text("REAL = True\n")
    (pkg / "next" / "__init__.py").write_text("REAL = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_refuses_to_shadow_a_real_gt4py(real_gt4py: Path) -> None:
    with pytest.raises(GT4PyAliasError, match="real gt4py is installed"):
        install_gt4py_alias()
    assert not gt4py_alias_installed()


def test_force_shadows_a_real_gt4py(real_gt4py: Path) -> None:
    install_gt4py_alias(force=True)
    try:
        import gt4py.next as gtx

        assert gtx is stencilkit
    finally:
        uninstall_gt4py_alias()


def test_refuses_when_a_real_gt4py_is_imported(real_gt4py: Path) -> None:
    import gt4py

    try:
        assert gt4py.REAL
        with pytest.raises(GT4PyAliasError, match="already imported"):
            install_gt4py_alias(force=True)
    finally:
        for name in [m for m in sys.modules if m == "gt4py" or m.startswith("gt4py.")]:
            del sys.modules[name]


SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import gt4py.next as gtx

    I = gtx.Dimension("I")

    @gtx.field_operator
    def double(a: gtx.Field[gtx.Dims[I], gtx.float64]) -> gtx.Field[gtx.Dims[I], gtx.float64]:
        return 2.0 * a

    a = gtx.as_field([I], np.arange(4.0))
    out = gtx.zeros({I: 4})
    double(a, out=out, offset_provider={})
    print(sys.argv[1:], __name__, out.asnumpy().tolist())
""")


def _run(*args: str, cwd: Path, extra_path: str = "") -> subprocess.CompletedProcess[str]:
    env = {
        "PYTHONPATH": str(SRC) + (f":{extra_path}" if extra_path else ""),
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        [sys.executable, "-m", "stencilkit.gt4py_run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


def test_gt4py_run_runs_a_script_unchanged(tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(SCRIPT)
    r = _run("script.py", "x", "--flag", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['x', '--flag'] __main__ [0.0, 2.0, 4.0, 6.0]"


def test_gt4py_run_runs_a_module(tmp_path: Path) -> None:
    (tmp_path / "mymod.py").write_text(SCRIPT)
    r = _run("-m", "mymod", "y", cwd=tmp_path, extra_path=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['y'] __main__ [0.0, 2.0, 4.0, 6.0]"


def test_gt4py_run_refuses_a_real_gt4py_unless_forced(real_gt4py: Path, tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(SCRIPT)
    r = _run("script.py", cwd=tmp_path, extra_path=str(real_gt4py))
    assert r.returncode == 2 and "refusing to shadow" in r.stderr
    r = _run("--force", "script.py", cwd=tmp_path, extra_path=str(real_gt4py))
    assert r.returncode == 0, r.stderr
    assert np.allclose(eval(r.stdout.split("__main__")[1]), [0.0, 2.0, 4.0, 6.0])


def test_gt4py_run_usage(tmp_path: Path) -> None:
    r = _run(cwd=tmp_path)
    assert r.returncode == 2 and "usage" in r.stderr
