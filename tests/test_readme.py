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


def _user_block() -> list[str]:
    """The second code block: how a user installs stencilkit today."""
    blocks = re.findall(r"```\n(.*?)```", README, re.S)
    return [line for line in blocks[1].splitlines() if line.strip()]


def test_the_user_block_leads_with_what_works_today() -> None:
    """stencilkit is not on PyPI: the user block installs from the checkout, and no command a
    reader would copy says `pip install stencilkit` before the first release."""
    lines = _user_block()
    assert lines[0].startswith("pip install . "), lines[0]
    assert all(not line.startswith("pip install stencilkit") for line in lines)
    before = README[: README.index(lines[0])]
    assert "not on PyPI yet" in before.split("```")[-2]  # said in the text leading to the block
    assert "pip install 'stencilkit-0.1.0-py3-none-any.whl[cuda]'" in README  # a wheel's extras
    assert "stencilkit help" in README


def test_the_user_install_lines_name_only_extras_that_exist() -> None:
    extras = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    lines = [re.match(r"pip install '?\.(?:\[([^\]]*)\])?'?", x) for x in _user_block()[:-1]]
    assert all(lines), _user_block()
    named = {e for m in lines if m and m.group(1) for e in m.group(1).split(",")}
    assert {"cuda", "mpi", "xarray"} <= named
    assert named <= extras, named - extras
