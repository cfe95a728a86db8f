"""The command's help is even: every subcommand explains itself, ``bench --help`` shows no raw
reStructuredText, counts agree with their nouns ("1 entry")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stencilkit.cli import _entries, build_parser

ROOT = Path(__file__).parents[1]
PATH = f"{ROOT / 'src'}:{ROOT / 'benchmarks'}"  # this checkout's, not an installed one


def _help(*args: str) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "stencilkit.cli", *args, "--help"],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": PATH, "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("command", ["info", "demo", "cache"])
def test_every_subcommand_has_a_description(command: str) -> None:
    text = _help(command)
    body = text.split("options:")[0].split("\n", 2)
    assert len(body) == 3 and len(body[2].split()) >= 8, text  # a sentence or more, not just usage


def test_bench_help_has_no_raw_rst() -> None:
    text = _help("bench")
    assert "--gpu" in text and "GPU suite" in text
    assert "``" not in text and ":func:" not in text


def test_the_top_level_help_lists_every_subcommand_with_a_line() -> None:
    text = build_parser().format_help()
    for command in ("info", "demo", "cache", "bench"):
        assert any(
            line.split()[:1] == [command] and len(line.split()) > 2 for line in text.splitlines()
        )


def test_counts_agree_with_their_nouns() -> None:
    assert _entries(1) == "1 entry" and _entries(0) == "0 entries" and _entries(2) == "2 entries"
