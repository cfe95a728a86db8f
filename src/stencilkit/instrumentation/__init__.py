"""gt4py.next's ``instrumentation``: hooks around program calls (``hooks``) and the metrics store
(``metrics``) that tools such as icon4py's benchmarks read."""

from . import hooks, metrics

__all__ = ["hooks", "metrics"]
