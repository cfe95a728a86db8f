"""Tests of stencilkit.distributed: they run on however many ranks pytest was started on.

CI runs them under ``mpiexec -n 2``; ``mpiexec -n 4 python -m pytest tests/distributed`` locally;
the plain test run (one process) runs them on one rank. Every rank runs every test in the same
order, so collectives match; checks that fail on one rank only go through ``agree``.
"""

from __future__ import annotations

from typing import Any

import pytest

MPI = pytest.importorskip("mpi4py.MPI", reason="needs the mpi extra: pip install -e '.[mpi]'")


@pytest.fixture
def comm() -> Any:
    return MPI.COMM_WORLD
