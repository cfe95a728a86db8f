"""Counts of an icon4py suite run from its junit file (scripts/icon4py_suite.sh), and the tests
that pass in one run and not in another:

    python scripts/icon4py_suite_counts.py BACKEND JUNIT.xml LOG SECONDS
    python scripts/icon4py_suite_counts.py --compare REFERENCE.xml OURS.xml
    python scripts/icon4py_suite_counts.py --check BACKEND JUNIT.xml KNOWN.txt

``--check`` fails (status 1) when a test failed or errored that KNOWN.txt does not list: lines
``BACKEND PATTERN  reason`` (BACKEND a backend name or ``*``; PATTERN an fnmatch pattern over the
junit id ``classname::name``).
"""

from __future__ import annotations

import fnmatch
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def outcomes(junit: Path) -> dict[str, str]:
    """Test id -> passed / failed / error / skipped."""
    found = {}
    for case in ET.parse(junit).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        found[name] = next(
            (k for k in ("error", "failure", "skipped") if k in kinds), "passed"
        ).replace("failure", "failed")
    return found


def counts(backend: str, junit: Path, log: Path, seconds: str) -> None:
    if not junit.exists():
        print(f"icon4py suite on {backend}: no results (see {log})")
        return
    found = list(outcomes(junit).values())
    deselected = re.findall(r"(\d+) deselected", log.read_text()) if log.exists() else []
    summary = {k: found.count(k) for k in ("passed", "failed", "error", "skipped")}
    summary["deselected"] = int(deselected[-1]) if deselected else 0
    print(f"icon4py suite on {backend}: {summary} in {seconds} s")


def compare(reference: Path, ours: Path) -> int:
    ref, got = outcomes(reference), outcomes(ours)
    lost = sorted(t for t, o in ref.items() if o == "passed" and got.get(t) != "passed")
    for t in lost:
        print(f"passes in {reference.name}, not in {ours.name} ({got.get(t, 'absent')}): {t}")
    print(f"{len(lost)} of {sum(o == 'passed' for o in ref.values())} passing tests do not pass")
    return 1 if lost else 0


def check(backend: str, junit: Path, known: Path) -> int:
    if not junit.exists():
        print(f"icon4py suite on {backend}: no results to check")
        return 1
    patterns = [
        line.split()[1]
        for line in known.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#") and line.split()[0] in (backend, "*")
    ]
    bad = sorted(
        t
        for t, o in outcomes(junit).items()
        if o in ("failed", "error") and not any(fnmatch.fnmatchcase(t, p) for p in patterns)
    )
    for t in bad:
        print(f"icon4py suite on {backend}: does not pass and is not listed in {known.name}: {t}")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])))
    if sys.argv[1] == "--compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    counts(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
