"""The README's set-up: it starts with the two commands that set up a checkout, run the demo and
pass the tests, and CI (.ci/run) runs those same commands; it has a user install line whose
extras exist in pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text()


def _first_block() -> list[str]:
    match = re.match(r"# stencilkit\n\n```\n(.*?)```", README, re.S)
    assert match, "README.md must start with its set-up commands in a code block"
    return [line for line in match.group(1).splitlines() if line.strip()]


def test_the_readme_starts_with_two_commands_set_up_with_demo_and_tests() -> None:
    setup, tests = _first_block()
    assert setup.startswith("python3 -m venv .venv && ") and "pip install -e '.[test]'" in setup
    assert setup.endswith("&& .venv/bin/stencilkit demo")
    assert tests == ".venv/bin/python -m pytest -q -n auto"


def test_ci_runs_the_readme_commands() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    setup, tests = (
        line.replace(".venv/", ".ci-venv/").replace("venv .venv", "venv .ci-venv")
        for line in _first_block()
    )
    setup = setup.replace("pip install -e", "pip install -q -e")  # quiet in CI's log
    assert setup in ci, setup
    assert tests + " -p no:cacheprovider" in ci, tests
    assert "scripts/user_path_check.sh" in ci


def test_the_user_install_line_names_only_extras_that_exist() -> None:
    extras = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    lines = re.findall(r"^pip install '?stencilkit(?:\[([^\]]*)\])?'?", README, re.M)
    assert "" in lines, "no plain `pip install stencilkit` line"
    named = {e for group in lines for e in group.split(",") if e}
    assert {"cuda", "mpi", "xarray"} <= named
    assert named <= extras, named - extras
