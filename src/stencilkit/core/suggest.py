""" "Did you mean ...?" for a misspelt name: the closest of the names that would have worked."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate nearest to ``name`` (case-insensitive), or None if none is close.

    >>> closest("Ii", ["I", "J", "K"])
    'I'
    """
    names = sorted({c for c in candidates if c and c != name})
    lowered = {c.lower(): c for c in names}
    if name.lower() in lowered:  # only the case differs
        return lowered[name.lower()]
    found = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[found[0]] if found else None


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"did you mean 'I'?"`` for the closest candidate, or "" if none is close."""
    match = closest(name, candidates)
    return f"did you mean '{match}'?" if match else ""
