"""CUDA graphs for time loops: capture a sequence of program calls once, replay it many times.

A replay submits every kernel of the captured calls with one driver call, which removes the
per-launch cost of Python and of the driver from a time loop over small grids.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .runtime import cupy


class CudaGraph:
    """A captured sequence of GPU program calls; ``replay()`` runs it again on its stream.

    The captured calls keep the argument addresses they were captured with: replays read and
    write the same fields (update their contents in place between replays, not the fields).
    """

    def __init__(self, graph: Any, stream: Any) -> None:
        self._graph = graph
        self.stream = stream

    def replay(self, times: int = 1) -> None:
        for _ in range(times):
            self._graph.launch(self.stream)

    def synchronize(self) -> None:
        self.stream.synchronize()


def capture_cuda_graph(body: Callable[[], Any], stream: Any = None) -> CudaGraph:
    """Capture the GPU work of ``body()`` into a graph without running it.

    Call each program once (or ``program.compile(...)`` it) before capturing it: the first call
    of a program with new arguments compiles and tunes it, which cannot happen during a capture
    (``CudaTarget.load`` and ``.tune`` refuse while the current stream is capturing). A call
    with arguments seen before only writes its argument block and launches its tuned kernels.

    >>> step(u, v, offset_provider={})             # first call: compile and tune
    >>> graph = gtx.capture_cuda_graph(lambda: [step(u, v, offset_provider={}) for _ in range(10)])
    >>> graph.replay(100)                          # 1000 steps
    """
    cp = cupy()
    stream = stream or cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        try:
            body()
        finally:
            graph = stream.end_capture()
    return CudaGraph(graph, stream)
