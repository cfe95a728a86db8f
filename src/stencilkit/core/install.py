"""The command that installs one of stencilkit's extras, as a hint a user can run as it stands.

stencilkit is not on PyPI yet, so ``pip install 'stencilkit[mpi]'`` fails for a user who
installed a wheel, and ``pip install -e '.[mpi]'`` needs a checkout. The installed
distribution's own metadata lists each extra's packages: the hint names those
(``pip install 'mpi4py>=4' 'mpich>=4'``), which works wherever stencilkit came from.
"""

from __future__ import annotations

import functools
import re

DISTRIBUTION = "stencilkit"


@functools.cache
def extra_requirements(extra: str) -> tuple[str, ...]:
    """The requirements of stencilkit's ``extra`` (``"mpi"``: ``('mpi4py>=4', 'mpich>=4')``) as
    the installed distribution declares them; empty where its metadata cannot be read."""
    from importlib import metadata

    try:
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return ()
    found = []
    for line in requires:
        requirement, _, marker = line.partition(";")
        if re.search(rf"""extra\s*==\s*["']{re.escape(extra)}["']""", marker):
            found.append(requirement.strip())
    return tuple(found)


def install_hint(extra: str) -> str:
    """``pip install ...`` for stencilkit's ``extra``, runnable by a wheel user and in a checkout.

    >>> install_hint("mpi")
    "pip install 'mpi4py>=4' 'mpich>=4' (stencilkit's mpi extra)"
    """
    packages = extra_requirements(extra)
    if not packages:  # a source tree used without an install: its own pyproject.toml
        return f"pip install -e '.[{extra}]' in the stencilkit checkout"
    return f"pip install {' '.join(repr(p) for p in packages)} (stencilkit's {extra} extra)"
