"""gt4py.next's ``program_processors`` layout (``program_processors.runners.gtfn``)."""

from . import runners

__all__ = ["runners"]
